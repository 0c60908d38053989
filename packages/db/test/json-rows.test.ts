/**
 * The row types of hand-written SQL come from the tables (sql/json-rows.ts): a JSON object built
 * from a table's columns holds what the Drizzle row holds, instants as ISO text. The typecheck half
 * (a renamed column fails to compile) is row-types.typecheck.ts.
 */
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { promotions, shippingMethods } from '../src/schema/index.js'
import { jsonColumns, jsonObject, type JsonOf } from '../src/sql/json-rows.js'
import { openTestDatabase, type OpenTestDatabase } from './test-database.js'

let database: OpenTestDatabase
beforeAll(async () => {
  database = await openTestDatabase()
})
afterAll(async () => {
  await database.dispose()
})

describe('jsonColumns', () => {
  it('names each column by its TypeScript key and reads it by its SQL name', () => {
    expect(jsonColumns(promotions, 'c', ['percentOffPpm', 'startsAt'])).toBe(
      "json_build_object('percentOffPpm', c.percent_off_ppm, 'startsAt', c.starts_at)",
    )
  })

  it('reads what the Drizzle row holds: numbers, arrays, booleans and nulls as they are, instants as ISO 8601 text', async () => {
    const keys = ['id', 'code', 'type', 'percentOffPpm', 'amountOffMinor', 'minSubtotalMinor', 'startsAt', 'endsAt', 'isActive'] as const
    const [coupon] = await database.db
      .insert(promotions)
      .values({ code: 'JSON10', name: 'JSON10', type: 'percentage', percentOffPpm: 100_000, minSubtotalMinor: 5_000, startsAt: new Date('2025-03-01T10:00:00.123Z') })
      .returning()
    const [read] = await database.sql.unsafe<{ coupon: JsonOf<typeof promotions, (typeof keys)[number]> }[]>(
      `select ${jsonColumns(promotions, 'c', keys)} as coupon from promotions c where c.id = $1`,
      [coupon!.id],
    )
    expect(read!.coupon).toEqual({
      id: coupon!.id,
      code: 'JSON10',
      type: 'percentage',
      percentOffPpm: 100_000,
      amountOffMinor: null,
      minSubtotalMinor: 5_000,
      startsAt: expect.stringMatching(/^2025-03-01T10:00:00\.123(000)?(Z|\+00:00)$/),
      endsAt: null,
      isActive: true,
    })
    expect(new Date(read!.coupon.startsAt!)).toEqual(coupon!.startsAt)

    const [method] = await database.db.insert(shippingMethods).values({ name: 'Post', currency: 'EUR', countries: ['FR', 'DE'], minWeightKg: 0.25 }).returning()
    const [shipped] = await database.sql.unsafe<{ method: JsonOf<typeof shippingMethods, 'countries' | 'minWeightKg' | 'basePriceMinor'> }[]>(
      `select ${jsonColumns(shippingMethods, 's', ['countries', 'minWeightKg', 'basePriceMinor'])} as method from shipping_methods s where s.id = $1`,
      [method!.id],
    )
    expect(shipped!.method).toEqual({ countries: ['FR', 'DE'], minWeightKg: 0.25, basePriceMinor: 0 })
    await database.db.delete(promotions).where(eq(promotions.id, coupon!.id))
  })
})

describe('jsonObject', () => {
  it('writes each key with its SQL expression, in the order given', () => {
    expect(jsonObject<{ a: number; b: string }>({ a: 'x.a + 1', b: "'b'" })).toBe("json_build_object('a', x.a + 1, 'b', 'b')")
  })
})
