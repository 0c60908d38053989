import { Args } from '@oclif/core'
import type { User } from '@commerce/domain'
import { BaseCommand } from '../../base-command.js'
import { changeUser, describeUser } from '../../users.js'

export default class UsersEnable extends BaseCommand {
  static override summary = 'Enable a disabled user again: it can sign in, and its unexpired tokens work again.'
  static override description = 'Writes straight to the database (DATABASE_URL, else the embedded one), so it needs no token.'
  static override examples = ['<%= config.bin %> <%= command.id %> jo@example.com']
  static override enableJsonFlag = true
  static override args = {
    user: Args.string({ description: 'The user’s id or email.', required: true }),
  }

  async run(): Promise<User> {
    const { args } = await this.parse(UsersEnable)
    const user = await changeUser(args.user, { disabled: false })
    this.log(`Enabled ${user.email}`)
    this.log(describeUser(user))
    return user
  }
}
