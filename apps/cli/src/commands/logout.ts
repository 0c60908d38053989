import { BaseCommand } from '../base-command.js'
import { credentialsFile, forgetCredentials } from '../credentials.js'

export default class Logout extends BaseCommand {
  static override summary = 'Forget the token stored by login.'
  static override examples = ['<%= config.bin %> <%= command.id %>']
  static override enableJsonFlag = true

  async run(): Promise<{ forgotten: boolean }> {
    await this.parse(Logout)
    const forgotten = await forgetCredentials(this.config.configDir)
    this.log(forgotten ? `Removed ${credentialsFile(this.config.configDir)}` : 'No stored token.')
    return { forgotten }
  }
}
