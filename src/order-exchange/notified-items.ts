// Ship notifications that list items: which order lines a ShipNotice names, and what shipping exactly
// those means for the order's shipments (decided here, purely; the exchange service applies it).
import { OrderExchangeErrors } from '../errors.js'
import type { OrderLine } from '../order-store.js'
import type { ShipmentItemInput } from '../model/items.js'
import type { Shipment } from '../model/shipment.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import { limitCharacters, removeIllegalXmlCharacters } from './export-document.js'
import type { ShipNoticeItem } from './ship-notice.js'

/** A ShipNotice item as the exchange reads it: a whole quantity, and what may name its line. */
export interface NoticeItem {
  /** 1-based position among the ShipNotice's items, for messages. */
  position: number
  /** LineItemID when it is a whole number; anything else falls back to the SKU. */
  lineItemId: number | null
  sku: string | null
  quantity: number
}

/** Units a notification named but did not ship. */
export interface NotShippedItem {
  lineItemId: number | null
  sku: string | null
  quantity: number
  /** `nothing-left`: more than is left of the line; `no-such-line`: no shippable line of the order matches. */
  reason: 'nothing-left' | 'no-such-line'
}

const QUANTITY = /^\+?\d{1,10}$/
const LINE_ITEM_ID = /^\d{1,15}$/
const MAX_QUANTITY = 2_147_483_647

/**
 * The items of a notification, read for matching. An item that names no line at all (no SKU, no
 * LineItemID: the export's discount adjustment) or ships 0 units is skipped; one whose Quantity is
 * missing or not a whole number is refused with a 400, since what shipped cannot be told, and guessing
 * would either ship what is still in the warehouse or leave open what has gone. SKU, LineItemID and
 * Quantity follow the text rule.
 */
export function readNoticeItems(items: readonly ShipNoticeItem[] | null | undefined): NoticeItem[] {
  if (!Array.isArray(items)) return []
  const read: NoticeItem[] = []
  items.forEach((item: Partial<Record<keyof ShipNoticeItem, unknown>> | null, index) => {
    const position = index + 1
    const value = (key: 'sku' | 'quantity' | 'lineItemId', element: string) => {
      const raw = item?.[key] ?? null
      if (raw === null) return ''
      const name = `Items/Item[${position}]/${element}`
      if (typeof raw !== 'string') throw new OrderExchangeErrors.InvalidParameter(name, 'must be text.')
      const problem = textProblem(raw, { maxLength: TEXT_LIMITS.short })
      if (problem) throw new OrderExchangeErrors.InvalidParameter(name, problem)
      return raw.trim()
    }
    const sku = value('sku', 'SKU')
    const lineItemId = value('lineItemId', 'LineItemID')
    const quantity = value('quantity', 'Quantity')
    if (sku === '' && lineItemId === '') return
    if (!QUANTITY.test(quantity) || Number(quantity) > MAX_QUANTITY) {
      throw new OrderExchangeErrors.InvalidParameter(`Items/Item[${position}]/Quantity`, 'must be a whole number of units.')
    }
    if (Number(quantity) === 0) return
    read.push({ position, lineItemId: LINE_ITEM_ID.test(lineItemId) ? Number(lineItemId) : null, sku: sku || null, quantity: Number(quantity) })
  })
  return read
}

/** A SKU as the export sent it (and ShipStation echoes it): XML-safe, at most 100 characters, trimmed. */
const exportedSku = (sku: string | null) => (sku ? limitCharacters(removeIllegalXmlCharacters(sku), 100).trim() || null : null)

interface MatchLine {
  id: number
  sku: string | null
  /** What is left of the line to ship: a SKU's units go to its lines up to this. */
  left: number
}

/**
 * Which lines the items name, with the quantities summed per line. An item whose LineItemID is a line of
 * the order names that line (or none of `candidates`); else its SKU names the `candidates` with that
 * SKU: its units go to them in turn, each up to what is left of it, and units beyond that to the first.
 */
