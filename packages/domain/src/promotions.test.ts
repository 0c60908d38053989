import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { PromotionType } from './constants.js'
import { couponRule } from './coupon-rules.fixture.js'
import type { CouponRule } from './coupons.js'
import { MAX_MINOR_UNITS } from './money.js'
import { campaignRule, promotionRule } from './promotion-rules.fixture.js'
import {
  type CampaignRule,
  type PromotionLine,
  type PromotionRejection,
  type PromotionRule,
  type PromotionTotals,
  type PromotionsInput,
  applyPromotions,
  applyPromotionsWithShipping,
  promotionFromCoupon,
  promotionRejectionMessage,
} from './promotions.js'
import { divideRounded } from './rounding.js'
import type { TaxRounding } from './tax.js'
import { computeCartTotals } from './totals.js'

const now = new Date('2026-05-01T00:00:00.000Z')
const later = (ms: number) => new Date(now.getTime() + ms)
const line = (id: string, unitPriceMinor: number, rule: Partial<PromotionLine> = {}): PromotionLine => ({
  id,
  productId: id,
  categoryIds: [],
  unitPriceMinor,
  quantity: 1,
  ...rule,
})
const promotion = (id: string, rule: Partial<PromotionRule> = {}) => promotionRule({ id, ...rule })
const percentOff = (id: string, ppm: number, rule: Partial<PromotionRule> = {}) => promotion(id, { type: 'percentage', percentOffPpm: ppm, ...rule })
const amountOff = (id: string, minor: number, rule: Partial<PromotionRule> = {}) =>
  promotion(id, { type: 'fixed_amount', percentOffPpm: null, amountOffMinor: minor, currency: 'USD', ...rule })
const buyGet = (id: string, buyQuantity: number, getQuantity: number, rule: Partial<PromotionRule> = {}) =>
  promotion(id, { type: 'buy_x_get_y', percentOffPpm: 1_000_000, buyQuantity, getQuantity, ...rule })
const cart = (input: Partial<PromotionsInput>): PromotionsInput => ({
  currency: 'USD',
  lines: [],
  promotions: [],
  customerGroupIds: [],
  now,
  taxRatePpm: 0,
  shippingMinor: null,
  ...input,
})
const sumOf = (values: readonly number[]) => values.reduce((total, value) => total + value, 0)
const savingOf = (totals: PromotionTotals) => totals.discount + sumOf(totals.applied.map((entry) => entry.shippingDiscount))
const domainError = (code: string, message?: string) => expect.objectContaining(message === undefined ? { code } : { code, message })

