// "Suggest parcels": a shipment's units packed into the fewest boxes of the catalogue by the Packer, within
// a time budget, with the units that fit no box explained; with `apply`, the parcels created.
import type { DataLayer } from '../db/data-layer.js'
import { DeliveryErrors, ShipmentsErrors } from '../errors.js'
import type { OrderLine, OrderStore } from '../order-store.js'
import type { ShipmentService } from '../shipments/service.js'
import type { Parcel } from '../model/parcel.js'
import type { Packer, PackingBox, PackingItem } from './packing.js'
import type { DeliveryContext, DeliveryService } from './service.js'
import { decimalProblem, toMilligrams, toTenthMillimetres, type DimensionUnit, type WeightUnit } from '../model/units.js'

/** A suggested parcel: a box and the units in it; the weight includes the empty box. */
export interface SuggestedParcel {
  box: { id: number; name: string }
  items: Array<{ lineItemId: number; quantity: number }>
  weight: { value: string; unit: 'g' }
  dimensions: { length: string; width: string; height: string; unit: DimensionUnit }
}

export interface ParcelSuggestion {
  parcels: SuggestedParcel[]
  /** Units left out, and why (no weight or size on the line, or too large or heavy for every box). */
  unpacked: Array<{ lineItemId: number; quantity: number; reason: string }>
  /** With `apply`: the parcels created from the suggestion. */
  created: Parcel[]
}

/** The most units one suggestion packs: beyond it, packing time grows past what a request may take. */
export const MAX_PACKED_UNITS = 500
/** The most enabled box types one suggestion considers: each is one more packing of every unit. */
export const MAX_PACKED_BOX_TYPES = 40

export interface ParcelSuggestionDependencies {
  data: DataLayer
  shipments: ShipmentService
  orderStore: OrderStore
  /** True when the order store is the reference store, whose lines' measures live in the package's tables. */
  referenceStore: boolean
  deliveries: Pick<DeliveryService, 'addParcel'>
  packer: Packer
  /** How long one suggestion's packing may take (`deliveries.packingTimeoutMs`). */
  packingTimeoutMs: number
}

const NO_MEASURES = 'the order line has no weight or size'
const FITS_NO_BOX = 'too large or too heavy for every box in the catalogue'

/** Milligrams as grams, an exact decimal without trailing zeros. */
const grams = (milligrams: number) => `${Math.floor(milligrams / 1000)}.${String(milligrams % 1000).padStart(3, '0')}`.replace(/\.?0+$/, '')

/**
 * `task`'s answer, or the coded timeout once `budgetMs` has passed: the task's signal is aborted then (the
 * default packer ends its worker thread), and an answer coming later is dropped.
 */
async function withinBudget<T>(budgetMs: number, task: (signal: AbortSignal) => T | Promise<T>): Promise<T> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(new DeliveryErrors.PackingTimeout(budgetMs)), budgetMs)
  const timedOut = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }))
  try {
    return await Promise.race([Promise.resolve().then(() => task(controller.signal)), timedOut])
  } finally {
    clearTimeout(timer)
  }
}

