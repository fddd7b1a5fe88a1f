// The seam through which the package reads and changes the host's orders.

/** What the shipment side needs to know of an order. */
/** A postal address; `country` is an ISO 3166-1 alpha-2 code. */
export interface PostalAddress {
  name: string | null
  company?: string | null | undefined
  street1: string
  street2?: string | null | undefined
  city: string
  state?: string | null | undefined
  postalCode: string
  country: string
  phone?: string | null | undefined
  email?: string | null | undefined
}

export interface OrderSummary {
  id: number
  /** The human-readable reference (ShipStation's OrderNumber); shipment references are built on it. */
  reference: string
  statusHandle: string | null
  isCompleted: boolean
  /** The customer's email: customer notifications go to it. Optional. */
  email?: string | null | undefined
  /** The customer's name, shown on the admin order page. Optional (the reference store: the shipping address's name). */
  customerName?: string | null | undefined
  /** The order status's display name, shown on the admin order page. Optional (the page shows `statusHandle` without it). */
  statusName?: string | null | undefined
  /**
   * Where the order ships to: rates and labels need it. Optional (the reference store: its shipping
   * address, when it has a street, city, postal code and country).
   */
  shippingAddress?: PostalAddress | null | undefined
  /** When the order was placed, shown on the packing slip. Optional (the reference store keeps it). */
  dateOrdered?: Date | null | undefined
  /** The customer's note on the order, shown on the packing slip. Optional (the reference store keeps it). */
  customerNotes?: string | null | undefined
  /**
   * Facts of the order that shipping rules may test (an `orderAttribute` condition), such as the shipping
   * method the customer paid for. Optional (the reference store: `shippingMethod`).
   */
  attributes?: Readonly<Record<string, string | null>> | undefined
}

/** A completed order as the attention list shows it, with its lines. */
export interface CompletedOrder extends OrderSummary {
  /** When it was placed, or null. */
  dateOrdered: Date | null
  /** The customer's name or email, for the list; null when unknown. */
  customer: string | null
  lines: OrderLine[]
}

/** One line of an order, as shipments allocate it. */
export interface OrderLine {
  /** Unique among the order's lines; shipments name the line by it. */
  id: number
  sku: string | null
  /**
   * What a unit's own barcode says (a GTIN, or the host's own code), which the pack station scans.
   * Optional: without it, the SKU is what a scan must read (the reference store keeps it).
   */
  barcode?: string | null | undefined
  name: string
  /** The quantity ordered: shipments never hold more of the line than this, together. */
  quantity: number
  /** False for a line that never ships (digital goods, ignored product types): nothing allocates it. */
  shippable: boolean
  /** What host split rules may group lines by (warehouse, shipping category, options). Default none. */
  attributes?: Readonly<Record<string, unknown>> | undefined
  /** One unit's weight, an exact decimal with its unit, for packing. Optional (the reference store keeps it). */
  weight?: { value: string; unit: WeightUnit } | null | undefined
  /** One unit's size, exact decimals in mm, cm or in, for packing. Optional (the reference store keeps it). */
  dimensions?: { length: string; width: string; height: string; unit: 'mm' | 'cm' | 'in' } | null | undefined
  /** Where the line's goods are kept (a bin, a shelf): the pick list is sorted by it. Optional (the reference store keeps it). */
  location?: string | null | undefined
  /**
   * What a customs declaration says of one unit, for parcels that cross a border. Optional (the reference
   * store keeps it); a field left out is filled by hand on the parcel's declaration before purchase.
   */
  customs?: OrderLineCustoms | null | undefined
}

/** One unit's customs data. Values are exact decimal strings, never floats. */
export interface OrderLineCustoms {
  /** Harmonized System tariff number (HS code), 6 to 10 digits (dots allowed). */
  tariffNumber?: string | null | undefined
  /** Where the goods were made, ISO 3166-1 alpha-2. */
  originCountry?: string | null | undefined
  /** What the goods are, in the words customs want ("Cotton T-shirt"), when the line's name will not do. */
  description?: string | null | undefined
  /** One unit's declared value, an exact decimal with its currency (ISO 4217). */
  value?: { amount: string; currency: string } | null | undefined
}

/** A postal address as the export needs it; every value may be missing. */
export interface ExportAddress {
  name: string | null
  company: string | null
  address1: string | null
  address2: string | null
  city: string | null
  state: string | null
  postalCode: string | null
  /** ISO 3166-1 alpha-2. */
  country: string | null
  phone: string | null
  email: string | null
}

export type WeightUnit = 'g' | 'kg' | 'lb' | 'oz'