describe('applyPromotions by hand', () => {
  it('buy 2 get 1 free on three T-shirts at 10, 20 and 30 takes the 10 off', () => {
    const shirts = [line('t30', 3000, { productId: 'tshirt' }), line('t10', 1000, { productId: 'tshirt' }), line('t20', 2000, { productId: 'tshirt' })]
    const totals = applyPromotions(cart({ lines: shirts, promotions: [buyGet('b2g1', 2, 1, { conditionProductIds: ['tshirt'] })] }))
    expect(totals).toMatchObject({ subtotal: 6000, discount: 1000, total: 5000 })
    expect(totals.applied).toEqual([{ id: 'b2g1', discount: 1000, shippingDiscount: 0, lines: [{ id: 't10', discount: 1000 }] }])
    expect(totals.rejected.size).toBe(0)
  })

  it('buy 2 get 1 on six T-shirts gives the two cheapest, or one with maxApplications 1; half off gives half', () => {
    const shirts = [1000, 2000, 3000, 4000, 5000, 6000].map((price) => line(`t${price / 100}`, price, { productId: 'tshirt' }))
    expect(applyPromotions(cart({ lines: shirts, promotions: [buyGet('b2g1', 2, 1)] })).applied[0]?.lines).toEqual([
      { id: 't10', discount: 1000 },
      { id: 't20', discount: 2000 },
    ])
    expect(applyPromotions(cart({ lines: shirts, promotions: [buyGet('b2g1', 2, 1, { maxApplications: 1 })] })).discount).toBe(1000)
    expect(applyPromotions(cart({ lines: shirts, promotions: [buyGet('b2g1', 2, 1, { percentOffPpm: 500_000 })] })).discount).toBe(1500)
  })

  it('counts units within a line: buy 1 get 1 on four units of one line gives two', () => {
    const totals = applyPromotions(cart({ lines: [line('socks', 499, { quantity: 4 })], promotions: [buyGet('bogo', 1, 1)] }))
    expect(totals.applied).toEqual([{ id: 'bogo', discount: 998, shippingDiscount: 0, lines: [{ id: 'socks', discount: 998 }] }])
  })

  it('gives a dearer unit of the get set when the cheaper one is needed as a "buy" unit', () => {
    // buy 3 socks-or-shoes, get 1 sock-or-hat: B = 2 socks + 1 shoe, G = 2 socks + 1 hat, k = 1.
    // A sock given would leave only 2 units of B to buy, so the hat is given instead.
    const lines = [
      line('sock', 100, { quantity: 2, categoryIds: ['socks'] }),
      line('shoe', 5000, { categoryIds: ['shoes'] }),
      line('hat', 300, { categoryIds: ['hats'] }),
    ]
    const offer = buyGet('b3g1', 3, 1, { conditionCategoryIds: ['socks', 'shoes'], targetCategoryIds: ['socks', 'hats'] })
    expect(applyPromotions(cart({ lines, promotions: [offer] })).applied[0]?.lines).toEqual([{ id: 'hat', discount: 300 }])
  })

  it('never counts a unit for two buy_x_get_y promotions: the later one finds nothing left', () => {
    const totals = applyPromotions(
      cart({ lines: [line('mug', 500, { quantity: 4 })], promotions: [buyGet('b', 1, 1), buyGet('a', 1, 1)] }),
    )
    expect(totals.applied.map((entry) => [entry.id, entry.discount])).toEqual([['a', 1000]])
    expect(totals.rejected).toEqual(new Map([['b', 'no_matching_items']]))
  })

  it('takes 20 % off the shoes, then 5.00 off the order shared by what is left of each line', () => {
    const lines = [line('shirt', 3000, { categoryIds: ['tops'] }), line('boots', 5000, { categoryIds: ['shoes'] })]
    const promotions = [amountOff('five', 500), percentOff('shoes20', 200_000, { targetCategoryIds: ['shoes'] })]
    const totals = applyPromotions(cart({ lines, promotions, taxRatePpm: 100_000 }))
    // 5.00 over 40.00 and 30.00 left: exact shares 2.857 and 2.143 -> 2.86 and 2.14
    expect(totals.applied).toEqual([
      { id: 'shoes20', discount: 1000, shippingDiscount: 0, lines: [{ id: 'boots', discount: 1000 }] },
      { id: 'five', discount: 500, shippingDiscount: 0, lines: [{ id: 'boots', discount: 286 }, { id: 'shirt', discount: 214 }] },
    ])
    expect(totals.lines).toEqual([
      { id: 'shirt', subtotal: 3000, discount: 214, tax: 279, total: 3065 },
      { id: 'boots', subtotal: 5000, discount: 1286, tax: 371, total: 4085 },
    ])
    expect(totals).toMatchObject({ subtotal: 8000, discount: 1500, tax: 650, shipping: 0, total: 7150 })
  })

  it('lets an exclusive 50 % beat two combinables that save less, and says why they did not apply', () => {
    const promotions = [percentOff('ten', 100_000), amountOff('five', 500), percentOff('half', 500_000, { stacking: 'exclusive' })]
    const totals = applyPromotions(cart({ lines: [line('coat', 10_000)], promotions }))
    expect(totals.applied.map((entry) => [entry.id, entry.discount])).toEqual([['half', 5000]])
    expect(totals.rejected).toEqual(
      new Map<string, PromotionRejection>([
        ['five', 'not_combinable'],
        ['ten', 'not_combinable'],
      ]),
    )
    expect(promotionRejectionMessage(promotions[0]!, 'not_combinable')).toBe(
      "Promotion 'ten' cannot be combined with the promotions applied to this cart",
    )
  })

  it('keeps the combinables when together they save more than an exclusive, or as much', () => {
    const combinables = [percentOff('twenty', 200_000), amountOff('five', 500)]
    const more = applyPromotions(cart({ lines: [line('coat', 10_000)], promotions: [...combinables, percentOff('x', 240_000, { stacking: 'exclusive' })] }))
    expect(more.applied.map((entry) => entry.id)).toEqual(['twenty', 'five'])
    expect(more.rejected).toEqual(new Map([['x', 'not_combinable']]))
    // 2500 each way: the combinable set wins the tie; between equal exclusives the lower id wins
    const tie = applyPromotions(
      cart({ lines: [line('coat', 10_000)], promotions: [...combinables, amountOff('y', 2500, { stacking: 'exclusive' })] }),
    )
    expect(tie.applied.map((entry) => entry.id)).toEqual(['twenty', 'five'])
    const exclusives = [amountOff('y', 2500, { stacking: 'exclusive' }), percentOff('x', 250_000, { stacking: 'exclusive' })]
    expect(applyPromotions(cart({ lines: [line('coat', 10_000)], promotions: exclusives })).applied.map((entry) => entry.id)).toEqual(['x'])
  })

  it('counts waived shipping as saving when choosing, and reports it apart from the merchandise discount', () => {
    const promotions = [percentOff('ten', 100_000), promotion('shipfree', { type: 'free_shipping', percentOffPpm: null, stacking: 'exclusive' })]
    const totals = applyPromotions(cart({ lines: [line('coat', 10_000)], promotions, shippingMinor: 1500 }))
    expect(totals).toMatchObject({ subtotal: 10_000, discount: 0, shipping: 0, total: 10_000 })
    expect(totals.applied).toEqual([{ id: 'shipfree', discount: 0, shippingDiscount: 1500, lines: [] }])
  })

  it('drops the promotion that would pass its campaign spend budget and recomputes the rest without it', () => {
    const campaign = campaignRule({ budgetType: 'spend', budgetLimit: 1500, budgetUsed: 1000 })
    const promotions = [percentOff('pct', 100_000, { campaign }), amountOff('three', 300, { campaign })]
    const totals = applyPromotions(cart({ lines: [line('coat', 10_000)], promotions }))
    // 10 % is 10.00, more than the 5.00 left; the 3.00 fits once the percentage is gone
    expect(totals.applied.map((entry) => [entry.id, entry.discount])).toEqual([['three', 300]])
    expect(totals.rejected).toEqual(new Map([['pct', 'budget_exhausted']]))
  })

  it('lets an exclusive promotion that saves nothing yet apply when none of the combinables can', () => {
    const spent = campaignRule({ budgetType: 'spend', budgetLimit: 800, budgetUsed: 800 })
    const promotions = [percentOff('pct', 100_000, { campaign: spent }), promotion('shipfree', { type: 'free_shipping', percentOffPpm: null, stacking: 'exclusive' })]
    // no shipping chosen yet: free shipping saves 0, but the combinable set applies nothing at all
    const totals = applyPromotions(cart({ lines: [line('coat', 10_000)], promotions }))
    expect(totals.applied).toEqual([{ id: 'shipfree', discount: 0, shippingDiscount: 0, lines: [] }])
    expect(totals.rejected).toEqual(new Map([['pct', 'budget_exhausted']]))
  })

  it('counts each applied promotion of a campaign as one use of its usage budget', () => {
    const oneLeft = campaignRule({ budgetType: 'usage', budgetLimit: 5, budgetUsed: 4 })
    const promotions = [amountOff('a', 100, { campaign: oneLeft }), amountOff('b', 100, { campaign: oneLeft })]
    const totals = applyPromotions(cart({ lines: [line('coat', 10_000)], promotions }))
    expect(totals.applied.map((entry) => entry.id)).toEqual(['a'])
    expect(totals.rejected).toEqual(new Map([['b', 'budget_exhausted']]))
  })

  it('rejects each ineligible promotion with the first rule it fails, and accepts the boundaries', () => {
    const usd = { currency: 'USD' }
    const rejected: [PromotionRule, PromotionRejection][] = [
      [percentOff('inactive', 1, { isActive: false, startsAt: later(1) }), 'inactive'],
      [percentOff('early', 1, { startsAt: later(1) }), 'not_started'],
      [percentOff('campaign-early', 1, { campaign: campaignRule({ startsAt: later(1) }) }), 'not_started'],
      [percentOff('late', 1, { endsAt: now }), 'expired'],
      [percentOff('campaign-late', 1, { campaign: campaignRule({ endsAt: now }) }), 'expired'],
      [percentOff('used', 1, { usageLimit: 3, timesUsed: 3 }), 'usage_limit_reached'],
      [amountOff('euro', 1, { currency: 'EUR' }), 'currency_mismatch'],
      [percentOff('campaign-euro', 1, { campaign: campaignRule({ currency: 'EUR' }) }), 'currency_mismatch'],
      [percentOff('small', 1, { minSubtotalMinor: 5001, ...usd }), 'min_subtotal_not_met'],
      [percentOff('vip', 1, { customerGroupIds: ['vip'] }), 'customer_group'],
      [percentOff('once', 1, { perCustomerLimit: 1, customerUses: 1 }), 'customer_limit_reached'],
      [percentOff('spent', 1, { campaign: campaignRule({ budgetType: 'usage', budgetLimit: 7, budgetUsed: 7 }) }), 'budget_exhausted'],
      [percentOff('hats', 1, { conditionProductIds: ['hat'], conditionCategoryIds: ['headwear'] }), 'conditions_not_met'],
      [percentOff('hats-off', 1, { targetCategoryIds: ['hats'] }), 'no_matching_items'],
      [buyGet('b2g1', 2, 1), 'no_matching_items'],
    ]
    const accepted = [
      percentOff('from-now', 1, { startsAt: now }),
      percentOff('until-soon', 1, { endsAt: later(1), campaign: campaignRule({ startsAt: now }) }),
      percentOff('just-enough', 1, { minSubtotalMinor: 5000, ...usd }),
      percentOff('retail', 1, { customerGroupIds: ['vip', 'retail'] }),
      percentOff('twice', 1, { perCustomerLimit: 2, customerUses: 1 }),
      percentOff('one-use-left', 1, { campaign: campaignRule({ id: 'other', budgetType: 'usage', budgetLimit: 7, budgetUsed: 6 }) }),
      percentOff('shoes', 1, { conditionCategoryIds: ['shoes'], targetProductIds: ['shoe'] }),
    ]
    const totals = applyPromotions(
      cart({
        lines: [line('shoe', 5000, { categoryIds: ['shoes'] }), line('hat', 1000, { categoryIds: ['headwear'], quantity: 0 })],
        promotions: [...rejected.map(([rule]) => rule), ...accepted],
        customerGroupIds: ['retail'],
      }),
    )
    expect(Object.fromEntries(totals.rejected)).toEqual(Object.fromEntries(rejected.map(([rule, reason]) => [rule.id, reason])))
    expect(totals.applied.map((entry) => entry.id).sort()).toEqual(accepted.map((rule) => rule.id).sort())
  })

  it('tells the shopper why, naming a code as a coupon and an automatic promotion by its name', () => {
    const coded = percentOff('p', 1, { code: 'SPRING', minSubtotalMinor: 5000, currency: 'USD', endsAt: new Date('2026-04-01T00:00:00.000Z') })
    const automatic = percentOff('q', 1, { name: 'Summer sale', campaign: campaignRule({ startsAt: new Date('2026-06-01T00:00:00.000Z') }) })
    expect(promotionRejectionMessage(coded, 'min_subtotal_not_met')).toBe("Coupon 'SPRING' requires a subtotal of at least 50.00 USD")
    expect(promotionRejectionMessage(coded, 'expired')).toBe("Coupon 'SPRING' expired on 2026-04-01T00:00:00.000Z")
    expect(promotionRejectionMessage(automatic, 'not_started')).toBe("Promotion 'Summer sale' is not valid before 2026-06-01T00:00:00.000Z")
    expect(promotionRejectionMessage(automatic, 'customer_limit_reached')).toBe("Promotion 'Summer sale' has been used as many times as one customer may")
  })

  it('refuses promotions whose figures mean nothing, and duplicate ids', () => {
    const lines = [line('a', 1000)]
    expect(() => applyPromotions(cart({ lines, promotions: [percentOff('x', 1), percentOff('x', 2)] }))).toThrow(
      domainError('validation_error', 'Promotions must have distinct ids'),
    )
    expect(() => applyPromotions(cart({ lines, promotions: [buyGet('x', 2, 0)] }))).toThrow(domainError('validation_error'))
    expect(() => applyPromotions(cart({ lines, promotions: [buyGet('x', 2, 1, { percentOffPpm: null })] }))).toThrow(
      domainError('validation_error', "Promotion 'x' has no percentage"),
    )
    expect(() => applyPromotions(cart({ lines, promotions: [amountOff('x', 100, { currency: null, code: 'X' })] }))).toThrow(
      domainError('validation_error', "Coupon 'X' needs an amount and a currency"),
    )
    expect(() => applyPromotions(cart({ lines, promotions: [percentOff('x', 1, { campaign: campaignRule({ budgetUsed: -1 }) })] }))).toThrow(
      domainError('validation_error'),
    )
    expect(() => applyPromotions(cart({ lines: [line('a', 1000), line('a', 10)] }))).toThrow(domainError('validation_error', 'Cart lines must have distinct ids'))
  })
})

