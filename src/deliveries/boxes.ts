// The box catalogue and "suggest parcels": a shipment's units packed into the fewest boxes by the Packer,
// with the units that fit no box explained.
import type { DataLayer } from '../db/data-layer.js'
import type { BoxRow, BoxValues } from '../db/parcels.js'
import { DeliveryErrors, ShipmentsErrors, ShipmentValidationError } from '../errors.js'
import type { OrderLine, OrderStore } from '../orders/order-store.js'
import type { ShipmentService } from '../shipments/service.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import { formatIsoWithOffset } from '../time.js'
import type { Parcel } from './parcel.js'
import type { Packer, PackingBox, PackingItem } from './packing.js'
import type { DeliveryContext, DeliveryService } from './service.js'
import { DIMENSION_UNITS, WEIGHT_UNITS, decimalProblem, toMilligrams, toTenthMillimetres, type DimensionUnit, type WeightUnit } from './units.js'

export interface Box {
  id: number
  name: string
  innerDimensions: { length: string; width: string; height: string; unit: DimensionUnit }
  emptyWeight: { value: string; unit: WeightUnit }
  maxWeight: { value: string; unit: WeightUnit }
  enabled: boolean
  dateCreated: string
  dateUpdated: string
}

export interface BoxInput {
  name?: string | undefined
  innerDimensions?: { length: string; width: string; height: string; unit: DimensionUnit } | undefined
  emptyWeight?: { value: string; unit: WeightUnit } | undefined
  maxWeight?: { value: string; unit: WeightUnit } | undefined
  enabled?: boolean | undefined
}

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

export interface BoxServiceDependencies {
  data: DataLayer
  shipments: ShipmentService
  orderStore: OrderStore
  /** True when the order store is the reference store, whose lines' measures live in the package's tables. */
  referenceStore: boolean
  deliveries: Pick<DeliveryService, 'addParcel'>
  packer: Packer
  /** How long one suggestion's packing may take (`deliveries.packingTimeoutMs`). */
  packingTimeoutMs: number
  timeZone: string
}

export type BoxService = ReturnType<typeof createBoxService>

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

export function createBoxService(deps: BoxServiceDependencies) {
  const { data, timeZone } = deps

  const present = (row: BoxRow): Box => ({
    id: row.id,
    name: row.name,
    innerDimensions: { length: row.innerLength, width: row.innerWidth, height: row.innerHeight, unit: row.dimensionUnit as DimensionUnit },
    emptyWeight: { value: row.emptyWeight, unit: row.weightUnit as WeightUnit },
    maxWeight: { value: row.maxWeight, unit: row.weightUnit as WeightUnit },
    enabled: row.enabled,
    dateCreated: formatIsoWithOffset(row.createdAt.getTime(), timeZone),
    dateUpdated: formatIsoWithOffset(row.updatedAt.getTime(), timeZone),
  })

  /** The columns of a box input, every problem named by field; `current` for a change. */
  function boxColumns(input: BoxInput, current: BoxRow | null): BoxValues {
    const errors: Record<string, string[]> = {}
    const add = (field: string, message: string) => (errors[field] ??= []).push(message)
    const name = input.name ?? current?.name
    if (typeof name !== 'string' || name.trim() === '' || name.length > 255) add('name', 'is required, at most 255 characters')
    else {
      const problem = textProblem(name, { maxLength: TEXT_LIMITS.short })
      if (problem) add('name', problem)
    }
    const dimensions = input.innerDimensions ?? (current && { length: current.innerLength, width: current.innerWidth, height: current.innerHeight, unit: current.dimensionUnit as DimensionUnit })
    if (!dimensions) add('innerDimensions', 'are required: { length, width, height, unit }')
    else {
      for (const side of ['length', 'width', 'height'] as const) {
        const problem = decimalProblem(dimensions[side])
        if (problem) add(`innerDimensions.${side}`, problem)
      }
      if (!(DIMENSION_UNITS as readonly string[]).includes(dimensions.unit)) add('innerDimensions.unit', `must be one of ${DIMENSION_UNITS.join(', ')}`)
    }
    const empty = input.emptyWeight ?? (current && { value: current.emptyWeight, unit: current.weightUnit as WeightUnit })
    const max = input.maxWeight ?? (current && { value: current.maxWeight, unit: current.weightUnit as WeightUnit })
    if (!empty) add('emptyWeight', 'is required: { value, unit }')
    else if (empty.value !== '0' && decimalProblem(empty.value)) add('emptyWeight.value', decimalProblem(empty.value)!)
    if (!max) add('maxWeight', 'is required: { value, unit }')
    else if (decimalProblem(max.value)) add('maxWeight.value', decimalProblem(max.value)!)
    for (const [field, weight] of [['emptyWeight', empty], ['maxWeight', max]] as const) {
      if (weight && !(WEIGHT_UNITS as readonly string[]).includes(weight.unit)) add(`${field}.unit`, `must be one of ${WEIGHT_UNITS.join(', ')}`)
    }
    if (empty && max && empty.unit !== max.unit) add('maxWeight.unit', 'must be the unit of emptyWeight')
    if (Object.keys(errors).length === 0 && toMilligrams(max!.value, max!.unit) <= toMilligrams(empty!.value, empty!.unit)) add('maxWeight.value', 'must be more than the empty weight')
    if (input.enabled !== undefined && typeof input.enabled !== 'boolean') add('enabled', 'must be true or false')
    if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
    return {
      name: name!.trim(),
      innerLength: dimensions!.length,
      innerWidth: dimensions!.width,
      innerHeight: dimensions!.height,
      dimensionUnit: dimensions!.unit,
      emptyWeight: empty!.value,
      maxWeight: max!.value,
      weightUnit: max!.unit,
      enabled: input.enabled ?? current?.enabled ?? true,
    }
  }

  async function requireBox(id: number): Promise<BoxRow> {
    const row = await data.parcels.findBox(id)
    if (!row) throw new DeliveryErrors.BoxNotFound(id)
    return row
  }

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

  return {
    async listBoxes(): Promise<Box[]> {
      return (await data.parcels.listBoxes()).map(present)
    },
    async getBox(id: number): Promise<Box> {
      return present(await requireBox(id))
    },
    async createBox(input: BoxInput): Promise<Box> {
      return present(await data.parcels.insertBox(boxColumns(input ?? {}, null)))
    },
    async updateBox(id: number, input: BoxInput): Promise<Box> {
      const current = await requireBox(id)
      const updated = await data.parcels.updateBox(id, boxColumns(input ?? {}, current))
      if (!updated) throw new DeliveryErrors.BoxNotFound(id)
      return present(updated)
    },
    async removeBox(id: number): Promise<void> {
      if (!(await data.parcels.removeBox(id))) throw new DeliveryErrors.BoxNotFound(id)
    },
    suggestParcels,
  }
}
