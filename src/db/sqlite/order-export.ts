// SQLite queries of the reference order store's export: page boundaries, one page of orders with
// their addresses, and their line items. Three prepared statements per query shape, whatever the page size.
import type { Statement } from 'better-sqlite3'
import { createChangeStamp, type ShipmentsDatabase } from './dialect.js'
import type { ExportAddress, ExportLineItem, ExportOrder, ExportOrdersPage, ExportOrdersQuery } from '../../orders/order-store.js'

const ADDRESS_COLUMNS = ['full_name', 'company', 'address1', 'address2', 'city', 'state', 'postal_code', 'country_code', 'phone', 'email'] as const

const blank = (column: string) => `coalesce(trim(${column}), '') = ''`
const twoLetters = (column: string) => `coalesce(trim(${column}) GLOB '[A-Za-z][A-Za-z]', 0)`

/**
 * The first reason an order cannot be exported to ShipStation, or NULL. One SQL expression serves both
 * as the filter (so invalid orders never make a page short) and as the reason reported.
 */
const PROBLEM = `CASE
  WHEN s.id IS NULL THEN 'no shipping address'
  WHEN ${blank('s.full_name')} THEN 'the shipping address has no name'
  WHEN ${blank('s.address1')} THEN 'the shipping address has no street'
  WHEN ${blank('s.city')} THEN 'the shipping address has no city'
  WHEN ${blank('s.postal_code')} THEN 'the shipping address has no postal code'
  WHEN NOT ${twoLetters('s.country_code')} THEN 'the shipping country is not a 2-letter code'
  WHEN b.id IS NOT NULL AND ${blank('b.full_name')} THEN 'the billing address has no name'
  WHEN b.id IS NOT NULL AND nullif(trim(b.country_code), '') IS NOT NULL AND NOT ${twoLetters('b.country_code')} THEN 'the billing country is not a 2-letter code'
  WHEN NOT EXISTS (SELECT 1 FROM shipments_order_line_items i WHERE i.order_id = o.id) THEN 'no line items'
  WHEN EXISTS (SELECT 1 FROM shipments_order_line_items i WHERE i.order_id = o.id AND trim(i.name) = '') THEN 'a line item has no name'
END`

const FROM = `shipments_orders o
  LEFT JOIN shipments_order_addresses s ON s.order_id = o.id AND s.kind = 'shipping'
  LEFT JOIN shipments_order_addresses b ON b.order_id = o.id AND b.kind = 'billing'`

const ORDER_COLUMNS = [
  'id', 'reference', 'status_handle', 'total_price', 'total_tax', 'total_shipping', 'total_discount', 'coupon_code',
  'payment_method', 'shipping_method', 'customer_id', 'email', 'internal_notes', 'customer_notes', 'is_gift',
  'gift_message', 'custom_field_1', 'custom_field_2', 'custom_field_3', 'date_ordered', 'date_updated',
]
  .map((column) => `o.${column}`)
  .join(', ')

const addressSelect = (alias: 's' | 'b') =>
  [`${alias}.id AS ${alias}_id`, ...ADDRESS_COLUMNS.map((column) => `${alias}.${column} AS ${alias}_${column}`)].join(', ')

interface Statements {
  /** Every pageSize-th key (dateUpdated, id) of the matching orders, with their total. */
  boundaries: Statement
  /** Rows as arrays (cheaper than objects for hundreds of rows), read by `column`. */
  page: Statement
  column: Record<string, number>
}

interface Boundaries {
  total: number
  /** The first (dateUpdated, id) of each page. */
  starts: Array<[number, number]>
}

type Row = unknown[]
type ItemRow = [orderId: number, sku: string | null, name: string, weight: number | null, weightUnit: string | null, quantity: number, price: string, imageUrl: string | null, options: string]

const MAX_CACHED_QUERIES = 32