describe('coupons fed through applyPromotions', () => {
  const coupon = (id: string, code: string, rule: Partial<CouponRule>): CouponRule => couponRule({ id, code, percentOffPpm: null, ...rule })
  const viaPromotions = (input: { currency: string; lines: PromotionLine[]; coupons: CouponRule[]; taxRatePpm: number; shippingMinor: number | null }) =>
    applyPromotions(cart({ ...input, promotions: input.coupons.map(promotionFromCoupon) }))

  it('prices the worked examples of computeCartTotals to the same minor unit', () => {
    // The JPY and KWD carts and the coupon-order cases of totals.test.ts, with their figures.
    const jpy = viaPromotions({
      currency: 'JPY',
      lines: [line('a', 1500, { quantity: 3 }), line('b', 980)],
      coupons: [coupon('id-YEN500', 'YEN500', { type: 'fixed_amount', amountOffMinor: 500, currency: 'JPY' })],
      taxRatePpm: 100_000,
      shippingMinor: 800,
    })
    expect(jpy).toMatchObject({
      subtotal: 5480,
      discount: 500,
      tax: 498,
      shipping: 800,
      total: 6278,
      lines: [
        { id: 'a', subtotal: 4500, discount: 411, tax: 409, total: 4498 },
        { id: 'b', subtotal: 980, discount: 89, tax: 89, total: 980 },
      ],
    })
    const kwd = viaPromotions({
      currency: 'KWD',
      lines: [line('a', 1250, { quantity: 2 }), line('b', 3755)],
      coupons: [coupon('id-FIFTEEN', 'FIFTEEN', { type: 'percentage', percentOffPpm: 150_000 })],
      taxRatePpm: 50_000,
      shippingMinor: null,
    })
    expect(kwd.lines).toEqual([
      { id: 'a', subtotal: 2500, discount: 375, tax: 106, total: 2231 },
      { id: 'b', subtotal: 3755, discount: 563, tax: 160, total: 3352 },
    ])
    const capped = viaPromotions({
      currency: 'USD',
      lines: [line('a', 1000)],
      coupons: [
        coupon('id-B', 'B', { type: 'fixed_amount', amountOffMinor: 800, currency: 'USD' }),
        coupon('id-A', 'A', { type: 'fixed_amount', amountOffMinor: 800, currency: 'USD' }),
        coupon('id-P', 'P', { type: 'percentage', percentOffPpm: 100_000 }),
        coupon('id-S', 'S', { type: 'free_shipping' }),
      ],
      taxRatePpm: 100_000,
      shippingMinor: 799,
    })
    expect(capped.applied.map((entry) => [entry.id, entry.discount, entry.shippingDiscount])).toEqual([
      ['id-P', 100, 0],
      ['id-A', 800, 0],
      ['id-B', 100, 0],
      ['id-S', 0, 799],
    ])
    expect(capped).toMatchObject({ subtotal: 1000, discount: 1000, tax: 0, shipping: 0, total: 0 })
  })

  const couponCurrencies = ['USD', 'JPY', 'KWD'] as const
  const couponCarts = fc.constantFrom(...couponCurrencies).chain((currency) =>
    fc.record({
      currency: fc.constant(currency),
      lines: fc.uniqueArray(
        fc.record({
          id: fc.string({ minLength: 1, maxLength: 4 }),
          productId: fc.constant('p'),
          categoryIds: fc.constant([]),
          unitPriceMinor: fc.oneof(
            { arbitrary: fc.integer({ min: 0, max: 1_000_000_000 }), weight: 20 },
            { arbitrary: fc.integer({ min: 0, max: 10_000 }), weight: 20 },
            { arbitrary: fc.integer({ min: 0, max: MAX_MINOR_UNITS }), weight: 1 },
          ),
          quantity: fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 1, max: 5 })),
        }),
        { maxLength: 30, selector: (entry) => entry.id },
      ),
      coupons: fc.uniqueArray(
        fc
          .record({
            id: fc.string({ minLength: 1, maxLength: 4 }),
            code: fc.constantFrom('A', 'B', 'SAVE', 'save'),
            type: fc.constantFrom('percentage', 'fixed_amount', 'free_shipping' as const),
            ppm: fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom(0, 88_750, 100_000, 1_000_000)),
            amount: fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: MAX_MINOR_UNITS })),
          })
          .map(({ id, code, type, ppm, amount }) =>
            type === 'percentage'
              ? coupon(id, code, { type, percentOffPpm: ppm })
              : type === 'fixed_amount'
                ? coupon(id, code, { type, amountOffMinor: amount, currency })
                : coupon(id, code, { type }),
          ),
        { maxLength: 5, selector: (entry) => entry.id },
      ),
      taxRatePpm: fc.oneof(fc.integer({ min: 0, max: 300_000 }), fc.constantFrom(0, 88_750, 200_000)),
      taxRounding: fc.constantFrom<TaxRounding>('line', 'order'),
      shippingMinor: fc.option(fc.integer({ min: 0, max: 10_000_000 }), { nil: null }),
    }),
  )
  const outcome = <T,>(price: () => T): { value: T } | { error: unknown } => {
    try {
      return { value: price() }
    } catch (error) {
      return { error }
    }
  }

  it('gives the totals computeCartTotals gives, and what each coupon took, for any cart', () => {
    fc.assert(
      fc.property(couponCarts, (input) => {
        const legacy = outcome(() => computeCartTotals(input))
        const engine = outcome(() => applyPromotions(cart({ ...input, promotions: input.coupons.map(promotionFromCoupon) })))
        if ('error' in legacy || 'error' in engine) {
          expect(engine).toEqual(legacy)
          return
        }
        const { coupons, ...totals } = legacy.value
        const { applied, rejected, ...engineTotals } = engine.value
        expect(engineTotals).toEqual(totals)
        expect(rejected.size).toBe(0)
        const typeOf = new Map(input.coupons.map((entry) => [entry.id, entry.type]))
        expect(applied.map((entry) => ({ id: entry.id, discount: typeOf.get(entry.id) === 'free_shipping' ? entry.shippingDiscount : entry.discount }))).toEqual(
          coupons,
        )
      }),
    )
  })
})

