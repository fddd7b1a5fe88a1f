// "Suggest parcels": a shipment's units packed into the fewest boxes of the catalogue by the Packer, within
// a time budget, with the units that fit no box explained; with `apply`, the parcels created. Each
// suggestion has an id, a hash of what was packed and of the parcels it proposes, so it can be accepted
// as it was shown (acceptSuggestion), not packed again: passed back, it creates exactly its parcels, or is
// refused when the shipment or the boxes changed since (nothing is stored: any instance can accept it).
import { createHash } from 'node:crypto'
import type { DataLayer } from '../db/data-layer.js'
import { DeliveryErrors, ShipmentsErrors, ShipmentValidationError } from '../errors.js'
import type { OrderLine, OrderStore } from '../order-store.js'
import type { ShipmentService } from '../shipments/service.js'
import { MAX_PARCELS_PER_SHIPMENT, type Parcel } from '../model/parcel.js'
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
  /**
   * The suggestion's id: a hash of the shipment's units, their measures, the enabled boxes, the
   * shipment's parcels and the parcels suggested. The same input packed the same way has the same id.
   */
  id: string
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

/** A suggestion as it is accepted: its id and its parcels, as suggestParcels returned them. */
export type SuggestionToAccept = Pick<ParcelSuggestion, 'id' | 'parcels'>

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

  /**
   * What a suggestion packs, read afresh: the shipment's units with their measures (those without are
   * left out, with the reason), the enabled boxes, and the fingerprint of all of it with the shipment's
   * parcels, which a suggestion's id covers.
   */
  async function packingInput(shipmentId: number) {
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
    const fingerprint = JSON.stringify([
      shipmentId,
      wanted.map((item) => [item.lineItemId, item.quantity, byId.get(item.lineItemId)?.weight ?? null, byId.get(item.lineItemId)?.dimensions ?? null]),
      boxes.map((box) => [box.id, box.name, box.innerLength, box.innerWidth, box.innerHeight, box.dimensionUnit, box.emptyWeight, box.maxWeight, box.weightUnit]),
      shipment.parcels.map((parcel) => parcel.id),
    ])
    return { boxes, units, unpacked, fingerprint }
  }

  async function suggestParcels(shipmentId: number, options: { apply?: boolean | undefined } = {}, context: DeliveryContext = {}): Promise<ParcelSuggestion> {
    const { boxes, units, unpacked, fingerprint } = await packingInput(shipmentId)
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
    const created = options.apply ? await createParcels(shipmentId, parcels, context) : []
    return { id: suggestionId(fingerprint, parcels), parcels, unpacked, created }
  }

  async function createParcels(shipmentId: number, parcels: readonly SuggestedParcel[], context: DeliveryContext): Promise<Parcel[]> {
    const created: Parcel[] = []
    for (const parcel of parcels) {
      created.push(await deps.deliveries.addParcel(shipmentId, { weight: parcel.weight, dimensions: parcel.dimensions, boxId: parcel.box.id, items: parcel.items }, context))
    }
    return created
  }

  /**
   * Creates the parcels of a suggestion as it was shown, without packing again: refused with
   * SHIPMENTS_SUGGESTION_CHANGED (409) when its id no longer matches (the shipment's items or parcels,
   * a line's measures or the enabled boxes changed since, or the parcels were altered), with a 422 when
   * it is not a suggestion's shape. Returns the parcels created.
   */
  async function acceptSuggestion(shipmentId: number, suggestion: SuggestionToAccept, context: DeliveryContext = {}): Promise<Parcel[]> {
    const parcels = suggestedParcels(suggestion)
    const { fingerprint } = await packingInput(shipmentId)
    if (suggestionId(fingerprint, parcels) !== suggestion.id) throw new DeliveryErrors.SuggestionChanged()
    return createParcels(shipmentId, parcels, context)
  }

  return { suggestParcels, acceptSuggestion }
}

/** A suggestion's id: its input's fingerprint and its parcels, hashed (the parcels as suggestedParcels reads them). */
function suggestionId(fingerprint: string, parcels: readonly SuggestedParcel[]): string {
  const proposed = parcels.map((parcel) => [parcel.box.id, parcel.box.name, parcel.items.map((item) => [item.lineItemId, item.quantity]), parcel.weight.value, parcel.weight.unit, parcel.dimensions.length, parcel.dimensions.width, parcel.dimensions.height, parcel.dimensions.unit])
  return `sg_${createHash('sha256').update(fingerprint).update('\n').update(JSON.stringify(proposed)).digest('base64url').slice(0, 32)}`
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const isCount = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= 2_147_483_647
const isText = (value: unknown, max: number) => typeof value === 'string' && value.length <= max

/**
 * The parcels of a suggestion passed back (by a JavaScript caller, or a form), each field checked for
 * its shape only: what they hold is checked by the id, which covers them. A 422 under `suggestion`.
 */
function suggestedParcels(suggestion: unknown): SuggestedParcel[] {
  const refuse = (why: string): never => {
    throw new ShipmentValidationError({ suggestion: [`${why}: pass back the suggestion as suggestParcels returned it (its id and parcels)`] })
  }
  if (!isObject(suggestion)) return refuse('is not an object')
  if (!isText(suggestion.id, 100) || suggestion.id === '') refuse('has no id')
  const { parcels } = suggestion
  if (!Array.isArray(parcels) || parcels.length === 0 || parcels.length > MAX_PARCELS_PER_SHIPMENT) return refuse(`holds no list of 1 to ${MAX_PARCELS_PER_SHIPMENT} parcels`)
  return parcels.map((parcel: unknown, index) => {
    const box = isObject(parcel) ? parcel.box : null
    const weight = isObject(parcel) ? parcel.weight : null
    const size = isObject(parcel) ? parcel.dimensions : null
    const items = isObject(parcel) ? parcel.items : null
    const fine =
      isObject(box) && isCount(box.id) && isText(box.name, 255) &&
      isObject(weight) && isText(weight.value, 40) && weight.unit === 'g' &&
      isObject(size) && isText(size.length, 40) && isText(size.width, 40) && isText(size.height, 40) && isText(size.unit, 10) &&
      Array.isArray(items) && items.length <= MAX_PACKED_UNITS && items.every((item: unknown) => isObject(item) && isCount(item.lineItemId) && isCount(item.quantity))
    if (!fine) return refuse(`parcel ${index + 1} is not a suggested parcel`)
    const checked = parcel as SuggestedParcel
    return {
      box: { id: checked.box.id, name: checked.box.name },
      items: checked.items.map((item) => ({ lineItemId: item.lineItemId, quantity: item.quantity })),
      weight: { value: checked.weight.value, unit: 'g' as const },
      dimensions: { length: checked.dimensions.length, width: checked.dimensions.width, height: checked.dimensions.height, unit: checked.dimensions.unit },
    }
  })
}