export function createOrderExportQueries(db: ShipmentsDatabase) {
  const client = db.$client
  const statements = new Map<string, Statements>()
  // Items of a page in one statement, whatever the page size: the ids travel as one JSON array.
  const items = client
    .prepare(
      `SELECT order_id, sku, name, weight, weight_unit, quantity, price, image_url, options
         FROM shipments_order_line_items
        WHERE order_id IN (SELECT value FROM json_each(?))
        ORDER BY order_id, id`,
    )
    .raw()
  // Cached boundaries are reused only while nothing at all has been written to the database.
  const changeStamp = createChangeStamp(db)
  const boundaryCache = new Map<string, { stamp: string; boundaries: Boundaries }>()

  function statementsFor(query: ExportOrdersQuery): Statements {
    const key = `${query.window ? 'w' : ''}${query.store ? 's' : ''}${query.includeInvalid ? 'i' : ''}`
    let prepared = statements.get(key)
    if (prepared) return prepared
    const conditions = ['o.is_completed = 1']
    if (query.window) conditions.push('o.date_updated < @before')
    if (query.store) conditions.push('json_extract(o.fields, @storePath) = @store')
    if (!query.includeInvalid) conditions.push(`(${PROBLEM}) IS NULL`)
    const where = conditions.join(' AND ')
    // A page starts at its boundary key, which already lies inside the window: repeating the lower
    // bound there would make SQLite seek to the window's start instead of the page's.
    const boundaryWhere = query.window ? `${where} AND o.date_updated >= @after` : where
    const page = client
      .prepare(
        // Without invalid orders the filter has already made every problem NULL: not computed twice.
        `SELECT ${ORDER_COLUMNS}, ${addressSelect('s')}, ${addressSelect('b')}, ${query.includeInvalid ? PROBLEM : 'NULL'} AS problem
           FROM ${FROM}
          WHERE ${where} AND (o.date_updated, o.id) >= (@startUpdated, @startId)
          ORDER BY o.date_updated, o.id
          LIMIT @pageSize`,
      )
      .raw()
    prepared = {
      column: Object.fromEntries(page.columns().map((column, index) => [column.name, index])),
      page,
      boundaries: client.prepare(
        `SELECT date_updated, id, total FROM (
           SELECT o.date_updated, o.id, row_number() OVER (ORDER BY o.date_updated, o.id) AS position, count(*) OVER () AS total
             FROM ${FROM} WHERE ${boundaryWhere}
         ) WHERE (position - 1) % @pageSize = 0`,
      ),
    }
    statements.set(key, prepared)
    return prepared
  }

  function parameters(query: ExportOrdersQuery) {
    return {
      pageSize: query.pageSize,
      ...(query.window && { before: query.window.before }),
      ...(query.store && { storePath: '$.' + JSON.stringify(query.store.fieldHandle), store: query.store.value }),
    }
  }

  function boundariesFor(query: ExportOrdersQuery, prepared: Statements): Boundaries {
    const stamp = changeStamp()
    const key = JSON.stringify([query.window, query.store, query.includeInvalid, query.pageSize])
    const cached = boundaryCache.get(key)
    if (cached && cached.stamp === stamp) return cached.boundaries
    // The window is exclusive and compared at whole seconds: after 12:00:00 means from 12:00:01.
    const after = query.window ? { after: query.window.after + 1000 } : {}
    const rows = prepared.boundaries.all({ ...parameters(query), ...after }) as Array<{ date_updated: number; id: number; total: number }>
    const boundaries: Boundaries = { total: rows[0]?.total ?? 0, starts: rows.map((row) => [row.date_updated, row.id]) }
    // Inside a host's open transaction the rows may yet be rolled back, which changes no stamp.
    if (client.inTransaction) return boundaries
    boundaryCache.delete(key)
    if (boundaryCache.size >= MAX_CACHED_QUERIES) boundaryCache.delete(boundaryCache.keys().next().value!)
    boundaryCache.set(key, { stamp, boundaries })
    return boundaries
  }

  return function exportOrders(query: ExportOrdersQuery): ExportOrdersPage {
    const prepared = statementsFor(query)
    const { total, starts } = boundariesFor(query, prepared)
    const start = starts[query.page - 1]
    if (!start) return { orders: [], total }
    const rows = prepared.page.all({ ...parameters(query), startUpdated: start[0], startId: start[1] }) as Row[]
    const { column } = prepared
    const itemsByOrder = new Map<number, ExportLineItem[]>()
    for (const [orderId, sku, name, weight, weightUnit, quantity, unitPrice, imageUrl, options] of items.all(
      JSON.stringify(rows.map((row) => row[column.id])),
    ) as ItemRow[]) {
      let list = itemsByOrder.get(orderId)
      if (!list) itemsByOrder.set(orderId, (list = []))
      list.push({ sku, name, weight, weightUnit, quantity, unitPrice, imageUrl, options: JSON.parse(options) as Record<string, string> })
    }
    return { orders: rows.map((row) => toExportOrder(row, column, itemsByOrder.get(row[column.id] as number) ?? [])), total }
  }
}

function toAddress(row: Row, column: Record<string, number>, alias: 's' | 'b'): ExportAddress | null {
  if (row[column[`${alias}_id`]] == null) return null
  const value = (name: (typeof ADDRESS_COLUMNS)[number]) => (row[column[`${alias}_${name}`]] as string | null) ?? null
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

function toExportOrder(row: Row, column: Record<string, number>, items: ExportLineItem[]): ExportOrder {
  const value = (name: string) => row[column[name]]
  const text = (name: string) => (value(name) as string | null) ?? null
  const customerId = value('customer_id') as number | null
  const dateOrdered = value('date_ordered') as number | null
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
    isGift: value('is_gift') === 1,
    giftMessage: text('gift_message'),
    customFields: [text('custom_field_1'), text('custom_field_2'), text('custom_field_3')],
    dateOrdered: dateOrdered == null ? null : new Date(dateOrdered),
    dateUpdated: new Date(value('date_updated') as number),
    billingAddress: toAddress(row, column, 'b'),
    shippingAddress: toAddress(row, column, 's'),
    items,
    problems: problem ? [problem] : [],
  }
}
