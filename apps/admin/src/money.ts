/**
 * Money as the API carries it (a number of major units with at most the currency's minor digits),
 * shown and read exactly: the text a person types is checked digit by digit, never rounded.
 */

const fractionDigitsCache = new Map<string, number>()

/** How many minor digits a currency has (2 for EUR, 0 for JPY, 3 for KWD). */
export function fractionDigits(currency: string): number {
  let digits = fractionDigitsCache.get(currency)
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
    fractionDigitsCache.set(currency, digits)
  }
  return digits
}

/** `12.5, 'EUR'` → `€12.50`. */
export function formatMoney(amount: number, currency: string, locale?: string): string {
  const digits = fractionDigits(currency)
  return new Intl.NumberFormat(locale, { style: 'currency', currency, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(amount)
}

/** The amount as an input shows it: `12.50` (no symbol, no grouping). */
export function moneyInputValue(amount: number, currency: string): string {
  return amount.toFixed(fractionDigits(currency))
}

export type ParsedMoney = { ok: true; amount: number } | { ok: false; message: string }

/**
 * What a person typed, as the API's amount: digits with at most the currency's minor digits after
 * a point (`12`, `12.5`, `12.50`); a comma as the decimal mark is read as a point. Anything else,
 * more minor digits than the currency has included, is refused with a message saying why.
 */
export function parseMoney(text: string, currency: string): ParsedMoney {
  const digits = fractionDigits(currency)
  const value = text.trim().replace(',', '.')
  const match = /^(\d{1,16})(?:\.(\d*))?$/.exec(value)
  if (!match) return { ok: false, message: 'Enter an amount such as 12.50' }
  const fraction = match[2] ?? ''
  if (fraction.length > digits) {
    return { ok: false, message: digits === 0 ? `${currency} has no minor unit: enter a whole amount` : `${currency} has ${digits} decimal places at most` }
  }
  // Integer minor units first, so that the number sent is the nearest double to the exact amount.
  const minor = BigInt(match[1]!) * 10n ** BigInt(digits) + BigInt(fraction.padEnd(digits, '0') || '0')
  if (minor > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, message: 'This amount is too large' }
  return { ok: true, amount: Number(minor) / 10 ** digits }
}
