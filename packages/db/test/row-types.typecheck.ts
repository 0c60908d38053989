/**
 * Checked by `pnpm typecheck` (tsc over test/), never run: a statement's row type is derived from
 * the tables, so a column renamed in the schema fails to compile where a statement reads it.
 */
import { promotions } from '../src/schema/index.js'
import type { LineRow, PromotionRow } from '../src/sql/cart-read.js'

// The promotion columns a cart reads (its campaign and the customer's uses come from elsewhere).
type PromotionColumns = Exclude<keyof PromotionRow, 'campaign' | 'customerUses'>
import { jsonColumns, jsonObject, type JsonRow } from '../src/sql/json-rows.js'

// A promotion row as it would be with percentOffPpm renamed to percentOff, nothing else changed.
type RenamedPromotion = Omit<typeof promotions.$inferSelect, 'percentOffPpm'> & { percentOff: number | null }

// The cart read's promotion rows (sql/cart-read.ts) pick their columns from the table: after the
// rename they no longer compile; today they do.
// @ts-expect-error: percentOffPpm is no longer a column
export type _PromotionsAfterRename = Pick<JsonRow<RenamedPromotion>, PromotionColumns>
export type _PromotionsToday = Pick<JsonRow<typeof promotions.$inferSelect>, PromotionColumns>

// The JSON a statement builds from a table's columns: a name that is not a column is refused.
// @ts-expect-error: promotions has no column percentOff
jsonColumns(promotions, 'c', ['percentOff'])

// A JSON object written by hand for a row type: a key missing (or extra) is refused.
// @ts-expect-error: variantTitle (and the rest of LineRow) is missing
jsonObject<LineRow>({ id: 'i.id' })

// Instants travel as text: a Date is not what a JSON row holds.
// @ts-expect-error: startsAt is ISO 8601 text in a JSON row
export const _startsAt: PromotionRow['startsAt'] = new Date()
export const _startsAtText: PromotionRow['startsAt'] = '2025-03-01T10:00:00.000Z'
