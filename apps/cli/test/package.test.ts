/**
 * @commerce/cli as a user installs it: the CLI, @commerce/db, @commerce/domain and @commerce/runtime packed with
 * pnpm (workspace versions resolved), installed with `npm install -g` into an empty prefix
 * outside the workspace, and run from there against a real API and database.
 */
import { execFile, execFileSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { startApi, stopProcess } from '../../api/test/processes.js'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
const PACKAGES = ['packages/domain', 'packages/db', 'packages/runtime', 'apps/cli']
const { packageManager } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { packageManager: string }

let work: string
let prefix: string
let database: TestDatabase
let api: ChildProcess
let baseUrl: string

/** The installed `commerce`, with a clean environment: no workspace, its own HOME. */
function installed(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      join(prefix, 'bin', 'commerce'),
      args,
      { cwd: work, env: { PATH: process.env.PATH!, HOME: work, SCRYPT_COST: '1024', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    )
  })
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'commerce-cli-install-'))
  prefix = join(work, 'prefix')
  const packs = join(work, 'packs')
  for (const directory of PACKAGES) {
    execFileSync('npx', ['--yes', packageManager, 'pack', '--pack-destination', packs], { cwd: join(ROOT, directory), stdio: 'pipe' })
  }
  const tarballs = readdirSync(packs).map((file) => join(packs, file))
  execFileSync('npm', ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', '--silent', ...tarballs], { cwd: work, stdio: 'pipe' })
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  ;({ baseUrl, process: api } = await startApi(database.url))
}, 300_000)

afterAll(async () => {
  await stopProcess(api)
  await database?.drop()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('the installed commerce', () => {
  it('has its workspace dependencies at their packed versions, and not the API it was built from', () => {
    const modules = join(prefix, 'lib', 'node_modules')
    const cli = JSON.parse(readFileSync(join(modules, '@commerce/cli/package.json'), 'utf8')) as {
      version: string
      dependencies: Record<string, string>
      devDependencies?: Record<string, string>
    }
    expect(cli.dependencies['@commerce/db']).toBe('0.1.0')
    expect(cli.dependencies['@commerce/domain']).toBe('0.1.0')
    expect(cli.dependencies['@commerce/runtime']).toBe('0.1.0')
    expect(JSON.stringify(cli.dependencies)).not.toContain('workspace:')
    expect(readdirSync(join(modules, '@commerce')).sort()).toEqual(['cli', 'db', 'domain', 'runtime'])
    expect(readdirSync(join(modules, '@commerce/cli/dist'))).toContain('operations.json')
  })

  it('prints its version', async () => {
    const run = await installed(['--version'])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^@commerce\/cli\/0\.1\.0 /)
  })

  it('creates an admin in the database, signs in and lists products over HTTP', async () => {
    const created = await installed(['users', 'create', '--email', 'packed@example.com', '--password', 'packed password', '--role', 'admin'], {
      DATABASE_URL: database.url,
    })
    expect(created.code).toBe(0)
    const login = await installed(['login', '--email', 'packed@example.com', '--base-url', baseUrl], { COMMERCE_PASSWORD: 'packed password' })
    expect(login.stdout).toContain('as packed@example.com (admin)')
    const product = await installed(['products', 'create', '--title', 'Packed kettle', '--price', '30', '--currency', 'EUR', '--json'])
    expect(product.code).toBe(0)
    const list = await installed(['products', 'list', '--base-url', baseUrl])
    expect(list).toMatchObject({ code: 0, stderr: '' })
    expect(list.stdout).toMatch(/^ID\s+TITLE/m)
    expect(list.stdout).toContain('Packed kettle')
  })
})
