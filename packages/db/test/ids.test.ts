import { describe, expect, it } from 'vitest'
import { newId } from '../src/index.js'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('newId', () => {
  it('makes UUIDv7s that ascend in the order they are made and never repeat, across refills of the random buffer', () => {
    const ids = Array.from({ length: 5_000 }, newId)
    expect(ids.every((id) => UUID_V7.test(id))).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.every((id, index) => index === 0 || ids[index - 1]! < id)).toBe(true)
    // The time prefix is now's (milliseconds since the epoch in the first 48 bits).
    const millis = Number.parseInt(ids.at(-1)!.replace('-', '').slice(0, 12), 16)
    expect(Math.abs(millis - Date.now())).toBeLessThan(5_000)
  })

  it('draws the last 32 bits of each id from a random source (not a counter): among 2,000 ids they hardly repeat', () => {
    const ids = Array.from({ length: 2_000 }, newId)
    const tails = new Set(ids.map((id) => id.slice(-8)))
    expect(tails.size).toBeGreaterThan(1_990)
  })
})
