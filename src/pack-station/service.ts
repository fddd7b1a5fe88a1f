// The pack station: a packing slip's barcode opens its shipment, each item's barcode is counted off
// against what the shipment holds, and the finished parcel gets its label bought by the shipping rules.
// Stateless on the server: the station keeps the counts and sends them back with every scan, and each
// scan is checked against the shipment as it is stored now (two stations, a restart or a changed
// shipment never leave a count behind on the server to go stale).
import type { DeliveryContext, DeliveryService } from '../deliveries/service.js'
import { LockTimeoutError } from '../db/data-layer.js'
import { PackStationErrors, ShipmentValidationError } from '../errors.js'
import type { LabelFormat } from '../gateway/delivery-provider.js'
import { LABEL_FORMATS } from '../gateway/delivery-provider.js'
import type { Parcel, ParcelInput } from '../model/parcel.js'

/** The weight as the pack station is given it: its unit is checked by the parcel service (a 422 under weight.unit). */
type ParcelWeight = ParcelInput['weight']
import type { Shipment, ShipmentStatus } from '../model/shipment.js'
import type { OrderStore } from '../order-store.js'
import type { ShippingRulesService } from '../rules/service.js'
import type { ShipmentService } from '../shipments/service.js'

/** One line to pack: what a scan must read (`code`: the barcode, else the SKU), how many, how many counted. */
export interface PackLine {
  lineItemId: number
  name: string
  sku: string | null
  barcode: string | null
  /** What the scanner must read for this line: its barcode, else its SKU; null: the line cannot be scanned. */
  code: string | null
  needed: number
  counted: number
}

/** A label ready to print: where its file is, and what it was bought as. */
export interface PackLabel {
  parcelId: number
  url: string
  format: string
  carrier: string | null
  service: string | null
  trackingNumber: string | null
}

/** A shipment in pack mode. */
export interface PackShipment {
  id: number
  reference: string
  orderId: number
  status: ShipmentStatus
  lines: PackLine[]
  /** Every line counted in full. */
  complete: boolean
  /** The weight of the one parcel the shipment has, to confirm (null: none yet, to type). */
  weight: { value: string; unit: string } | null
  /** Labels bought already (a shipment finished before opens with them, to print again). */
  labels: PackLabel[]
}

/** The counts the station keeps: units counted per order line. */
export type PackCounts = ReadonlyArray<{ lineItemId: number; quantity: number }>

export interface PackScanResult {
  shipment: PackShipment
  /** The line the scan counted. */
  line: PackLine
}

export interface PackFinishInput {
  counted: PackCounts
  /** The parcel's weight, typed or confirmed; required when the shipment has no parcel yet. */
  weight?: { value: string; unit: string } | undefined
  labelFormat?: LabelFormat | undefined
}

export interface PackFinishResult {
  shipment: PackShipment
  /** Labels bought by this call (0: every parcel had its label already; nothing was bought again). */
  bought: number
  labels: PackLabel[]
}

export interface PackStationDependencies {
  shipments: Pick<ShipmentService, 'get' | 'list'>
  orderStore: Pick<OrderStore, 'orderLines'>
  deliveries: Pick<DeliveryService, 'listParcels' | 'addParcel' | 'updateParcel' | 'buyLabel'>
  rules: Pick<ShippingRulesService, 'decide'>
  /**
   * Runs `task` holding the shipment's pack-station lock, across instances: two finishes of one
   * shipment (a double Enter, two stations) take turns, so the second finds the first's parcel and
   * label instead of adding and buying its own. Throws LockTimeoutError when it waited too long.
   */
  lockShipment<T>(shipmentId: number, task: () => Promise<T>): Promise<T>
}

/** Shipments a packer must not pack: gone, on hold, or over. */
const NOT_PACKABLE: Partial<Record<ShipmentStatus, string>> = {
  shipped: 'it has shipped already',
  cancelled: 'it is cancelled',
  on_hold: 'it is on hold',
}

/** How many shipments one slip scan reads at most: references that start with the scanned text (an index range). */
const SLIP_CANDIDATES = 100

/**
 * Whether a scan reads a line's code: the same text, or for GTINs (8 to 14 digits) the same number, as
 * scanners send a UPC-A as its EAN-13 or GTIN-14 with leading zeros.
 */
function sameCode(scanned: string, code: string): boolean {
  if (scanned === code) return true
  return /^\d{8,14}$/.test(scanned) && /^\d{8,14}$/.test(code) && scanned.replace(/^0+/, '') === code.replace(/^0+/, '')
}

const labelOf = (parcel: Parcel): PackLabel[] =>
  parcel.label
    ? [{ parcelId: parcel.id, url: parcel.label.url, format: parcel.label.format, carrier: parcel.carrier, service: parcel.service, trackingNumber: parcel.trackingNumber }]
    : []

