/**
 * Promotions applied to a priced cart: which apply, in what order, what each takes off which line,
 * and the totals that result. A coupon is a promotion with a code (promotionFromCoupon); automatic
 * promotions have none. Money is integer minor units computed in bigint, and the answer never
 * depends on the order of the lines or of the promotions.
 *
 * The rules:
 *
 * 1. Eligibility. The first failing check names the rejection: `inactive`; `not_started` and
 *    `expired` (the promotion's window and its campaign's, each start inclusive and end exclusive);
 *    `usage_limit_reached` (timesUsed >= usageLimit); `currency_mismatch` (the promotion or its
 *    campaign has a currency other than the cart's); `min_subtotal_not_met` (the subtotal before
 *    any discount, so promotions never disqualify each other); `customer_group` (the promotion
 *    names customer groups and the customer is in none); `customer_limit_reached` (customerUses >=
 *    perCustomerLimit); `budget_exhausted` (a usage budget with budgetUsed + 1 > budgetLimit);
 *    `conditions_not_met` (condition products or categories are named and no line holds a unit of
 *    them); `no_matching_items` (a percentage or fixed amount aimed at products or categories the
 *    cart holds no unit of). A line matches a set of products and categories when its product is
 *    one of them or one of its categories is; a line of quantity 0 holds nothing.
 *
 * 2. Order. Promotions apply in one fixed order: buy_x_get_y, then percentages aimed at lines,
 *    fixed amounts aimed at lines, percentages of the order, fixed amounts off the order, free
 *    shipping; within a kind by (code ?? '', id) in code-unit order. Each works on what the
 *    earlier ones left of each line, so no line goes below zero. A percentage takes its share of
 *    what is left of its lines, rounded half away from zero; a fixed amount is capped at what is
 *    left of its lines; either is spread over its lines by largest remainder of what is left of
 *    each, ties to the lower line id. Free shipping waives the shipping still charged.
 *
 * 3. buy_x_get_y. Units are counted per line, leaving out units an earlier buy_x_get_y gave or
 *    used as "buy". B = units of the buy set (lines matching the conditions; no conditions = every
 *    unit), G = units of the get set (lines matching the targets; no targets = the buy set); they
 *    may overlap. Applications k = min(maxApplications ?? ∞, ⌊|B|/buy⌋, ⌊|G|/get⌋,
 *    ⌊|G ∪ B|/(buy + get)⌋); k = 0 rejects it with `no_matching_items`. The k·get units given are
 *    the cheapest of G (ties: lower line id), except that a unit also in B is given only while at
 *    least k·buy units of B remain not given. The k·buy "buy" units are then the dearest of B not
 *    given (ties: lower line id). Each line's discount is its unit price × units given ×
 *    percentOffPpm / 1 000 000, rounded half away from zero.
 *
 * 4. Campaign budgets. Every applied promotion of a campaign counts one use of a `usage` budget,
 *    and its saving (merchandise discount + shipping waived, in the cart's minor units) against a
 *    `spend` budget; the uses or spend of a campaign's promotions on this cart must fit in
 *    budgetLimit - budgetUsed (no limit: no budget). Walking the promotions in application order,
 *    the first that does not fit is rejected `budget_exhausted` and the rest are recomputed
 *    without it, until all fit.
 *
 * 5. Stacking. Combinable promotions combine with each other; an exclusive one applies alone. The
 *    candidates are the set of every eligible combinable promotion and each eligible exclusive
 *    promotion alone; the cart gets the candidate that saves the most (merchandise discount +
 *    shipping waived, after its budgets), ties going to the combinable set, then to the lower id.
 *    A candidate none of whose promotions could apply (all over budget or without matching items)
 *    is no candidate, so it never shuts out an exclusive promotion that saves nothing yet. An
 *    eligible promotion left out is rejected `not_combinable`, unless its own candidate rejected
 *    it for its budget or for want of matching items.
 *
 * 6. Totals, exactly as computeCartTotals: tax on what is left of each line (rounded per line, or
 *    once on the order and shared out: TaxRounding), shipping untaxed, and every cart figure the
 *    exact sum of the lines' figures. Lines come back in input order; `applied` in application
 *    order, each with its lines' shares in line-id order; `rejected` holds every other promotion.
 */
