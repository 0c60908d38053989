/**
 * @commerce/client as another team gets it: packed with pnpm, installed with npm into an empty
 * project outside the workspace, then imported from plain JavaScript (both entries) against the
 * real API, and type-checked from TypeScript through its exports map (and, for moduleResolution node,
 * its top-level `types` and `typesVersions`).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startService, type Service } from './service.js'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc')
const { packageManager } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { packageManager: string }
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000beef'

let project: string
let installed: string
let service: Service

const run = (command: string, args: string[], env: NodeJS.ProcessEnv = process.env) =>
  execFileSync(command, args, { cwd: project, encoding: 'utf8', stdio: 'pipe', env })

/** Uses both entries: calls, a typed error, a webhook signature checked as a receiver would. */
const USE = `
import { createClient, CommerceError } from '@commerce/client'
import { constructWebhookEvent, signStandardWebhook } from '@commerce/client/webhooks'

const client = createClient({ baseUrl: process.argv[2] })
const health = await client.getHealth()
const { products } = await client.listProducts({ per_page: 5 })
const missing = await client.getProduct('${UNKNOWN_ID}').catch((error) => error)
const body = JSON.stringify({ id: 'evt_1', event: 'order.paid', timestamp: '2026-11-23T00:00:00.000Z', resource_id: 'o', sequence: 1, data: { total: 42.5 } })
const stamp = Math.floor(Date.now() / 1000)
const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(stamp), 'webhook-signature': signStandardWebhook('evt_1', stamp, body, 'a webhook secret') }
const event = constructWebhookEvent(body, headers, 'a webhook secret')
console.log(JSON.stringify({ health: health.status, products: products.length, error: missing instanceof CommerceError && [missing.status, missing.code], event: event.event }))
`

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'commerce-client-consumer-'))
  const packs = join(project, 'packs')
  execFileSync('npx', ['--yes', packageManager, '--filter', '@commerce/client', 'pack', '--pack-destination', packs], { cwd: ROOT, stdio: 'pipe' })
  const [tarball] = readdirSync(packs)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  // The machine's npm settings, without those of the pnpm that runs this test.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_|pnpm_)/i.test(name)))
  run('npm', ['install', '--no-audit', '--no-fund', '--silent', join(packs, tarball!)], env)
  installed = join(project, 'node_modules/@commerce/client')
  service = await startService()
}, 180_000)

afterAll(async () => {
  await service?.stop()
  if (project) rmSync(project, { recursive: true, force: true })
})

describe('the packed @commerce/client', () => {
  it('depends on nothing and holds only its build: the workspace packages it uses are bundled', () => {
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>
    expect(manifest).not.toHaveProperty('dependencies')
    expect(manifest).not.toHaveProperty('peerDependencies')
    expect(readdirSync(installed).sort()).toEqual(['README.md', 'dist', 'package.json'])
    expect(readdirSync(join(project, 'node_modules')).filter((name) => !name.startsWith('.'))).toEqual(['@commerce'])
  })

  it('has a main entry with no import at all (browsers), and a webhooks entry that imports node:crypto only', () => {
    const main = readFileSync(join(installed, 'dist/index.js'), 'utf8')
    expect(main).not.toMatch(/^\s*import\s|\brequire\(|\bprocess\.|\bBuffer\b/m)
    const webhooks = readFileSync(join(installed, 'dist/webhooks.js'), 'utf8')
    expect([...webhooks.matchAll(/^import .* from "([^"]+)"/gm)].map((match) => match[1])).toEqual(['node:crypto'])
  })

  it('runs from plain JavaScript against the API: calls, a typed error, a verified webhook', () => {
    writeFileSync(join(project, 'use.mjs'), USE)
    expect(JSON.parse(run('node', ['use.mjs', service.baseUrl]))).toEqual({ health: 'ok', products: 0, error: [404, 'not_found'], event: 'order.paid' })
  })

  // nodenext and bundler read the exports map; node (node10), still many a project's setting, reads
  // only `types` and `typesVersions` (it reported TS2307 without them).
  for (const [module, moduleResolution] of [
    ['nodenext', 'nodenext'],
    ['esnext', 'bundler'],
    ['esnext', 'node'],
  ]) {
    it(`type-checks from TypeScript with moduleResolution ${moduleResolution}, both entries`, { timeout: 120_000 }, () => {
      writeFileSync(join(project, 'use.ts'), `${USE.replace('process.argv[2]', "'http://localhost:3000'")}\nexport {}\n`)
      writeFileSync(join(project, 'bad.ts'), `import { createClient } from '@commerce/client'\nawait createClient({ baseUrl: '' }).createCart({ currency: 1 })\nexport {}\n`)
      let output = ''
      try {
        run('node', [TSC, '--noEmit', '--strict', '--module', module!, '--moduleResolution', moduleResolution!, '--target', 'es2022', '--lib', 'es2022,dom', 'use.ts', 'bad.ts'])
      } catch (error) {
        output = String((error as { stdout?: string }).stdout)
      }
      expect(output).toMatch(/^bad\.ts\(2,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/m)
      expect(output).not.toContain('use.ts')
    })
  }
})
