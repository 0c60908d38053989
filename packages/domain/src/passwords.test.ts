import { describe, expect, it } from 'vitest'
import { DEFAULT_SCRYPT_COST, hashPassword, verifyPassword } from './passwords.js'

const FAST_COST = 2 ** 10

const valid = await hashPassword('pw', FAST_COST)
const [scheme, n, r, p, salt, hash] = valid.split('$')
const withParts = (parts: Partial<Record<'scheme' | 'n' | 'r' | 'p' | 'salt' | 'hash', string>>) =>
  Object.values({ scheme, n, r, p, salt, hash, ...parts }).join('$')

describe('hashPassword and verifyPassword', () => {
  it('stores scrypt$N$r$p$salt$hash with a 16-byte salt and a 64-byte key', async () => {
    const stored = await hashPassword('correct horse', FAST_COST)
    const [scheme, n, r, p, salt = '', hash = ''] = stored.split('$')
    expect([scheme, n, r, p]).toEqual(['scrypt', String(FAST_COST), '8', '1'])
    expect(Buffer.from(salt, 'base64')).toHaveLength(16)
    expect(Buffer.from(hash, 'base64')).toHaveLength(64)
    expect(stored).not.toContain('correct horse')
  })

  it('verifies the right password and rejects a wrong one', async () => {
    const stored = await hashPassword('correct horse', FAST_COST)
    expect(await verifyPassword('correct horse', stored)).toBe(true)
    expect(await verifyPassword('correct horse ', stored)).toBe(false)
    expect(await verifyPassword('Correct horse', stored)).toBe(false)
    expect(await verifyPassword('', stored)).toBe(false)
  })

  it('salts every hash: the same password hashes differently and both verify', async () => {
    const first = await hashPassword('same password', FAST_COST)
    const second = await hashPassword('same password', FAST_COST)
    expect(first).not.toBe(second)
    expect(first.split('$')[4]).not.toBe(second.split('$')[4])
    expect(await verifyPassword('same password', first)).toBe(true)
    expect(await verifyPassword('same password', second)).toBe(true)
  })

  it('verifies an empty password and a non-ASCII one', async () => {
    expect(await verifyPassword('', await hashPassword('', FAST_COST))).toBe(true)
    expect(await verifyPassword('pässwörd 🔑', await hashPassword('pässwörd 🔑', FAST_COST))).toBe(true)
  })

  it('treats NFKC-equivalent spellings as the same password', async () => {
    const stored = await hashPassword('caf\u00e9', FAST_COST)
    expect(await verifyPassword('cafe\u0301', stored)).toBe(true)
  })

  it('verifies a hash made at a different cost from the parameters it carries', async () => {
    const stored = await hashPassword('rising cost', 2 ** 11)
    expect(stored.split('$')[1]).toBe(String(2 ** 11))
    expect(await verifyPassword('rising cost', stored)).toBe(true)
  })

  it('hashes and verifies at the default cost', { timeout: 20_000 }, async () => {
    const stored = await hashPassword('default cost')
    expect(stored.split('$')[1]).toBe(String(DEFAULT_SCRYPT_COST))
    expect(await verifyPassword('default cost', stored)).toBe(true)
  })

  describe('returns false, without throwing, for a malformed stored string', () => {
    it('verifies the well-formed string the malformed cases are made from', async () => {
      expect(await verifyPassword('pw', withParts({}))).toBe(true)
    })

    it.each([
      ['empty', ''],
      ['a bcrypt hash', '$2b$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234'],
      ['another scheme', withParts({ scheme: 'argon2id' })],
      ['a missing salt', withParts({ salt: '' })],
      ['a missing hash', withParts({ hash: '' })],
      ['too few fields', valid.split('$').slice(0, 5).join('$')],
      ['an extra field', `${valid}$extra`],
      ['a non-numeric N', withParts({ n: 'abc' })],
      ['an empty N', withParts({ n: '' })],
      ['N not a power of two', withParts({ n: '1000' })],
      ['N of 1', withParts({ n: '1' })],
      ['an absurd N', withParts({ n: String(2 ** 40) })],
      ['r of 0', withParts({ r: '0' })],
      ['p of 0', withParts({ p: '0' })],
      ['N of 0', withParts({ n: '0' })],
      ['a negative r', withParts({ r: '-8' })],
      ['a fractional p', withParts({ p: '1.5' })],
      ['a salt that is not base64', withParts({ salt: 'not base64!' })],
      ['a truncated hash', withParts({ hash: hash!.slice(0, 20) })],
      ['a hash of another length', withParts({ hash: Buffer.alloc(32).toString('base64') })],
    ])('%s', async (_, stored) => {
      await expect(verifyPassword('pw', stored)).resolves.toBe(false)
    })
  })
})
