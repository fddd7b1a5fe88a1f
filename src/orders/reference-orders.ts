// Creating and changing the reference store's orders and order statuses through typed calls, with
// the same text rule as every other stored text, instead of raw inserts into the package's tables.
import type { AddressValues, DataLayer, LineItemValues, OrderValues } from '../db/data-layer.js'
import { DIMENSION_UNITS, decimalProblem } from '../model/units.js'
import { TEXT_LIMITS, textProblem } from '../text.js'

/** A postal address of a reference order. `country` is ISO 3166-1 alpha-2 (the export needs it). */
export interface ReferenceAddress {
  name?: string | null | undefined
  company?: string | null | undefined
  address1?: string | null | undefined
  address2?: string | null | undefined
  city?: string | null | undefined
  state?: string | null | undefined
  postalCode?: string | null | undefined
  country?: string | null | undefined
  phone?: string | null | undefined
  email?: string | null | undefined
}

export interface ReferenceLineItem {
  name: string
  sku?: string | null | undefined
  /** A unit's barcode (a GTIN, or the shop's own code) the pack station scans; without it, the SKU is scanned. */
  barcode?: string | null | undefined
  /** A number of `weightUnit` per unit. */
  weight?: number | null | undefined
  weightUnit?: 'g' | 'kg' | 'lb' | 'oz' | null | undefined
  /** A positive integer. Default 1. */
  quantity?: number | undefined
  /** The unit price, a decimal (a string keeps it exact). Default 0. */
  price?: string | number | undefined
  imageUrl?: string | null | undefined
  /** Chosen options shown on the item (size, colour...); split rules see them as the line's attributes. */
  options?: Record<string, string> | undefined
  /** False for a line that never ships (a digital good, a gift card): shipments do not allocate it. Default true. */
  shippable?: boolean | undefined
  /** The unit's size, for packing into boxes: exact decimals ("12.5") in mm, cm or in. */
  dimensions?: { length: string; width: string; height: string; unit: 'mm' | 'cm' | 'in' } | null | undefined
  /**
   * What a customs declaration says of one unit (OrderLine.customs): the HS tariff number, the ISO country
   * of origin, a description customs accept, and one unit's value as an exact decimal string with its currency.
   */
  customs?:
    | { tariffNumber?: string | null | undefined; originCountry?: string | null | undefined; description?: string | null | undefined; value?: { amount: string; currency: string } | null | undefined }
    | null
    | undefined
}

export interface ReferenceOrderInput {
  /** The human-readable order reference: ShipStation's OrderNumber, the prefix of shipment references. Unique. */
  reference: string
  /** The shop's internal order number. Unique. Default: the reference. */
  number?: string | undefined
  /** An existing order status handle. Default: the default status, if there is one. */
  statusHandle?: string | null | undefined
  /** Completed (placed and paid) orders are the ones ShipStation exports. Default false. */
  isCompleted?: boolean | undefined
  email?: string | null | undefined
  customerId?: number | null | undefined
  /** Decimals as strings or numbers. Default 0. */
  totalPrice?: string | number | undefined
  totalTax?: string | number | undefined
  totalShipping?: string | number | undefined
  totalDiscount?: string | number | undefined
  couponCode?: string | null | undefined
  paymentMethod?: string | null | undefined
  shippingMethod?: string | null | undefined
  customerNotes?: string | null | undefined
  internalNotes?: string | null | undefined
  isGift?: boolean | undefined
  giftMessage?: string | null | undefined
  customField1?: string | null | undefined
  customField2?: string | null | undefined
  customField3?: string | null | undefined
  /** Custom field values by handle (see the `orderFields` option). */
  fields?: Record<string, unknown> | undefined
  dateOrdered?: Date | null | undefined
  shippingAddress?: ReferenceAddress | null | undefined
  /** Default: the shipping address stands in for it in the export. */
  billingAddress?: ReferenceAddress | null | undefined
  items?: ReferenceLineItem[] | undefined
}

/** Order columns that may change after creation (addresses and items stay as placed). */
export type ReferenceOrderChanges = {
  [K in Exclude<keyof ReferenceOrderInput, 'shippingAddress' | 'billingAddress' | 'items'>]?: ReferenceOrderInput[K] | undefined
}

