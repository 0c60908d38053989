/**
 * Prices per currency and quantity (docs/pricing.md), of a price list or a product's base prices:
 * reading them, writing a batch all or nothing (every entry is checked first, and the 400 names
 * each entry at fault), deleting one.
 */
import { and, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm'
import { toMajorUnits, type ErrorDetail, type ListProductPricesQuery, type Price, type PricePage, type UpsertProductPrices } from '@commerce/domain'
import { prices, products, productVariants, variantOrNil, type Database, type Executor } from '@commerce/db'
import { ApiError, notFound } from '../../errors.js'
import { knownCurrency, minorUnits } from '../../fields.js'
import { key, keyset, listTable, type Keyset, type PageQuery } from '../../list-cursor.js'

type PriceRow = typeof prices.$inferSelect
type NewPrice = Pick<typeof prices.$inferInsert, 'productId' | 'variantId' | 'priceListId' | 'currency' | 'amountMinor' | 'compareAtAmountMinor' | 'minQuantity'>

export function toPrice(row: PriceRow): Price {
  return {
    id: row.id,
    product_id: row.productId,
    variant_id: row.variantId,
    price_list_id: row.priceListId,
    currency: row.currency,
    amount: toMajorUnits(row.amountMinor, row.currency),
    compare_at_amount: row.compareAtAmountMinor === null ? null : toMajorUnits(row.compareAtAmountMinor, row.currency),
    min_quantity: row.minQuantity,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** One entry of a batch as sent; a product's base prices name no product (it is the path's). */
export interface PriceEntry {
  product_id?: string
  variant_id?: string | null | undefined
  currency: string
  amount: number
  compare_at_amount?: number | null | undefined
  min_quantity?: number | undefined
}

/** Where a batch goes: a price list (its id, the list already locked), or one product's base prices (the product locked). */
export type PriceTarget =
  | { kind: 'price_list'; priceListId: string }
  | { kind: 'base'; product: { id: string; currency: string } }

/** The unique key of a price (prices_key), to find an entry's repeat and its written row. */
const keyOf = (row: Pick<NewPrice, 'productId' | 'variantId' | 'currency' | 'minQuantity'>) =>
  [row.productId, row.variantId ?? '', row.currency, row.minQuantity ?? 1].join(' ')

/** A 400 naming every field at fault; its message is the first problem's, with how many more there are. */
function refusal(details: ErrorDetail[]): ApiError {
  const [first] = details
  const more = details.length > 1 ? ` (and ${details.length - 1} more: see details)` : ''
  return new ApiError('validation_error', `${first!.message}${more}`, details)
}

/** The detail of an ApiError a field check threw (one field each). */
function detailsOf(error: unknown): ErrorDetail[] {
  if (error instanceof ApiError && error.code === 'validation_error' && error.details) return error.details
  throw error
}

/**
 * The rows a batch writes, or a 400 naming each `prices[i].<field>` at fault: a currency the money
 * rules do not know, an amount with more decimals than its currency has, a product that does not
 * exist, a variant of another product, an entry repeating an earlier one's key, and for base prices
 * one that would be the product's or a variant's own price. Products and variants are key-share
 * locked, so none is deleted before the batch commits.
 */
async function rowsOf(tx: Executor, entries: readonly PriceEntry[], target: PriceTarget): Promise<NewPrice[]> {
  const details: ErrorDetail[] = []
  const field = (index: number, name: string) => `prices[${index}].${name}`
  const fail = (index: number, name: string, says: string) => details.push({ field: field(index, name), message: `Field '${field(index, name)}' ${says}` })

  const productIds = target.kind === 'base' ? [] : [...new Set(entries.map((entry) => entry.product_id!))]
  const variantIds = [...new Set(entries.flatMap((entry) => (entry.variant_id ? [entry.variant_id] : [])))]
  const [known, variants] = await Promise.all([
    productIds.length === 0
      ? []
      : tx.select({ id: products.id, currency: products.currency }).from(products).where(inArray(products.id, productIds)).for('key share'),
    variantIds.length === 0
      ? []
      : tx
          .select({ id: productVariants.id, productId: productVariants.productId })
          .from(productVariants)
          .where(inArray(productVariants.id, variantIds))
          .for('key share'),
  ])
  const productOf = new Map(target.kind === 'base' ? [[target.product.id, target.product]] : known.map((product) => [product.id, product]))
  const variantProduct = new Map(variants.map((variant) => [variant.id, variant.productId]))

  const rows: NewPrice[] = []
  const seen = new Map<string, number>()
  entries.forEach((entry, index) => {
    const productId = target.kind === 'base' ? target.product.id : entry.product_id!
    const variantId = entry.variant_id ?? null
    const minQuantity = entry.min_quantity ?? 1
    let amountMinor: number | undefined
    let compareAtAmountMinor: number | null = null
    try {
      knownCurrency(entry.currency, field(index, 'currency'))
      amountMinor = minorUnits(field(index, 'amount'), entry.amount, entry.currency)
      if (entry.compare_at_amount != null) compareAtAmountMinor = minorUnits(field(index, 'compare_at_amount'), entry.compare_at_amount, entry.currency)
    } catch (error) {
      details.push(...detailsOf(error))
    }
    const product = productOf.get(productId)
    if (!product) fail(index, 'product_id', 'names no product')
    if (variantId !== null && variantProduct.get(variantId) !== productId) {
      fail(index, 'variant_id', variantProduct.has(variantId) ? `is a variant of another product, not of ${productId}` : 'names no variant')
    }
    if (target.kind === 'base' && entry.currency === target.product.currency && minQuantity === 1) {
      fail(
        index,
        'currency',
        variantId === null
          ? `is the product's own currency: its price from 1 unit is the product's \`price\`; set the product's price instead (PATCH /products/${productId})`
          : `is the product's own currency: the variant's price from 1 unit is the variant's \`price\`; set the variant's price instead (PATCH /products/${productId}/variants/${variantId})`,
      )
    }
    const row = { productId, variantId, currency: entry.currency, minQuantity }
    const earlier = seen.get(keyOf(row))
    if (earlier !== undefined) {
      details.push({
        field: `prices[${index}]`,
        message: `Field 'prices[${index}]' repeats prices[${earlier}]: the same ${target.kind === 'base' ? '' : 'product, '}variant, currency and min_quantity`,
      })
    } else {
      seen.set(keyOf(row), index)
    }
    if (amountMinor !== undefined) {
      rows.push({ ...row, priceListId: target.kind === 'price_list' ? target.priceListId : null, amountMinor, compareAtAmountMinor })
    }
  })
  if (details.length > 0) throw refusal(details)
  return rows
}

/** Writes a checked batch in one statement: an entry with the key of an existing price replaces its amount (and compare-at amount). */
export async function upsertPrices(tx: Executor, entries: readonly PriceEntry[], target: PriceTarget): Promise<Price[]> {
  const rows = await rowsOf(tx, entries, target)
  const written = await tx
    .insert(prices)
    .values(rows)
    .onConflictDoUpdate({
      target: [prices.productId, prices.variantId, prices.priceListId, prices.currency, prices.minQuantity],
      set: { amountMinor: sql`excluded.amount_minor`, compareAtAmountMinor: sql`excluded.compare_at_amount_minor`, updatedAt: new Date() },
    })
    .returning()
  const byKey = new Map(written.map((row) => [keyOf(row), row]))
  return rows.map((row) => toPrice(byKey.get(keyOf(row))!))
}

/**
 * A list of prices by product, variant (the product-wide price first), currency and quantity:
 * prices_list_idx (price_list_id, product_id, variant or nil, currency, min_quantity, id) serves a price list's (`price_list_id = $1`) and a product's base prices (`price_list_id
 * is null and product_id = $1`) alike.
 */
const pricesKeyset = (list: string) =>
  keyset(list, 'asc', [
    key.uuid(prices.productId),
    key.uuid(variantOrNil(prices.variantId)),
    key.text(prices.currency),
    key.integer(prices.minQuantity),
    key.uuid(prices.id),
  ])
export const PRICE_LIST_PRICES_KEYSET = pricesKeyset('price_list_prices')
const PRODUCT_PRICES_KEYSET = pricesKeyset('product_prices')

/** A page of prices: of a price list, or a product's base prices (`price_list_id` null). */
export async function listPrices(
  db: Database,
  keys: Keyset,
  owner: SQL,
  filters: { productId?: string | undefined; currency?: string | undefined },
  query: PageQuery,
): Promise<PricePage> {
  const where = and(
    owner,
    filters.productId === undefined ? undefined : eq(prices.productId, filters.productId),
    filters.currency === undefined ? undefined : eq(prices.currency, filters.currency),
  )
  const { rows, meta } = await listTable(db, keys, prices, where, query)
  return { prices: rows.map(toPrice), meta }
}

/** Deletes one price of its owner (a price list, or a product's base prices); 404 when the owner has no such price. */
export async function deletePrice(db: Database, owner: SQL, priceId: string): Promise<void> {
  const deleted = await db.delete(prices).where(and(owner, eq(prices.id, priceId))).returning({ id: prices.id })
  if (deleted.length === 0) throw notFound('Price')
}

/** The prices of a price list. */
export const ofPriceList = (priceListId: string): SQL => eq(prices.priceListId, priceListId)
/** A product's base prices. */
export const baseOf = (productId: string): SQL => and(eq(prices.productId, productId), isNull(prices.priceListId))!

/** A product's base prices: its prices in other currencies, and its quantity tiers. */
export function createProductPriceService(db: Database) {
  async function requireProduct(executor: Executor, id: string, lock: boolean) {
    const query = executor.select({ id: products.id, currency: products.currency }).from(products).where(eq(products.id, id))
    const [product] = lock ? await query.for('key share') : await query
    if (!product) throw notFound('Product')
    return product
  }

  return {
    async list(productId: string, query: ListProductPricesQuery): Promise<PricePage> {
      await requireProduct(db, productId, false)
      return listPrices(db, PRODUCT_PRICES_KEYSET, baseOf(productId), { currency: query.currency }, query)
    },

    /** Key-share locks the product: a change of its currency waits for the batch, so the own-price check holds when it commits. */
    upsert(productId: string, body: UpsertProductPrices): Promise<{ prices: Price[] }> {
      return db.transaction(async (tx) => {
        const product = await requireProduct(tx, productId, true)
        return { prices: await upsertPrices(tx, body.prices, { kind: 'base', product }) }
      })
    },

    async remove(productId: string, priceId: string): Promise<void> {
      await requireProduct(db, productId, false)
      await deletePrice(db, baseOf(productId), priceId)
    },
  }
}