const PRODUCTS = ['p1', 'p2', 'p3', 'p4']
const CATEGORIES = ['c1', 'c2', 'c3']
const GROUPS = ['retail', 'vip']
const HOUR = 3_600_000
/** null four times in five: most promotions have no such limit */
const rarely = <T,>(value: fc.Arbitrary<T>) => fc.oneof({ arbitrary: fc.constant(null), weight: 4 }, { arbitrary: value, weight: 1 })
const someOf = (values: readonly string[]) => fc.oneof(fc.constant([]), fc.subarray([...values], { minLength: 1, maxLength: 2 }))
const promotionLines = (price: fc.Arbitrary<number>) =>
  fc.uniqueArray(
    fc.record({
      id: fc.string({ minLength: 1, maxLength: 3 }),
      productId: fc.constantFrom(...PRODUCTS),
      categoryIds: fc.subarray(CATEGORIES, { maxLength: 2 }),
      unitPriceMinor: price,
      quantity: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 12 })),
    }),
    { maxLength: 8, selector: (entry) => entry.id },
  )
const campaignOf = (id: string): fc.Arbitrary<CampaignRule> =>
  fc.oneof(
    fc.record({
      id: fc.constant(id),
      budgetType: fc.constant('spend' as const),
      budgetLimit: fc.option(fc.integer({ min: 0, max: 30_000 }), { nil: null }),
      budgetUsed: fc.integer({ min: 0, max: 5_000 }),
      currency: fc.constantFrom(null, null, 'USD'),
      startsAt: fc.constant(null),
      endsAt: fc.constant(null),
    }),
    fc.record({
      id: fc.constant(id),
      budgetType: fc.constant('usage' as const),
      budgetLimit: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
      budgetUsed: fc.integer({ min: 0, max: 3 }),
      currency: fc.constant(null),
      startsAt: fc.constant(null),
      endsAt: fc.constant(null),
    }),
  )
