// The data-layer contract of the reference order store: orders, their statuses, addresses and line items.
import type { CompletedOrder, ExportOrdersPage, ExportOrdersQuery, OrderLine, OrderSummary } from '../order-store.js'

/** An order as a ship notification changes it. */
export interface NotifiedOrder {
  statusHandle: string | null
  fields: Record<string, unknown>
}

/** An order status of the reference store. */
export interface OrderStatusRow {
  handle: string
  name: string
  isDefault: boolean
}

/** A reference-store order as written; decimals are text, so no binary rounding reaches money. */
export interface OrderValues {
  number: string
  reference: string
  email: string | null
  customerId: number | null
  statusHandle: string | null
  isCompleted: boolean
  totalPrice: string
  totalTax: string
  totalShipping: string
  totalDiscount: string
  couponCode: string | null
  paymentMethod: string | null
  shippingMethod: string | null
  customerNotes: string | null
  internalNotes: string | null
  isGift: boolean
  giftMessage: string | null
  customField1: string | null
  customField2: string | null
  customField3: string | null
  fields: Record<string, unknown>
  dateOrdered: Date | null
  dateUpdated: Date
}

export interface AddressValues {
  kind: 'shipping' | 'billing'
  fullName: string | null
  company: string | null
  address1: string | null
  address2: string | null
  city: string | null
  state: string | null
  postalCode: string | null
  countryCode: string | null
  phone: string | null
  email: string | null
}

export interface LineItemValues {
  sku: string | null
  /** A unit's barcode (GTIN or the host's own); null: its SKU stands. */
  barcode?: string | null
  name: string
  shippable: boolean
  weight: number | null
  weightUnit: string | null
  quantity: number
  price: string
  imageUrl: string | null
  options: Record<string, string>
  /** The unit's size for packing (exact decimals in `dimensionUnit`). */
  length?: string | null
  width?: string | null
  height?: string | null
  dimensionUnit?: string | null
  /** Customs: tariff number, ISO country of origin, description, one unit's value (exact decimal) and its currency. */
  hsTariffNumber?: string | null
  originCountry?: string | null
  customsDescription?: string | null
  customsValue?: string | null
  customsCurrency?: string | null
}

/** The reference order store: orders, statuses, lines, ship notifications and the export. */
export interface OrdersStore {
  findOrder(orderId: number): Promise<OrderSummary | undefined>
  /** The reference store's orders with these ids that exist (at most a page's worth: one query). */
  findOrders(orderIds: readonly number[]): Promise<OrderSummary[]>
  /** The reference store's lines of an order (id order); undefined for no order. */
  orderLines(orderId: number): Promise<OrderLine[] | undefined>
  /** The reference store's completed orders after `afterId` by id, with their lines. */
  listCompletedOrders(query: { afterId: number; limit: number }): Promise<CompletedOrder[]>
  findOrderByReference(reference: string): Promise<OrderSummary | undefined>
  /** False when no order status has this handle (nothing is written then). */
  setOrderStatus(orderId: number, statusHandle: string): Promise<boolean>
  orderStatusExists(statusHandle: string): Promise<boolean>
  /** Creates or renames the status with this handle; a default one makes every other status not default. */
  saveOrderStatus(status: OrderStatusRow): Promise<void>
  listOrderStatuses(): Promise<OrderStatusRow[]>
  /** Inserts an order with its addresses and line items in one transaction; 'duplicate' when its reference or number is taken. */
  insertOrder(order: OrderValues, addresses: AddressValues[], items: LineItemValues[]): Promise<number | 'duplicate'>
  /** Writes order columns; false when there is no such order, 'duplicate' when a new reference or number is taken. */
  updateOrder(orderId: number, columns: Partial<OrderValues>): Promise<boolean | 'duplicate'>
  /**
   * Reads the order under a write lock, lets `plan` decide its new fields, and saves status and fields
   * when anything changed. 'no-status' when the status does not exist, 'no-order' when the order does not.
   */
  updateNotifiedOrder<T extends { fields: Record<string, unknown> }>(
    orderId: number,
    statusHandle: string,
    plan: (order: NotifiedOrder) => T,
  ): Promise<{ outcome: T; changed: boolean } | 'no-status' | 'no-order'>
  exportOrders(query: ExportOrdersQuery): Promise<ExportOrdersPage>
}

interface LineCustomsValues {
  hsTariffNumber: string | null
  originCountry: string | null
  customsDescription: string | null
  customsValue: string | null
  customsCurrency: string | null
}

/** A line row as an OrderLine: its customs columns as `customs`, present only when one of them is set. */
export function withLineCustoms<T extends LineCustomsValues>(row: T): Omit<T, keyof LineCustomsValues> & Pick<OrderLine, 'customs'> {
  const { hsTariffNumber, originCountry, customsDescription, customsValue, customsCurrency, ...line } = row
  if (hsTariffNumber === null && originCountry === null && customsDescription === null && customsValue === null) return line
  return {
    ...line,
    customs: {
      tariffNumber: hsTariffNumber,
      originCountry,
      description: customsDescription,
      value: customsValue !== null && customsCurrency !== null ? { amount: customsValue, currency: customsCurrency } : null,
    },
  }
}
