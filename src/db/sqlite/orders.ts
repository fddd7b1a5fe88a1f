// The reference order store on SQLite: orders with their addresses and lines, the order statuses, and the
// ShipStation export's pages (order-export.ts).
import { inChunks } from '../../in-chunks.js'
import { and, eq, gt, inArray, ne, sql } from 'drizzle-orm'
import type { OrderLine } from '../../order-store.js'
import { withLineCustoms } from '../orders.js'
import type { OrdersStore } from '../data-layer.js'
import type { SqliteContext } from './context.js'
import { writeTransaction, type SqliteDatabase } from './dialect.js'
import { createOrderExportQueries } from './order-export.js'
import { orderAddresses, orderLineItems, orders, orderStatuses } from './schema.js'

/** Order lines written per statement: far below either engine's limit on bound parameters. */
const LINE_ROWS_PER_INSERT = 500

export function createSqliteOrdersStore({ db }: SqliteContext): OrdersStore {
  return { ...createOrderReads(db), ...createOrderWrites(db) }
}

/** Orders and their lines as read; the rest of the store is the writes and the statuses. */
type OrderReads = Pick<OrdersStore, 'findOrder' | 'findOrders' | 'orderLines' | 'listCompletedOrders' | 'findOrderByReference' | 'exportOrders'>

function createOrderReads(db: SqliteDatabase): OrderReads {
  const summaryColumns = { id: orders.id, reference: orders.reference, statusHandle: orders.statusHandle, isCompleted: orders.isCompleted, email: orders.email }
  // What the admin order page shows beside the summary: one indexed lookup each (unique keys). Drizzle
  // writes a single-table query's columns unqualified, so the order's own are named with their table.
  const orderColumn = (column: typeof orders.id | typeof orders.statusHandle) => sql`${orders}.${sql.identifier(column.name)}`
  const displayColumns = {
    customerName: sql<string | null>`(select ${orderAddresses.fullName} from ${orderAddresses} where ${orderAddresses.orderId} = ${orderColumn(orders.id)} and ${orderAddresses.kind} = 'shipping')`,
    statusName: sql<string | null>`(select ${orderStatuses.name} from ${orderStatuses} where ${orderStatuses.handle} = ${orderColumn(orders.statusHandle)})`,
  }
  // What shipping rules may test of an order (OrderSummary.attributes): the shipping method the customer paid for.
  const attributeColumns = { shippingMethod: orders.shippingMethod }
  // An order read by id (a label's addresses, a mail, an event that moves the order): prepared once.
  const selectOrder = db
    .select({ ...summaryColumns, ...displayColumns, dateOrdered: orders.dateOrdered, customerNotes: orders.customerNotes, attributes: attributeColumns })
    .from(orders)
    .where(eq(orders.id, sql.placeholder('orderId')))
    .prepare()
  /** The lines of these orders, by order, each in id order; options are a line's attributes. */
  const lineColumns = { orderId: orderLineItems.orderId, id: orderLineItems.id, sku: orderLineItems.sku, barcode: orderLineItems.barcode, name: orderLineItems.name, quantity: orderLineItems.quantity, shippable: orderLineItems.shippable, attributes: orderLineItems.options, hsTariffNumber: orderLineItems.hsTariffNumber, originCountry: orderLineItems.originCountry, customsDescription: orderLineItems.customsDescription, customsValue: orderLineItems.customsValue, customsCurrency: orderLineItems.customsCurrency }
  // One order's lines are read on every change that ships (the allocation check): prepared once.
  const selectOrderId = db.select({ id: orders.id }).from(orders).where(eq(orders.id, sql.placeholder('orderId'))).prepare()
  const selectLinesOfOrder = db.select(lineColumns).from(orderLineItems).where(eq(orderLineItems.orderId, sql.placeholder('orderId'))).orderBy(orderLineItems.id).prepare()
  // A page of completed orders: an attention refresh (an outbox job after every change of an order's
  // allocation) reads the page of one, so it is prepared once.
  const selectCompletedOrders = db
    .select({ ...summaryColumns, dateOrdered: orders.dateOrdered, customer: orders.email })
    .from(orders)
    .where(and(eq(orders.isCompleted, true), gt(orders.id, sql.placeholder('afterId'))))
    .orderBy(orders.id)
    .limit(sql.placeholder('limit'))
    .prepare()
  function linesOf(orderIds: number[]): Map<number, OrderLine[]> {
    const byOrder = new Map<number, OrderLine[]>()
    if (orderIds.length === 0) return byOrder
    const rows =
      orderIds.length === 1
        ? selectLinesOfOrder.all({ orderId: orderIds[0] })
        : db.select(lineColumns).from(orderLineItems).where(inArray(orderLineItems.orderId, orderIds)).orderBy(orderLineItems.id).all()
    for (const { orderId, ...row } of rows) {
      const line = withLineCustoms(row)
      const lines = byOrder.get(orderId)
      if (lines) lines.push(line)
      else byOrder.set(orderId, [line])
    }
    return byOrder
  }
  const exportOrders = createOrderExportQueries(db)

  return {
    async findOrder(orderId) {
      return selectOrder.get({ orderId })
    },

    async findOrders(orderIds) {
      if (orderIds.length === 0) return []
      return db.select({ ...summaryColumns, ...displayColumns, attributes: attributeColumns }).from(orders).where(inArray(orders.id, [...orderIds])).all()
    },

    async orderLines(orderId) {
      if (!selectOrderId.get({ orderId })) return undefined
      return linesOf([orderId]).get(orderId) ?? []
    },

    async listCompletedOrders({ afterId, limit }) {
      const rows = selectCompletedOrders.all({ afterId, limit })
      const lines = linesOf(rows.map((row) => row.id))
      return rows.map((row) => ({ ...row, lines: lines.get(row.id) ?? [] }))
    },

    async findOrderByReference(reference) {
      return db.select(summaryColumns).from(orders).where(eq(orders.reference, reference)).get()
    },

    async exportOrders(query) {
      return exportOrders(query)
    },
  }
}

