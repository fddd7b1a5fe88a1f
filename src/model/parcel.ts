// Parcels as clients see them, and the parcel input checked field by field.
import type { NewParcel, ParcelRow, StoredParcel } from '../db/parcels.js'
import { ShipmentValidationError } from '../errors.js'
import { formatIsoWithOffset } from '../time.js'
import { DIMENSION_UNITS, WEIGHT_UNITS, decimalProblem, type DimensionUnit, type WeightUnit } from './units.js'

export const PARCEL_STATUSES = ['pending', 'labelled', 'shipped', 'delivered'] as const
export type ParcelStatus = (typeof PARCEL_STATUSES)[number]

/** An exact decimal string and its unit. */
export interface Measure<Unit extends string> {
  value: string
  unit: Unit
}

export interface ParcelDimensions {
  length: string
  width: string
  height: string
  unit: DimensionUnit
}

/** The label bought for a parcel: where to fetch it, its format, what it cost, the operation that bought it. */
export interface ParcelLabel {
  url: string
  format: string
  cost: { amount: string; currency: string } | null
  operationId: string
}

export interface Parcel {
  id: number
  shipmentId: number
  weight: Measure<WeightUnit>
  dimensions: ParcelDimensions | null
  boxId: number | null
  /** The order lines in this parcel (empty: not said). */
  items: Array<{ lineItemId: number; quantity: number }>
  status: ParcelStatus
  trackingNumber: string | null
  trackingUrl: string | null
  carrier: string | null
  service: string | null
  label: ParcelLabel | null
  dateCreated: string
  dateUpdated: string
}

/** What a parcel is created or changed with. */
export interface ParcelInput {
  weight?: { value: string; unit: WeightUnit } | undefined
  dimensions?: ParcelDimensions | null | undefined
  boxId?: number | null | undefined
  items?: Array<{ lineItemId: number; quantity: number }> | undefined
}

/** A parcel row, or the shipment row's copy of it (times as ISO strings). */
export function toParcel(row: ParcelRow | StoredParcel, timeZone: string): Parcel {
  const millis = (value: Date | string) => (typeof value === 'string' ? Date.parse(value) : value.getTime())
  return {
    id: row.id,
    shipmentId: row.shipmentId,
    weight: { value: row.weight, unit: row.weightUnit as WeightUnit },
    dimensions:
      row.length !== null && row.width !== null && row.height !== null && row.dimensionUnit !== null
        ? { length: row.length, width: row.width, height: row.height, unit: row.dimensionUnit as DimensionUnit }
        : null,
    boxId: row.boxId,
    items: row.items.map(({ lineItemId, quantity }) => ({ lineItemId, quantity })),
    status: row.status as ParcelStatus,
    trackingNumber: row.trackingNumber,
    trackingUrl: row.trackingUrl,
    carrier: row.carrier,
    service: row.service,
    label:
      row.labelUrl !== null && row.labelOperationId !== null
        ? {
            url: row.labelUrl,
            format: row.labelFormat ?? 'PDF',
            cost: row.labelCost !== null && row.labelCurrency !== null ? { amount: row.labelCost, currency: row.labelCurrency } : null,
            operationId: row.labelOperationId,
          }
        : null,
    dateCreated: formatIsoWithOffset(millis(row.createdAt), timeZone),
    dateUpdated: formatIsoWithOffset(millis(row.updatedAt), timeZone),
  }
}

/** The most parcels one shipment may have, and items one parcel may list. */
export const MAX_PARCELS_PER_SHIPMENT = 100
const MAX_ITEMS_PER_PARCEL = 500

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Checks a parcel input; `creating` requires the weight. Every problem is reported under its field
 * (a 422 `{success: false, errors}`); the columns to write come back otherwise.
 */
export function parcelColumns(input: unknown, creating: boolean): Partial<NewParcel> {
  const errors: Record<string, string[]> = {}
  const add = (field: string, message: string) => (errors[field] ??= []).push(message)
  const columns: Partial<NewParcel> = {}
  if (!isObject(input)) throw new ShipmentValidationError({ parcel: ['must be an object'] })
  for (const key of Object.keys(input)) if (!['weight', 'dimensions', 'boxId', 'items'].includes(key)) add(key, 'is not a parcel field')

  if (input.weight === undefined) {
    if (creating) add('weight', 'is required: { value: "1.5", unit: "kg" }')
  } else if (!isObject(input.weight)) {
    add('weight', 'must be { value, unit }')
  } else {
    const problem = decimalProblem(input.weight.value)
    if (problem) add('weight.value', problem)
    if (!(WEIGHT_UNITS as readonly unknown[]).includes(input.weight.unit)) add('weight.unit', `must be one of ${WEIGHT_UNITS.join(', ')}`)
    columns.weight = input.weight.value as string
    columns.weightUnit = input.weight.unit as string
  }

  if (input.dimensions === null) {
    Object.assign(columns, { length: null, width: null, height: null, dimensionUnit: null })
  } else if (input.dimensions !== undefined) {
    if (!isObject(input.dimensions)) {
      add('dimensions', 'must be { length, width, height, unit } or null')
    } else {
      for (const side of ['length', 'width', 'height'] as const) {
        const problem = decimalProblem(input.dimensions[side])
        if (problem) add(`dimensions.${side}`, problem)
      }
      if (!(DIMENSION_UNITS as readonly unknown[]).includes(input.dimensions.unit)) add('dimensions.unit', `must be one of ${DIMENSION_UNITS.join(', ')}`)
      Object.assign(columns, {
        length: input.dimensions.length,
        width: input.dimensions.width,
        height: input.dimensions.height,
        dimensionUnit: input.dimensions.unit,
      })
    }
  }

  if (input.boxId !== undefined) {
    if (input.boxId !== null && !(Number.isSafeInteger(input.boxId) && (input.boxId as number) > 0)) add('boxId', 'must be a box id or null')
    else columns.boxId = input.boxId as number | null
  }

  if (input.items !== undefined) {
    if (!Array.isArray(input.items) || input.items.length > MAX_ITEMS_PER_PARCEL) {
      add('items', `must be a list of at most ${MAX_ITEMS_PER_PARCEL} { lineItemId, quantity }`)
    } else {
      const seen = new Set<number>()
      input.items.forEach((item: unknown, index) => {
        if (!isObject(item) || !Number.isSafeInteger(item.lineItemId) || (item.lineItemId as number) < 1 || !Number.isSafeInteger(item.quantity) || (item.quantity as number) < 1) {
          add(`items.${index}`, 'must be { lineItemId, quantity } with positive integers')
        } else if (seen.has(item.lineItemId as number)) {
          add(`items.${index}`, `names line ${item.lineItemId} twice`)
        } else {
          seen.add(item.lineItemId as number)
        }
      })
      columns.items = (input.items as Array<{ lineItemId: number; quantity: number }>).map(({ lineItemId, quantity }) => ({ lineItemId, quantity }))
    }
  }
  if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
  return columns
}