import {
  type CartLedger,
  type SettledTotals,
  copyCartLedger,
  minorUnitsOf,
  openCartLedger,
  percentOf,
  ppmOf,
  remainingOf,
  settleCartTotals,
  sum,
  takeFromLine,
  takeShared,
  totalOf,
} from './cart-ledger.js'
import type { PromotionStacking, PromotionType } from './constants.js'
import { type CouponRule, couponRejection } from './coupons.js'
import { DomainError } from './errors.js'
import { formatMinorUnits } from './money.js'
import type { TaxRounding } from './tax.js'
import { compareText } from './text-order.js'

/** A budget shared by the promotions of one campaign (rule 4). */
export interface CampaignRule {
  id: string
  budgetType: 'spend' | 'usage'
  /** null = no budget */
  budgetLimit: number | null
  budgetUsed: number
  /** a campaign with a currency applies only to carts in it; spend is counted in the cart's minor units */
  currency: string | null
  /** inclusive */
  startsAt: Date | null
  /** exclusive */
  endsAt: Date | null
}

export interface PromotionRule {
  id: string
  /** null = automatic: it applies to every cart that qualifies */
  code: string | null
  name: string
  type: PromotionType
  /** percentage and buy_x_get_y: the percent off, in parts per million (1_000_000 = free) */
  percentOffPpm: number | null
  /** fixed_amount: the amount off, in minor units of `currency` */
  amountOffMinor: number | null
  currency: string | null
  minSubtotalMinor: number | null
  /** inclusive */
  startsAt: Date | null
  /** exclusive */
  endsAt: Date | null
  usageLimit: number | null
  timesUsed: number
  isActive: boolean
  stacking: PromotionStacking
  /** conditions: the cart must hold at least one line of these products / categories (empty = no such condition) */
  conditionProductIds: readonly string[]
  conditionCategoryIds: readonly string[]
  /** empty = everyone */
  customerGroupIds: readonly string[]
  /**
   * What percentage / fixed_amount take off: matching lines (by product or category); both empty =
   * the whole order. For buy_x_get_y: the units given ("get" set); both empty = the same set as the
   * "buy" set.
   */
  targetProductIds: readonly string[]
  targetCategoryIds: readonly string[]
  /**
   * buy_x_get_y: buy `buyQuantity` units matching the condition sets (both empty = any unit), get
   * `getQuantity` units of the target set at percentOffPpm off, at most maxApplications times
   * (null = unlimited)
   */
  buyQuantity: number | null
  getQuantity: number | null
  maxApplications: number | null
  perCustomerLimit: number | null
  /** uses by this cart's customer so far */
  customerUses: number
  campaign: CampaignRule | null
}

export interface PromotionLine {
  id: string
  productId: string
  categoryIds: readonly string[]
  unitPriceMinor: number
  quantity: number
}

export const PROMOTION_REJECTIONS = [
  'inactive',
  'not_started',
  'expired',
  'usage_limit_reached',
  'currency_mismatch',
  'min_subtotal_not_met',
  'conditions_not_met',
  'customer_group',
  'customer_limit_reached',
  'budget_exhausted',
  'not_combinable',
  'no_matching_items',
] as const
export type PromotionRejection = (typeof PROMOTION_REJECTIONS)[number]

export interface PromotionsInput {
  currency: string
  lines: readonly PromotionLine[]
  /** the cart's code promotions plus every automatic promotion; ids must be distinct */
  promotions: readonly PromotionRule[]
  /** the customer's groups; empty for a guest */
  customerGroupIds: readonly string[]
  now: Date
  /** 0 when there is no address or no rate */
  taxRatePpm: number
  /** the rate's rounding; line by default */
  taxRounding?: TaxRounding
  /** the chosen shipping rate's price; null = none chosen yet (shipping 0) */
  shippingMinor: number | null
}

