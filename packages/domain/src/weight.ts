/**
 * Exact weights. Mass is a bigint count of 1e-13 g: the avoirdupois pound is defined as exactly
 * 453.59237 g and the ounce as 1/16 of it (28.349523125 g), so a weight with up to 4 decimals in
 * g, kg, lb or oz is a whole number of these units and sums or compares without any drift.
 */
import { WEIGHT_UNITS, type WeightUnitCode } from './constants.js'
import { scaledDecimal } from './decimal.js'
import { DomainError } from './errors.js'

const WEIGHT_DECIMALS = 4

/** Mass units in 0.0001 of each weight unit. */
const MASS_PER_TEN_THOUSANDTH: Readonly<Record<WeightUnitCode, bigint>> = {
  g: 1_000_000_000n,
  kg: 1_000_000_000_000n,
  lb: 453_592_370_000n,
  oz: 28_349_523_125n,
}

export const MASS_PER_KG = 10n ** 16n

export function massOf(weight: number, unit: WeightUnitCode): bigint {
  if (!WEIGHT_UNITS.includes(unit)) {
    throw new DomainError('validation_error', `Weight unit must be one of ${WEIGHT_UNITS.join(', ')}`)
  }
  if (typeof weight !== 'number' || !Number.isFinite(weight)) {
    throw new DomainError('validation_error', 'Weight must be a finite number')
  }
  if (weight < 0) throw new DomainError('validation_error', 'Weight must not be negative')
  const tenThousandths = scaledDecimal(weight, WEIGHT_DECIMALS)
  if (tenThousandths === null) {
    throw new DomainError('validation_error', `Weight has at most ${WEIGHT_DECIMALS} decimal places`)
  }
  return tenThousandths * MASS_PER_TEN_THOUSANDTH[unit]
}

export function massOfKilograms(kg: number): bigint {
  return massOf(kg, 'kg')
}
