import { sql } from 'drizzle-orm'
import { pgEnum, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { ROLES } from '@commerce/domain'
import { createdAt, id, updatedAt } from './columns.js'

export const role = pgEnum('role', ROLES)

export const users = pgTable(
  'users',
  {
    id: id(),
    email: text('email').notNull(),
    /** scrypt$N$r$p$salt$hash, never the password. */
    passwordHash: text('password_hash').notNull(),
    role: role('role').notNull().default('customer'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('users_email_key').on(sql`lower(${t.email})`)],
)

export const customers = pgTable(
  'customers',
  {
    id: id(),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'set null' }),
    email: text('email').notNull(),
    firstName: text('first_name'),
    lastName: text('last_name'),
    phone: text('phone'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('customers_user_key').on(t.userId), uniqueIndex('customers_email_key').on(sql`lower(${t.email})`)],
)
