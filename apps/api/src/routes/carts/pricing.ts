/** Turns a cart row into its API view: the live prices through the domain's pricing rules. */
import {
  applyPromotionsWithShipping,
  formatMinorUnits,
  massOf,
  MAX_MINOR_UNITS,
  ppmToPercent,
  priceWithinLimit,
  promotionRejectionMessage,
  selectLinePrice,
  selectTaxRate,
  shippingRate,
  toMajorUnits,
  type AppliedPromotion,
  type Cart,
  type CartCoupon,
  type CartLineProblem,
  type LinePrice,
  type PriceCandidate,
  type PriceListRule,
  type PromotionRejection,
  type PromotionRule,
  type PromotionTotals,
  type ShippingMethodRule,
} from '@commerce/domain'
import type { CartRow, LineRow, PriceListJson, PromotionRow, ShippingMethodRow } from '@commerce/db'

/** The price lists and automatic promotions an API instance keeps to price carts (plugins/pricing-rules.ts). */
export interface PricingRules {
  /** The price lists, by id. */
  readonly lists: ReadonlyMap<string, PriceListRule>
  /** The automatic promotions switched on that apply in `currency` (those of no currency with them), by id. */
  automatic(currency: string): readonly PromotionRule[]
  /** Reads the rules again if the pricing revision moved since they were read. */
  refresh(): Promise<void>
}

/** A line that can be sold now, with the price it pays. */
export type PricedLine = LineRow & LinePrice

export interface PricedCart {
  view: Cart
  /** What the shipping rates need: the country, the mass of the goods, the discounted subtotal. */
  country: string | null
  mass: bigint
  merchandiseMinor: number
  /** The subtotal before discounts, which promotions' minimums compare against. */
  subtotalMinor: number
  /** The totals in minor units, per line and per promotion: what an order copies. */
  totals: PromotionTotals
  /** The lines that count (priced now in the cart's currency), with their live product data and price. */
  availableLines: PricedLine[]
  /** The promotions that apply now, in the order they apply, with what each takes. */
  appliedPromotions: { rule: PromotionRule; applied: AppliedPromotion }[]
  /** Every promotion considered (the cart's codes and the automatic ones), by id. */
  promotions: ReadonlyMap<string, PromotionRule>
}

const dateOf = (text: string | null) => (text === null ? null : new Date(text))

export function toPromotionRule(row: PromotionRow): PromotionRule {
  const { campaign } = row
  return {
    ...row,
    startsAt: dateOf(row.startsAt),
    endsAt: dateOf(row.endsAt),
    campaign: campaign && {
      ...campaign,
      budgetType: campaign.budgetType ?? 'usage',
      budgetLimit: campaign.budgetType === null ? null : campaign.budgetLimit,
      startsAt: dateOf(campaign.startsAt),
      endsAt: dateOf(campaign.endsAt),
    },
  }
}

export function toShippingMethodRule(row: ShippingMethodRow): ShippingMethodRule {
  return row
}

/** The lists of a line's prices, as a read that carries them gives them. */
function listsOf(line: Pick<LineRow, 'prices'>): Map<string, PriceListRule> {
  const lists = new Map<string, PriceListRule>()
  for (const [, , , , list] of line.prices) {
    if (list) lists.set(list.id, toPriceListRule(list))
  }
  return lists
}

export function toPriceListRule(list: PriceListJson): PriceListRule {
  return { ...list, startsAt: dateOf(list.startsAt), endsAt: dateOf(list.endsAt) }
}

/**
 * A line's price in a currency (a cart's, an order's), or null when it has none for this quantity:
 * its prices from the prices table, and its own price when the product is sold in that currency.
 * `lists` are the price lists its prices name (by default, those its prices carry).
 */
export function linePrice(
  line: Pick<LineRow, 'prices' | 'currency' | 'priceMinor' | 'variantPriced' | 'quantity'>,
  currency: string,
  customerGroupIds: readonly string[],
  now: Date,
  lists: ReadonlyMap<string, PriceListRule> = listsOf(line),
): LinePrice | null {
  const candidates: PriceCandidate[] = line.prices.map(([amountMinor, minQuantity, priceListId, variantSpecific]) => ({
    amountMinor,
    minQuantity,
    variantSpecific,
    priceListId,
  }))
  if (line.currency === currency) {
    candidates.push({ amountMinor: line.priceMinor, minQuantity: 1, variantSpecific: line.variantPriced, priceListId: null })
  }
  return selectLinePrice(candidates, lists, { quantity: line.quantity, customerGroupIds, now })
}

