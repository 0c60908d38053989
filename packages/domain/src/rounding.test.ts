import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { allocateByLargestRemainder, divideRounded } from './rounding.js'

const abs = (value: bigint) => (value < 0n ? -value : value)

describe('divideRounded', () => {
  it('rounds halves away from zero and everything else to the nearest integer', () => {
    expect(divideRounded(5n, 2n)).toBe(3n)
    expect(divideRounded(-5n, 2n)).toBe(-3n)
    expect(divideRounded(1n, 2n)).toBe(1n)
    expect(divideRounded(-1n, 2n)).toBe(-1n)
    expect(divideRounded(4n, 3n)).toBe(1n)
    expect(divideRounded(5n, 3n)).toBe(2n)
    expect(divideRounded(-4n, 3n)).toBe(-1n)
    expect(divideRounded(-5n, 3n)).toBe(-2n)
    expect(divideRounded(1n, 3n)).toBe(0n)
    expect(divideRounded(0n, 7n)).toBe(0n)
    expect(divideRounded(12n, 4n)).toBe(3n)
  })

  it('refuses a zero or negative denominator', () => {
    expect(() => divideRounded(1n, 0n)).toThrow(RangeError)
    expect(() => divideRounded(1n, -2n)).toThrow(RangeError)
  })

  it('is within half a unit of the exact quotient, a half going away from zero', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.bigInt({ min: 1n, max: 10n ** 20n }), (n, d) => {
        const q = divideRounded(n, d)
        const error = abs(n - q * d) * 2n
        expect(error <= d).toBe(true)
        if (error === d) expect(abs(q * d) > abs(n)).toBe(true)
        expect(divideRounded(-n, d)).toBe(-q)
      }),
    )
  })
})

describe('allocateByLargestRemainder', () => {
  it('gives the leftover units to the largest remainders', () => {
    // exact shares 33.3, 33.3, 33.4: the third has the largest remainder
    expect(allocateByLargestRemainder(100n, [333n, 333n, 334n])).toEqual([33n, 33n, 34n])
    // exact shares 3.5, 1.5, 5: remainders tie, so the lower index wins the single leftover unit
    expect(allocateByLargestRemainder(10n, [7n, 3n, 10n])).toEqual([4n, 1n, 5n])
  })

  it('breaks ties by lower index, so the caller chooses the winner by ordering', () => {
    expect(allocateByLargestRemainder(100n, [1n, 1n, 1n])).toEqual([34n, 33n, 33n])
    expect(allocateByLargestRemainder(2n, [1n, 1n, 1n])).toEqual([1n, 1n, 0n])
  })

  it('gives nothing to a zero weight', () => {
    expect(allocateByLargestRemainder(5n, [0n, 2n, 0n, 3n])).toEqual([0n, 2n, 0n, 3n])
  })

  it('returns zeros for all-zero weights when the total is 0 and refuses any other total', () => {
    expect(allocateByLargestRemainder(0n, [0n, 0n])).toEqual([0n, 0n])
    expect(allocateByLargestRemainder(0n, [])).toEqual([])
    expect(() => allocateByLargestRemainder(1n, [0n, 0n])).toThrow(RangeError)
    expect(() => allocateByLargestRemainder(1n, [])).toThrow(RangeError)
  })

  it('refuses a negative total or weight', () => {
    expect(() => allocateByLargestRemainder(-1n, [1n])).toThrow(RangeError)
    expect(() => allocateByLargestRemainder(1n, [2n, -1n])).toThrow(RangeError)
  })

  const allocation = fc
    .array(fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 13n }), fc.bigInt({ min: 0n, max: 5n })), { minLength: 1, maxLength: 100 })
    .filter((weights) => weights.some((weight) => weight > 0n))
    .chain((weights) => fc.record({ weights: fc.constant(weights), total: fc.bigInt({ min: 0n, max: 10n ** 15n }) }))

  it('splits every total into parts that sum to it, each within 1 of its exact share', () => {
    fc.assert(
      fc.property(allocation, ({ total, weights }) => {
        const parts = allocateByLargestRemainder(total, weights)
        const weightSum = weights.reduce((sum, weight) => sum + weight, 0n)
        expect(parts).toHaveLength(weights.length)
        expect(parts.reduce((sum, part) => sum + part, 0n)).toBe(total)
        parts.forEach((part, index) => {
          const exactTimesSum = total * (weights[index] ?? 0n)
          // |part - total*w/sum| < 1, multiplied through by sum
          expect(abs(part * weightSum - exactTimesSum) < weightSum).toBe(true)
          expect(part >= 0n).toBe(true)
        })
      }),
    )
  })

  it('never gives a part more than its weight when the total is at most the weight sum', () => {
    fc.assert(
      fc.property(allocation, ({ total, weights }) => {
        const weightSum = weights.reduce((sum, weight) => sum + weight, 0n)
        const capped = total > weightSum ? weightSum : total
        allocateByLargestRemainder(capped, weights).forEach((part, index) => {
          expect(part <= (weights[index] ?? 0n)).toBe(true)
        })
      }),
    )
  })
})
