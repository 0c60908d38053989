/**
 * Percentages (tax rates, percent-off coupons) held as integer parts per million of the amount:
 * 8.875 % = 88_750 ppm. Four decimals of a percent fit exactly, so no rate ever rounds.
 */
import { scaledDecimal } from './decimal.js'
import { DomainError } from './errors.js'

export const PPM_PER_PERCENT = 10_000
export const MAX_PPM = 1_000_000
const PERCENT_DECIMALS = 4

/** Parses a percent (a JSON number, 0..100, at most 4 decimals) into parts per million. */
export function percentToPpm(percent: number): number {
  if (typeof percent !== 'number' || !Number.isFinite(percent)) {
    throw new DomainError('validation_error', 'Percentage must be a finite number')
  }
  if (percent < 0 || percent > 100) {
    throw new DomainError('validation_error', 'Percentage must be between 0 and 100')
  }
  const ppm = scaledDecimal(percent, PERCENT_DECIMALS)
  if (ppm === null) {
    throw new DomainError('validation_error', `Percentage has at most ${PERCENT_DECIMALS} decimal places`)
  }
  return Number(ppm)
}

/** Parts per million back to the percent number a client sent (88_750 -> 8.875). */
export function ppmToPercent(ppm: number): number {
  if (!Number.isInteger(ppm) || ppm < 0 || ppm > MAX_PPM) {
    throw new DomainError('validation_error', `Parts per million must be an integer from 0 to ${MAX_PPM}`)
  }
  const whole = Math.trunc(ppm / PPM_PER_PERCENT)
  const fraction = String(ppm % PPM_PER_PERCENT).padStart(PERCENT_DECIMALS, '0')
  // Number() of the decimal text is the double JSON.parse would give, so it prints back as sent.
  return Number(`${whole}.${fraction}`)
}
