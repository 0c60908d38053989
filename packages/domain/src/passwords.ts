/**
 * Password hashing with scrypt (N=2^17, r=8, p=1 by default). The stored form carries its own
 * parameters — scrypt$N$r$p$salt$hash — so the cost can rise later without breaking old hashes.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'

const KEY_LENGTH = 64
export const DEFAULT_SCRYPT_COST = 2 ** 17

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; Node's default maxmem (32 MiB) is too small for N=2^17.
  const maxmem = 256 * (options.N ?? DEFAULT_SCRYPT_COST) * (options.r ?? 8) + 1024 * 1024
  return new Promise((done, fail) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { ...options, maxmem }, (error, key) =>
      error ? fail(error) : done(key),
    ),
  )
}

export async function hashPassword(password: string, cost = DEFAULT_SCRYPT_COST): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, { N: cost, r: 8, p: 1 })
  return `scrypt$${cost}$8$1$${salt.toString('base64')}$${key.toString('base64')}`
}

const STORED_HASH = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/

/** False for a wrong password and for a stored string that is not one of ours. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = STORED_HASH.exec(stored)
  if (!match) return false
  const [, n, r, p, salt = '', hash = ''] = match
  const options = { N: Number(n), r: Number(r), p: Number(p) }
  // Node's scrypt reads 0 as "use the default", which is not what the string says.
  if (options.N < 2 || options.r < 1 || options.p < 1) return false
  let key: Buffer
  try {
    key = await derive(password, Buffer.from(salt, 'base64'), options)
  } catch {
    // Parameters scrypt refuses (N not a power of two, r = 0, over the memory limit).
    return false
  }
  const expected = Buffer.from(hash, 'base64')
  return key.length === expected.length && timingSafeEqual(key, expected)
}
