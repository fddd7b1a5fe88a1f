// Exact decimals for weights, sizes and money: parsed from strings, converted with integers, never floats.
import { DECIMAL_STRING_REQUIRED, POSITIVE_DECIMAL_PATTERN } from '../http/exact-decimals.js'

export const WEIGHT_UNITS = ['g', 'kg', 'oz', 'lb'] as const
export type WeightUnit = (typeof WEIGHT_UNITS)[number]
export const DIMENSION_UNITS = ['mm', 'cm', 'in'] as const
export type DimensionUnit = (typeof DIMENSION_UNITS)[number]

/** A positive decimal of at most 7 integer digits and 4 decimals, written plainly ("12", "0.5", "3.25"). */
const POSITIVE_DECIMAL = new RegExp(POSITIVE_DECIMAL_PATTERN)
/** A money amount as providers give it: digits with at most 6 decimals. */
const AMOUNT = /^-?(?:0|[1-9]\d{0,11})(?:\.\d{1,6})?$/

/** Why `value` is not a positive exact decimal, or null when it is one. Numbers are refused: they may already be rounded. */
export function decimalProblem(value: unknown): string | null {
  if (typeof value !== 'string') return DECIMAL_STRING_REQUIRED
  if (!POSITIVE_DECIMAL.test(value)) return 'must be a positive decimal with at most 7 digits before the point and 4 after it'
  if (/^0(?:\.0*)?$/.test(value)) return 'must be greater than zero'
  return null
}

export const isAmount = (value: unknown): value is string => typeof value === 'string' && AMOUNT.test(value)

/** The decimal as a whole number of ten-thousandths. */
const SCALE = 10_000n
function scaled(value: string): bigint {
  const [whole, fraction = ''] = value.split('.')
  return BigInt(whole) * SCALE + BigInt(fraction.padEnd(4, '0'))
}

/** Units per ounce and per inch as exact fractions (numerator, denominator): 1 oz = 28.349523125 g, 1 in = 25.4 mm. */
const OUNCES_PER: Record<WeightUnit, [bigint, bigint]> = {
  oz: [1n, 1n],
  lb: [16n, 1n],
  g: [1_000_000_000n, 28_349_523_125n],
  kg: [1_000_000_000_000n, 28_349_523_125n],
}
const INCHES_PER: Record<DimensionUnit, [bigint, bigint]> = { in: [1n, 1n], cm: [100n, 254n], mm: [10n, 254n] }

/** `value` times `numerator / denominator`, rounded up to one decimal: a declared size is never smaller than the real one. */
function convertUp(value: string, [numerator, denominator]: [bigint, bigint]): string {
  // tenths = ceil(value * 10 * n / d), value scaled by 10^4.
  const top = scaled(value) * 10n * numerator
  const bottom = SCALE * denominator
  const tenths = (top + bottom - 1n) / bottom
  return `${tenths / 10n}.${tenths % 10n}`
}

/** Grams per unit, exact decimals (1 oz = 28.349523125 g, 1 lb = 453.59237 g): weights in different units compare and add exactly in grams. */
export const GRAMS_PER_UNIT: Readonly<Record<WeightUnit, string>> = { g: '1', kg: '1000', oz: '28.349523125', lb: '453.59237' }

export const toOunces = (weight: string, unit: WeightUnit) => convertUp(weight, OUNCES_PER[unit])
export const toInches = (length: string, unit: DimensionUnit) => convertUp(length, INCHES_PER[unit])

/** A weight in grams as a plain number of milligrams (for packing arithmetic), rounded up. */
export function toMilligrams(weight: string, unit: WeightUnit): number {
  const [numerator, denominator] = OUNCES_PER[unit]
  // grams = ounces * 28.349523125
  const milligrams = (scaled(weight) * numerator * 28_349_523_125n) / (denominator * SCALE * 1_000_000n)
  return Number(milligrams)
}

/** A length in tenths of a millimetre (for packing arithmetic), rounded down for inner sizes. */
export function toTenthMillimetres(length: string, unit: DimensionUnit): number {
  const [numerator, denominator] = INCHES_PER[unit]
  // mm = inches * 25.4; tenths of mm = inches * 254
  return Number((scaled(length) * numerator * 254n) / (denominator * SCALE))
}
