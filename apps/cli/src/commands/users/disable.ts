import { Args } from '@oclif/core'
import type { User } from '@commerce/domain'
import { BaseCommand } from '../../base-command.js'
import { changeUser, describeUser } from '../../users.js'

export default class UsersDisable extends BaseCommand {
  static override summary = 'Disable a user: its tokens are refused (401) from their next request and it cannot sign in.'
  static override description =
    'Writes straight to the database (DATABASE_URL, else the embedded one), so it needs no token. Open WebSocket ' +
    'connections of the account close at the next heartbeat. Disabling again keeps the first time; the last enabled ' +
    'admin cannot be disabled. Undo with users enable.'
  static override examples = ['<%= config.bin %> <%= command.id %> jo@example.com']
  static override enableJsonFlag = true
  static override args = {
    user: Args.string({ description: 'The user’s id or email.', required: true }),
  }

  async run(): Promise<User> {
    const { args } = await this.parse(UsersDisable)
    const user = await changeUser(args.user, { disabled: true })
    this.log(`Disabled ${user.email}`)
    this.log(describeUser(user))
    return user
  }
}
