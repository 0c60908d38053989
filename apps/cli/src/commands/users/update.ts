import { Args, Flags } from '@oclif/core'
import type { User } from '@commerce/domain'
import { BaseCommand } from '../../base-command.js'
import { changeUser, COMMAND_ROLES, describeUser } from '../../users.js'

export default class UsersUpdate extends BaseCommand {
  static override summary = 'Change a user’s role: it counts from the account’s next request, with the tokens it already has.'
  static override description =
    'Writes straight to the database (DATABASE_URL, else the embedded one), so it needs no token. The API checks ' +
    'every user token against its account, so a demoted admin gets 403 on admin routes at once. The last enabled ' +
    'admin cannot be demoted. Over the API with an admin token: commerce accounts update.'
  static override examples = [
    '<%= config.bin %> <%= command.id %> admin@example.com --role customer',
    '<%= config.bin %> <%= command.id %> 0190a6f1-7c3a-7000-8000-00000000beef --role admin --json',
  ]
  static override enableJsonFlag = true
  static override args = {
    user: Args.string({ description: 'The user’s id or email.', required: true }),
  }
  static override flags = {
    role: Flags.option({ summary: 'The new role.', options: COMMAND_ROLES, required: true })(),
  }

  async run(): Promise<User> {
    const { args, flags } = await this.parse(UsersUpdate)
    const user = await changeUser(args.user, { role: flags.role })
    this.log(`${user.email} is now ${user.role}`)
    this.log(describeUser(user))
    return user
  }
}
