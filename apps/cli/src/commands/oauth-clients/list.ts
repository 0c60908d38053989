import { BaseCommand } from '../../base-command.js'
import { loadConfig } from '../../config.js'
import type { OAuthClientSummary } from '../../oauth-clients.js'
import { formatTable } from '../../output.js'

export default class OAuthClientsList extends BaseCommand {
  static override summary = 'List OAuth clients, revoked ones included (never their secrets).'
  static override description =
    'Reads straight from the database (DATABASE_URL, else the embedded one). Shows each client’s id, name, ' +
    'client_id, scopes, when it was created, last got a token and was revoked.'
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json']
  static override enableJsonFlag = true

  async run(): Promise<{ oauth_clients: OAuthClientSummary[] }> {
    await this.parse(OAuthClientsList)
    const { listOAuthClients, migrate } = await import('@commerce/db')
    const { withDatabase } = await import('../../database.js')
    const { oauthClientSummary } = await import('../../oauth-clients.js')
    const rows = await withDatabase(await loadConfig(), async ({ url, db }) => {
      await migrate(url)
      return listOAuthClients(db)
    })
    const clients = rows.map(oauthClientSummary)
    if (clients.length === 0) this.log('No OAuth clients yet: create one with oauth-clients create.')
    else {
      this.log(
        formatTable(
          ['ID', 'NAME', 'CLIENT ID', 'SCOPES', 'CREATED', 'LAST USED', 'REVOKED'],
          clients.map((client) => [
            client.id,
            client.name,
            client.client_id,
            client.scopes.join(','),
            client.created_at,
            client.last_used_at,
            client.revoked_at,
          ]),
        ),
      )
    }
    return { oauth_clients: clients }
  }
}