function matchItems(items: readonly NoticeItem[], candidates: readonly MatchLine[], orderLineIds: ReadonlySet<number>) {
  const byLine = new Map<number, number>()
  const add = (lineId: number, quantity: number) => byLine.set(lineId, (byLine.get(lineId) ?? 0) + quantity)
  const matched: NoticeItem[] = []
  const unmatched: NoticeItem[] = []
  for (const item of items) {
    const named = item.lineItemId !== null && orderLineIds.has(item.lineItemId)
    const lines = named
      ? candidates.filter((candidate) => candidate.id === item.lineItemId)
      : item.sku !== null
        ? candidates.filter((candidate) => candidate.sku === item.sku)
        : []
    if (lines.length === 0) {
      unmatched.push(item)
      continue
    }
    let rest = item.quantity
    for (const line of lines) {
      const part = Math.min(rest, Math.max(0, line.left - (byLine.get(line.id) ?? 0)))
      if (part > 0) add(line.id, part)
      rest -= part
    }
    if (rest > 0) add(lines[0].id, rest)
    matched.push(item)
  }
  return { byLine, matched, unmatched }
}

/** Whether the items name exactly what the shipment holds: every item one of its lines, every line in full. */
function holdsExactly(shipment: Shipment, items: readonly NoticeItem[], orderLineIds: ReadonlySet<number>): boolean {
  const candidates = shipment.items.map((item) => ({ id: item.lineItemId, sku: exportedSku(item.sku), left: item.quantity }))
  const { byLine, unmatched } = matchItems(items, candidates, orderLineIds)
  return unmatched.length === 0 && byLine.size === shipment.items.length && shipment.items.every((item) => byLine.get(item.lineItemId) === item.quantity)
}

const isActive = (shipment: Shipment) => shipment.enabled && shipment.status !== 'cancelled' && shipment.dateDeleted === null
const sumByLine = (shipments: readonly Shipment[]) => {
  const sums = new Map<number, number>()
  for (const shipment of shipments) for (const item of shipment.items) sums.set(item.lineItemId, (sums.get(item.lineItemId) ?? 0) + item.quantity)
  return sums
}
const toItems = (byLine: ReadonlyMap<number, number>): ShipmentItemInput[] =>
  [...byLine].filter(([, quantity]) => quantity > 0).map(([lineItemId, quantity]) => ({ lineItemId, quantity }))

/** What a notification with items does to the order's shipments. */
export type NotifiedItemsPlan = {
  /** The order lines and units the notification ships (none for a repeat or when nothing was left). */
  ships: ShipmentItemInput[]
  notShipped: NotShippedItem[]
  /** After it, every shippable line is held in full by shipped shipments: the order moves to the Status Handle. */
  completesOrder: boolean
} & (
  | { action: 'repeat'; shipmentId: number }
  | { action: 'nothing-left' }
  | { action: 'ship-holder'; shipmentId: number }
  | {
      action: 'ship-new'
      /** Units taken from open shipments (what is left of them unallocated is not enough), newest first. */
      takeFrom: Array<{ shipmentId: number; items: ShipmentItemInput[] }>
      /** An open order-level shipment that takes the items, when the notification completes the order. */
      orderLevelShipmentId: number | null
    }
)

/**
 * The plan for a notification's items against the order's lines and shipments (all of them, any
 * state), or null when no item names a shippable line (the notification is then one for the whole
 * order). In turn:
 * 1. a shipped shipment with the same tracking number holding exactly the items: a repeat, nothing to do;
 * 2. an open active shipment holding exactly the items: it ships;
 * 3. else a new shipment ships what is left of the named units (units beyond it are reported, never
 *    shipped twice), made from what no active shipment holds, then from open shipments, newest first;
 *    a completing notification gives the items to an open order-level shipment instead, when there is one.
 */
