/** The real `commerce` binary (bin/run.js over the built dist/ and oclif.manifest.json). */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { apiKeyLookupPrefix, hashApiKey, hashClientSecret, isWellFormedApiKey } from '@commerce/domain'
import type { ApiKeySummary } from '../src/api-keys.js'
import type { OAuthClientSummary } from '../src/oauth-clients.js'
import { BIN, userEnvironment } from './binary.js'

const MANIFEST = fileURLToPath(new URL('../oclif.manifest.json', import.meta.url))
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url))
const OCLIF = join(PACKAGE_DIR, 'node_modules', '.bin', 'oclif')

interface Run {
  code: number
  stdout: string
  stderr: string
}

function commerce(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...userEnvironment('DATABASE_URL'), SCRYPT_COST: '1024', ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
}

/** oclif prints errors as ` ›   Error: …`, wrapped to the terminal width: back to one line. */
function errorText(stderr: string): string {
  return stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ').trim()
}

let database: TestDatabase
let sql: postgres.Sql
const withDb = (extra: Record<string, string> = {}) => ({ DATABASE_URL: database.url, ...extra })

beforeAll(async () => {
  if (!existsSync(MANIFEST)) throw new Error('apps/cli is not built: run `pnpm build` in apps/cli first')
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  sql = postgres(database.url, { max: 1, onnotice: () => {} })
})

afterAll(async () => {
  await sql?.end({ timeout: 5 })
  await database?.drop()
})

describe('commerce migrate', () => {
  const adminUrl = inject('adminUrl')
  const name = `commerce_cli_fresh_${randomBytes(6).toString('hex')}`
  const freshUrl = new URL(adminUrl)
  freshUrl.pathname = `/${name}`
  // Whatever password the server needs, the output must not show it: give it one to hide.
  if (!freshUrl.password) freshUrl.password = 'not-printed'
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} })

  beforeAll(async () => {
    await admin.unsafe(`create database "${name}"`)
  })
  afterAll(async () => {
    await admin.unsafe(`drop database if exists "${name}" with (force)`)
    await admin.end({ timeout: 5 })
  })

  it('applies the migrations to an empty DATABASE_URL database, prints it with the password masked, and is idempotent', async () => {
    const first = await commerce(['migrate'], { DATABASE_URL: freshUrl.toString() })
    expect(first).toMatchObject({ code: 0, stderr: '' })
    const masked = Object.assign(new URL(freshUrl), { password: '***' }).toString()
    expect(first.stdout).toBe(`Migrations applied to ${masked}\n`)
    expect(first.stdout).not.toContain(`:${freshUrl.password}@`)

    const fresh = postgres(freshUrl.toString(), { max: 1, onnotice: () => {} })
    try {
      const tables = await fresh<{ table_name: string }[]>`
        select table_name from information_schema.tables
        where table_schema = 'public' and table_name in ('users', 'customers', 'events') order by table_name`
      expect(tables.map((row) => row.table_name)).toEqual(['customers', 'events', 'users'])
      const [before] = await fresh<{ count: string }[]>`select count(*) from drizzle.__drizzle_migrations`
      expect(Number(before!.count)).toBeGreaterThan(0)

      const again = await commerce(['migrate'], { DATABASE_URL: freshUrl.toString() })
      expect(again).toMatchObject({ code: 0, stdout: `Migrations applied to ${masked}\n` })
      const [after] = await fresh<{ count: string }[]>`select count(*) from drizzle.__drizzle_migrations`
      expect(after!.count).toBe(before!.count)
    } finally {
      await fresh.end({ timeout: 5 })
    }
  })

  it('exits 1 naming DATABASE_URL when it is not a postgres URL, without echoing it', async () => {
    const result = await commerce(['migrate'], { DATABASE_URL: 'mysql://root:hunter22@db/shop' })
    expect(result.code).toBe(1)
    expect(errorText(result.stderr)).toBe('Error: Invalid environment: - DATABASE_URL must be a postgres:// or postgresql:// URL')
    expect(result.stderr + result.stdout).not.toContain('hunter22')
  })
})

