/** A product's identifiers and logistics fields: barcodes, HS codes, tags (docs/catalog.md, "Identifiers"). */

/** GTIN lengths: GTIN-8 (EAN-8), GTIN-12 (UPC-A), GTIN-13 (EAN-13) and GTIN-14. */
const GTIN_LENGTHS = new Set([8, 12, 13, 14])

/**
 * A GTIN with a valid check digit: from the right, the digits before the check digit weigh 3, 1,
 * 3, … and the check digit makes their sum a multiple of 10 (GS1 General Specifications 7.9).
 */
export function isValidGtin(text: string): boolean {
  if (!/^\d+$/.test(text) || !GTIN_LENGTHS.has(text.length)) return false
  let sum = 0
  for (let i = text.length - 2, weight = 3; i >= 0; i--, weight = 4 - weight) sum += Number(text[i]) * weight
  return (10 - (sum % 10)) % 10 === Number(text[text.length - 1])
}

/** The digits of a GTIN with the check digit it needs appended (a test's and a seed's way to make valid ones). */
export function withGtinCheckDigit(digits: string): string {
  let sum = 0
  for (let i = digits.length - 1, weight = 3; i >= 0; i--, weight = 4 - weight) sum += Number(digits[i]) * weight
  return digits + String((10 - (sum % 10)) % 10)
}

/**
 * An HS code as customs forms print it: its digits without the dots and spaces people write
 * between them ("6109.10.00" → "61091000"); null when it is not 6 to 10 digits.
 */
export function normalizeHsCode(text: string): string | null {
  const digits = text.replace(/[.\s]/g, '')
  return /^\d{6,10}$/.test(digits) ? digits : null
}

/**
 * Tags as stored: trimmed, inner whitespace collapsed, the first spelling of each kept when two
 * differ only in case ("Summer", "summer " → "Summer"). Filters match them case-insensitively.
 */
export function normalizeTags(tags: readonly string[]): string[] {
  const seen = new Set<string>()
  const kept: string[] = []
  for (const tag of tags) {
    const clean = tag.trim().replace(/\s+/g, ' ')
    const key = clean.toLowerCase()
    if (clean === '' || seen.has(key)) continue
    seen.add(key)
    kept.push(clean)
  }
  return kept
}
