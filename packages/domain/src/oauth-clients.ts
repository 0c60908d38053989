/**
 * OAuth 2.0 clients (client credentials grant): a public `client_id` (`cc_` + 24 base62) and a
 * secret (`cs_` + 40 base62, about 238 random bits) of which only the SHA-256 is stored.
 */
import { apiKeyMatchesHash, hashApiKey, randomBase62 } from './api-keys.js'

const CLIENT_ID = /^cc_[0-9A-Za-z]{24}$/

export function generateClientId(): string {
  return `cc_${randomBase62(24)}`
}

export function generateClientSecret(): string {
  return `cs_${randomBase62(40)}`
}

/** Right shape: worth a database lookup. */
export function isClientId(text: string): boolean {
  return CLIENT_ID.test(text)
}

// A plain SHA-256, as for API keys: a 238-bit random secret cannot be guessed from its hash, so
// a slow hash (scrypt) would only add its cost to every token request.
/** Lowercase hex SHA-256 of the secret, the only form of it that is stored. */
export const hashClientSecret: (secret: string) => string = hashApiKey
/** Compares the secret's hash with a stored one in constant time. */
export const clientSecretMatchesHash: (secret: string, storedHash: string) => boolean = apiKeyMatchesHash
