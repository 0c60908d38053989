import { sql } from 'drizzle-orm'
import { boolean, index, integer, pgEnum, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { ROLES, type AccountTokenPurpose } from '@commerce/domain'
import { createdAt, id, updatedAt } from './columns.js'
import { notifications } from './notifications.js'

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
    /** When the account proved it receives mail at `email` (an emailed link); null: not yet. */
    emailVerifiedAt: timestamp('email_verified_at', { withTimezone: true, mode: 'date' }),
    /**
     * When the account could first be signed in to (`account.activated`, the welcome email): at
     * sign-up, or when its address was verified if REQUIRE_EMAIL_VERIFICATION was on; null: not yet.
     */
    activatedAt: timestamp('activated_at', { withTimezone: true, mode: 'date' }),
    /**
     * Bumped when the password changes (a reset, or the customer's own change); tokens carry the
     * version they were issued under, and a token of an older one is refused (sql/account-state.ts).
     */
    credentialVersion: integer('credential_version').notNull().default(0),
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

/** Customers grouped for prices and promotions (wholesale, VIP). */
export const customerGroups = pgTable(
  'customer_groups',
  {
    id: id(),
    name: text('name').notNull(),
    description: text('description'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('customer_groups_name_key').on(sql`lower(${t.name})`)],
)

export const customerGroupMembers = pgTable(
  'customer_group_members',
  {
    groupId: uuid('group_id')
      .notNull()
      .references(() => customerGroups.id, { onDelete: 'cascade' }),
    customerId: uuid('customer_id')
      .notNull()
      .references(() => customers.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  // (customer, group) answers "the groups of this cart's customer" on every cart read.
  (t) => [primaryKey({ name: 'customer_group_members_pkey', columns: [t.customerId, t.groupId] }), index('customer_group_members_group_idx').on(t.groupId, t.customerId)],
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
    index('customer_addresses_customer_idx').on(t.customerId, t.createdAt, t.id),
    // At most one default of each kind per customer, whatever the concurrency.
    uniqueIndex('customer_addresses_default_shipping_key').on(t.customerId).where(sql`${t.isDefaultShipping}`),
    uniqueIndex('customer_addresses_default_billing_key').on(t.customerId).where(sql`${t.isDefaultBilling}`),
  ],
)

/**
 * The single-use tokens of the emailed account links (password reset, email verification, email
 * change). Only their SHA-256 is kept; the worker makes each token when it sends the email
 * (one per notification, replaced by each attempt), so the token itself is only ever in the email.
 */
export const accountTokens = pgTable(
  'account_tokens',
  {
    id: id(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    purpose: text('purpose').$type<AccountTokenPurpose>().notNull(),
    /** The address the link was sent to: for an email change, the new address it confirms. */
    email: text('email').notNull(),
    /** Lowercase hex SHA-256 of the token. */
    tokenHash: text('token_hash').notNull(),
    /** The email that carries it. */
    notificationId: uuid('notification_id')
      .notNull()
      .references(() => notifications.id, { onDelete: 'cascade' }),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** Set when the link was followed, or when a password change made it void. */
    usedAt: timestamp('used_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('account_tokens_hash_key').on(t.tokenHash),
    uniqueIndex('account_tokens_notification_key').on(t.notificationId),
    index('account_tokens_user_idx').on(t.userId),
  ],
)
