// Exact decimal arithmetic for declarations: values and weights multiplied by quantities, added and
// compared as integers scaled by a power of ten, never as floats, never rounded.
import { GRAMS_PER_UNIT, type WeightUnit } from '../model/units.js'

/** A plain decimal: digits, an optional point, digits (no sign, no exponent). */
const PLAIN_DECIMAL = /^\d+(?:\.\d+)?$/

interface Scaled {
  units: bigint
  /** Digits after the point. */
  scale: number
}

function parse(value: string): Scaled {
  if (!PLAIN_DECIMAL.test(value)) throw new Error(`not a plain decimal: ${value}`)
  const [whole, fraction = ''] = value.split('.')
  return { units: BigInt(whole! + fraction), scale: fraction.length }
}

function format({ units, scale }: Scaled): string {
  if (scale === 0) return units.toString()
  const digits = units.toString().padStart(scale + 1, '0')
  const fraction = digits.slice(-scale).replace(/0+$/, '')
  const whole = digits.slice(0, -scale)
  return fraction === '' ? whole : `${whole}.${fraction}`
}

function aligned(a: Scaled, b: Scaled): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale)
  return [a.units * 10n ** BigInt(scale - a.scale), b.units * 10n ** BigInt(scale - b.scale), scale]
}

export const isPlainDecimal = (value: string) => PLAIN_DECIMAL.test(value)

/** `value` times a whole number, exactly ("19.99" x 3 = "59.97"). */
export function timesQuantity(value: string, quantity: number): string {
  const { units, scale } = parse(value)
  return format({ units: units * BigInt(quantity), scale })
}

/** The exact sum of plain decimals ("0" for none). */
export function sumDecimals(values: readonly string[]): string {
  let total: Scaled = { units: 0n, scale: 0 }
  for (const value of values) {
    const [a, b, scale] = aligned(total, parse(value))
    total = { units: a + b, scale }
  }
  return format(total)
}

/** -1, 0 or 1 as `a` is below, equal to or above `b`. */
export function compareExact(a: string, b: string): number {
  const [x, y] = aligned(parse(a), parse(b))
  return x < y ? -1 : x > y ? 1 : 0
}

/** Whether the decimal is zero. */
export const isZero = (value: string) => parse(value).units === 0n

/** A weight in grams, exactly (no rounding: every unit's factor is a terminating decimal). */
export function exactGrams(value: string, unit: WeightUnit): string {
  const a = parse(value)
  const factor = parse(GRAMS_PER_UNIT[unit])
  return format({ units: a.units * factor.units, scale: a.scale + factor.scale })
}

/** The total of weights: in their unit when they share one, else in grams (exact either way). */
export function totalWeight(weights: ReadonlyArray<{ value: string; unit: WeightUnit }>, fallbackUnit: WeightUnit): { value: string; unit: WeightUnit } {
  const units = new Set(weights.map((weight) => weight.unit))
  if (units.size <= 1) return { value: sumDecimals(weights.map((weight) => weight.value)), unit: weights[0]?.unit ?? fallbackUnit }
  return { value: sumDecimals(weights.map((weight) => exactGrams(weight.value, weight.unit))), unit: 'g' }
}