export interface LineDiscount {
  id: string
  discount: number
}

/** What one coupon took off the merchandise; for free_shipping, the shipping it waived. */
export interface CouponDiscount {
  id: string
  discount: number
}

/** What one promotion took: off the merchandise (`lines`, only those it took something off) and off shipping. */
export interface AppliedPromotion {
  id: string
  discount: number
  shippingDiscount: number
  lines: LineDiscount[]
}

/** The cart's totals (CartTotals without its coupon list), what each promotion took, and why the others did not apply. */
export interface PromotionTotals extends SettledTotals {
  applied: AppliedPromotion[]
  rejected: Map<string, PromotionRejection>
}

/** A coupon as a promotion: named by its code, without conditions or targets, combinable, outside any campaign. */
export function promotionFromCoupon(coupon: CouponRule): PromotionRule {
  return {
    id: coupon.id,
    code: coupon.code,
    name: coupon.code,
    type: coupon.type,
    percentOffPpm: coupon.percentOffPpm,
    amountOffMinor: coupon.amountOffMinor,
    currency: coupon.currency,
    minSubtotalMinor: coupon.minSubtotalMinor,
    startsAt: coupon.startsAt,
    endsAt: coupon.endsAt,
    usageLimit: coupon.usageLimit,
    timesUsed: coupon.timesUsed,
    isActive: coupon.isActive,
    stacking: 'combinable',
    conditionProductIds: [],
    conditionCategoryIds: [],
    customerGroupIds: [],
    targetProductIds: [],
    targetCategoryIds: [],
    buyQuantity: null,
    getQuantity: null,
    maxApplications: null,
    perCustomerLimit: null,
    customerUses: 0,
    campaign: null,
  }
}

/** Prices the cart with the promotions that apply (the rules are at the top of this file). */
export function applyPromotions(input: PromotionsInput): PromotionTotals {
  const taxRatePpm = ppmOf(input.taxRatePpm, 'Tax rate')
  const ledger = openCartLedger(input.lines, input.shippingMinor)
  const matchLines = lineMatcher(input.lines)
  const promotions = [...input.promotions].sort((a, b) => compareText(a.id, b.id))
  promotions.forEach((promotion, index) => {
    if (index > 0 && promotions[index - 1]?.id === promotion.id) {
      throw new DomainError('validation_error', 'Promotions must have distinct ids')
    }
  })
  const prepared = promotions.map((promotion) => preparePromotion(promotion, ledger, matchLines))

  const reasons = new Map<string, PromotionRejection>()
  const cart = { currency: input.currency, subtotalMinor: Number(sum(ledger.subtotals)), now: input.now, customerGroupIds: input.customerGroupIds }
  const eligible: PreparedPromotion[] = []
  for (const promotion of prepared) {
    const reason = eligibilityRejection(promotion, ledger, matchLines, cart)
    if (reason === null) eligible.push(promotion)
    else reasons.set(promotion.rule.id, reason)
  }

  const combinable = eligible.filter((promotion) => promotion.rule.stacking === 'combinable')
  const candidates = [
    ...(combinable.length > 0 ? [combinable] : []),
    ...eligible.filter((promotion) => promotion.rule.stacking === 'exclusive').map((promotion) => [promotion]),
  ].map((members) => ({ members, outcome: evaluateCandidate(ledger, members) }))
  // Candidates are in tie order already (the combinable set, then exclusives by id): only a larger saving displaces one.
  const best = candidates
    .filter((candidate) => candidate.outcome.applied.length > 0)
    .reduce<(typeof candidates)[number] | undefined>(
      (chosen, candidate) => (chosen === undefined || candidate.outcome.saving > chosen.outcome.saving ? candidate : chosen),
      undefined,
    )

  const appliedIds = new Set(best?.outcome.applied.map((entry) => entry.id))
  for (const { members, outcome } of candidates) {
    for (const promotion of members) {
      const id = promotion.rule.id
      if (!appliedIds.has(id)) reasons.set(id, outcome.dropped.get(id) ?? 'not_combinable')
    }
  }
  const settled = settleCartTotals(best?.outcome.ledger ?? ledger, taxRatePpm, input.taxRounding)
  return {
    ...settled,
    applied: best?.outcome.applied ?? [],
    rejected: new Map([...reasons].sort(([a], [b]) => compareText(a, b))),
  }
}