/** A reference order or status was refused: the message names the field. */
export class ReferenceOrderError extends Error {
  readonly code = 'SHIPMENTS_REFERENCE_ORDER_INVALID'
  /**
   * True when the reference or the number is taken: the order exists (another instance, or an earlier
   * start, may have created it), nothing else was wrong with it.
   */
  readonly duplicate: boolean
  constructor(readonly field: string, reason: string, options: { duplicate?: boolean | undefined } = {}) {
    super(`${field}: ${reason}`)
    this.name = 'ReferenceOrderError'
    this.duplicate = options.duplicate ?? false
  }
}

/**
 * The most lines one reference-store order may hold. Bigger orders are refused with a
 * ReferenceOrderError on `items` (their lines are written in one transaction, which holds SQLite's
 * write lock for its length).
 */
export const MAX_ORDER_LINES = 10_000

const WEIGHT_UNITS = new Set(['g', 'kg', 'lb', 'oz'])
const HANDLE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/

function text(field: string, value: string | null | undefined, maxLength: number = TEXT_LIMITS.short, multiline = false): string | null {
  if (value === undefined || value === null) return null
  if (typeof value !== 'string') throw new ReferenceOrderError(field, 'must be a string')
  const problem = textProblem(value, { maxLength, multiline })
  if (problem) throw new ReferenceOrderError(field, problem)
  return value
}

/** A barcode as a scanner types it: printable ASCII without spaces, at most 64 characters (GTINs are 8 to 14 digits). */
function barcodeText(field: string, value: string | null | undefined): string | null {
  const written = text(field, value)
  if (written === null) return null
  if (!/^[\x21-\x7E]{1,64}$/.test(written)) throw new ReferenceOrderError(field, 'must be 1 to 64 printable ASCII characters without spaces, as a scanner types them')
  return written
}

function decimal(field: string, value: string | number | undefined): string {
  if (value === undefined) return '0'
  const written = typeof value === 'number' ? String(value) : value
  if (!/^-?\d{1,15}(\.\d{1,6})?$/.test(written)) throw new ReferenceOrderError(field, 'must be a decimal such as "12.50"')
  return written
}

function address(kind: AddressValues['kind'], input: ReferenceAddress): AddressValues {
  const field = `${kind}Address`
  const country = text(`${field}.country`, input.country)
  if (country !== null && !/^[A-Z]{2}$/.test(country)) throw new ReferenceOrderError(`${field}.country`, 'must be an ISO 3166-1 alpha-2 code such as "DE"')
  return {
    kind,
    fullName: text(`${field}.name`, input.name),
    company: text(`${field}.company`, input.company),
    address1: text(`${field}.address1`, input.address1),
    address2: text(`${field}.address2`, input.address2),
    city: text(`${field}.city`, input.city),
    state: text(`${field}.state`, input.state),
    postalCode: text(`${field}.postalCode`, input.postalCode),
    countryCode: country,
    phone: text(`${field}.phone`, input.phone),
    email: text(`${field}.email`, input.email),
  }
}

/** A line's customs columns, checked: the tariff number's and country's form, the value an exact decimal with an ISO 4217 currency. */
function lineCustoms(field: string, customs: ReferenceLineItem['customs']): Partial<LineItemValues> {
  if (!customs) return {}
  const tariffNumber = text(`${field}.customs.tariffNumber`, customs.tariffNumber, 13)
  if (tariffNumber !== null && !/^\d[\d.]*\d$/.test(tariffNumber)) throw new ReferenceOrderError(`${field}.customs.tariffNumber`, 'must be 6 to 10 digits, dots allowed')
  const originCountry = text(`${field}.customs.originCountry`, customs.originCountry, 2)
  if (originCountry !== null && !/^[A-Z]{2}$/.test(originCountry)) throw new ReferenceOrderError(`${field}.customs.originCountry`, 'must be an ISO 3166-1 alpha-2 code such as US')
  const value = customs.value ?? null
  if (value !== null && (typeof value.amount !== 'string' || !/^\d{1,12}(\.\d{1,6})?$/.test(value.amount))) throw new ReferenceOrderError(`${field}.customs.value.amount`, 'must be an exact decimal string such as "19.99"')
  if (value !== null && !/^[A-Z]{3}$/.test(String(value.currency))) throw new ReferenceOrderError(`${field}.customs.value.currency`, 'must be an ISO 4217 code such as USD')
  return {
    hsTariffNumber: tariffNumber,
    originCountry,
    customsDescription: text(`${field}.customs.description`, customs.description),
    customsValue: value?.amount ?? null,
    customsCurrency: value?.currency ?? null,
  }
}