describe('commerce users create', () => {
  it('creates an admin with a scrypt hash (never the password) and no customer record', async () => {
    const result = await commerce(
      ['users', 'create', '--email', 'Admin@Example.com', '--password', 'correct horse', '--role', 'admin'],
      withDb(),
    )
    expect(result).toMatchObject({ code: 0, stderr: '' })
    const [user] = await sql<{ id: string; email: string; role: string; password_hash: string }[]>`
      select id, email, role, password_hash from users where lower(email) = 'admin@example.com'`
    expect(user).toMatchObject({ email: 'Admin@Example.com', role: 'admin' })
    expect(user!.password_hash).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/)
    expect(user!.password_hash).not.toContain('correct horse')
    const customers = await sql`select id from customers where user_id = ${user!.id}`
    expect(customers).toHaveLength(0)

    expect(result.stdout).toContain('Created admin Admin@Example.com')
    expect(result.stdout).toMatch(new RegExp(`^id\\s+${user!.id}$`, 'm'))
    expect(result.stdout).toMatch(/^role\s+admin$/m)
    expect(result.stdout).toMatch(/^customer id\s+-$/m)
    expect(result.stdout).not.toContain('correct horse')
    expect(result.stdout).not.toContain(user!.password_hash)
  })

  it('refuses a duplicate email, whatever its case, with exit 1 and the reason', async () => {
    const result = await commerce(
      ['users', 'create', '--email', 'admin@EXAMPLE.com', '--password', 'another password', '--role', 'admin'],
      withDb(),
    )
    expect(result.code).toBe(1)
    expect(errorText(result.stderr)).toBe('Error: An account with this email already exists')
    expect(result.stdout).toBe('')
    const rows = await sql`select id from users where lower(email) = 'admin@example.com'`
    expect(rows).toHaveLength(1)
  })

  it('with --json reports a refusal in the API error shape and exits 1', async () => {
    const result = await commerce(
      ['users', 'create', '--email', 'admin@example.com', '--password', 'another password', '--json'],
      withDb(),
    )
    expect(result.code).toBe(1)
    expect(JSON.parse(result.stdout)).toEqual({
      error: { code: 'conflict', message: 'An account with this email already exists' },
    })
  })

  it('refuses an unknown role before touching the database', async () => {
    const result = await commerce(
      ['users', 'create', '--email', 'root@example.com', '--password', 'long enough', '--role', 'root'],
      withDb(),
    )
    expect(result.code).not.toBe(0)
    expect(errorText(result.stderr)).toContain('Expected --role=root to be one of: customer, admin')
    expect(await sql`select id from users where email = 'root@example.com'`).toHaveLength(0)
  })

  it('refuses a malformed email and a password shorter than 8 characters', async () => {
    const badEmail = await commerce(['users', 'create', '--email', 'not-an-email', '--password', 'long enough'], withDb())
    expect(badEmail.code).toBe(1)
    expect(errorText(badEmail.stderr)).toBe("Error: 'not-an-email' is not a valid email address")

    const shortPassword = await commerce(['users', 'create', '--email', 'short@example.com', '--password', 'seven77'], withDb())
    expect(shortPassword.code).toBe(1)
    expect(errorText(shortPassword.stderr)).toBe('Error: The password must be 8 to 200 characters long')
    expect(shortPassword.stderr).not.toContain('seven77')
    expect(await sql`select id from users where email in ('not-an-email', 'short@example.com')`).toHaveLength(0)
  })

  it('creates a customer (the default role) with its customer record and a customer.created event; --json parses', async () => {
    const result = await commerce(['users', 'create', '--email', 'jo@example.com', '--password', 's3cret-enough', '--json'], withDb())
    expect(result).toMatchObject({ code: 0, stderr: '' })
    const output = JSON.parse(result.stdout) as {
      user: Record<string, unknown>
      customer: Record<string, unknown>
    }
    expect(output).toEqual({
      user: { id: expect.any(String), email: 'jo@example.com', role: 'customer', disabled_at: null, email_verified_at: null, created_at: expect.any(String) },
      customer: {
        id: expect.any(String),
        user_id: output.user.id,
        email: 'jo@example.com',
        first_name: null,
        last_name: null,
        phone: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    })
    expect(new Date(output.user.created_at as string).toISOString()).toBe(output.user.created_at)
    expect(result.stdout).not.toContain('s3cret-enough')
    expect(result.stdout).not.toContain('scrypt$')

    const [customer] = await sql<{ id: string; user_id: string }[]>`
      select id, user_id from customers where email = 'jo@example.com'`
    expect(customer).toEqual({ id: output.customer.id, user_id: output.user.id })
    const events = await sql<{ kind: string; customer_id: string; data: Record<string, unknown> }[]>`
      select kind, customer_id, data from events where customer_id = ${customer!.id}`
    expect(events).toEqual([{ kind: 'customer.created', customer_id: customer!.id, data: output.customer }])
  })

  it('exits 1 naming SCRYPT_COST when it is not a power of two', async () => {
    const result = await commerce(['users', 'create', '--email', 'cost@example.com', '--password', 'long enough'], withDb({ SCRYPT_COST: '1000' }))
    expect(result.code).toBe(1)
    expect(errorText(result.stderr)).toBe(
      "Error: Invalid environment: - SCRYPT_COST must be a power of two from 2 to 1048576 (got '1000')",
    )
    expect(await sql`select id from users where email = 'cost@example.com'`).toHaveLength(0)
  })
})