/**
 * Prices a cart whose shipping rate depends on what its merchandise costs after discounts (a
 * rate free over an amount): priced without shipping, then with the rate `shippingFor` gives
 * (null: none). Shipping is never taxed, and only a free-shipping promotion looks at it, so
 * without one the rate is simply added; with one, the cart is priced again with the rate, as the
 * waiver can change which stacking candidate saves the most.
 */
export function applyPromotionsWithShipping(
  input: Omit<PromotionsInput, 'shippingMinor'>,
  shippingFor: (merchandiseMinor: number) => number | null,
): PromotionTotals {
  const merchandise = applyPromotions({ ...input, shippingMinor: null })
  const shippingMinor = shippingFor(merchandise.subtotal - merchandise.discount)
  if (shippingMinor === null) return merchandise
  if (input.promotions.some((promotion) => promotion.type === 'free_shipping')) return applyPromotions({ ...input, shippingMinor })
  const shipping = minorUnitsOf(shippingMinor, 'Shipping')
  return { ...merchandise, shipping: shippingMinor, total: totalOf(BigInt(merchandise.total) + shipping) }
}

export function promotionRejectionMessage(promotion: PromotionRule, reason: PromotionRejection): string {
  const name = labelOf(promotion)
  const { startsAt, endsAt } = windowOf(promotion)
  switch (reason) {
    case 'inactive':
      return `${name} is not active`
    case 'not_started':
      return startsAt ? `${name} is not valid before ${startsAt.toISOString()}` : `${name} is not valid yet`
    case 'expired':
      return endsAt ? `${name} expired on ${endsAt.toISOString()}` : `${name} has expired`
    case 'usage_limit_reached':
      return `${name} has reached its usage limit`
    case 'currency_mismatch': {
      const currency = promotion.currency ?? promotion.campaign?.currency
      return `${name} applies only to carts in ${currency ?? 'another currency'}`
    }
    case 'min_subtotal_not_met':
      return promotion.minSubtotalMinor !== null && promotion.currency !== null
        ? `${name} requires a subtotal of at least ${formatMinorUnits(promotion.minSubtotalMinor, promotion.currency)} ${promotion.currency}`
        : `${name} requires a higher subtotal`
    case 'conditions_not_met':
      return `${name} requires particular products in the cart`
    case 'customer_group':
      return `${name} is not available to this customer`
    case 'customer_limit_reached':
      return `${name} has been used as many times as one customer may`
    case 'budget_exhausted':
      return `${name} has used up its campaign budget`
    case 'not_combinable':
      return `${name} cannot be combined with the promotions applied to this cart`
    case 'no_matching_items':
      return `${name} has no matching items in the cart`
  }
}

/**
 * Coupons the caller already accepted (couponRejection === null), applied as promotions in the
 * order of rule 2 with no eligibility, stacking or budget: what computeCartTotals does. A fixed
 * amount in another currency is refused, as the caller should have rejected it.
 */
