/**
 * The price lists and automatic promotions (with their campaigns), kept by each API instance to
 * price carts: few, read by every cart read, and changed rarely. Built from them on every read,
 * they cost a cart in a market with ten promotions and three price lists more than twice a plain
 * cart's read (bench/README.md, issue 49). A cart read sends only the cart's own rows and what
 * checkouts move in its bounded promotions (use counts, budgets, the customer's uses: read live).
 *
 * A write through this instance reads the rules again before it answers; one through another
 * instance is announced by the database (migration 0046: NOTIFY commerce_pricing) and read within
 * moments, and, should the announcement be lost, every REFRESH_MS by the revision. A cart that
 * names a list or a bounded promotion the rules do not hold, or misses one they hold, reads them
 * at once (pricedLive).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { PriceListRule, PromotionRule } from '@commerce/domain'
import { pricingRulesSince } from '@commerce/db'
import { toPriceListRule, toPromotionRule, type PricingRules } from '../routes/carts/pricing.js'

declare module 'fastify' {
  interface FastifyInstance {
    pricingRules: PricingRules
  }
}

export const PRICING_CHANNEL = 'commerce_pricing'
const REFRESH_MS = 5_000

export default fp(
  async function pricingRulesPlugin(app: FastifyInstance) {
    let lists = new Map<string, PriceListRule>()
    let automatic: PromotionRule[] = []
    let byCurrency = new Map<string, PromotionRule[]>()
    let seenRevision: string | undefined
    // One read at a time; a refresh asked for meanwhile runs once that one is done.
    let running: Promise<void> | undefined
    let again: Promise<void> | undefined

    async function read() {
      const found = await pricingRulesSince(app.sql, seenRevision)
      if (found.rules) {
        lists = new Map(found.rules.lists.map((list) => [list.id, toPriceListRule(list)]))
        automatic = found.rules.automatic.map((row) => toPromotionRule({ ...row, customerUses: 0 }))
        byCurrency = new Map()
      }
      seenRevision = found.revision
    }

    const rules: PricingRules = {
      get lists() {
        return lists
      },
      automatic(currency) {
        let found = byCurrency.get(currency)
        if (found === undefined) byCurrency.set(currency, (found = automatic.filter((rule) => rule.currency === null || rule.currency === currency)))
        return found
      },
      refresh() {
        if (!running) {
          running = read().finally(() => (running = undefined))
          return running
        }
        again ??= running.then(
          () => ((again = undefined), rules.refresh()),
          () => ((again = undefined), rules.refresh()),
        )
        return again
      },
    }
    app.decorate('pricingRules', rules)

    let timer: NodeJS.Timeout | undefined
    let stopped = false
    const refreshQuietly = () => rules.refresh().catch((error: unknown) => app.log.warn({ err: error }, 'could not read the pricing rules'))
    const refreshLater = () => {
      timer = setTimeout(() => void refreshQuietly().finally(() => stopped || refreshLater()), REFRESH_MS)
      timer.unref()
    }
    app.addHook('onReady', async () => {
      // Never fatal: a cart read reads the rules it misses (and the app builds its OpenAPI document with no database at all).
      await refreshQuietly()
      await app.listenSql.listen(PRICING_CHANNEL, () => void refreshQuietly(), () => void refreshQuietly()).catch((error: unknown) => {
        app.log.warn({ err: error }, `could not listen on ${PRICING_CHANNEL}: the pricing rules are read again every ${REFRESH_MS / 1000} s`)
      })
      refreshLater()
    })
    app.addHook('onClose', async () => {
      stopped = true
      clearTimeout(timer)
    })
  },
  { name: 'pricing-rules', dependencies: ['database'] },
)

/** An onSend hook for the routes that write price lists, promotions or campaigns: the rules are read again before the answer. */
export function refreshPricingOnWrite(app: FastifyInstance) {
  return async (request: FastifyRequest, _reply: FastifyReply, payload: unknown) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') await app.pricingRules.refresh()
    return payload
  }
}
