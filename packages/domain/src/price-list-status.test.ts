import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PRICE_LIST_STATUSES, priceListStatus } from './price-list-status.js'

const now = new Date('2026-01-01T00:00:00.000Z')
const at = (ms: number) => new Date(now.getTime() + ms)
const list = (overrides: Partial<Parameters<typeof priceListStatus>[0]> = {}) => ({ isActive: true, startsAt: null, endsAt: null, ...overrides })

describe('priceListStatus', () => {
  it('is active with no window', () => {
    expect(priceListStatus(list(), now)).toBe('active')
  })

  it('is inactive when switched off, whatever the window', () => {
    expect(priceListStatus(list({ isActive: false }), now)).toBe('inactive')
    expect(priceListStatus(list({ isActive: false, startsAt: at(1) }), now)).toBe('inactive')
    expect(priceListStatus(list({ isActive: false, endsAt: at(-1) }), now)).toBe('inactive')
  })

  it('treats startsAt as inclusive: scheduled until that very instant', () => {
    expect(priceListStatus(list({ startsAt: at(1) }), now)).toBe('scheduled')
    expect(priceListStatus(list({ startsAt: now }), now)).toBe('active')
    expect(priceListStatus(list({ startsAt: at(-1) }), now)).toBe('active')
  })

  it('treats endsAt as exclusive: expired at that very instant', () => {
    expect(priceListStatus(list({ endsAt: at(1) }), now)).toBe('active')
    expect(priceListStatus(list({ endsAt: now }), now)).toBe('expired')
    expect(priceListStatus(list({ startsAt: at(-10), endsAt: at(-1) }), now)).toBe('expired')
  })

  it('is active exactly when the list is on and now is inside [startsAt, endsAt)', () => {
    const instant = fc.option(fc.integer({ min: -1000, max: 1000 }).map(at), { nil: null })
    fc.assert(
      fc.property(fc.boolean(), instant, instant, (isActive, startsAt, endsAt) => {
        const status = priceListStatus({ isActive, startsAt, endsAt }, now)
        expect(PRICE_LIST_STATUSES).toContain(status)
        const inside = (startsAt === null || startsAt <= now) && (endsAt === null || now < endsAt)
        expect(status === 'active').toBe(isActive && inside)
      }),
    )
  })
})
