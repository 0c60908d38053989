/** Which tax rate applies to a shipping address. */
export interface TaxRateRule {
  id: string
  country: string
  /** null = the whole country */
  region: string | null
  ratePpm: number
  name: string
  /** How its tax is rounded (TaxRounding); the jurisdiction's rules decide. */
  rounding: TaxRounding
}

/**
 * `line`: each line's tax is rounded and the order's tax is their sum. `order`: the order's tax is
 * the rounded tax of everything taxable, handed out to the lines in proportion (largest
 * remainder), so the lines still add up to it. They differ by at most half a minor unit per line.
 */
export type TaxRounding = 'line' | 'order'
export const TAX_ROUNDINGS = ['line', 'order'] as const satisfies readonly TaxRounding[]

function normalizedPlace(text: string | null): string | null {
  const trimmed = text?.trim().toUpperCase() ?? ''
  return trimmed === '' ? null : trimmed
}

/**
 * The rate of the address's country and region, else the country-wide rate, else null (no
 * address: null, so the cart is untaxed). Should several rows match equally, the lowest id wins,
 * so the answer never depends on the order rows come back from the database.
 */
export function selectTaxRate(
  rates: readonly TaxRateRule[],
  address: { country: string; region: string | null } | null,
): TaxRateRule | null {
  if (address === null) return null
  const country = normalizedPlace(address.country)
  const region = normalizedPlace(address.region)
  let regional: TaxRateRule | null = null
  let countryWide: TaxRateRule | null = null
  for (const rate of rates) {
    if (normalizedPlace(rate.country) !== country) continue
    const rateRegion = normalizedPlace(rate.region)
    if (rateRegion === null) countryWide = lowerId(countryWide, rate)
    else if (region !== null && rateRegion === region) regional = lowerId(regional, rate)
  }
  return regional ?? countryWide
}

function lowerId(current: TaxRateRule | null, candidate: TaxRateRule): TaxRateRule {
  return current === null || candidate.id < current.id ? candidate : current
}
