/**
 * Checked by `pnpm typecheck` (tsc over test/), never run: a statement's row type is derived from
 * the tables, so a column renamed in the schema fails to compile where a statement reads it.
 */
import { promotions } from '../src/schema/index.js'
import type { CouponRow, LineRow } from '../src/sql/cart-read.js'
import { jsonColumns, jsonObject, type JsonRow } from '../src/sql/json-rows.js'

// A coupon row as it would be with percentOffPpm renamed to percentOff, nothing else changed.
type RenamedCoupon = Omit<typeof promotions.$inferSelect, 'percentOffPpm'> & { percentOff: number | null }

// The cart read's coupon rows (sql/cart-read.ts) pick their columns from the table: after the
// rename they no longer compile; today they do.
// @ts-expect-error: percentOffPpm is no longer a column
export type _CouponsAfterRename = Pick<JsonRow<RenamedCoupon>, keyof CouponRow>
export type _CouponsToday = Pick<JsonRow<typeof promotions.$inferSelect>, keyof CouponRow>

// The JSON a statement builds from a table's columns: a name that is not a column is refused.
// @ts-expect-error: promotions has no column percentOff
jsonColumns(promotions, 'c', ['percentOff'])

// A JSON object written by hand for a row type: a key missing (or extra) is refused.
// @ts-expect-error: variantTitle (and the rest of LineRow) is missing
jsonObject<LineRow>({ id: 'i.id' })

// Instants travel as text: a Date is not what a JSON row holds.
// @ts-expect-error: startsAt is ISO 8601 text in a JSON row
export const _startsAt: CouponRow['startsAt'] = new Date()
export const _startsAtText: CouponRow['startsAt'] = '2025-03-01T10:00:00.000Z'
