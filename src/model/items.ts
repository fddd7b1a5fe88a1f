// Order lines on shipments: the items input, how it becomes stored items against the order's lines, and
// the split rules that suggest how to divide what is left of an order.
import { allocationRefusalMessage, type StoredShipmentItem } from '../db/data-layer.js'
import { ShipmentValidationError } from '../errors.js'
import type { OrderLine, OrderSummary } from '../order-store.js'

/** An order line and a quantity of it: what a shipment holds. */
export interface ShipmentItemInput {
  lineItemId: number
  quantity: number
}

/** An item as every shipment shape shows it. */
export interface ShipmentItem extends ShipmentItemInput {
  sku: string | null
  name: string
}

/** A line as a split rule sees it: with what is left of it to allocate (never below 0). */
export interface SplitRuleLine extends OrderLine {
  remaining: number
}

/**
 * Divides what is left of an order into shipments: one item list per shipment to create. Synchronous
 * and pure: it runs inside the creating transaction, under the order's lock, so `remaining` is exact.
 * Only shippable lines with something left are passed.
 */
export type SplitRule = (lines: readonly SplitRuleLine[], order: OrderSummary) => ShipmentItemInput[][]

/** The built-in split rules; hosts add their own by name (the `splitRules` option). */
export const BUILT_IN_SPLIT_RULES: Readonly<Record<'remaining' | 'perLine', SplitRule>> = {
  /** One shipment for everything left. */
  remaining: (lines) => (lines.length === 0 ? [] : [lines.map((line) => ({ lineItemId: line.id, quantity: line.remaining }))]),
  /** One shipment per line with something left. */
  perLine: (lines) => lines.map((line) => [{ lineItemId: line.id, quantity: line.remaining }]),
}

/** The most items one shipment may hold (an order of more lines is split into several shipments). */
export const MAX_ITEMS_PER_SHIPMENT = 500

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= 2_147_483_647

/**
 * The items of a request, checked for shape: a list of `{ lineItemId, quantity }` with positive integers
 * and each line at most once. Problems with the list are a 422 on `items`; a problem with one line's
 * quantity (or a line listed twice) is a 422 on `items.<lineItemId>`, as every other refusal of a line.
 */
export function parseItemsInput(value: unknown): ShipmentItemInput[] {
  const refuse = (message: string, key = 'items'): never => {
    throw new ShipmentValidationError({ [key]: [message] })
  }
  if (!Array.isArray(value)) return refuse('Items must be a list of { lineItemId, quantity }.')
  if (value.length > MAX_ITEMS_PER_SHIPMENT) refuse(`Items may hold at most ${MAX_ITEMS_PER_SHIPMENT} lines.`)
  const seen = new Set<number>()
  return value.map((entry: unknown) => {
    const { lineItemId, quantity } = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>
    if (!isCount(lineItemId)) return refuse('Each item needs a lineItemId, a positive integer.')
    if (!isCount(quantity)) return refuse(`Line ${lineItemId}: the quantity must be a positive integer.`, `items.${lineItemId}`)
    if (seen.has(lineItemId)) return refuse(`Line ${lineItemId} is listed twice.`, `items.${lineItemId}`)
    seen.add(lineItemId)
    return { lineItemId, quantity }
  })
}

/** True when an item asks for more of a line than was ordered (what `storedItems` refuses). */
export function exceedsOrdered(items: readonly ShipmentItemInput[], lines: readonly OrderLine[]): boolean {
  const ordered = new Map(lines.map((line) => [line.id, line.quantity]))
  return items.some((item) => item.quantity > (ordered.get(item.lineItemId) ?? Number.POSITIVE_INFINITY))
}

/**
 * Items as stored: each named line must be a shippable line of the order, and no more of it than was
 * ordered; errors name the line (`items.<id>`). A quantity above the ordered one is worded as the
 * allocation check words it, with `allocatedElsewhere` (what the order's other active shipments hold).
 */
export function storedItems(
  items: readonly ShipmentItemInput[],
  lines: readonly OrderLine[],
  allocatedElsewhere: ReadonlyMap<number, number> = new Map(),
): StoredShipmentItem[] {
  const byId = new Map(lines.map((line) => [line.id, line]))
  const errors: Record<string, string[]> = {}
  const stored = items.flatMap((item) => {
    const line = byId.get(item.lineItemId)
    const key = `items.${item.lineItemId}`
    if (!line) errors[key] = [`Line ${item.lineItemId} is not a line of this order.`]
    else if (!line.shippable) errors[key] = [`Line ${item.lineItemId} does not ship.`]
    else if (item.quantity > line.quantity) {
      errors[key] = [allocationRefusalMessage({ ...item, sku: line.sku, ordered: line.quantity }, allocatedElsewhere.get(line.id) ?? 0)]
    } else return [{ lineItemId: line.id, quantity: item.quantity, sku: line.sku, name: line.name, ordered: line.quantity }]
    return []
  })
  if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
  return stored
}

/** The lines a split rule sees: shippable, with what is left of them beside what active shipments hold. */
export function linesLeft(lines: readonly OrderLine[], allocated: ReadonlyMap<number, number>): SplitRuleLine[] {
  return lines
    .filter((line) => line.shippable)
    .map((line) => ({ ...line, remaining: Math.max(0, line.quantity - (allocated.get(line.id) ?? 0)) }))
    .filter((line) => line.remaining > 0)
}

/** The items as shipments show them (the quantity ordered stays internal). */
export const presentItems = (items: readonly StoredShipmentItem[]): ShipmentItem[] =>
  items.map(({ lineItemId, quantity, sku, name }) => ({ lineItemId, quantity, sku, name }))