const promotionOf = (campaigns: readonly CampaignRule[]): fc.Arbitrary<PromotionRule> =>
  fc
    .record({
      id: fc.string({ minLength: 1, maxLength: 3 }),
      code: fc.constantFrom(null, null, 'A', 'B'),
      type: fc.constantFrom<PromotionType>('percentage', 'fixed_amount', 'free_shipping', 'buy_x_get_y'),
      percentOffPpm: fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom(100_000, 500_000, 1_000_000)),
      amountOffMinor: fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 0, max: 50_000 })),
      currency: fc.oneof({ arbitrary: fc.constantFrom('USD', null), weight: 9 }, { arbitrary: fc.constant('EUR'), weight: 1 }),
      minSubtotalMinor: rarely(fc.integer({ min: 0, max: 40_000 })),
      startsAt: rarely(fc.constantFrom(-HOUR, 0, 1).map(later)),
      endsAt: rarely(fc.constantFrom(0, 1, HOUR).map(later)),
      usageLimit: rarely(fc.integer({ min: 0, max: 3 })),
      timesUsed: fc.integer({ min: 0, max: 3 }),
      isActive: fc.oneof({ arbitrary: fc.constant(true), weight: 9 }, { arbitrary: fc.constant(false), weight: 1 }),
      stacking: fc.constantFrom('combinable' as const, 'combinable' as const, 'exclusive' as const),
      conditionProductIds: someOf(PRODUCTS),
      conditionCategoryIds: someOf(CATEGORIES),
      customerGroupIds: fc.oneof(fc.constant([]), fc.constant([]), someOf(GROUPS)),
      targetProductIds: someOf(PRODUCTS),
      targetCategoryIds: someOf(CATEGORIES),
      buyQuantity: fc.integer({ min: 1, max: 3 }),
      getQuantity: fc.integer({ min: 1, max: 3 }),
      maxApplications: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
      perCustomerLimit: rarely(fc.integer({ min: 0, max: 2 })),
      customerUses: fc.integer({ min: 0, max: 2 }),
      campaign: campaigns.length === 0 ? fc.constant(null) : fc.option(fc.constantFrom(...campaigns), { nil: null }),
    })
    // a fixed amount needs a currency
    .map((rule) => ({ ...rule, name: `promotion ${rule.id}`, currency: rule.type === 'fixed_amount' ? (rule.currency ?? 'USD') : rule.currency }))
