/** The two roundings every price goes through: half away from zero, and largest-remainder splits. */

/** numerator / denominator rounded half away from zero (2.5 -> 3, -2.5 -> -3). */
export function divideRounded(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('divideRounded needs a positive denominator')
  const quotient = numerator / denominator
  const remainder = numerator % denominator
  const magnitude = remainder < 0n ? -remainder : remainder
  if (2n * magnitude < denominator) return quotient
  return numerator < 0n ? quotient - 1n : quotient + 1n
}

/**
 * Splits `total` in proportion to `weights` so the parts add up to exactly `total`: each part
 * gets its floor share, and the units left over go one each to the largest remainders, lower
 * index first on ties. Callers decide who wins ties by the order they pass the weights in.
 */
export function allocateByLargestRemainder(total: bigint, weights: readonly bigint[]): bigint[] {
  if (total < 0n) throw new RangeError('allocateByLargestRemainder needs a non-negative total')
  if (weights.some((weight) => weight < 0n)) {
    throw new RangeError('allocateByLargestRemainder needs non-negative weights')
  }
  const weightSum = weights.reduce((sum, weight) => sum + weight, 0n)
  if (weightSum === 0n) {
    if (total !== 0n) throw new RangeError('Cannot allocate a non-zero total over zero weights')
    return weights.map(() => 0n)
  }
  const parts = weights.map((weight) => (total * weight) / weightSum)
  const remainders = weights.map((weight) => (total * weight) % weightSum)
  let leftover = total - parts.reduce((sum, part) => sum + part, 0n)
  const byRemainder = remainders
    .map((remainder, index) => ({ remainder, index }))
    .sort((a, b) => (a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1))
  // leftover < weights.length: it is the sum of remainders divided by weightSum.
  for (const { index } of byRemainder) {
    if (leftover === 0n) break
    parts[index] = (parts[index] ?? 0n) + 1n
    leftover -= 1n
  }
  return parts
}
