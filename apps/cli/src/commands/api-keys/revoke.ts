import { Args } from '@oclif/core'
import type { ApiKeySummary } from '../../api-keys.js'
import { BaseCommand } from '../../base-command.js'
import { loadConfig } from '../../config.js'


export default class ApiKeysRevoke extends BaseCommand {
  static override summary = 'Revoke an API key: the API refuses it with 401 from its next request on.'
  static override description =
    'Writes straight to the database (DATABASE_URL, else the embedded one). The key stays listed, with the ' +
    'time it was revoked; revoking it again keeps that time.'
  static override examples = ['<%= config.bin %> <%= command.id %> 0190a6f1-7c3a-7000-8000-00000000beef']
  static override enableJsonFlag = true
  static override args = {
    id: Args.string({ description: 'The key’s id, as api-keys list shows it.', required: true }),
  }

  async run(): Promise<ApiKeySummary> {
    const { args } = await this.parse(ApiKeysRevoke)
    const { DomainError } = await import('@commerce/domain')
    const { migrate, revokeApiKey } = await import('@commerce/db')
    const { apiKeySummary, isApiKeyId } = await import('../../api-keys.js')
    const { withDatabase } = await import('../../database.js')
    const row = isApiKeyId(args.id)
      ? await withDatabase(await loadConfig(), async ({ url, db }) => {
          await migrate(url)
          return revokeApiKey(db, args.id)
        })
      : undefined
    if (!row) throw new DomainError('not_found', `No API key with id '${args.id}'`)
    const result = apiKeySummary(row)
    this.log(`Revoked API key "${result.name}" (${result.prefix}) at ${result.revoked_at}`)
    return result
  }
}