export function createParcelSuggestions(deps: ParcelSuggestionDependencies) {
  const { data } = deps

  /** The order's lines with their weight and size: the host's lines as given, the reference store's from its columns. */
  async function measuredLines(orderId: number): Promise<OrderLine[]> {
    const lines = (await deps.orderStore.orderLines?.(orderId)) ?? []
    if (!deps.referenceStore) return lines
    const measures = new Map((await data.parcels.orderLineMeasures(orderId)).map((row) => [row.id, row]))
    return lines.map((line) => {
      const row = measures.get(line.id)
      if (!row) return line
      const weight = row.weight !== null && row.weightUnit !== null ? { value: String(row.weight), unit: row.weightUnit as WeightUnit } : null
      const dimensions =
        row.length !== null && row.width !== null && row.height !== null && row.dimensionUnit !== null
          ? { length: row.length, width: row.width, height: row.height, unit: row.dimensionUnit as DimensionUnit }
          : null
      return { ...line, weight, dimensions }
    })
  }

  async function suggestParcels(shipmentId: number, options: { apply?: boolean | undefined } = {}, context: DeliveryContext = {}): Promise<ParcelSuggestion> {
    const shipment = await deps.shipments.get(shipmentId)
    if (!shipment) throw new ShipmentsErrors.ShipmentNotFound(shipmentId)
    const lines = await measuredLines(shipment.orderId)
    // An order-level shipment ships every shippable line in full.
    const wanted = shipment.items.length > 0 ? shipment.items.map((item) => ({ lineItemId: item.lineItemId, quantity: item.quantity })) : lines.filter((line) => line.shippable).map((line) => ({ lineItemId: line.id, quantity: line.quantity }))
    const unitCount = wanted.reduce((sum, item) => sum + item.quantity, 0)
    if (unitCount > MAX_PACKED_UNITS) throw new DeliveryErrors.PackingTooLarge(`A suggestion packs at most ${MAX_PACKED_UNITS} units (this shipment has ${unitCount}): add its parcels by hand.`)
    const boxes = (await data.parcels.listBoxes()).filter((box) => box.enabled)
    if (boxes.length > MAX_PACKED_BOX_TYPES) {
      throw new DeliveryErrors.PackingTooLarge(`A suggestion considers at most ${MAX_PACKED_BOX_TYPES} enabled boxes (the catalogue has ${boxes.length}): disable the boxes this shop does not use.`)
    }
    const byId = new Map(lines.map((line) => [line.id, line]))
    const unpacked: ParcelSuggestion['unpacked'] = []
    const units: PackingItem[] = []
    for (const item of wanted) {
      const line = byId.get(item.lineItemId)
      const weight = line?.weight
      const size = line?.dimensions
      const valid = weight && size && !decimalProblem(weight.value) && ['length', 'width', 'height'].every((side) => !decimalProblem(size[side as 'length']))
      if (!valid) {
        unpacked.push({ ...item, reason: NO_MEASURES })
        continue
      }
      for (let unit = 0; unit < item.quantity; unit++) {
        units.push({
          key: `${item.lineItemId}#${unit}`,
          lineItemId: item.lineItemId,
          length: toTenthMillimetres(size.length, size.unit),
          width: toTenthMillimetres(size.width, size.unit),
          height: toTenthMillimetres(size.height, size.unit),
          weight: toMilligrams(weight.value, weight.unit),
        })
      }
    }
    const packingBoxes: PackingBox[] = boxes.map((box) => ({
      boxId: box.id,
      length: toTenthMillimetres(box.innerLength, box.dimensionUnit as DimensionUnit),
      width: toTenthMillimetres(box.innerWidth, box.dimensionUnit as DimensionUnit),
      height: toTenthMillimetres(box.innerHeight, box.dimensionUnit as DimensionUnit),
      maxContentWeight: toMilligrams(box.maxWeight, box.weightUnit as WeightUnit) - toMilligrams(box.emptyWeight, box.weightUnit as WeightUnit),
    }))
    const packed = await withinBudget(deps.packingTimeoutMs, (signal) => deps.packer.pack(units, packingBoxes, { signal }))
    const unitOf = new Map(units.map((unit) => [unit.key, unit]))
    const boxById = new Map(boxes.map((box) => [box.id, box]))
    const countByLine = (keys: readonly string[]) => {
      const counts = new Map<number, number>()
      for (const key of keys) {
        const unit = unitOf.get(key)
        if (unit) counts.set(unit.lineItemId, (counts.get(unit.lineItemId) ?? 0) + 1)
      }
      return [...counts].map(([lineItemId, quantity]) => ({ lineItemId, quantity }))
    }
    for (const item of countByLine(packed.unpacked)) unpacked.push({ ...item, reason: FITS_NO_BOX })
    const parcels: SuggestedParcel[] = packed.boxes.map((packedBox) => {
      const box = boxById.get(packedBox.boxId)!
      const content = packedBox.keys.reduce((sum, key) => sum + (unitOf.get(key)?.weight ?? 0), 0)
      return {
        box: { id: box.id, name: box.name },
        items: countByLine(packedBox.keys),
        weight: { value: grams(content + toMilligrams(box.emptyWeight, box.weightUnit as WeightUnit)), unit: 'g' },
        dimensions: { length: box.innerLength, width: box.innerWidth, height: box.innerHeight, unit: box.dimensionUnit as DimensionUnit },
      }
    })
    const created: Parcel[] = []
    if (options.apply) {
      for (const parcel of parcels) {
        created.push(await deps.deliveries.addParcel(shipmentId, { weight: parcel.weight, dimensions: parcel.dimensions, boxId: parcel.box.id, items: parcel.items }, context))
      }
    }
    return { parcels, unpacked, created }
  }

  return { suggestParcels }
}