/** The writes, and the statuses: a write that sets a status checks it exists in its own transaction. */
function createOrderWrites(db: SqliteDatabase): Omit<OrdersStore, keyof OrderReads> {
  const selectStatusId = db.select({ id: orderStatuses.id }).from(orderStatuses).where(eq(orderStatuses.handle, sql.placeholder('handle'))).prepare()
  const statusExists = (handle: string) => selectStatusId.get({ handle }) !== undefined

  return {
    async orderStatusExists(statusHandle) {
      return statusExists(statusHandle)
    },

    async saveOrderStatus(status) {
      writeTransaction(db, () => {
        if (status.isDefault) db.update(orderStatuses).set({ isDefault: false }).run()
        db.insert(orderStatuses).values(status).onConflictDoUpdate({ target: orderStatuses.handle, set: { name: status.name, isDefault: status.isDefault } }).run()
      })
    },

    async listOrderStatuses() {
      return db.select({ handle: orderStatuses.handle, name: orderStatuses.name, isDefault: orderStatuses.isDefault }).from(orderStatuses).orderBy(orderStatuses.id).all()
    },

    async insertOrder(order, addresses, items) {
      return writeTransaction(db, () => {
        // The unique keys on reference and number decide: a taken one inserts nothing (no error, no read first).
        const inserted = db.insert(orders).values(order).onConflictDoNothing().returning({ id: orders.id }).get()
        if (!inserted) return 'duplicate' as const
        const { id } = inserted
        if (addresses.length > 0) db.insert(orderAddresses).values(addresses.map((address) => ({ ...address, orderId: id }))).run()
        // In pieces: one statement for thousands of lines would pass SQLite's limit on bound parameters.
        for (const piece of inChunks(items, LINE_ROWS_PER_INSERT)) db.insert(orderLineItems).values(piece.map((item) => ({ ...item, orderId: id }))).run()
        return id
      })
    },

    async updateOrder(orderId, columns) {
      return writeTransaction(db, () => {
        const clash = (column: typeof orders.reference | typeof orders.number, value: string | undefined) =>
          value !== undefined && db.select({ id: orders.id }).from(orders).where(and(eq(column, value), ne(orders.id, orderId))).get() !== undefined
        if (clash(orders.reference, columns.reference) || clash(orders.number, columns.number)) return 'duplicate' as const
        return db.update(orders).set(columns).where(eq(orders.id, orderId)).run().changes > 0
      })
    },

    async setOrderStatus(orderId, statusHandle) {
      return writeTransaction(db, () => {
        if (!statusExists(statusHandle)) return false
        db.update(orders).set({ statusHandle, dateUpdated: new Date() }).where(eq(orders.id, orderId)).run()
        return true
      })
    },

    async updateNotifiedOrder(orderId, statusHandle, plan) {
      return writeTransaction(db, () => {
        if (!statusExists(statusHandle)) return 'no-status' as const
        const order = db.select({ statusHandle: orders.statusHandle, fields: orders.fields }).from(orders).where(eq(orders.id, orderId)).get()
        if (!order) return 'no-order' as const
        const outcome = plan(order)
        const changed = order.statusHandle !== statusHandle || JSON.stringify(outcome.fields) !== JSON.stringify(order.fields)
        if (changed) db.update(orders).set({ statusHandle, fields: outcome.fields, dateUpdated: new Date() }).where(eq(orders.id, orderId)).run()
        return { outcome, changed }
      })
    },
  }
}
