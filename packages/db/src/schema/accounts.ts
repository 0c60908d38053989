import { sql } from 'drizzle-orm'
import { boolean, index, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
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
    /** Set while the account is disabled: no sign-in, and its tokens are refused (users disable). */
    disabledAt: timestamp('disabled_at', { withTimezone: true, mode: 'date' }),
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
    /** Set when the customer was deleted: personal data is anonymised, the row stays for its orders. */
    deletedAt: timestamp('deleted_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('customers_user_key').on(t.userId), uniqueIndex('customers_email_key').on(sql`lower(${t.email})`)],
)

export const customerAddresses = pgTable(
  'customer_addresses',
  {
    id: id(),
    customerId: uuid('customer_id')
      .notNull()
      .references(() => customers.id, { onDelete: 'cascade' }),
    firstName: text('first_name'),
    lastName: text('last_name'),
    company: text('company'),
    line1: text('line1').notNull(),
    line2: text('line2'),
    city: text('city').notNull(),
    region: text('region'),
    postalCode: text('postal_code'),
    /** ISO 3166-1 alpha-2. */
    country: text('country').notNull(),
    phone: text('phone'),
    isDefaultShipping: boolean('is_default_shipping').notNull().default(false),
    isDefaultBilling: boolean('is_default_billing').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('customer_addresses_customer_idx').on(t.customerId),
    // At most one default of each kind per customer, whatever the concurrency.
    uniqueIndex('customer_addresses_default_shipping_key').on(t.customerId).where(sql`${t.isDefaultShipping}`),
    uniqueIndex('customer_addresses_default_billing_key').on(t.customerId).where(sql`${t.isDefaultBilling}`),
  ],
)