const promotionCarts = fc
  .tuple(campaignOf('k1'), campaignOf('k2'))
  .chain((campaigns) =>
    fc.record({
      currency: fc.constant('USD'),
      lines: promotionLines(fc.oneof(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 10_000 }))),
      promotions: fc.uniqueArray(promotionOf(campaigns), { maxLength: 6, selector: (entry) => entry.id }),
      customerGroupIds: fc.subarray(GROUPS),
      now: fc.constant(now),
      taxRatePpm: fc.oneof(fc.integer({ min: 0, max: 300_000 }), fc.constantFrom(0, 88_750, 200_000)),
      taxRounding: fc.constantFrom<TaxRounding>('line', 'order'),
      shippingMinor: fc.option(fc.integer({ min: 0, max: 3_000 }), { nil: null }),
    }),
  )
const shuffledPromotionCarts = promotionCarts.chain((input) =>
  fc
    .tuple(fc.shuffledSubarray([...input.lines], { minLength: input.lines.length }), fc.shuffledSubarray([...input.promotions], { minLength: input.promotions.length }))
    .map(([lines, promotions]) => ({ input, shuffled: { ...input, lines, promotions } })),
)
/** Rejections decided by the promotion and the cart alone, before stacking or budgets are looked at. */
const ALWAYS_INELIGIBLE = new Set<PromotionRejection>([
  'inactive',
  'not_started',
  'expired',
  'usage_limit_reached',
  'currency_mismatch',
  'min_subtotal_not_met',
  'conditions_not_met',
  'customer_group',
  'customer_limit_reached',
])

