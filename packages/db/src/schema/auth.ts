import { integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { createdAt, id } from './columns.js'

/** API keys made with the CLI; the key itself is never stored, only its lookup prefix and SHA-256. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: id(),
    name: text('name').notNull(),
    /** The 8 characters after `ck_`. */
    prefix: text('prefix').notNull(),
    /** Lowercase hex SHA-256 of the whole key. */
    keyHash: text('key_hash').notNull(),
    scopes: text('scopes').array().notNull(),
    /** Null: RATE_LIMIT_API_KEY_MAX. */
    rateLimitPerMinute: integer('rate_limit_per_minute'),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
    /** Refused from then on; null: never (api-keys create --expires-in, api-keys rotate --grace). */
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [uniqueIndex('api_keys_prefix_key').on(t.prefix)],
)

/** OAuth 2.0 clients made with the CLI; the secret is never stored, only its SHA-256. */
export const oauthClients = pgTable(
  'oauth_clients',
  {
    id: id(),
    name: text('name').notNull(),
    /** `cc_` + 24 base62: public, sent with the secret to POST /oauth/token. */
    clientId: text('client_id').notNull(),
    /** Lowercase hex SHA-256 of the whole secret. */
    secretHash: text('secret_hash').notNull(),
    /** What its tokens may hold at most. */
    scopes: text('scopes').array().notNull(),
    createdAt: createdAt(),
    /** When it last got a token. */
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [uniqueIndex('oauth_clients_client_id_key').on(t.clientId)],
)
