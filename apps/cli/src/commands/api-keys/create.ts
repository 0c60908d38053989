import { Flags } from '@oclif/core'
import type { ApiKeySummary } from '../../api-keys.js'
import { BaseCommand } from '../../base-command.js'
import { loadConfig } from '../../config.js'
import { formatDetails } from '../../output.js'

const MAX_NAME_LENGTH = 200

export default class ApiKeysCreate extends BaseCommand {
  static override summary = 'Create an API key and print it once.'
  static override description =
    'Writes straight to the database (DATABASE_URL, else the embedded one), applying pending migrations first. ' +
    'The key (ck_ + 40 base62 characters) is printed this once: only its SHA-256 hash and its 8-character ' +
    'lookup prefix are stored. Scopes: <resource>:read or <resource>:write (write implies read), a bare read ' +
    '(every :read) or * (everything). Without --rate-limit the key gets RATE_LIMIT_API_KEY_MAX requests per window. ' +
    'With --expires-in the API refuses the key (401) once that time has passed; api-keys rotate replaces a key ' +
    'with a grace period.'
  static override examples = [
    '<%= config.bin %> <%= command.id %> --name "ERP sync" --scopes products:read,orders:write',
    '<%= config.bin %> <%= command.id %> --name dashboard --scopes read --rate-limit 1200 --json',
    '<%= config.bin %> <%= command.id %> --name ops --scopes "*"',
    '<%= config.bin %> <%= command.id %> --name "partner feed" --scopes products:read --expires-in 90d',
  ]
  static override enableJsonFlag = true
  static override flags = {
    name: Flags.string({ summary: 'What the key is for, shown by api-keys list.', required: true }),
    scopes: Flags.string({ summary: 'Comma-separated scopes, e.g. products:read,orders:write.', required: true }),
    'rate-limit': Flags.integer({ summary: 'Requests per rate-limit window (one minute by default) for this key.', min: 1 }),
    'expires-in': Flags.string({ summary: 'How long the key works: 90d, 12h, 30m (a bare number is days). Default: until revoked.' }),
  }

  async run(): Promise<ApiKeySummary & { key: string }> {
    const { flags } = await this.parse(ApiKeysCreate)
    const { DomainError } = await import('@commerce/domain')
    const { createApiKey, migrate } = await import('@commerce/db')
    const { apiKeySummary, parseLifetime, parseScopes, storeNewKey } = await import('../../api-keys.js')
    const { withDatabase } = await import('../../database.js')
    const name = flags.name.trim()
    if (name === '' || name.length > MAX_NAME_LENGTH) {
      throw new DomainError('validation_error', `The name must be 1 to ${MAX_NAME_LENGTH} characters long`)
    }
    const scopes = parseScopes(flags.scopes)
    const lifetime = flags['expires-in'] === undefined ? undefined : parseLifetime(flags['expires-in'], 'expires-in')

    const { key, row } = await withDatabase(await loadConfig(), async ({ url, db }) => {
      await migrate(url)
      return storeNewKey((stored) =>
        createApiKey(db, {
          name,
          ...stored,
          scopes,
          rateLimitPerMinute: flags['rate-limit'] ?? null,
          expiresAt: lifetime === undefined ? null : new Date(Date.now() + lifetime),
        }),
      )
    })
    const result = { ...apiKeySummary(row), key }

    this.log(`Created API key "${result.name}". Copy the key now: it is not stored and cannot be shown again.`)
    this.log('')
    this.log(key)
    this.log('')
    this.log(
      formatDetails([
        ['id', result.id],
        ['prefix', result.prefix],
        ['scopes', result.scopes.join(',')],
        ['rate limit', result.rate_limit_per_minute === null ? 'default' : String(result.rate_limit_per_minute)],
        ['created at', result.created_at],
        ['expires at', result.expires_at ?? 'never'],
      ]),
    )
    return result
  }
}
