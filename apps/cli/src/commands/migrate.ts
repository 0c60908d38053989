import { BaseCommand } from '../base-command.js'

export default class Migrate extends BaseCommand {
  static override summary = 'Apply the database migrations.'
  static override description =
    'Applies every pending migration to the database named by DATABASE_URL or, when it is unset, to the ' +
    "embedded PostgreSQL in the workspace's .data/ folder (started for the command if it is not running). " +
    'Safe to run again: applied migrations are skipped.'
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    'DATABASE_URL=postgres://commerce@db:5432/commerce <%= config.bin %> <%= command.id %>',
  ]

  async run(): Promise<void> {
    await this.parse(Migrate)
    const { migrate, redactUrl } = await import('@commerce/db')
    const { withDatabase } = await import('../database.js')
    const { loadConfig } = await import('../config.js')
    const config = await loadConfig()
    const url = await withDatabase(config, async ({ url }) => {
      await migrate(url)
      return url
    })
    this.log(`Migrations applied to ${redactUrl(url)}`)
  }
}
