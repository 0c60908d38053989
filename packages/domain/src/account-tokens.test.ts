import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { ACCOUNT_TOKEN, generateAccountToken, hashAccountToken } from './account-tokens.js'

describe('account tokens', () => {
  it('are 43 base64url characters of 32 random bytes, different every time', () => {
    const tokens = new Set(Array.from({ length: 1000 }, generateAccountToken))
    expect(tokens.size).toBe(1000)
    for (const token of tokens) {
      expect(token).toMatch(ACCOUNT_TOKEN)
      expect(Buffer.from(token, 'base64url')).toHaveLength(32)
    }
  })

  it('are kept as their lowercase hex SHA-256', () => {
    const token = generateAccountToken()
    expect(hashAccountToken(token)).toBe(createHash('sha256').update(token).digest('hex'))
    expect(hashAccountToken(token)).toMatch(/^[0-9a-f]{64}$/)
    expect(hashAccountToken(`${token}x`)).not.toBe(hashAccountToken(token))
  })
})
