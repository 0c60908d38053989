import type { ApiKeySummary } from '../../api-keys.js'
import { BaseCommand } from '../../base-command.js'
import { loadConfig } from '../../config.js'
import { formatTable } from '../../output.js'

export default class ApiKeysList extends BaseCommand {
  static override summary = 'List API keys, revoked ones included (never the keys themselves).'
  static override description =
    'Reads straight from the database (DATABASE_URL, else the embedded one). Shows each key’s id, name, ' +
    'lookup prefix (the 8 characters after ck_), scopes, when it was created, last used (recorded at most once ' +
    'a minute), revoked and when it expires.'
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json']
  static override enableJsonFlag = true

  async run(): Promise<{ api_keys: ApiKeySummary[] }> {
    await this.parse(ApiKeysList)
    const { listApiKeys, migrate } = await import('@commerce/db')
    const { apiKeySummary } = await import('../../api-keys.js')
    const { withDatabase } = await import('../../database.js')
    const rows = await withDatabase(await loadConfig(), async ({ url, db }) => {
      await migrate(url)
      return listApiKeys(db)
    })
    const keys = rows.map(apiKeySummary)
    if (keys.length === 0) this.log('No API keys yet: create one with api-keys create.')
    else {
      this.log(
        formatTable(
          ['ID', 'NAME', 'PREFIX', 'SCOPES', 'CREATED', 'LAST USED', 'REVOKED', 'EXPIRES'],
          keys.map((key) => [key.id, key.name, key.prefix, key.scopes.join(','), key.created_at, key.last_used_at, key.revoked_at, key.expires_at]),
        ),
      )
    }
    return { api_keys: keys }
  }
}
