/**
 * Where a price list stands at a given instant, as the admin API shows it: switched off, or
 * before, inside or after its window. The window is the coupons' (docs/pricing.md): `startsAt`
 * inclusive, `endsAt` exclusive.
 */
export const PRICE_LIST_STATUSES = ['active', 'scheduled', 'expired', 'inactive'] as const
export type PriceListStatus = (typeof PRICE_LIST_STATUSES)[number]

export interface PriceListWindow {
  isActive: boolean
  startsAt: Date | null
  endsAt: Date | null
}

/** `inactive` when switched off, whatever the window; else `scheduled` before it, `expired` after it, `active` inside it. */
export function priceListStatus(list: PriceListWindow, now: Date): PriceListStatus {
  if (!list.isActive) return 'inactive'
  if (list.startsAt !== null && now < list.startsAt) return 'scheduled'
  if (list.endsAt !== null && now >= list.endsAt) return 'expired'
  return 'active'
}
