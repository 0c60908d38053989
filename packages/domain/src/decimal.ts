/** Exact decimal reading of JSON numbers, shared by money, percentages and weights. */

/** Writes a finite number as a plain decimal string (no exponent), exactly as JS prints it. */
export function plainDecimal(value: number): string {
  const text = String(value)
  const match = /^(-)?(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text)
  if (!match) return text
  const [, sign = '', lead = '', rest = '', exp = '0'] = match
  const digits = lead + rest
  const point = 1 + Number(exp)
  const body =
    point <= 0
      ? `0.${'0'.repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + '0'.repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`
  return sign + body
}

/**
 * The non-negative finite `value` times 10^decimals as an exact integer, or null when it is
 * negative, not finite, or has more significant decimals than `decimals`. Reads the printed
 * decimal rather than multiplying, because 0.1 * 3 style float error must never leak in.
 */
export function scaledDecimal(value: number, decimals: number): bigint | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null
  const match = /^(\d+)(?:\.(\d+))?$/.exec(plainDecimal(value))
  if (!match) return null
  const [, whole = '0', fraction = ''] = match
  const significantFraction = fraction.replace(/0+$/, '')
  if (significantFraction.length > decimals) return null
  return BigInt(whole + significantFraction.padEnd(decimals, '0'))
}
