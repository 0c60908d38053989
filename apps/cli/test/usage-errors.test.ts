/**
 * Bad flags are the user's to fix before anything is sent: the real `commerce` binary, pointed at
 * a listener that counts connections, exits 2 with a usage error naming the flag, then the
 * command's usage, and never connects (the README: "bad flags exit 2"; a refused request exits 1).
 * A mistyped command is one too, and names the nearest command.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type AddressInfo, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, userEnvironment } from './binary.js'

const CART_ID = '0190a6f1-7c3a-7000-8000-00000000beef'
const CHECKOUT = ['checkout', 'create', '--cart-id', CART_ID, '--email', 'a@example.com', '--shipping-address-line1', '1 Main St', '--shipping-address-city', 'Springfield']

let listener: Server
let baseUrl: string
let configHome: string
let connections = 0

beforeAll(async () => {
  configHome = await mkdtemp(join(tmpdir(), 'commerce-usage-'))
  // Anything that connects is counted and dropped: no command here may get that far.
  listener = createServer((socket) => {
    connections++
    socket.destroy()
  })
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`
})
afterAll(async () => {
  await new Promise((resolve) => listener.close(resolve))
  await rm(configHome, { recursive: true, force: true })
})

/** The binary's exit code, standard output, and standard error on one line (oclif wraps and marks it with ›). */
function commerce(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...userEnvironment('COMMERCE_TOKEN'), XDG_CONFIG_HOME: configHome, COMMERCE_BASE_URL: baseUrl }, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({
        code: error ? (typeof error.code === 'number' ? error.code : -1) : 0,
        stdout,
        stderr: stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ').trim(),
      }),
    )
  })
}

describe('usage errors exit 2 without calling the API', () => {
  it.each([
    [['products', 'create'], 'Missing required flag --title (or its field in --data)'],
    [['products', 'create', '--data', '{"price":1}'], 'Missing required flag --title (or its field in --data)'],
    [['products', 'create', '--price', '5', '--currency', 'USD'], 'Missing required flag --title'],
    [['shipping', 'rates'], 'Missing required flag --cart-id'],
    [[...CHECKOUT], 'Missing required flag --shipping-address-country'],
    // An optional object that is sent needs what it requires.
    [[...CHECKOUT, '--shipping-address-country', 'US', '--billing-address-city', 'Shelbyville'], 'Missing required flags --billing-address-line1, --billing-address-country (or their fields in --data)'],
    [['products', 'get'], 'Missing 1 required arg'],
    [['orders', 'list', '--status', 'lost'], 'Expected --status=lost to be one of'],
    [[...CHECKOUT, '--shipping-address-country', 'ZZ'], 'Expected --shipping-address-country=ZZ to be one of 249 codes'],
    [['products', 'create', '--title', 'Mug', '--price', 'cheap'], "--price must be a number (got 'cheap')"],
    [['products', 'list', '--page', 'two'], "--page must be a whole number (got 'two')"],
    [['products', 'create', '--title', 'Mug', '--bogus', '1'], 'Nonexistent flag: --bogus'],
  ])('commerce %j', async (args, message) => {
    const run = await commerce(args)
    expect(run.stderr).toContain(message)
    expect(run.stderr).toContain(`USAGE $ commerce ${args[0]} ${args[1]} `)
    expect(run.code, run.stderr).toBe(2)
    expect(connections).toBe(0)
  })

  it('--json: the error body with code usage_error on standard output, still exit 2', async () => {
    const run = await commerce(['products', 'create', '--price', '5', '--json'])
    expect(run.code, run.stderr).toBe(2)
    expect(JSON.parse(run.stdout)).toEqual({
      error: { code: 'usage_error', message: 'Missing required flag --title (or its field in --data)\nSee more help with --help' },
    })
    expect(connections).toBe(0)
  })

  it.each([
    [['prodcts', 'list'], "'prodcts list' is not a commerce command. Did you mean 'commerce products list'?"],
    [['products', 'lst', '--page', '2'], "'products lst' is not a commerce command. Did you mean 'commerce products list'?"],
    [['products', 'varinats', 'list', CART_ID], `'products varinats list ${CART_ID}' is not a commerce command. Did you mean 'commerce products variants list'?`],
    // No `products variants get`: the topic, whose help lists its commands.
    [['products', 'varinats', 'get'], "'products varinats get' is not a commerce command. Did you mean 'commerce products variants'?"],
    [['loign'], "'loign' is not a commerce command. Did you mean 'commerce login'?"],
    [['custmers'], "'custmers' is not a commerce command. Did you mean 'commerce customers'?"],
  ])('a mistyped command %j names the nearest command or topic', async (args, message) => {
    const run = await commerce(args)
    expect(run.stderr).toBe(`Error: ${message} Run 'commerce help' for the list of commands.`)
    expect(run.code).toBe(2)
    expect(connections).toBe(0)
  })

  it('a command far from every name gets no guess', async () => {
    const run = await commerce(['xyzzy', 'list'])
    expect(run.stderr).toBe("Error: 'xyzzy list' is not a commerce command. Run 'commerce help' for the list of commands.")
    expect(run.code).toBe(2)
  })

  it('a complete command does call the API (the listener is reachable), and a dropped connection there exits 1 at once', async () => {
    // Three: Node 20's fetch hung on two dropped connections in three, until the command's time ran out.
    const runs = await Promise.all([1, 2, 3].map(() => commerce(['products', 'create', '--data', '{"title":"Mug"}'])))
    for (const run of runs) expect(run, run.stderr).toMatchObject({ code: 1, stderr: expect.stringContaining('(ECONNRESET)') })
    expect(connections).toBe(3)
  })
})
