/**
 * API keys: `ck_` + 34 random base62 characters + a 6-character base62 CRC32 of those 34, so a
 * typo or a scanner can tell a real-looking key offline. Only the lookup prefix and the SHA-256
 * are stored.
 */
import { createHash, randomInt, timingSafeEqual } from 'node:crypto'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const TAG = 'ck_'
const RANDOM_LENGTH = 34
const CHECKSUM_LENGTH = 6
const LOOKUP_PREFIX_LENGTH = 8
const API_KEY = new RegExp(`^${TAG}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`)

const CRC32_TABLE = Array.from({ length: 256 }, (_, byte) => {
  let crc = byte
  for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1
  return crc >>> 0
})

/** CRC-32 (IEEE, as zlib) of ASCII text; Node 20 has no zlib.crc32. */
export function crc32(text: string): number {
  let crc = 0xffffffff
  for (let i = 0; i < text.length; i++) crc = CRC32_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

function checksumOf(random: string): string {
  let value = crc32(random)
  let text = ''
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    text = BASE62[value % 62] + text
    value = Math.floor(value / 62)
  }
  return text
}

/** Random base62 text; randomInt is uniform over the alphabet (no modulo bias). */
export function randomBase62(length: number): string {
  let random = ''
  for (let i = 0; i < length; i++) random += BASE62[randomInt(BASE62.length)]
  return random
}

export function generateApiKey(): string {
  const random = randomBase62(RANDOM_LENGTH)
  return TAG + random + checksumOf(random)
}

/** Right shape and a matching checksum: worth a database lookup. */
export function isWellFormedApiKey(text: string): boolean {
  if (!API_KEY.test(text)) return false
  const random = text.slice(TAG.length, TAG.length + RANDOM_LENGTH)
  return text.slice(TAG.length + RANDOM_LENGTH) === checksumOf(random)
}

/** The stored, unique lookup prefix: the first 8 characters after `ck_`. */
export function apiKeyLookupPrefix(key: string): string {
  return key.slice(TAG.length, TAG.length + LOOKUP_PREFIX_LENGTH)
}

/** Lowercase hex SHA-256 of the key, the only form of it that is stored. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** Compares the key's hash with a stored one in constant time. */
export function apiKeyMatchesHash(key: string, storedHash: string): boolean {
  const expected = Buffer.from(hashApiKey(key), 'hex')
  const stored = Buffer.from(storedHash, 'hex')
  return stored.length === expected.length && timingSafeEqual(expected, stored)
}