function problemMessage(problem: CartLineProblem, currency: string): string {
  if (problem === 'not_sold') return 'This product is no longer sold; remove it from the cart'
  if (problem === 'other_currency') return `This product has no price in ${currency} for this quantity; change the quantity or remove it from the cart`
  return (
    `With this line the cart's total would be more than ${formatMinorUnits(MAX_MINOR_UNITS, currency)} ${currency}, ` +
    'the most an amount can be; lower its quantity or remove it'
  )
}

function promotionValue(promotion: PromotionRule): number | null {
  if (promotion.type === 'percentage' || promotion.type === 'buy_x_get_y') return ppmToPercent(promotion.percentOffPpm ?? 0)
  if (promotion.type === 'fixed_amount') return toMajorUnits(promotion.amountOffMinor ?? 0, promotion.currency ?? 'USD')
  return null
}

/** The figures of a cart over `lines` (which promotions apply depends on the subtotal, the shipping on the mass). */
function priceLines(row: CartRow, lines: readonly PricedLine[], promotions: readonly PromotionRule[], now: Date) {
  const { currency } = row
  const promotionLines = lines.map((line) => ({
    id: line.id,
    productId: line.productId,
    categoryIds: line.categories.map((category) => category.id),
    unitPriceMinor: line.unitPriceMinor,
    quantity: line.quantity,
  }))
  const address = row.shippingAddress
  const taxRate = selectTaxRate(row.taxRates, address && { country: address.country, region: address.region })
  const base = { currency, lines: promotionLines, promotions, customerGroupIds: row.customerGroupIds, now, taxRatePpm: taxRate?.ratePpm ?? 0, taxRounding: taxRate?.rounding }
  const mass = lines.reduce((sum, line) => sum + (line.weight === null ? 0n : massOf(line.weight, line.weightUnit)) * BigInt(line.quantity), 0n)

  const shippingMethod = row.shippingMethod && toShippingMethodRule(row.shippingMethod)
  // What the merchandise costs after discounts, before any shipping: what shipping rates are priced on.
  let merchandiseMinor = 0
  const totals = applyPromotionsWithShipping(base, (merchandise) => {
    merchandiseMinor = merchandise
    return shippingMethod && shippingRate(shippingMethod, { currency, country: address?.country ?? null, mass, merchandiseMinor })
  })
  return { lines, mass, merchandiseMinor, totals }
}

/**
 * A line with its price, built field by field: a spread of the row's line (`{...line, ...price}`)
 * made objects V8 keeps as slow dictionaries, and priced a 20-line cart 4 times slower
 * (bench/README.md, issue 25). The type lists every field, so a new one cannot be left out.
 */
function pricedLine(line: LineRow, price: LinePrice): PricedLine {
  return {
    id: line.id,
    productId: line.productId,
    variantId: line.variantId,
    quantity: line.quantity,
    title: line.title,
    variantTitle: line.variantTitle,
    sku: line.sku,
    imageUrl: line.imageUrl,
    priceMinor: line.priceMinor,
    variantPriced: line.variantPriced,
    currency: line.currency,
    categories: line.categories,
    prices: line.prices,
    isActive: line.isActive,
    inventoryQuantity: line.inventoryQuantity,
    weight: line.weight,
    weightUnit: line.weightUnit,
    unitPriceMinor: price.unitPriceMinor,
    originalUnitPriceMinor: price.originalUnitPriceMinor,
    priceListId: price.priceListId,
  }
}

/**
 * Prices a cart at today's prices and promotions: the instance's pricing rules (its price lists
 * and automatic promotions) with the cart's live counts of its bounded ones. A cart that names a
 * list or a bounded promotion the rules do not hold, or misses one they hold as bounded, has the
 * rules read again first (changed through another instance a moment ago). It always prices: a
 * line that cannot be sold now (no longer sold, no price in the cart's currency, or taking the
 * total past the most an amount can be) is shown with its `problem` and counts 0, for the
 * customer to act on.
 */
export async function priceCart(row: CartRow, rules: PricingRules, now: Date = new Date()): Promise<PricedCart> {
  if (!rulesCover(row, rules)) await rules.refresh()
  const counts = row.automaticCounts
  const automatic = rules.automatic(row.currency).map((rule) => {
    const live = counts[rule.id]
    if (live === undefined) return rule
    return { ...rule, timesUsed: live.timesUsed, customerUses: live.customerUses, campaign: rule.campaign && { ...rule.campaign, budgetUsed: live.budgetUsed ?? rule.campaign.budgetUsed } }
  })
  return priceWith(row, automatic, rules.lists, now)
}

const isBounded = (rule: PromotionRule) => rule.usageLimit !== null || rule.perCustomerLimit !== null || (rule.campaign !== null && rule.campaign.budgetLimit !== null)