describe('applyPromotions over generated carts', () => {
  it('keeps total = subtotal - discount + tax + shipping, the lines summing to the cart, none below zero', () => {
    fc.assert(
      fc.property(promotionCarts, (input) => {
        const totals = applyPromotions(input)
        expect(totals.total).toBe(totals.subtotal - totals.discount + totals.tax + totals.shipping)
        expect(totals.discount).toBeLessThanOrEqual(totals.subtotal)
        for (const entry of totals.lines) {
          expect(entry.total).toBe(entry.subtotal - entry.discount + entry.tax)
          expect(entry.discount >= 0 && entry.discount <= entry.subtotal && entry.tax >= 0).toBe(true)
        }
        expect(sumOf(totals.lines.map((entry) => entry.subtotal))).toBe(totals.subtotal)
        expect(sumOf(totals.lines.map((entry) => entry.discount))).toBe(totals.discount)
        expect(sumOf(totals.lines.map((entry) => entry.tax))).toBe(totals.tax)
        expect(sumOf(totals.lines.map((entry) => entry.total)) + totals.shipping).toBe(totals.total)
      }),
    )
  })

  it('accounts for every promotion once: applied ones add up to the discount and the waived shipping, the rest are rejected', () => {
    fc.assert(
      fc.property(promotionCarts, (input) => {
        const totals = applyPromotions(input)
        const appliedIds = totals.applied.map((entry) => entry.id)
        expect([...appliedIds, ...totals.rejected.keys()].sort()).toEqual(input.promotions.map((entry) => entry.id).sort())
        expect(sumOf(totals.applied.map((entry) => entry.discount))).toBe(totals.discount)
        expect(sumOf(totals.applied.map((entry) => entry.shippingDiscount)) + totals.shipping).toBe(input.shippingMinor ?? 0)
        for (const entry of totals.applied) {
          expect(sumOf(entry.lines.map((share) => share.discount))).toBe(entry.discount)
          expect(entry.lines.every((share) => share.discount > 0)).toBe(true)
        }
        for (const cartLine of totals.lines) {
          const shares = totals.applied.flatMap((entry) => entry.lines.filter((share) => share.id === cartLine.id))
          expect(sumOf(shares.map((share) => share.discount))).toBe(cartLine.discount)
        }
      }),
    )
  })

  it('prices with a rate that depends on the merchandise exactly as pricing again with that rate', () => {
    fc.assert(
      fc.property(promotionCarts, fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 0, max: 20_000 }), (input, rate, freeOver) => {
        // A rate free over an amount, as shipping methods have: it needs the merchandise after discounts.
        const shippingFor = (merchandise: number) => (merchandise >= freeOver ? 0 : rate)
        const merchandise = applyPromotions({ ...input, shippingMinor: null })
        const expected = applyPromotions({ ...input, shippingMinor: shippingFor(merchandise.subtotal - merchandise.discount) })
        expect(applyPromotionsWithShipping(input, shippingFor)).toEqual(expected)
        expect(applyPromotionsWithShipping(input, () => null)).toEqual(merchandise)
      }),
    )
  })

  it('gives the same result for any order of lines and promotions', () => {
    fc.assert(
      fc.property(shuffledPromotionCarts, ({ input, shuffled }) => {
        const original = applyPromotions(input)
        const reordered = applyPromotions(shuffled)
        const { lines: originalLines, ...originalTotals } = original
        const { lines: reorderedLines, ...reorderedTotals } = reordered
        expect(reorderedTotals).toEqual(originalTotals)
        expect([...reordered.rejected]).toEqual([...original.rejected])
        expect(reorderedLines.map((entry) => entry.id)).toEqual(shuffled.lines.map((entry) => entry.id))
        const byId = (lines: typeof originalLines) => Object.fromEntries(lines.map((entry) => [entry.id, entry]))
        expect(byId(reorderedLines)).toEqual(byId(originalLines))
      }),
    )
  })

  it('applies the stacking candidate that saves the most, found by pricing each candidate alone', () => {
    fc.assert(
      fc.property(promotionCarts, (input) => {
        const totals = applyPromotions(input)
        const eligible = input.promotions.filter((entry) => !ALWAYS_INELIGIBLE.has(totals.rejected.get(entry.id) ?? 'not_combinable'))
        const combinable = eligible.filter((entry) => entry.stacking === 'combinable')
        const exclusives = eligible.filter((entry) => entry.stacking === 'exclusive').sort((a, b) => (a.id < b.id ? -1 : 1))
        const candidates = [...(combinable.length > 0 ? [combinable] : []), ...exclusives.map((entry) => [entry])]
        // a candidate of which nothing applies (over budget, no matching items) is no candidate
        const priced = candidates.map((promotions) => applyPromotions({ ...input, promotions })).filter((result) => result.applied.length > 0)
        const best = priced.reduce<PromotionTotals | undefined>(
          (chosen, candidate) => (chosen === undefined || savingOf(candidate) > savingOf(chosen) ? candidate : chosen),
          undefined,
        )
        expect(savingOf(totals)).toBe(Math.max(0, ...priced.map(savingOf)))
        expect(totals.applied).toEqual(best?.applied ?? [])
        expect(totals.total).toBe(best?.total ?? applyPromotions({ ...input, promotions: [] }).total)
        for (const entry of exclusives) {
          if (totals.applied.some((applied) => applied.id === entry.id)) expect(totals.applied).toHaveLength(1)
        }
      }),
      // stacking choices are rarer than the other cases: more runs
      { numRuns: 300 },
    )
  })

  it('never lets the applied promotions of a campaign pass what is left of its spend or usage budget', () => {
    fc.assert(
      fc.property(promotionCarts, (input) => {
        const totals = applyPromotions(input)
        const campaignOfPromotion = new Map(input.promotions.map((entry) => [entry.id, entry.campaign]))
        const used = new Map<string, number>()
        for (const entry of totals.applied) {
          const campaign = campaignOfPromotion.get(entry.id)
          if (!campaign || campaign.budgetLimit === null) continue
          const use = campaign.budgetType === 'spend' ? entry.discount + entry.shippingDiscount : 1
          used.set(campaign.id, (used.get(campaign.id) ?? 0) + use)
          expect(used.get(campaign.id)).toBeLessThanOrEqual(campaign.budgetLimit - campaign.budgetUsed)
        }
      }),
    )
  })
})

