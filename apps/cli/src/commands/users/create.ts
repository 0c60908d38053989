import { Flags } from '@oclif/core'
import type { Customer, User } from '@commerce/domain'
import { BaseCommand } from '../../base-command.js'
import { loadConfig } from '../../config.js'
import { formatDetails } from '../../output.js'
import { COMMAND_ROLES } from '../../users.js'

// The same bounds as the API's register body (RegisterBody in @commerce/domain).
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const MAX_EMAIL_LENGTH = 254
const MIN_PASSWORD_LENGTH = 8
const MAX_PASSWORD_LENGTH = 200

export interface CreatedUser {
  user: User
  customer: Customer | null
}

export default class UsersCreate extends BaseCommand {
  static override summary = 'Create a user account (an admin, or a customer with its customer record).'
  static override description =
    'Writes straight to the database (DATABASE_URL, else the embedded one), applying pending migrations first. ' +
    'A customer account also gets its customer record and a customer.created event. ' +
    'The password is hashed with scrypt and never printed.'
  static override examples = [
    '<%= config.bin %> <%= command.id %> --email admin@example.com --password "correct horse battery" --role admin',
    '<%= config.bin %> <%= command.id %> --email jo@example.com --password "s3cret-enough" --json',
  ]
  static override enableJsonFlag = true
  static override flags = {
    email: Flags.string({ summary: 'Email address; unique, compared case-insensitively.', required: true }),
    password: Flags.string({ summary: `Password, at least ${MIN_PASSWORD_LENGTH} characters.`, required: true }),
    role: Flags.option({ summary: 'Account role.', options: COMMAND_ROLES, default: 'customer' })(),
  }

  async run(): Promise<CreatedUser> {
    const { flags } = await this.parse(UsersCreate)
    const { DomainError, hashPassword } = await import('@commerce/domain')
    const { createUser, customerSnapshot, migrate, userSnapshot } = await import('@commerce/db')
    const { withDatabase } = await import('../../database.js')
    const email = flags.email.trim()
    if (email.length > MAX_EMAIL_LENGTH || !EMAIL.test(email)) {
      throw new DomainError('validation_error', `'${flags.email}' is not a valid email address`)
    }
    if (flags.password.length < MIN_PASSWORD_LENGTH || flags.password.length > MAX_PASSWORD_LENGTH) {
      throw new DomainError(
        'validation_error',
        `The password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`,
      )
    }
    const config = await loadConfig()
    const passwordHash = await hashPassword(flags.password, config.scryptCost)

    const created = await withDatabase(config, async ({ url, db }) => {
      await migrate(url)
      return createUser(db, { email, passwordHash, role: flags.role })
    })
    const result: CreatedUser = {
      user: userSnapshot(created.user),
      customer: created.customer ? customerSnapshot(created.customer) : null,
    }

    this.log(`Created ${result.user.role} ${result.user.email}`)
    this.log(
      formatDetails([
        ['id', result.user.id],
        ['email', result.user.email],
        ['role', result.user.role],
        ['customer id', result.customer?.id],
        ['created at', result.user.created_at],
      ]),
    )
    return result
  }
}