function lineItem(index: number, input: ReferenceLineItem): LineItemValues {
  const field = `items.${index}`
  const name = text(`${field}.name`, input.name)
  if (!name) throw new ReferenceOrderError(`${field}.name`, 'is required')
  const quantity = input.quantity ?? 1
  if (!Number.isSafeInteger(quantity) || quantity < 1 || quantity > 2_147_483_647) throw new ReferenceOrderError(`${field}.quantity`, 'must be a positive integer')
  if (input.weight != null && !(Number.isFinite(input.weight) && input.weight >= 0)) throw new ReferenceOrderError(`${field}.weight`, 'must be a number of at least 0')
  if (input.weightUnit != null && !WEIGHT_UNITS.has(input.weightUnit)) throw new ReferenceOrderError(`${field}.weightUnit`, 'must be g, kg, lb or oz')
  if (input.shippable !== undefined && typeof input.shippable !== 'boolean') throw new ReferenceOrderError(`${field}.shippable`, 'must be a boolean')
  const dimensions = input.dimensions ?? null
  if (dimensions !== null) {
    for (const side of ['length', 'width', 'height'] as const) {
      const problem = decimalProblem(dimensions[side])
      if (problem) throw new ReferenceOrderError(`${field}.dimensions.${side}`, problem)
    }
    if (!(DIMENSION_UNITS as readonly string[]).includes(dimensions.unit)) throw new ReferenceOrderError(`${field}.dimensions.unit`, `must be ${DIMENSION_UNITS.join(', ')}`)
  }
  const options = input.options ?? {}
  for (const [key, value] of Object.entries(options)) {
    text(`${field}.options`, key)
    text(`${field}.options.${key}`, value)
  }
  return {
    sku: text(`${field}.sku`, input.sku),
    barcode: barcodeText(`${field}.barcode`, input.barcode),
    name,
    shippable: input.shippable ?? true,
    weight: input.weight ?? null,
    weightUnit: input.weightUnit ?? null,
    quantity,
    price: decimal(`${field}.price`, input.price),
    imageUrl: text(`${field}.imageUrl`, input.imageUrl, TEXT_LIMITS.url),
    options,
    ...(dimensions ? { length: dimensions.length, width: dimensions.width, height: dimensions.height, dimensionUnit: dimensions.unit } : {}),
    ...lineCustoms(field, input.customs),
  }
}

/** The typed service over the reference store's tables: `app.shipments.referenceOrders`. */
/**
 * `orderChanged`: told after an order is created or changed, so the package judges it again for the
 * attention list (the shipment service's `orderChanged`).
 */