describe('buy_x_get_y over generated carts', () => {
  const offers = fc.record({
    buyQuantity: fc.integer({ min: 1, max: 3 }),
    getQuantity: fc.integer({ min: 1, max: 3 }),
    maxApplications: fc.option(fc.integer({ min: 1, max: 4 }), { nil: null }),
    conditionProductIds: someOf(PRODUCTS),
    conditionCategoryIds: someOf(CATEGORIES),
    targetProductIds: someOf(PRODUCTS),
    targetCategoryIds: someOf(CATEGORIES),
    percentOffPpm: fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constant(500_000)),
  })
  // Prices from 1 so that, at 100 % off, a line's discount divided by its price is the units it was given.
  const offerCarts = fc
    .tuple(promotionLines(fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 5_000 }))), offers)
    .chain(([lines, offer]) => fc.tuple(fc.constant(lines), fc.constant(offer), fc.shuffledSubarray(lines, { minLength: lines.length })))
  const matches = (entry: PromotionLine, productIds: readonly string[], categoryIds: readonly string[]) =>
    (productIds.length === 0 && categoryIds.length === 0) ||
    productIds.includes(entry.productId) ||
    entry.categoryIds.some((category) => categoryIds.includes(category))
  const unitsOf = (lines: readonly PromotionLine[]) => sumOf(lines.map((entry) => entry.quantity))

  it('gives exactly k·get units, k from the unit counts, the cheapest when both sets are one, whatever the line order', () => {
    fc.assert(
      fc.property(offerCarts, ([lines, offer, shuffled]) => {
        const free = buyGet('bxgy', offer.buyQuantity, offer.getQuantity, { ...offer, percentOffPpm: 1_000_000 })
        const totals = applyPromotions(cart({ lines, promotions: [free] }))
        expect(applyPromotions(cart({ lines: shuffled, promotions: [free] })).applied).toEqual(totals.applied)

        const buySet = lines.filter((entry) => matches(entry, offer.conditionProductIds, offer.conditionCategoryIds))
        const aimed = offer.targetProductIds.length > 0 || offer.targetCategoryIds.length > 0
        const getSet = aimed ? lines.filter((entry) => matches(entry, offer.targetProductIds, offer.targetCategoryIds)) : buySet
        const either = lines.filter((entry) => buySet.includes(entry) || getSet.includes(entry))
        const k = Math.min(
          offer.maxApplications ?? Infinity,
          Math.floor(unitsOf(buySet) / offer.buyQuantity),
          Math.floor(unitsOf(getSet) / offer.getQuantity),
          Math.floor(unitsOf(either) / (offer.buyQuantity + offer.getQuantity)),
        )
        if (k === 0) {
          expect(totals.applied).toEqual([])
          expect(['conditions_not_met', 'no_matching_items']).toContain(totals.rejected.get('bxgy'))
          return
        }
        const shares = totals.applied[0]?.lines ?? []
        const priceOf = new Map(lines.map((entry) => [entry.id, entry]))
        const given = shares.map((share) => ({ line: priceOf.get(share.id)!, units: share.discount / priceOf.get(share.id)!.unitPriceMinor }))
        expect(given.every(({ line: entry, units }) => Number.isInteger(units) && units <= entry.quantity && getSet.includes(entry))).toBe(true)
        expect(sumOf(given.map(({ units }) => units))).toBe(k * offer.getQuantity)
        // k·buy units of the buy set are left to be bought
        const givenFromBuySet = sumOf(given.filter(({ line: entry }) => buySet.includes(entry)).map(({ units }) => units))
        expect(givenFromBuySet).toBeLessThanOrEqual(unitsOf(buySet) - k * offer.buyQuantity)
        if (!aimed) {
          const cheapest = buySet
            .flatMap((entry) => Array.from({ length: entry.quantity }, () => entry.unitPriceMinor))
            .sort((a, b) => a - b)
            .slice(0, k * offer.getQuantity)
          expect(totals.discount).toBe(sumOf(cheapest))
        }
        // The same units at any percentage: each line's discount rounded on its own.
        const partial = applyPromotions(cart({ lines, promotions: [{ ...free, percentOffPpm: offer.percentOffPpm }] }))
        const expected = given
          .map(({ line: entry, units }) => ({
            id: entry.id,
            discount: Number(divideRounded(BigInt(entry.unitPriceMinor * units) * BigInt(offer.percentOffPpm), 1_000_000n)),
          }))
          .filter((share) => share.discount > 0)
        expect(partial.applied[0]?.lines ?? []).toEqual(expected)
      }),
    )
  })
})