/** The counts as the station sent them, checked against the lines: each a line of the shipment, at most what it needs. */
function applyCounts(lines: ReadonlyArray<Omit<PackLine, 'counted'>>, counted: PackCounts): PackLine[] {
  if (!Array.isArray(counted)) throw new ShipmentValidationError({ counted: ['must be a list of { lineItemId, quantity }'] })
  const byLine = new Map<number, number>()
  const errors: Record<string, string[]> = {}
  counted.forEach((entry, index) => {
    const line = lines.find((each) => each.lineItemId === entry?.lineItemId)
    const quantity = entry?.quantity
    if (!line) errors[`counted.${index}`] = [`line ${String(entry?.lineItemId)} is not on this shipment`]
    else if (!Number.isSafeInteger(quantity) || quantity < 0 || quantity > line.needed) errors[`counted.${index}`] = [`line ${line.lineItemId}: counted must be 0 to ${line.needed}`]
    else if (byLine.has(line.lineItemId)) errors[`counted.${index}`] = [`line ${line.lineItemId} is listed twice`]
    else byLine.set(line.lineItemId, quantity)
  })
  if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
  return lines.map((line) => ({ ...line, counted: byLine.get(line.lineItemId) ?? 0 }))
}

export function createPackStation(deps: PackStationDependencies) {
  /** The shipment's lines with what each needs: its items, or for a whole-order shipment every shippable line in full. */
  async function linesOf(shipment: Shipment): Promise<Array<Omit<PackLine, 'counted'>>> {
    const orderLines = (await deps.orderStore.orderLines?.(shipment.orderId)) ?? null
    const byId = new Map((orderLines ?? []).map((line) => [line.id, line]))
    const held =
      shipment.items.length > 0
        ? shipment.items.map((item) => ({ lineItemId: item.lineItemId, quantity: item.quantity, sku: item.sku, name: item.name }))
        : (orderLines ?? []).filter((line) => line.shippable).map((line) => ({ lineItemId: line.id, quantity: line.quantity, sku: line.sku, name: line.name }))
    return held.map((item) => {
      const barcode = byId.get(item.lineItemId)?.barcode ?? null
      const sku = item.sku ?? byId.get(item.lineItemId)?.sku ?? null
      return { lineItemId: item.lineItemId, name: item.name, sku, barcode, code: barcode ?? sku, needed: item.quantity }
    })
  }

  /** The shipment to pack, or the refusal a packer reads. */
  async function packable(shipmentId: number): Promise<Shipment> {
    const shipment = Number.isSafeInteger(shipmentId) ? await deps.shipments.get(shipmentId) : null
    if (!shipment || shipment.dateDeleted !== null) throw new PackStationErrors.UnknownShipment(shipmentId)
    const why = NOT_PACKABLE[shipment.status]
    if (why) throw new PackStationErrors.NotPackable(shipment.reference, why)
    return shipment
  }

  function present(shipment: Shipment, lines: PackLine[], parcels: Parcel[]): PackShipment {
    return {
      id: shipment.id,
      reference: shipment.reference,
      orderId: shipment.orderId,
      status: shipment.status,
      lines,
      complete: lines.every((line) => line.counted >= line.needed),
      weight: parcels.length === 1 ? { value: parcels[0]!.weight.value, unit: parcels[0]!.weight.unit } : null,
      labels: parcels.flatMap(labelOf),
    }
  }

  /** The shipment whose reference is the scanned text: exactly, else ignoring the case of its letters. */
  async function findBySlip(code: string): Promise<Shipment | null> {
    const { shipments } = await deps.shipments.list({ search: code, perPage: SLIP_CANDIDATES })
    const exact = shipments.find((shipment) => shipment.reference === code)
    if (exact) return exact
    const folded = shipments.filter((shipment) => shipment.reference.toUpperCase() === code.toUpperCase())
    return folded.length === 1 ? folded[0]! : null
  }

  /** A packing slip scanned: its shipment in pack mode, nothing counted yet. */
  async function open(code: string): Promise<PackShipment> {
    const scanned = typeof code === 'string' ? code.trim() : ''
    if (scanned === '' || scanned.length > 255 || scanned.includes('\u0000')) throw new PackStationErrors.UnknownSlip(scanned.slice(0, 64))
    const found = await findBySlip(scanned)
    if (!found) throw new PackStationErrors.UnknownSlip(scanned)
    const shipment = await packable(found.id)
    const lines = (await linesOf(shipment)).map((line) => ({ ...line, counted: 0 }))
    if (lines.length === 0) throw new PackStationErrors.NotPackable(shipment.reference, 'the order store gives no lines to pack')
    const unscannable = lines.find((line) => line.code === null)
    if (unscannable) throw new PackStationErrors.NotPackable(shipment.reference, `"${unscannable.name}" has no barcode or SKU to scan; pack it on the shipment's page`)
    return present(shipment, lines, shipment.parcels)
  }

  /** The shipment in pack mode with the station's counts, checked as a scan checks them (a page drawn again after a refusal). */
  async function view(shipmentId: number, counted: PackCounts): Promise<PackShipment> {
    const shipment = await packable(shipmentId)
    return present(shipment, applyCounts(await linesOf(shipment), counted), shipment.parcels)
  }

  /** An item scanned: the line it is and the new counts, or the refusal (not in this shipment, one too many). */
  async function scan(shipmentId: number, code: string, counted: PackCounts): Promise<PackScanResult> {
    const shipment = await packable(shipmentId)
    const lines = applyCounts(await linesOf(shipment), counted)
    const scanned = typeof code === 'string' ? code.trim() : ''
    const matching = lines.filter((line) => line.code !== null && sameCode(scanned, line.code))
    if (matching.length === 0) throw new PackStationErrors.WrongItem(scanned.slice(0, 64), shipment.reference)
    // The same code on two lines (one SKU in two sizes' lines, say): the first that still needs units.
    const line = matching.find((each) => each.counted < each.needed)
    if (!line) {
      const full = matching[0]!
      throw new PackStationErrors.TooMany(full.name, full.needed)
    }
    line.counted += 1
    return { shipment: present(shipment, lines, shipment.parcels), line }
  }

  /**
   * Everything counted: the parcel stored with its weight and items (unless the shipment has parcels
   * already), then each parcel without a label bought by the shipping rules; the labels to print. A
   * second call buys nothing again: a parcel with a label keeps it, and answers it.
   */
  async function finish(shipmentId: number, input: PackFinishInput, context: DeliveryContext = {}): Promise<PackFinishResult> {
    const shipment = await packable(shipmentId)
    const lines = applyCounts(await linesOf(shipment), input?.counted)
    const missing = lines.filter((line) => line.counted < line.needed)
    if (missing.length > 0) throw new PackStationErrors.NotCounted(missing.map((line) => `${line.name} ${line.counted} of ${line.needed}`).join(', '))
    const labelFormat = input.labelFormat ?? 'PDF'
    if (!(LABEL_FORMATS as readonly string[]).includes(labelFormat)) throw new ShipmentValidationError({ labelFormat: [`must be one of ${LABEL_FORMATS.join(', ')}`] })
    try {
      return await deps.lockShipment(shipmentId, () => packAndBuy(shipment, lines, { ...input, labelFormat }, context))
    } catch (error) {
      if (error instanceof LockTimeoutError && error.lockName === `packStation:${shipmentId}`) throw new PackStationErrors.Busy(shipment.reference)
      throw error
    }
  }

  /** Under the shipment's lock: the parcel stored (unless there is one), each parcel without a label bought by the rules. */
  async function packAndBuy(shipment: Shipment, lines: PackLine[], input: PackFinishInput & { labelFormat: LabelFormat }, context: DeliveryContext): Promise<PackFinishResult> {
    const shipmentId = shipment.id
    const { labelFormat } = input
    let parcels = await deps.deliveries.listParcels(shipmentId)
    if (parcels.length === 0) {
      if (!input.weight) throw new ShipmentValidationError({ weight: ['is required: type the parcel\'s weight, e.g. { value: "1.2", unit: "kg" }'] })
      const items = lines.map((line) => ({ lineItemId: line.lineItemId, quantity: line.needed }))
      // The items are named only for a shipment that lists them: an order-level shipment's parcel holds it all.
      await deps.deliveries.addParcel(shipmentId, { weight: input.weight as ParcelWeight, ...(shipment.items.length > 0 ? { items } : {}) }, context)
    } else if (input.weight && parcels.length === 1 && !parcels[0]!.label) {
      const [only] = parcels
      if (only!.weight.value !== input.weight.value || only!.weight.unit !== input.weight.unit) await deps.deliveries.updateParcel(shipmentId, only!.id, { weight: input.weight as ParcelWeight }, context)
    }
    parcels = await deps.deliveries.listParcels(shipmentId)
    let bought = 0
    for (const parcel of parcels.filter((each) => !each.label)) {
      const decision = await deps.rules.decide(shipmentId, parcel.id)
      if (decision.outcome === 'none') throw new PackStationErrors.NoRule(decision.reason)
      const choice = decision.quote ? { quoteId: decision.quote.id } : { carrier: decision.carrier, service: decision.service }
      await deps.deliveries.buyLabel(shipmentId, parcel.id, { integration: decision.integration, labelFormat, ...choice }, context)
      bought += 1
    }
    parcels = await deps.deliveries.listParcels(shipmentId)
    const fresh = (await deps.shipments.get(shipmentId)) ?? shipment
    const labels = parcels.flatMap(labelOf)
    return { shipment: present(fresh, lines, parcels), bought, labels }
  }

  return { open, view, scan, finish }
}

export type PackStationService = ReturnType<typeof createPackStation>