export function applyAcceptedCoupons(ledger: CartLedger, coupons: readonly CouponRule[], currency: string): CouponDiscount[] {
  const wholeOrder: LineMatcher = () => ledger.lineIds.map(() => true)
  const promotions = coupons.map(promotionFromCoupon).sort(comparePromotions)
  const prepared = promotions.map((promotion) => {
    const { amountOffMinor, currency: couponCurrency } = promotion
    if (promotion.type === 'fixed_amount' && amountOffMinor !== null && couponCurrency !== null && couponCurrency !== currency) {
      throw new DomainError('currency_mismatch', `${labelOf(promotion)} applies only to carts in ${couponCurrency}`)
    }
    return preparePromotion(promotion, ledger, wholeOrder)
  })
  return applyInOrder(ledger, prepared).applied.map((entry, index) => ({
    id: entry.id,
    discount: promotions[index]?.type === 'free_shipping' ? entry.shippingDiscount : entry.discount,
  }))
}

/** What a promotion does, validated, with the lines it works on as indices of the ledger. */
type PromotionEffect =
  | { type: 'percentage'; ppm: bigint; lines: number[] }
  | { type: 'fixed_amount'; amount: bigint; lines: number[] }
  | { type: 'free_shipping' }
  | {
      type: 'buy_x_get_y'
      ppm: bigint
      buy: bigint
      get: bigint
      maxApplications: bigint | null
      inBuySet: boolean[]
      inGetSet: boolean[]
    }

interface PreparedPromotion {
  rule: PromotionRule
  effect: PromotionEffect
}

/** Which lines (by index) match a set of products and categories; both empty = every line. */
type LineMatcher = (productIds: readonly string[], categoryIds: readonly string[]) => boolean[]

function lineMatcher(lines: readonly PromotionLine[]): LineMatcher {
  return (productIds, categoryIds) => {
    if (productIds.length === 0 && categoryIds.length === 0) return lines.map(() => true)
    const products = new Set(productIds)
    const categories = new Set(categoryIds)
    return lines.map((line) => products.has(line.productId) || line.categoryIds.some((category) => categories.has(category)))
  }
}

const APPLICATION_RANK = {
  buy_x_get_y: 0,
  line_percentage: 1,
  line_fixed_amount: 2,
  order_percentage: 3,
  order_fixed_amount: 4,
  free_shipping: 5,
} as const

function applicationRank(promotion: PromotionRule): number {
  const aimed = promotion.targetProductIds.length > 0 || promotion.targetCategoryIds.length > 0
  switch (promotion.type) {
    case 'buy_x_get_y':
      return APPLICATION_RANK.buy_x_get_y
    case 'percentage':
      return aimed ? APPLICATION_RANK.line_percentage : APPLICATION_RANK.order_percentage
    case 'fixed_amount':
      return aimed ? APPLICATION_RANK.line_fixed_amount : APPLICATION_RANK.order_fixed_amount
    case 'free_shipping':
      return APPLICATION_RANK.free_shipping
  }
}

function comparePromotions(a: PromotionRule, b: PromotionRule): number {
  return applicationRank(a) - applicationRank(b) || compareText(a.code ?? '', b.code ?? '') || compareText(a.id, b.id)
}

/** The promotion's effect, or a validation error when its figures cannot mean anything. */
function preparePromotion(rule: PromotionRule, ledger: CartLedger, matchLines: LineMatcher): PreparedPromotion {
  const label = labelOf(rule)
  const inIdOrder = (matches: readonly boolean[]) => ledger.byId.filter((index) => matches[index])
  if (rule.campaign !== null) validateCampaign(rule.campaign, label)
  switch (rule.type) {
    case 'percentage':
      return {
        rule,
        effect: { type: 'percentage', ppm: percentOffOf(rule, label), lines: inIdOrder(matchLines(rule.targetProductIds, rule.targetCategoryIds)) },
      }
    case 'fixed_amount': {
      if (rule.amountOffMinor === null || rule.currency === null) {
        throw new DomainError('validation_error', `${label} needs an amount and a currency`)
      }
      const amount = minorUnitsOf(rule.amountOffMinor, `${label} amount`)
      return { rule, effect: { type: 'fixed_amount', amount, lines: inIdOrder(matchLines(rule.targetProductIds, rule.targetCategoryIds)) } }
    }
    case 'free_shipping':
      return { rule, effect: { type: 'free_shipping' } }
    case 'buy_x_get_y': {
      const { buyQuantity, getQuantity, maxApplications } = rule
      if (!isCount(buyQuantity) || !isCount(getQuantity) || (maxApplications !== null && !isCount(maxApplications))) {
        throw new DomainError('validation_error', `${label} needs whole buy and get quantities (and any maximum of applications) of at least 1`)
      }
      const inBuySet = matchLines(rule.conditionProductIds, rule.conditionCategoryIds)
      const aimed = rule.targetProductIds.length > 0 || rule.targetCategoryIds.length > 0
      return {
        rule,
        effect: {
          type: 'buy_x_get_y',
          ppm: percentOffOf(rule, label),
          buy: BigInt(buyQuantity),
          get: BigInt(getQuantity),
          maxApplications: maxApplications === null ? null : BigInt(maxApplications),
          inBuySet,
          inGetSet: aimed ? matchLines(rule.targetProductIds, rule.targetCategoryIds) : inBuySet,
        },
      }
    }
  }
}

