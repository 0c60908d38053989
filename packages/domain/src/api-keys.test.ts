import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { apiKeyLookupPrefix, apiKeyMatchesHash, crc32, generateApiKey, hashApiKey, isWellFormedApiKey } from './api-keys.js'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

describe('crc32', () => {
  it('matches the CRC-32/ISO-HDLC check value and the empty string', () => {
    expect(crc32('123456789')).toBe(0xcbf43926)
    expect(crc32('')).toBe(0)
  })
})

describe('generateApiKey', () => {
  it('makes ck_ + 40 base62 characters that pass the well-formedness check', () => {
    for (let i = 0; i < 200; i++) {
      const key = generateApiKey()
      expect(key).toMatch(/^ck_[0-9A-Za-z]{40}$/)
      expect(isWellFormedApiKey(key)).toBe(true)
    }
  })

  it('uses the whole alphabet in every random position (no fixed or missing characters)', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 200; i++) for (const char of generateApiKey().slice(3, 37)) seen.add(char)
    expect(seen.size).toBe(62)
  })
})

describe('isWellFormedApiKey', () => {
  it('catches any single-character change', () => {
    fc.assert(
      fc.property(fc.nat(42), fc.constantFrom(...BASE62), (position, replacement) => {
        const key = generateApiKey()
        fc.pre(key[position] !== replacement)
        const changed = key.slice(0, position) + replacement + key.slice(position + 1)
        expect(isWellFormedApiKey(changed)).toBe(false)
      }),
      { numRuns: 2000 },
    )
  })

  it.each([
    ['empty', ''],
    ['no tag', generateApiKey().slice(3)],
    ['another tag', `sk_${generateApiKey().slice(3)}`],
    ['one character short', generateApiKey().slice(0, -1)],
    ['one character long', `${generateApiKey()}0`],
    ['a non-base62 character', `${generateApiKey().slice(0, 10)}-${generateApiKey().slice(11)}`],
    ['a JWT', 'eyJhbGciOiJIUzI1NiJ9.e30.sig'],
  ])('refuses %s', (_name, text) => {
    expect(isWellFormedApiKey(text)).toBe(false)
  })
})

describe('lookup prefix and hash', () => {
  it('the prefix is the 8 characters after ck_', () => {
    const key = generateApiKey()
    expect(apiKeyLookupPrefix(key)).toBe(key.slice(3, 11))
  })

  it('hashes to lowercase hex SHA-256 and matches only the same key', () => {
    const key = generateApiKey()
    const hash = hashApiKey(key)
    expect(hash).toMatch(/^[0-9a-f]{64}$/)
    expect(apiKeyMatchesHash(key, hash)).toBe(true)
    expect(apiKeyMatchesHash(generateApiKey(), hash)).toBe(false)
    expect(apiKeyMatchesHash(key, 'not hex')).toBe(false)
  })
})