describe('commerce api-keys', () => {
  let created: ApiKeySummary & { key: string }

  it('create prints a well-formed key once and stores only its prefix and SHA-256', async () => {
    const result = await commerce(
      ['api-keys', 'create', '--name', 'ERP sync', '--scopes', 'products:read, orders:write', '--rate-limit', '1200'],
      withDb(),
    )
    expect(result).toMatchObject({ code: 0, stderr: '' })
    const keys = result.stdout.match(/ck_[0-9A-Za-z]+/g) ?? []
    expect(keys).toHaveLength(1)
    const key = keys[0]!
    expect(isWellFormedApiKey(key)).toBe(true)
    expect(result.stdout).toContain('Copy the key now')
    expect(result.stdout).toMatch(new RegExp(`^prefix\\s+${apiKeyLookupPrefix(key)}$`, 'm'))
    expect(result.stdout).toMatch(/^scopes\s+products:read,orders:write$/m)

    const rows = await sql<Record<string, unknown>[]>`select * from api_keys where prefix = ${apiKeyLookupPrefix(key)}`
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      name: 'ERP sync',
      key_hash: hashApiKey(key),
      scopes: ['products:read', 'orders:write'],
      rate_limit_per_minute: 1200,
      last_used_at: null,
      revoked_at: null,
    })
    const [stored] = await sql<{ text: string }[]>`select string_agg(t::text, '') as text from api_keys t`
    expect(stored!.text).not.toContain(key)
    expect(stored!.text).not.toContain(key.slice(3))
  })

  it('create --json gives the key with its id, prefix and scopes', async () => {
    const result = await commerce(['api-keys', 'create', '--name', 'ops', '--scopes', '*', '--json'], withDb())
    expect(result).toMatchObject({ code: 0, stderr: '' })
    created = JSON.parse(result.stdout)
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'ops',
      prefix: apiKeyLookupPrefix(created.key),
      scopes: ['*'],
      rate_limit_per_minute: null,
      created_at: expect.any(String),
      last_used_at: null,
      revoked_at: null,
      expires_at: null,
      key: expect.stringMatching(/^ck_[0-9A-Za-z]{40}$/),
    })
    expect(isWellFormedApiKey(created.key)).toBe(true)
  })

  it('create refuses a bad scope, naming it, and stores nothing', async () => {
    const before = await sql`select id from api_keys`
    const result = await commerce(['api-keys', 'create', '--name', 'bad', '--scopes', 'products:read,widgets:write'], withDb())
    expect(result.code).toBe(1)
    expect(errorText(result.stderr)).toContain("Error: 'widgets:write' is not a scope")
    expect(result.stdout).toBe('')
    const empty = await commerce(['api-keys', 'create', '--name', 'none', '--scopes', ' , '], withDb())
    expect(empty.code).toBe(1)
    expect(errorText(empty.stderr)).toContain('Give at least one scope')
    expect(await sql`select id from api_keys`).toHaveLength(before.length)
  })

  it('list shows every key with its prefix and scopes, never the key', async () => {
    const table = await commerce(['api-keys', 'list'], withDb())
    expect(table).toMatchObject({ code: 0, stderr: '' })
    expect(table.stdout).toMatch(/^ID\s+NAME\s+PREFIX\s+SCOPES\s+CREATED\s+LAST USED\s+REVOKED\s+EXPIRES$/m)
    expect(table.stdout).toMatch(new RegExp(`^${created.id}\\s+ops\\s+${created.prefix}\\s+\\*\\s+\\S+\\s+-\\s+-\\s+-$`, 'm'))
    expect(table.stdout).not.toContain('ck_')

    const json = await commerce(['api-keys', 'list', '--json'], withDb())
    const listed = JSON.parse(json.stdout) as { api_keys: ApiKeySummary[] }
    expect(listed.api_keys.map((key) => key.name)).toEqual(['ERP sync', 'ops'])
    const { key: _shownOnce, ...summary } = created
    expect(listed.api_keys[1]).toEqual(summary)
    expect(json.stdout).not.toContain(created.key)
  })

  it('revoke sets revoked_at (list shows it); an unknown or malformed id exits 1', async () => {
    const result = await commerce(['api-keys', 'revoke', created.id], withDb())
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toContain(`Revoked API key "ops" (${created.prefix})`)
    const [row] = await sql<{ revoked_at: Date | null }[]>`select revoked_at from api_keys where id = ${created.id}`
    expect(row!.revoked_at).not.toBeNull()

    const listed = JSON.parse((await commerce(['api-keys', 'list', '--json'], withDb())).stdout) as { api_keys: ApiKeySummary[] }
    expect(listed.api_keys.find((key) => key.id === created.id)!.revoked_at).toEqual(expect.any(String))

    const unknown = await commerce(['api-keys', 'revoke', '0190a6f1-7c3a-7000-8000-00000000beef'], withDb())
    expect(unknown.code).toBe(1)
    expect(errorText(unknown.stderr)).toBe("Error: No API key with id '0190a6f1-7c3a-7000-8000-00000000beef'")
    const malformed = await commerce(['api-keys', 'revoke', 'nope', '--json'], withDb())
    expect(malformed.code).toBe(1)
    expect(JSON.parse(malformed.stdout)).toEqual({ error: { code: 'not_found', message: "No API key with id 'nope'" } })
  })

  it('create --expires-in sets when the key expires; a bad duration exits 1 and stores nothing', async () => {
    const before = Date.now()
    const result = await commerce(['api-keys', 'create', '--name', 'partner', '--scopes', 'products:read', '--expires-in', '90d', '--json'], withDb())
    expect(result).toMatchObject({ code: 0, stderr: '' })
    const key = JSON.parse(result.stdout) as ApiKeySummary
    const expires = Date.parse(key.expires_at!)
    expect(expires).toBeGreaterThanOrEqual(before + 90 * 86_400_000)
    expect(expires).toBeLessThanOrEqual(Date.now() + 90 * 86_400_000)

    const count = (await sql`select id from api_keys`).length
    const bad = await commerce(['api-keys', 'create', '--name', 'x', '--scopes', 'read', '--expires-in', 'soon'], withDb())
    expect(bad.code).toBe(1)
    expect(errorText(bad.stderr)).toContain("--expires-in takes a duration of at least a minute, e.g. 90d, 12h or 30m ('soon' is not one)")
    expect(await sql`select id from api_keys`).toHaveLength(count)
  })

  it('rotate prints a new key with the old one’s name, scopes and lifetime, and ends the old one after the grace period', async () => {
    const original = JSON.parse(
      (await commerce(['api-keys', 'create', '--name', 'feed', '--scopes', 'orders:read', '--rate-limit', '90', '--expires-in', '30d', '--json'], withDb())).stdout,
    ) as ApiKeySummary & { key: string }
    const before = Date.now()
    const result = await commerce(['api-keys', 'rotate', original.id, '--grace', '2h'], withDb())
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toContain('Copy the new key now')
    const keys = result.stdout.match(/ck_[0-9A-Za-z]+/g) ?? []
    expect(keys).toHaveLength(1)
    expect(isWellFormedApiKey(keys[0]!)).toBe(true)

    const rows = await sql<{ id: string; name: string; scopes: string[]; rate_limit_per_minute: number; key_hash: string; expires_at: Date; created_at: Date }[]>`
      select id, name, scopes, rate_limit_per_minute, key_hash, expires_at, created_at from api_keys where name = 'feed' order by created_at, id`
    expect(rows).toHaveLength(2)
    const old = rows[0]!
    const replacement = rows[1]!
    expect(old.id).toBe(original.id)
    expect(old.expires_at.getTime()).toBeGreaterThanOrEqual(before + 2 * 3_600_000 - 1000)
    expect(old.expires_at.getTime()).toBeLessThanOrEqual(Date.now() + 2 * 3_600_000)
    expect(replacement).toMatchObject({ scopes: ['orders:read'], rate_limit_per_minute: 90, key_hash: hashApiKey(keys[0]!) })
    // The old key's lifetime (30 days), from now.
    const lifetime = replacement.expires_at.getTime() - replacement.created_at.getTime()
    expect(Math.abs(lifetime - 30 * 86_400_000)).toBeLessThan(60_000)

    // --grace 0 ends the old key now; then it cannot be rotated again, nor a revoked one.
    const now = await commerce(['api-keys', 'rotate', replacement.id, '--grace', '0', '--json'], withDb())
    expect(now.code).toBe(0)
    const rotated = JSON.parse(now.stdout) as { old: ApiKeySummary; new: ApiKeySummary & { key: string } }
    expect(Date.parse(rotated.old.expires_at!)).toBeLessThanOrEqual(Date.now())
    const expired = await commerce(['api-keys', 'rotate', replacement.id, '--json'], withDb())
    expect(expired.code).toBe(1)
    expect(JSON.parse(expired.stdout)).toEqual({ error: { code: 'conflict', message: `API key '${replacement.id}' is expired: create a new one instead` } })
    await commerce(['api-keys', 'revoke', rotated.new.id], withDb())
    const revoked = await commerce(['api-keys', 'rotate', rotated.new.id], withDb())
    expect(errorText(revoked.stderr)).toBe(`Error: API key '${rotated.new.id}' is revoked: create a new one instead`)
    const unknown = await commerce(['api-keys', 'rotate', '0190a6f1-7c3a-7000-8000-00000000beef'], withDb())
    expect(errorText(unknown.stderr)).toBe("Error: No API key with id '0190a6f1-7c3a-7000-8000-00000000beef'")
  })

  it('--help lists the four commands with examples', async () => {
    const topic = await commerce(['api-keys', '--help'])
    expect(topic.code).toBe(0)
    for (const verb of ['create', 'list', 'revoke', 'rotate']) expect(topic.stdout).toMatch(new RegExp(`^\\s+api-keys ${verb}\\s`, 'm'))
    const create = await commerce(['api-keys', 'create', '--help'])
    expect(create.stdout).toContain('EXAMPLES')
    expect(create.stdout).toContain('--scopes products:read,orders:write')
  })
})