function isCount(value: number | null): value is number {
  return value !== null && Number.isSafeInteger(value) && value >= 1
}

function percentOffOf(rule: PromotionRule, label: string): bigint {
  if (rule.percentOffPpm === null) throw new DomainError('validation_error', `${label} has no percentage`)
  return ppmOf(rule.percentOffPpm, `${label} percentage`)
}

function validateCampaign(campaign: CampaignRule, label: string): void {
  const wholeOrNull = (value: number | null) => value === null || (Number.isSafeInteger(value) && value >= 0)
  if (!wholeOrNull(campaign.budgetLimit) || !wholeOrNull(campaign.budgetUsed)) {
    throw new DomainError('validation_error', `${label}: its campaign's budget limit and budget used must be non-negative whole numbers`)
  }
}

/** How promotions are named to the shopper: a code is what they typed; an automatic one goes by its name. */
function labelOf(promotion: PromotionRule): string {
  return promotion.code !== null ? `Coupon '${promotion.code}'` : `Promotion '${promotion.name}'`
}

/** The promotion's window within its campaign's: the later start and the earlier end. */
function windowOf(promotion: PromotionRule): { startsAt: Date | null; endsAt: Date | null } {
  const campaign = promotion.campaign
  const later = (a: Date | null, b: Date | null) => (a === null ? b : b === null || a >= b ? a : b)
  const earlier = (a: Date | null, b: Date | null) => (a === null ? b : b === null || a <= b ? a : b)
  return { startsAt: later(promotion.startsAt, campaign?.startsAt ?? null), endsAt: earlier(promotion.endsAt, campaign?.endsAt ?? null) }
}

/** Rule 1: why the promotion cannot apply to this cart whatever else applies, or null. */
function eligibilityRejection(
  promotion: PreparedPromotion,
  ledger: CartLedger,
  matchLines: LineMatcher,
  cart: { currency: string; subtotalMinor: number; now: Date; customerGroupIds: readonly string[] },
): PromotionRejection | null {
  const { rule, effect } = promotion
  const campaign = rule.campaign
  const couponReason = couponRejection({ ...rule, ...windowOf(rule) }, cart)
  if (couponReason !== null) return couponReason
  if (campaign !== null && campaign.currency !== null && campaign.currency !== cart.currency) return 'currency_mismatch'
  if (rule.customerGroupIds.length > 0 && !rule.customerGroupIds.some((group) => cart.customerGroupIds.includes(group))) {
    return 'customer_group'
  }
  if (rule.perCustomerLimit !== null && rule.customerUses >= rule.perCustomerLimit) return 'customer_limit_reached'
  if (campaign?.budgetType === 'usage' && campaign.budgetLimit !== null && campaign.budgetUsed + 1 > campaign.budgetLimit) {
    return 'budget_exhausted'
  }
  const hasUnits = (lineIndex: number) => (ledger.quantities[lineIndex] ?? 0n) > 0n
  const holdsUnits = (matches: readonly boolean[]) => matches.some((match, index) => match && hasUnits(index))
  const conditioned = rule.conditionProductIds.length > 0 || rule.conditionCategoryIds.length > 0
  if (conditioned && !holdsUnits(matchLines(rule.conditionProductIds, rule.conditionCategoryIds))) return 'conditions_not_met'
  // Only a promotion aimed at lines can miss: an order-wide one applies to an empty cart too (at 0), as a coupon does.
  const aimed = rule.targetProductIds.length > 0 || rule.targetCategoryIds.length > 0
  if (aimed && (effect.type === 'percentage' || effect.type === 'fixed_amount') && !effect.lines.some(hasUnits)) {
    return 'no_matching_items'
  }
  return null
}

