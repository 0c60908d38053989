import { Args } from '@oclif/core'
import { BaseCommand } from '../../base-command.js'
import { loadConfig } from '../../config.js'
import type { OAuthClientSummary } from '../../oauth-clients.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export default class OAuthClientsRevoke extends BaseCommand {
  static override summary = 'Revoke an OAuth client: it gets no new access token (invalid_client).'
  static override description =
    'Writes straight to the database (DATABASE_URL, else the embedded one). Tokens it already holds stay valid ' +
    'until they expire, at most one hour. The client stays listed, with the time it was revoked; revoking it ' +
    'again keeps that time.'
  static override examples = ['<%= config.bin %> <%= command.id %> 0190a6f1-7c3a-7000-8000-00000000beef']
  static override enableJsonFlag = true
  static override args = {
    id: Args.string({ description: 'The client’s id (not its client_id), as oauth-clients list shows it.', required: true }),
  }

  async run(): Promise<OAuthClientSummary> {
    const { args } = await this.parse(OAuthClientsRevoke)
    const { DomainError } = await import('@commerce/domain')
    const { migrate, revokeOAuthClient } = await import('@commerce/db')
    const { withDatabase } = await import('../../database.js')
    const { oauthClientSummary } = await import('../../oauth-clients.js')
    const row = UUID.test(args.id)
      ? await withDatabase(await loadConfig(), async ({ url, db }) => {
          await migrate(url)
          return revokeOAuthClient(db, args.id)
        })
      : undefined
    if (!row) throw new DomainError('not_found', `No OAuth client with id '${args.id}'`)
    const result = oauthClientSummary(row)
    this.log(`Revoked OAuth client "${result.name}" (${result.client_id}) at ${result.revoked_at}`)
    return result
  }
}