describe('commerce oauth-clients', () => {
  let created: OAuthClientSummary & { client_secret: string }

  it('create prints client_id and client_secret once and stores only the secret’s SHA-256', async () => {
    const result = await commerce(['oauth-clients', 'create', '--name', 'Warehouse', '--scopes', 'orders:read, shipping:write'], withDb())
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toContain('Copy the secret now')
    const clientId = /^client_id\s+(cc_[0-9A-Za-z]{24})$/m.exec(result.stdout)?.[1]
    const secret = /^client_secret\s+(cs_[0-9A-Za-z]{40})$/m.exec(result.stdout)?.[1]
    expect(clientId).toBeDefined()
    expect(secret).toBeDefined()

    const rows = await sql<Record<string, unknown>[]>`select * from oauth_clients where client_id = ${clientId!}`
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      name: 'Warehouse',
      secret_hash: hashClientSecret(secret!),
      scopes: ['orders:read', 'shipping:write'],
      last_used_at: null,
      revoked_at: null,
    })
    const [stored] = await sql<{ text: string }[]>`select string_agg(t::text, '') as text from oauth_clients t`
    expect(stored!.text).not.toContain(secret!.slice(3))
  })

  it('create --json gives the secret with the client; a bad scope stores nothing', async () => {
    const result = await commerce(['oauth-clients', 'create', '--name', 'reporting', '--scopes', 'read', '--json'], withDb())
    expect(result).toMatchObject({ code: 0, stderr: '' })
    created = JSON.parse(result.stdout)
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'reporting',
      client_id: expect.stringMatching(/^cc_[0-9A-Za-z]{24}$/),
      scopes: ['read'],
      created_at: expect.any(String),
      last_used_at: null,
      revoked_at: null,
      client_secret: expect.stringMatching(/^cs_[0-9A-Za-z]{40}$/),
    })

    const before = await sql`select id from oauth_clients`
    const bad = await commerce(['oauth-clients', 'create', '--name', 'bad', '--scopes', 'widgets:read'], withDb())
    expect(bad.code).toBe(1)
    expect(errorText(bad.stderr)).toContain("Error: 'widgets:read' is not a scope")
    expect(await sql`select id from oauth_clients`).toHaveLength(before.length)
  })

  it('list shows every client, never a secret', async () => {
    const table = await commerce(['oauth-clients', 'list'], withDb())
    expect(table).toMatchObject({ code: 0, stderr: '' })
    expect(table.stdout).toMatch(/^ID\s+NAME\s+CLIENT ID\s+SCOPES\s+CREATED\s+LAST USED\s+REVOKED$/m)
    expect(table.stdout).toMatch(new RegExp(`^${created.id}\\s+reporting\\s+${created.client_id}\\s+read\\s+\\S+\\s+-\\s+-$`, 'm'))
    expect(table.stdout).not.toContain('cs_')

    const json = await commerce(['oauth-clients', 'list', '--json'], withDb())
    const listed = JSON.parse(json.stdout) as { oauth_clients: OAuthClientSummary[] }
    expect(listed.oauth_clients.map((client) => client.name)).toEqual(['Warehouse', 'reporting'])
    const { client_secret: _shownOnce, ...summary } = created
    expect(listed.oauth_clients[1]).toEqual(summary)
  })

  it('revoke sets revoked_at; an unknown or malformed id exits 1', async () => {
    const result = await commerce(['oauth-clients', 'revoke', created.id], withDb())
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toContain(`Revoked OAuth client "reporting" (${created.client_id})`)
    const [row] = await sql<{ revoked: boolean }[]>`select revoked_at is not null as revoked from oauth_clients where id = ${created.id}`
    expect(row!.revoked).toBe(true)

    const unknown = await commerce(['oauth-clients', 'revoke', '0190a6f1-7c3a-7000-8000-00000000beef'], withDb())
    expect(unknown.code).toBe(1)
    expect(errorText(unknown.stderr)).toBe("Error: No OAuth client with id '0190a6f1-7c3a-7000-8000-00000000beef'")
    const malformed = await commerce(['oauth-clients', 'revoke', 'nope', '--json'], withDb())
    expect(malformed.code).toBe(1)
    expect(JSON.parse(malformed.stdout)).toEqual({ error: { code: 'not_found', message: "No OAuth client with id 'nope'" } })
  })

  it('--help lists the three commands with examples', async () => {
    const topic = await commerce(['oauth-clients', '--help'])
    expect(topic.code).toBe(0)
    for (const verb of ['create', 'list', 'revoke']) expect(topic.stdout).toMatch(new RegExp(`^\\s+oauth-clients ${verb}\\s`, 'm'))
    const create = await commerce(['oauth-clients', 'create', '--help'])
    expect(create.stdout).toContain('EXAMPLES')
    expect(create.stdout).toContain('--scopes orders:read,shipping:write')
  })
})