export interface ExportLineItem {
  /**
   * The line's id as `orderLines` gives it: exported as `LineItemID`, which ShipStation sends back in its
   * ship notifications, so they name the line exactly. Optional: without it, notifications match by SKU.
   */
  id?: number | null | undefined
  sku: string | null
  name: string
  weight: number | null
  weightUnit: WeightUnit | string | null
  quantity: number
  /** Decimal text, e.g. "19.95". */
  unitPrice: string
  /** Absolute, protocol-relative or site-relative. */
  imageUrl: string | null
  /** Option name to value. */
  options: Record<string, string>
}

/** One completed order, everything ShipStation's export document needs. */
export interface ExportOrder {
  id: number
  reference: string
  statusHandle: string | null
  /** Decimal text amounts. */
  total: string
  tax: string
  shipping: string
  /** The order's discount, a negative or zero decimal text; exported as an adjustment item. */
  discount: string
  couponCode: string | null
  paymentMethod: string | null
  shippingMethod: string | null
  customerCode: string | null
  /** The customer's email, used when the billing address has none. */
  email: string | null
  internalNotes: string | null
  customerNotes: string | null
  isGift: boolean
  giftMessage: string | null
  customFields: [string | null, string | null, string | null]
  dateOrdered: Date | null
  dateUpdated: Date
  billingAddress: ExportAddress | null
  shippingAddress: ExportAddress | null
  items: ExportLineItem[]
  /** Why the order fails validation; empty when it is valid. */
  problems: string[]
}

export interface ExportOrdersQuery {
  /**
   * Bounds in epoch milliseconds on the order's dateUpdated, both exclusive and compared at whole
   * seconds (after 12:00:00 means from 12:00:01 on), or null for every date.
   */
  window: { after: number; before: number } | null
  /** Only orders whose field `fieldHandle` holds `value`, or null for every store. */
  store: { fieldHandle: string; value: string } | null
  /** 1-based. */
  page: number
  pageSize: number
  /**
   * false: orders failing validation are left out of both the page and the total, so pages are
   * never short. true: they are included, each with its `problems`.
   */
  includeInvalid: boolean
}

export interface ExportOrdersPage {
  /** Completed orders by dateUpdated ascending, then id. */
  orders: ExportOrder[]
  /** How many orders match the query across all pages. */
  total: number
}

/** The tracking entry a shipping notification writes: sub-field handle to value. */
export interface TrackingEntry {
  /** The order field holding the entry (a matrix/table field). */
  fieldHandle: string
  values: Record<string, string>
}

export interface ShipNotificationChange {
  statusHandle: string
  /** null when the notification carried no tracking value: any existing entry stays. */
  tracking: TrackingEntry | null
}

export interface ShipNotificationResult {
  /** Whether the stored order changed (false for a repeated notification). */
  changed: boolean
  /** Why the tracking entry was skipped, when it was (the field or a sub-field does not exist). */
  trackingSkipped: string | null
}

/**
 * Orders belong to the host. A host with its own order tables implements this interface; the package's
 * reference store (`createReferenceOrderStore`) implements it on the package's own tables.
 */
export interface OrderStore {
  /** The order with this id, or null. */
  findOrder(orderId: number): Promise<OrderSummary | null>
  /**
   * The orders with these ids that exist, in any order. Optional: pages that name many orders (the
   * admin list, the overview) ask once per page with it, and once per order through `findOrder` without.
   */
  findOrders?(orderIds: readonly number[]): Promise<OrderSummary[]>
  /** The order with this reference (ShipStation's OrderNumber), or null. */
  findOrderByReference(reference: string): Promise<OrderSummary | null>
  /** Moves the order to the status with this handle; throws when the status does not exist. */
  setOrderStatus(orderId: number, statusHandle: string): Promise<void>
  /**
   * Whether an order status with this handle exists. Optional: when present, a shipment is refused
   * its move to `shipped` (a 422) while the status `shippedOrderStatus` names does not exist, rather
   * than shipped with an order advance bound to fail.
   */
  orderStatusExists?(statusHandle: string): Promise<boolean>
  /**
   * The order's lines, or null when there is no such order. Optional: a store without it has
   * order-level shipments only (creating a shipment with items is refused with a 422).
   */
  orderLines?(orderId: number): Promise<OrderLine[] | null>
  /**
   * Completed orders by id ascending, after `afterId`, at most `limit`: what the attention list (completed
   * orders whose shipments do not cover every shippable line) pages through. Optional, with `orderLines`.
   */
  listCompletedOrders?(query: { afterId: number; limit: number }): Promise<CompletedOrder[]>
  /** One page of completed orders for ShipStation's export. Needed only with `orderExchange`. */
  exportOrders?(query: ExportOrdersQuery): Promise<ExportOrdersPage>
  /**
   * Applies a shipping notification in one save, without validating the order: the status (throws
   * `UnknownOrderStatusError` when it does not exist) and the order's one tracking entry, replaced.
   * Needed only with `orderExchange`.
   */
  recordShipNotification?(orderId: number, change: ShipNotificationChange): Promise<ShipNotificationResult>
}
