import { describe, expect, it } from 'vitest'
import { clientSecretMatchesHash, generateClientId, generateClientSecret, hashClientSecret, isClientId } from './oauth-clients.js'

describe('OAuth client credentials', () => {
  it('makes cc_ + 24 and cs_ + 40 base62 characters, different every time', () => {
    const ids = new Set<string>()
    for (let i = 0; i < 100; i++) {
      const id = generateClientId()
      expect(id).toMatch(/^cc_[0-9A-Za-z]{24}$/)
      expect(isClientId(id)).toBe(true)
      expect(generateClientSecret()).toMatch(/^cs_[0-9A-Za-z]{40}$/)
      ids.add(id)
    }
    expect(ids.size).toBe(100)
  })

  it('refuses client ids of another shape', () => {
    for (const text of ['', 'cc_short', `ck_${'a'.repeat(24)}`, `cc_${'a'.repeat(23)}-`, `cc_${'a'.repeat(25)}`]) {
      expect(isClientId(text), text).toBe(false)
    }
  })

  it('stores the secret as a SHA-256 that only the same secret matches', () => {
    const secret = generateClientSecret()
    const hash = hashClientSecret(secret)
    expect(hash).toMatch(/^[0-9a-f]{64}$/)
    expect(clientSecretMatchesHash(secret, hash)).toBe(true)
    expect(clientSecretMatchesHash(generateClientSecret(), hash)).toBe(false)
    expect(clientSecretMatchesHash(secret, 'not hex')).toBe(false)
  })
})
