import { Flags } from '@oclif/core'
import { BaseCommand } from '../../base-command.js'
import { loadConfig } from '../../config.js'
import type { OAuthClientSummary } from '../../oauth-clients.js'
import { formatDetails } from '../../output.js'

const MAX_NAME_LENGTH = 200
/** 24 random base62 characters colliding is already unlikely; three in a row means a bug. */
const MAX_ATTEMPTS = 3

export default class OAuthClientsCreate extends BaseCommand {
  static override summary = 'Create an OAuth client and print its secret once.'
  static override description =
    'Writes straight to the database (DATABASE_URL, else the embedded one), applying pending migrations first. ' +
    'The client gets a client_id (cc_ + 24 base62 characters) and a client_secret (cs_ + 40 base62 characters), ' +
    'printed this once: only the secret’s SHA-256 hash is stored. The client exchanges them at POST ' +
    '/api/v1/oauth/token (grant_type=client_credentials) for an access token valid one hour, holding these scopes ' +
    'or the subset it asks for. Scopes as for API keys: <resource>:read or <resource>:write, read or *.'
  static override examples = [
    '<%= config.bin %> <%= command.id %> --name "Warehouse" --scopes orders:read,shipping:write',
    '<%= config.bin %> <%= command.id %> --name reporting --scopes read --json',
  ]
  static override enableJsonFlag = true
  static override flags = {
    name: Flags.string({ summary: 'What the client is, shown by oauth-clients list.', required: true }),
    scopes: Flags.string({ summary: 'Comma-separated scopes its tokens may hold, e.g. orders:read,shipping:write.', required: true }),
  }

  async run(): Promise<OAuthClientSummary & { client_secret: string }> {
    const { flags } = await this.parse(OAuthClientsCreate)
    const { DomainError, generateClientId, generateClientSecret, hashClientSecret } = await import('@commerce/domain')
    const { createOAuthClient, migrate } = await import('@commerce/db')
    const { parseScopes } = await import('../../api-keys.js')
    const { withDatabase } = await import('../../database.js')
    const { oauthClientSummary } = await import('../../oauth-clients.js')
    const name = flags.name.trim()
    if (name === '' || name.length > MAX_NAME_LENGTH) {
      throw new DomainError('validation_error', `The name must be 1 to ${MAX_NAME_LENGTH} characters long`)
    }
    const scopes = parseScopes(flags.scopes)

    const secret = generateClientSecret()
    const row = await withDatabase(await loadConfig(), async ({ url, db }) => {
      await migrate(url)
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        const row = await createOAuthClient(db, { name, clientId: generateClientId(), secretHash: hashClientSecret(secret), scopes })
        if (row) return row
      }
      throw new Error(`No free client_id after ${MAX_ATTEMPTS} attempts`)
    })
    const result = { ...oauthClientSummary(row), client_secret: secret }

    this.log(`Created OAuth client "${result.name}". Copy the secret now: it is not stored and cannot be shown again.`)
    this.log('')
    this.log(
      formatDetails([
        ['client_id', result.client_id],
        ['client_secret', secret],
        ['id', result.id],
        ['scopes', result.scopes.join(',')],
        ['created at', result.created_at],
      ]),
    )
    return result
  }
}