describe('commerce (help and version)', () => {
  it('--help lists the commands and topics; users --help lists users create', async () => {
    const root = await commerce(['--help'])
    expect(root.code).toBe(0)
    expect(root.stdout).toMatch(/^\s+migrate\s+Apply the database migrations\.$/m)
    expect(root.stdout).toMatch(/^\s+users\s+User accounts/m)
    const users = await commerce(['users', '--help'])
    expect(users.code).toBe(0)
    expect(users.stdout).toMatch(/^\s+users create\s+Create a user account/m)
    expect(users.stdout).toMatch(/^\s+users disable\s+Disable a user/m)
  })

  it('every command has a summary and --help examples', async () => {
    const manifest = JSON.parse(await readFile(MANIFEST, 'utf8')) as {
      commands: Record<string, { pluginName: string; summary?: string; examples?: string[] }>
    }
    const ours = Object.entries(manifest.commands).filter(([, command]) => command.pluginName === '@commerce/cli')
    expect(ours.length).toBeGreaterThan(90)
    expect(ours.filter(([, command]) => !command.summary || !command.examples?.length).map(([id]) => id)).toEqual([])
    const help = await commerce(['checkout', 'complete', '--help'])
    expect(help.stdout).toContain('$ commerce checkout complete <checkout_id> --payment-method <payment-method> --payment-token <payment-token>')
    expect(help.stdout).toContain('Calls POST /api/v1/checkouts/{id}/complete.')
  })

  it('the README command reference is the one oclif generates from the commands', async () => {
    const generated = await new Promise<string>((resolve, reject) =>
      execFile(OCLIF, ['readme', '--no-aliases', '--no-source-links', '--dry-run'], { cwd: PACKAGE_DIR }, (error, stdout) =>
        error ? reject(error) : resolve(stdout),
      ),
    )
    // The dry run first logs "replacing <!-- commands --> in …": the markers are matched at line starts.
    const section = (text: string) => text.slice(text.indexOf('\n<!-- commands -->'), text.indexOf('\n<!-- commandsstop -->'))
    const readme = await readFile(join(PACKAGE_DIR, 'README.md'), 'utf8')
    // Regenerate with `pnpm --filter @commerce/cli readme` after changing a command or an API route.
    expect(section(readme)).toBe(section(generated))
  })

  it('--version prints the package version', async () => {
    const result = await commerce(['--version'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^@commerce\/cli\/0\.1\.0 /)
  })
})
