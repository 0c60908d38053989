/**
 * The tokens of emailed account links (password reset, email verification, email change): 32
 * random bytes as base64url, stored only as their SHA-256 (like API keys: enough for random
 * secrets of this length, and a lookup by hash needs no constant-time compare).
 */
import { createHash, randomBytes } from 'node:crypto'

/** 43 base64url characters, so a token travels in a URL's query unescaped. */
export const ACCOUNT_TOKEN = /^[A-Za-z0-9_-]{43}$/

export function generateAccountToken(): string {
  return randomBytes(32).toString('base64url')
}

/** Lowercase hex SHA-256 of the token: what account_tokens keeps and looks up. */
export function hashAccountToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}