export function planNotifiedItems(
  noticeItems: readonly NoticeItem[],
  lines: readonly OrderLine[],
  shipments: readonly Shipment[],
  trackingNumber: string,
): NotifiedItemsPlan | null {
  const shippable = lines.filter((line) => line.shippable)
  const orderLineIds = new Set(lines.map((line) => line.id))
  const active = shipments.filter(isActive)
  const shipped = sumByLine(active.filter((shipment) => shipment.status === 'shipped'))
  const allocated = sumByLine(active)
  const unshipped = new Map(shippable.map((line) => [line.id, Math.max(0, line.quantity - (shipped.get(line.id) ?? 0))]))
  const candidates = shippable.map((line) => ({ id: line.id, sku: exportedSku(line.sku), left: unshipped.get(line.id)! }))
  const { byLine, matched, unmatched } = matchItems(noticeItems, candidates, orderLineIds)
  if (byLine.size === 0) return null
  const notShipped: NotShippedItem[] = unmatched.map((item) => ({ lineItemId: item.lineItemId, sku: item.sku, quantity: item.quantity, reason: 'no-such-line' }))
  const completedBy = (ships: ReadonlyMap<number, number>) => shippable.every((line) => unshipped.get(line.id)! <= (ships.get(line.id) ?? 0))

  const open = active.filter((shipment) => shipment.status !== 'shipped')
  const repeat = active.find(
    (shipment) => shipment.status === 'shipped' && shipment.items.length > 0 && (shipment.trackingNumber ?? '') === trackingNumber && holdsExactly(shipment, matched, orderLineIds),
  )
  if (repeat) return { action: 'repeat', shipmentId: repeat.id, ships: [], notShipped, completesOrder: completedBy(new Map()) }
  const holder = open.find((shipment) => shipment.items.length > 0 && holdsExactly(shipment, matched, orderLineIds))
  if (holder) {
    const ships = holder.items.map(({ lineItemId, quantity }) => ({ lineItemId, quantity }))
    return { action: 'ship-holder', shipmentId: holder.id, ships, notShipped, completesOrder: completedBy(new Map(ships.map((item) => [item.lineItemId, item.quantity]))) }
  }

  const ships = new Map<number, number>()
  for (const [lineItemId, named] of byLine) {
    const shipping = Math.min(named, unshipped.get(lineItemId)!)
    ships.set(lineItemId, shipping)
    if (named > shipping) {
      const line = shippable.find((candidate) => candidate.id === lineItemId)!
      notShipped.push({ lineItemId, sku: line.sku, quantity: named - shipping, reason: 'nothing-left' })
    }
  }
  const completesOrder = completedBy(ships)
  if (toItems(ships).length === 0) return { action: 'nothing-left', ships: [], notShipped, completesOrder }

  // Units no active shipment holds come first; the rest are taken from open shipments, newest first.
  const needed = new Map([...ships].map(([lineItemId, quantity]) => {
    const line = shippable.find((candidate) => candidate.id === lineItemId)!
    return [lineItemId, Math.max(0, quantity - Math.max(0, line.quantity - (allocated.get(lineItemId) ?? 0)))]
  }))
  const takeFrom: Array<{ shipmentId: number; items: ShipmentItemInput[] }> = []
  for (const shipment of [...open].sort((a, b) => b.id - a.id)) {
    let took = false
    const kept = shipment.items.map(({ lineItemId, quantity }) => {
      const taken = Math.min(quantity, needed.get(lineItemId) ?? 0)
      if (taken === 0) return { lineItemId, quantity }
      took = true
      needed.set(lineItemId, needed.get(lineItemId)! - taken)
      return { lineItemId, quantity: quantity - taken }
    })
    if (took) takeFrom.push({ shipmentId: shipment.id, items: kept.filter((item) => item.quantity > 0) })
  }
  const orderLevel = completesOrder ? open.filter((shipment) => shipment.items.length === 0).sort((a, b) => a.id - b.id)[0] : undefined
  return { action: 'ship-new', ships: toItems(ships), notShipped, completesOrder, takeFrom, orderLevelShipmentId: orderLevel?.id ?? null }
}
