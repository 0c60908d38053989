/**
 * The unit price of a cart line: which of a product's prices (its base price, and the prices of its
 * price lists) the customer pays for this quantity now. Candidates are in the cart's currency
 * already; the answer never depends on their order.
 *
 * The rule:
 * - A price list applies when it is active, now is inside its window (startsAt inclusive, endsAt
 *   exclusive), and it names no customer groups or the customer is in one of them. Candidates of a
 *   list that does not apply, or that is not among the lists given, are ignored.
 * - Each source (the base price, or one price list) offers at most one price: the candidate with
 *   the largest minQuantity <= quantity (quantity tiers), a variant's own price beating the
 *   product's at the same minQuantity (then the lower amount). So a product's tiers apply to every
 *   variant from their quantity on, unless the variant has a tier of its own there; a source with
 *   no candidate that qualifies offers nothing.
 * - No base price: null, the product is not sold in that currency.
 * - The reference price is the base price, unless override lists apply and offer a price: then the
 *   override of the highest priority (ties: the lower price, then the lower list id) replaces it.
 * - The line pays the lowest of the reference price and every applicable sale list's price, ties
 *   going to the reference, then to the lower list id. `originalUnitPriceMinor` is the base price
 *   (so the cart can show original against sale), and `priceListId` the list that gave
 *   `unitPriceMinor`, or null when the base price did.
 */
import type { PriceListType } from './constants.js'
import { DomainError } from './errors.js'
import { MAX_MINOR_UNITS } from './money.js'
import { compareText } from './text-order.js'

export interface PriceListRule {
  id: string
  type: PriceListType
  /** among override lists that apply, the highest wins */
  priority: number
  isActive: boolean
  /** inclusive */
  startsAt: Date | null
  /** exclusive */
  endsAt: Date | null
  /** empty = everyone */
  customerGroupIds: readonly string[]
}

export interface PriceCandidate {
  amountMinor: number
  /** the smallest quantity this price is for (a quantity tier); at least 1 */
  minQuantity: number
  /** a price of the line's variant, rather than of its product */
  variantSpecific: boolean
  /** null = the base price */
  priceListId: string | null
}

export interface LinePrice {
  unitPriceMinor: number
  /** the base price, to show against a sale price */
  originalUnitPriceMinor: number
  /** the list that gave unitPriceMinor; null = the base price */
  priceListId: string | null
}

export interface PriceContext {
  quantity: number
  customerGroupIds: readonly string[]
  now: Date
}

/** The price the line pays, or null when the product has no base price in the cart's currency. */
export function selectLinePrice(
  candidates: readonly PriceCandidate[],
  lists: ReadonlyMap<string, PriceListRule>,
  context: PriceContext,
): LinePrice | null {
  if (!Number.isSafeInteger(context.quantity) || context.quantity < 1) {
    throw new DomainError('validation_error', 'Quantity must be a whole number of at least 1')
  }
  candidates.forEach(validateCandidate)
  const bySource = new Map<string | null, PriceCandidate[]>()
  for (const candidate of candidates) {
    const listId = candidate.priceListId
    if (listId !== null) {
      const list = lists.get(listId)
      if (list === undefined || !priceListApplies(list, context)) continue
    }
    bySource.set(listId, [...(bySource.get(listId) ?? []), candidate])
  }

  const base = offerOf(bySource.get(null) ?? [], context.quantity)
  if (base === null) return null
  const offers: { listId: string; type: PriceListType; priority: number; amount: number }[] = []
  for (const [listId, sourceCandidates] of bySource) {
    const list = listId === null ? undefined : lists.get(listId)
    const amount = offerOf(sourceCandidates, context.quantity)
    if (listId === null || list === undefined || amount === null) continue
    if (!Number.isSafeInteger(list.priority)) {
      throw new DomainError('validation_error', `Price list '${listId}' priority must be a whole number`)
    }
    offers.push({ listId, type: list.type, priority: list.priority, amount })
  }
  offers.sort((a, b) => compareText(a.listId, b.listId))

  const override = offers
    .filter((offer) => offer.type === 'override')
    .reduce<(typeof offers)[number] | null>(
      (best, offer) =>
        best === null || offer.priority > best.priority || (offer.priority === best.priority && offer.amount < best.amount) ? offer : best,
      null,
    )
  let paid = override === null ? { amount: base, listId: null as string | null } : { amount: override.amount, listId: override.listId }
  // Offers are in list-id order and only a strictly lower price displaces: ties keep the reference, then the lower id.
  for (const offer of offers) {
    if (offer.type === 'sale' && offer.amount < paid.amount) paid = { amount: offer.amount, listId: offer.listId }
  }
  return { unitPriceMinor: paid.amount, originalUnitPriceMinor: base, priceListId: paid.listId }
}

/** Whether the list's prices are for this customer now. */
export function priceListApplies(list: PriceListRule, context: Pick<PriceContext, 'customerGroupIds' | 'now'>): boolean {
  const now = context.now.getTime()
  if (!list.isActive) return false
  if (list.startsAt !== null && now < list.startsAt.getTime()) return false
  if (list.endsAt !== null && now >= list.endsAt.getTime()) return false
  return list.customerGroupIds.length === 0 || list.customerGroupIds.some((group) => context.customerGroupIds.includes(group))
}

/**
 * One source's price for the quantity: the highest tier reached, a variant's own price beating the
 * product's at the same tier (then the lower amount).
 */
function offerOf(candidates: readonly PriceCandidate[], quantity: number): number | null {
  let best: PriceCandidate | null = null
  for (const candidate of candidates) {
    if (candidate.minQuantity > quantity) continue
    if (
      best === null ||
      candidate.minQuantity > best.minQuantity ||
      (candidate.minQuantity === best.minQuantity &&
        (Number(candidate.variantSpecific) - Number(best.variantSpecific) || best.amountMinor - candidate.amountMinor) > 0)
    ) {
      best = candidate
    }
  }
  return best?.amountMinor ?? null
}

function validateCandidate(candidate: PriceCandidate): void {
  const { amountMinor, minQuantity } = candidate
  if (!Number.isSafeInteger(amountMinor) || amountMinor < 0 || amountMinor > MAX_MINOR_UNITS) {
    throw new DomainError('validation_error', `Price must be a whole number of minor units from 0 to ${MAX_MINOR_UNITS}`)
  }
  if (!Number.isSafeInteger(minQuantity) || minQuantity < 1) {
    throw new DomainError('validation_error', 'Minimum quantity of a price must be a whole number of at least 1')
  }
}
