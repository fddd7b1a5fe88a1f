// The parts of the reference store's export query that both engines share: the filter, the joins, the
// columns, and the mapping of result rows (arrays) to ExportOrder. Whether an order can be exported is
// judged by the database (shipments_orders.export_problem, kept by triggers; see the migrations), so
// the export filters, counts and pages on an index of the exportable orders.
import type { ExportAddress, ExportLineItem, ExportOrder } from '../order-store.js'

const ADDRESS_COLUMNS = ['full_name', 'company', 'address1', 'address2', 'city', 'state', 'postal_code', 'country_code', 'phone', 'email'] as const

/** The first reason an order cannot be exported, or NULL: the column the database's triggers keep. */
export const PROBLEM_COLUMN = 'o.export_problem'

export const EXPORT_FROM = `shipments_orders o
  LEFT JOIN shipments_order_addresses s ON s.order_id = o.id AND s.kind = 'shipping'
  LEFT JOIN shipments_order_addresses b ON b.order_id = o.id AND b.kind = 'billing'`

const ORDER_COLUMNS = [
  'id', 'reference', 'status_handle', 'total_price', 'total_tax', 'total_shipping', 'total_discount', 'coupon_code',
  'payment_method', 'shipping_method', 'customer_id', 'email', 'internal_notes', 'customer_notes', 'is_gift',
  'gift_message', 'custom_field_1', 'custom_field_2', 'custom_field_3', 'date_ordered', 'date_updated',
]

const addressColumns = (alias: 's' | 'b') => [`${alias}_id`, ...ADDRESS_COLUMNS.map((column) => `${alias}_${column}`)]
const addressSelect = (alias: 's' | 'b') =>
  [`${alias}.id AS ${alias}_id`, ...ADDRESS_COLUMNS.map((column) => `${alias}.${column} AS ${alias}_${column}`)].join(', ')

/** The select list of a page: order columns, both addresses, then the problem (or NULL). */
export const PAGE_SELECT = `${ORDER_COLUMNS.map((column) => `o.${column}`).join(', ')}, ${addressSelect('s')}, ${addressSelect('b')}, ${PROBLEM_COLUMN} AS problem`

/** Position of each column of `pageSelect` in a row read as an array. */
export const PAGE_COLUMN: Record<string, number> = Object.fromEntries(
  [...ORDER_COLUMNS, ...addressColumns('s'), ...addressColumns('b'), 'problem'].map((name, index) => [name, index]),
)

export const ITEM_COLUMNS = 'order_id, sku, name, weight, weight_unit, quantity, price, image_url, options, id'
type ItemRow = [orderId: number, sku: string | null, name: string, weight: number | null, weightUnit: string | null, quantity: number, price: string, imageUrl: string | null, options: string | Record<string, string>, id: number]

type Row = unknown[]

/** Page rows and item rows (both arrays, in ITEM_COLUMNS order) to ExportOrders. */
export function toExportOrders(rows: Row[], itemRows: Row[]): ExportOrder[] {
  const itemsByOrder = new Map<number, ExportLineItem[]>()
  for (const [orderId, sku, name, weight, weightUnit, quantity, unitPrice, imageUrl, options, id] of itemRows as ItemRow[]) {
    let list = itemsByOrder.get(orderId)
    if (!list) itemsByOrder.set(orderId, (list = []))
    const optionValues = typeof options === 'string' ? (JSON.parse(options) as Record<string, string>) : options
    list.push({ id, sku, name, weight, weightUnit, quantity, unitPrice, imageUrl, options: optionValues })
  }
  return rows.map((row) => toExportOrder(row, itemsByOrder.get(row[PAGE_COLUMN.id] as number) ?? []))
}

function toAddress(row: Row, alias: 's' | 'b'): ExportAddress | null {
  if (row[PAGE_COLUMN[`${alias}_id`]] == null) return null
  const value = (name: (typeof ADDRESS_COLUMNS)[number]) => (row[PAGE_COLUMN[`${alias}_${name}`]] as string | null) ?? null
  return {
    name: value('full_name'),
    company: value('company'),
    address1: value('address1'),
    address2: value('address2'),
    city: value('city'),
    state: value('state'),
    postalCode: value('postal_code'),
    country: value('country_code'),
    phone: value('phone'),
    email: value('email'),
  }
}

/** Dates arrive as epoch milliseconds (SQLite) or Date (PostgreSQL); booleans as 1 or true. */
function toExportOrder(row: Row, items: ExportLineItem[]): ExportOrder {
  const value = (name: string) => row[PAGE_COLUMN[name]]
  const text = (name: string) => (value(name) as string | null) ?? null
  const customerId = value('customer_id') as number | null
  const dateOrdered = value('date_ordered') as number | Date | null
  const problem = text('problem')
  return {
    id: value('id') as number,
    reference: value('reference') as string,
    statusHandle: text('status_handle'),
    total: value('total_price') as string,
    tax: value('total_tax') as string,
    shipping: value('total_shipping') as string,
    discount: value('total_discount') as string,
    couponCode: text('coupon_code'),
    paymentMethod: text('payment_method'),
    shippingMethod: text('shipping_method'),
    customerCode: customerId != null ? String(customerId) : text('email'),
    email: text('email'),
    internalNotes: text('internal_notes'),
    customerNotes: text('customer_notes'),
    isGift: value('is_gift') === 1 || value('is_gift') === true,
    giftMessage: text('gift_message'),
    customFields: [text('custom_field_1'), text('custom_field_2'), text('custom_field_3')],
    dateOrdered: dateOrdered == null ? null : new Date(dateOrdered),
    dateUpdated: new Date(value('date_updated') as number | Date),
    billingAddress: toAddress(row, 'b'),
    shippingAddress: toAddress(row, 's'),
    items,
    problems: problem ? [problem] : [],
  }
}
