import { describe, expect, it } from 'vitest'
import { hasScope, isScope } from './scopes.js'

describe('isScope', () => {
  it.each(['*', 'read', 'products:read', 'orders:write', 'tax-rates:write', 'events:read'])('accepts %s', (scope) => {
    expect(isScope(scope)).toBe(true)
  })

  it.each(['', 'write', 'products', 'products:delete', 'widgets:read', 'Products:read', ' products:read', 'products:*'])(
    'refuses %j',
    (scope) => {
      expect(isScope(scope)).toBe(false)
    },
  )
})

describe('hasScope', () => {
  it('write implies read of the same resource only', () => {
    expect(hasScope(['products:write'], 'products:read')).toBe(true)
    expect(hasScope(['products:write'], 'orders:read')).toBe(false)
    expect(hasScope(['products:read'], 'products:write')).toBe(false)
  })

  it('bare read grants every read and no write; * grants everything', () => {
    expect(hasScope(['read'], 'orders:read')).toBe(true)
    expect(hasScope(['read'], 'orders:write')).toBe(false)
    expect(hasScope(['*'], 'webhooks:write')).toBe(true)
    expect(hasScope([], 'products:read')).toBe(false)
  })
})