export function createReferenceOrders(data: DataLayer, clock: () => number, orderChanged: (orderId: number) => Promise<void> = async () => undefined) {
  async function checkStatus(statusHandle: string | null | undefined): Promise<string | null> {
    if (statusHandle === undefined || statusHandle === null) return null
    if (!(await data.orderStatusExists(statusHandle))) throw new ReferenceOrderError('statusHandle', `no order status "${statusHandle}" exists; create it with saveStatus()`)
    return statusHandle
  }

  /** The columns of an order input, checked; only the keys present in `input` when `partial`. */
  function columns(input: ReferenceOrderChanges, partial: boolean): Partial<OrderValues> {
    const out: Partial<OrderValues> = {}
    const has = (key: keyof ReferenceOrderChanges) => !partial || input[key] !== undefined
    if (has('reference')) {
      const reference = text('reference', input.reference)
      if (!reference) throw new ReferenceOrderError('reference', 'is required')
      out.reference = reference
    }
    if (has('number') && input.number !== undefined) out.number = text('number', input.number) ?? undefined
    for (const key of ['email', 'couponCode', 'paymentMethod', 'shippingMethod', 'giftMessage', 'customField1', 'customField2', 'customField3'] as const) {
      if (has(key)) out[key] = text(key, input[key])
    }
    for (const key of ['customerNotes', 'internalNotes'] as const) if (has(key)) out[key] = text(key, input[key], TEXT_LIMITS.long, true)
    for (const key of ['totalPrice', 'totalTax', 'totalShipping', 'totalDiscount'] as const) if (has(key)) out[key] = decimal(key, input[key])
    for (const key of ['isCompleted', 'isGift'] as const) {
      if (!has(key)) continue
      const value = input[key] ?? false
      if (typeof value !== 'boolean') throw new ReferenceOrderError(key, 'must be a boolean')
      out[key] = value
    }
    if (has('customerId')) {
      const customerId = input.customerId ?? null
      if (customerId !== null && !(Number.isSafeInteger(customerId) && customerId > 0 && customerId <= 2_147_483_647)) {
        throw new ReferenceOrderError('customerId', 'must be a positive 32-bit integer')
      }
      out.customerId = customerId
    }
    if (has('fields')) {
      const fields = input.fields ?? {}
      if (typeof fields !== 'object' || Array.isArray(fields)) throw new ReferenceOrderError('fields', 'must be an object of field handles and values')
      out.fields = fields
    }
    if (has('dateOrdered')) {
      const date = input.dateOrdered ?? null
      if (date !== null && !(date instanceof Date && !Number.isNaN(date.getTime()))) throw new ReferenceOrderError('dateOrdered', 'must be a valid Date')
      out.dateOrdered = date
    }
    return out
  }

  return {
    /** Creates the status, or renames it when the handle exists. `isDefault` makes it the status new orders get. */
    async saveStatus(status: { handle: string; name: string; isDefault?: boolean | undefined }): Promise<void> {
      if (typeof status?.handle !== 'string' || !HANDLE.test(status.handle)) {
        throw new ReferenceOrderError('handle', 'letters, digits, "-" and "_", starting with a letter or digit, at most 64')
      }
      const name = text('name', status.name)
      if (!name) throw new ReferenceOrderError('name', 'is required')
      await data.saveOrderStatus({ handle: status.handle, name, isDefault: status.isDefault ?? false })
    },

    listStatuses: () => data.listOrderStatuses(),

    /** Creates an order with its addresses and line items in one transaction; returns its id. */
    async createOrder(input: ReferenceOrderInput): Promise<number> {
      const values = columns(input, false)
      const statuses = await data.listOrderStatuses()
      const statusHandle = input.statusHandle === undefined ? (statuses.find((status) => status.isDefault)?.handle ?? null) : await checkStatus(input.statusHandle)
      const addresses: AddressValues[] = []
      if (input.shippingAddress) addresses.push(address('shipping', input.shippingAddress))
      if (input.billingAddress) addresses.push(address('billing', input.billingAddress))
      if (Array.isArray(input.items) && input.items.length > MAX_ORDER_LINES) throw new ReferenceOrderError('items', `an order may hold at most ${MAX_ORDER_LINES} lines`)
      const items = (input.items ?? []).map((item, index) => lineItem(index, item))
      const order = { ...values, number: values.number ?? values.reference!, statusHandle, dateUpdated: new Date(clock()) } as OrderValues
      const id = await data.insertOrder(order, addresses, items)
      if (id === 'duplicate') {
        throw new ReferenceOrderError('reference', `an order with the reference "${order.reference}" or the number "${order.number}" exists`, { duplicate: true })
      }
      if (order.isCompleted) await orderChanged(id)
      return id
    },

    /** Changes order columns (status, completion, custom fields...) and its dateUpdated, which the export orders by. */
    async updateOrder(orderId: number, changes: ReferenceOrderChanges): Promise<void> {
      const values = columns(changes, true)
      if (changes.statusHandle !== undefined) values.statusHandle = await checkStatus(changes.statusHandle)
      const result = await data.updateOrder(orderId, { ...values, dateUpdated: new Date(clock()) })
      if (result === 'duplicate') throw new ReferenceOrderError('reference', 'another order has this reference or number', { duplicate: true })
      if (!result) throw new ReferenceOrderError('orderId', `no order ${orderId} exists`)
      await orderChanged(orderId)
    },
  }
}

export type ReferenceOrders = ReturnType<typeof createReferenceOrders>
