// The box catalogue, each box checked field by field, and the box service composing "suggest parcels"
// (parcel-suggestions.ts): a shipment's units packed into the fewest boxes, the units that fit no box explained.
import type { BoxRow, BoxValues } from '../db/parcels.js'
import { DeliveryErrors, ShipmentValidationError } from '../errors.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import { formatIsoWithOffset } from '../time.js'
import { createParcelSuggestions, type ParcelSuggestionDependencies } from './parcel-suggestions.js'
import { DIMENSION_UNITS, WEIGHT_UNITS, decimalProblem, toMilligrams, type DimensionUnit, type WeightUnit } from '../model/units.js'

export { MAX_PACKED_BOX_TYPES, MAX_PACKED_UNITS, type ParcelSuggestion, type SuggestedParcel, type SuggestionToAccept } from './parcel-suggestions.js'

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

export interface BoxServiceDependencies extends ParcelSuggestionDependencies {
  timeZone: string
}

export type BoxService = ReturnType<typeof createBoxService>

export function createBoxService(deps: BoxServiceDependencies) {
  const { data, timeZone } = deps
  const { suggestParcels, acceptSuggestion } = createParcelSuggestions(deps)

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
    acceptSuggestion,
  }
}