interface CandidateOutcome {
  ledger: CartLedger
  applied: AppliedPromotion[]
  /** members it could not apply: budget_exhausted or no_matching_items */
  dropped: Map<string, PromotionRejection>
  saving: bigint
}

/** Rules 2 to 4 for one stacking candidate: applies its members, dropping any that break their campaign's budget. */
function evaluateCandidate(base: CartLedger, members: readonly PreparedPromotion[]): CandidateOutcome {
  const overBudget = new Set<string>()
  let active = [...members].sort((a, b) => comparePromotions(a.rule, b.rule))
  for (;;) {
    const ledger = copyCartLedger(base)
    const { applied, unmatched } = applyInOrder(ledger, active)
    const over = firstOverBudget(applied, active)
    if (over === null) {
      const dropped = new Map<string, PromotionRejection>([
        ...[...overBudget].map((id): [string, PromotionRejection] => [id, 'budget_exhausted']),
        ...unmatched.map((id): [string, PromotionRejection] => [id, 'no_matching_items']),
      ])
      const saving = applied.reduce((total, entry) => total + BigInt(entry.discount) + BigInt(entry.shippingDiscount), 0n)
      return { ledger, applied, dropped, saving }
    }
    overBudget.add(over)
    active = active.filter((promotion) => promotion.rule.id !== over)
  }
}

/** Rule 4: the first applied promotion, in application order, whose campaign's uses or spend pass what is left of its budget. */
function firstOverBudget(applied: readonly AppliedPromotion[], promotions: readonly PreparedPromotion[]): string | null {
  const campaignOf = new Map(promotions.map((promotion) => [promotion.rule.id, promotion.rule.campaign]))
  const usedByCampaign = new Map<string, bigint>()
  for (const entry of applied) {
    const campaign = campaignOf.get(entry.id)
    if (!campaign || campaign.budgetLimit === null) continue
    const use = campaign.budgetType === 'spend' ? BigInt(entry.discount) + BigInt(entry.shippingDiscount) : 1n
    const used = (usedByCampaign.get(campaign.id) ?? 0n) + use
    usedByCampaign.set(campaign.id, used)
    if (used > BigInt(campaign.budgetLimit) - BigInt(campaign.budgetUsed)) return entry.id
  }
  return null
}

