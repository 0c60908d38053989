/** `GET /shipping/rates?cart_id=`: the shipping methods that can carry a cart, cheapest first. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { eq } from 'drizzle-orm'
import { AmountTooLargeError, shippingRate, ShippingRateList, ShippingRatesQuery, toMajorUnits } from '@commerce/domain'
import { shippingMethods, type Executor, type ShippingMethodRow } from '@commerce/db'
import { errorResponses } from '../../errors.js'
import type { PricedCart } from '../carts/pricing.js'
import { cartViewerOf, createCartService } from '../carts/service.js'

/** The method's price for the cart, or null when it cannot carry it (a price past the most an amount can be included). */
function rateOf(method: ShippingMethodRow, priced: PricedCart, currency: string): number | null {
  if (method.currency !== currency) return null
  try {
    return shippingRate(method, { ...priced, currency })
  } catch (error) {
    if (error instanceof AmountTooLargeError) return null
    throw error
  }
}

/** Of `methods`, those that can carry a priced cart, cheapest first, with their price in minor units. */
export function ratesFor(methods: readonly ShippingMethodRow[], priced: PricedCart) {
  const { currency } = priced.view
  const rates = methods.flatMap((method) => {
    const amount = rateOf(method, priced, currency)
    return amount === null ? [] : [{ method, amount }]
  })
  rates.sort((a, b) => a.amount - b.amount || a.method.name.localeCompare(b.method.name) || a.method.id.localeCompare(b.method.id))
  return rates.map(({ method, amount }) => ({
    id: method.id,
    name: method.name,
    amountMinor: amount,
    view: { id: method.id, name: method.name, amount: toMajorUnits(amount, currency), currency, estimated_days: method.estimatedDays },
  }))
}

/** The shipping methods that can carry a priced cart, cheapest first, with their price in minor units. */
export async function availableRates(db: Executor, priced: PricedCart) {
  return ratesFor(await db.select().from(shippingMethods).where(eq(shippingMethods.currency, priced.view.currency)), priced)
}

export const shippingRateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const cartService = createCartService(app.db, app.pricingRules)

  app.get(
    '/rates',
    {
      schema: {
        operationId: 'listShippingRates',
        tags: ['shipping'],
        summary: "Shipping rates for a cart's address and weight, cheapest first",
        description:
          "Active methods in the cart's currency that ship to its address's country (without an address, only " +
          'methods that ship everywhere) and whose weight bounds hold the goods. `amount` is the price before ' +
          'coupons; a free-shipping coupon waives it in the totals.',
        querystring: ShippingRatesQuery,
        response: { 200: ShippingRateList, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const priced = await cartService.price(request.query.cart_id, await cartViewerOf(app, request, 'carts:read'))
      return { rates: (await availableRates(app.db, priced)).map((rate) => rate.view) }
    },
  )
}