/** Whether the rules hold every list the cart's prices name and exactly its bounded automatic promotions. */
function rulesCover(row: CartRow, rules: PricingRules): boolean {
  for (const line of row.lines) for (const [, , listId] of line.prices) if (listId !== null && !rules.lists.has(listId)) return false
  let bounded = 0
  for (const rule of rules.automatic(row.currency)) {
    if (!isBounded(rule)) continue
    if (row.automaticCounts[rule.id] === undefined) return false
    bounded++
  }
  return bounded === Object.keys(row.automaticCounts).length
}

function priceWith(row: CartRow, automatic: readonly PromotionRule[], lists: ReadonlyMap<string, PriceListRule>, now: Date): PricedCart {
  const { currency } = row
  const problems = new Map<string, CartLineProblem>()
  const sold: PricedLine[] = []
  for (const line of row.lines) {
    const price = line.isActive ? linePrice(line, currency, row.customerGroupIds, now, lists) : null
    if (price) sold.push(pricedLine(line, price))
    else problems.set(line.id, line.isActive ? 'other_currency' : 'not_sold')
  }
  const rules = [...row.coupons.map(toPromotionRule), ...automatic]
  const { priced, over } = priceWithinLimit(sold, (lines) => priceLines(row, lines, rules, now))
  for (const line of over) problems.set(line.id, 'total_too_large')
  const { lines: available, mass, merchandiseMinor, totals } = priced
  const address = row.shippingAddress
  const promotions = new Map(rules.map((rule) => [rule.id, rule]))
  const appliedPromotions = totals.applied.map((applied) => ({ rule: promotions.get(applied.id)!, applied }))
  const appliedById = new Map(totals.applied.map((applied) => [applied.id, applied]))

  const major = (minor: number) => toMajorUnits(minor, currency)
  const lineTotals = new Map(totals.lines.map((line) => [line.id, line]))
  const prices = new Map(available.map((line) => [line.id, line]))
  // A code promotion that failed for want of anything to do is shown by why; see promotionRejectionMessage.
  const reasonOf = (rule: PromotionRule, rejection: PromotionRejection | undefined) =>
    rejection === undefined ? null : promotionRejectionMessage(rule, rejection)

  const view: Cart = {
    id: row.id,
    cart_id: row.id,
    currency,
    customer_id: row.customerId,
    email: row.email,
    items: row.lines.map((line) => {
      const lineTotal = lineTotals.get(line.id)
      const price = prices.get(line.id)
      const problem = problems.get(line.id) ?? null
      const ownPrice = line.currency === currency ? line.priceMinor : null
      return {
        id: line.id,
        product_id: line.productId,
        variant_id: line.variantId,
        title: line.title,
        variant_title: line.variantTitle,
        sku: line.sku,
        image_url: line.imageUrl,
        quantity: line.quantity,
        unit_price: major(price?.unitPriceMinor ?? ownPrice ?? 0),
        original_unit_price: major(price?.originalUnitPriceMinor ?? ownPrice ?? 0),
        price_list_id: price?.priceListId ?? null,
        line_total: major(lineTotal?.subtotal ?? 0),
        discount: major(lineTotal?.discount ?? 0),
        tax: major(lineTotal?.tax ?? 0),
        available: problem === null,
        problem: problem === null ? null : { code: problem, message: problemMessage(problem, currency) },
      }
    }),
    coupons: row.coupons.map((coupon): CartCoupon => {
      const rule = promotions.get(coupon.id)!
      const applied = appliedById.get(coupon.id)
      return {
        id: coupon.id,
        code: coupon.code ?? '',
        type: coupon.type,
        value: promotionValue(rule),
        discount: major((applied?.discount ?? 0) + (applied?.shippingDiscount ?? 0)),
        applicable: applied !== undefined,
        reason: reasonOf(rule, totals.rejected.get(coupon.id)),
      }
    }),
    promotions: appliedPromotions.map(({ rule, applied }) => ({
      id: rule.id,
      code: rule.code,
      name: rule.name,
      type: rule.type,
      discount: major(applied.discount),
      shipping_discount: major(applied.shippingDiscount),
      lines: applied.lines.map((line) => ({ item_id: line.id, discount: major(line.discount) })),
    })),
    shipping_address: row.shippingAddress,
    shipping_method_id: row.shippingMethodId,
    totals: {
      subtotal: major(totals.subtotal),
      discount: major(totals.discount),
      tax: major(totals.tax),
      shipping: major(totals.shipping),
      total: major(totals.total),
    },
    completed_at: row.completedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
  return {
    view,
    country: address?.country ?? null,
    mass,
    merchandiseMinor,
    subtotalMinor: totals.subtotal,
    totals,
    availableLines: [...available],
    appliedPromotions,
    promotions,
  }
}