/** Rules 2 and 3: takes each promotion, in the order given, off what is left; buy_x_get_y with no application is left out. */
function applyInOrder(
  ledger: CartLedger,
  promotions: readonly PreparedPromotion[],
): { applied: AppliedPromotion[]; unmatched: string[] } {
  const unitsLeft = [...ledger.quantities]
  const applied: AppliedPromotion[] = []
  const unmatched: string[] = []
  const taken = (id: string, lineIndices: readonly number[], shares: readonly bigint[]): AppliedPromotion => ({
    id,
    discount: Number(sum(shares)),
    shippingDiscount: 0,
    lines: lineIndices
      .map((lineIndex, position) => ({ id: ledger.lineIds[lineIndex] ?? '', discount: Number(shares[position] ?? 0n) }))
      .filter((share) => share.discount > 0),
  })
  for (const { rule, effect } of promotions) {
    switch (effect.type) {
      case 'percentage': {
        const discount = percentOf(remainingOf(ledger, effect.lines), effect.ppm)
        applied.push(taken(rule.id, effect.lines, takeShared(ledger, discount, effect.lines)))
        break
      }
      case 'fixed_amount': {
        const left = remainingOf(ledger, effect.lines)
        const discount = effect.amount < left ? effect.amount : left
        applied.push(taken(rule.id, effect.lines, takeShared(ledger, discount, effect.lines)))
        break
      }
      case 'free_shipping':
        applied.push({ id: rule.id, discount: 0, shippingDiscount: Number(ledger.shipping), lines: [] })
        ledger.shipping = 0n
        break
      case 'buy_x_get_y': {
        const given = unitsGiven(ledger, unitsLeft, effect)
        if (given === null) {
          unmatched.push(rule.id)
          break
        }
        const lines = ledger.byId.filter((index) => (given[index] ?? 0n) > 0n)
        const shares = lines.map((index) =>
          takeFromLine(ledger, index, percentOf((ledger.unitPrices[index] ?? 0n) * (given[index] ?? 0n), effect.ppm)),
        )
        applied.push(taken(rule.id, lines, shares))
        break
      }
    }
  }
  return { applied, unmatched }
}

/**
 * Rule 3: the units given on each line (null when k = 0); takes the units given and the units
 * used as "buy" out of `unitsLeft`, so a later buy_x_get_y cannot count them again.
 */
function unitsGiven(
  ledger: CartLedger,
  unitsLeft: bigint[],
  effect: Extract<PromotionEffect, { type: 'buy_x_get_y' }>,
): bigint[] | null {
  const { inBuySet, inGetSet, buy, get } = effect
  let buyUnits = 0n
  let getUnits = 0n
  let eitherUnits = 0n
  ledger.lineIds.forEach((_, index) => {
    const units = unitsLeft[index] ?? 0n
    if (inBuySet[index]) buyUnits += units
    if (inGetSet[index]) getUnits += units
    if (inBuySet[index] || inGetSet[index]) eitherUnits += units
  })
  const limits = [buyUnits / buy, getUnits / get, eitherUnits / (buy + get), ...(effect.maxApplications === null ? [] : [effect.maxApplications])]
  const applications = limits.reduce((least, limit) => (limit < least ? limit : least))
  if (applications === 0n) return null

  // Lines are sorted from line-id order and the sort is stable, so lines of one price stay in id order.
  const byPrice = (direction: 1 | -1) => (a: number, b: number) => {
    const priceA = ledger.unitPrices[a] ?? 0n
    const priceB = ledger.unitPrices[b] ?? 0n
    return priceA === priceB ? 0 : priceA < priceB ? -direction : direction
  }
  const given = ledger.lineIds.map(() => 0n)
  let toGive = applications * get
  // Units of B that may still be given and leave k·buy units of B to be bought.
  let buyUnitsSpare = buyUnits - applications * buy
  for (const index of ledger.byId.filter((lineIndex) => inGetSet[lineIndex]).sort(byPrice(1))) {
    if (toGive === 0n) break
    let units = minOf(unitsLeft[index] ?? 0n, toGive)
    if (inBuySet[index]) units = minOf(units, buyUnitsSpare)
    if (units <= 0n) continue
    given[index] = units
    toGive -= units
    if (inBuySet[index]) buyUnitsSpare -= units
  }
  let toBuy = applications * buy
  for (const index of ledger.byId.filter((lineIndex) => inBuySet[lineIndex]).sort(byPrice(-1))) {
    const units = minOf((unitsLeft[index] ?? 0n) - (given[index] ?? 0n), toBuy)
    unitsLeft[index] = (unitsLeft[index] ?? 0n) - units
    toBuy -= units
  }
  given.forEach((units, index) => (unitsLeft[index] = (unitsLeft[index] ?? 0n) - units))
  return given
}

function minOf(a: bigint, b: bigint): bigint {
  return a < b ? a : b
}
