// The reference order store on PostgreSQL: orders with their addresses and lines, the order statuses, and
// the ShipStation export's pages (order-export.ts).
import { inChunks } from '../../in-chunks.js'
import { and, eq, gt, inArray, ne, sql } from 'drizzle-orm'
import type { OrderLine } from '../../order-store.js'
import { withLineCustoms } from '../orders.js'
import type { OrdersStore } from '../data-layer.js'
import { sqlState } from './connection.js'
import { isInt4, isStorableText, type PostgresContext, type Transaction } from './context.js'
import { createPostgresOrderExport } from './order-export.js'
import { orderAddresses, orderLineItems, orders, orderStatuses } from './schema.js'

/** Order lines written per statement: far below either engine's limit on bound parameters. */
const LINE_ROWS_PER_INSERT = 500

/** SQLSTATE unique_violation. */
const UNIQUE_VIOLATION = '23505'

export function createPostgresOrdersStore(context: PostgresContext): OrdersStore {
  return { ...createOrderReads(context), ...createOrderWrites(context) }
}

/** Orders and their lines as read; the rest of the store is the writes and the statuses. */
type OrderReads = Pick<OrdersStore, 'findOrder' | 'findOrders' | 'orderLines' | 'listCompletedOrders' | 'findOrderByReference' | 'exportOrders'>

function createOrderReads({ db, localWrites }: PostgresContext): OrderReads {
  const summaryColumns = { id: orders.id, reference: orders.reference, statusHandle: orders.statusHandle, isCompleted: orders.isCompleted, email: orders.email }
  const findOrderSummary = async (orderId: number) => (await db.select(summaryColumns).from(orders).where(eq(orders.id, orderId)))[0]
  // What the admin order page shows beside the summary: one indexed lookup each (unique keys). Drizzle
  // writes a single-table query's columns unqualified, so the order's own are named with their table.
  const orderColumn = (column: typeof orders.id | typeof orders.statusHandle) => sql`${orders}.${sql.identifier(column.name)}`
  const displayColumns = {
    customerName: sql<string | null>`(select ${orderAddresses.fullName} from ${orderAddresses} where ${orderAddresses.orderId} = ${orderColumn(orders.id)} and ${orderAddresses.kind} = 'shipping')`,
    statusName: sql<string | null>`(select ${orderStatuses.name} from ${orderStatuses} where ${orderStatuses.handle} = ${orderColumn(orders.statusHandle)})`,
  }
  // What shipping rules may test of an order (OrderSummary.attributes): the shipping method the customer paid for.
  const attributeColumns = { shippingMethod: orders.shippingMethod }
  /** The lines of these orders, by order, each in id order; options are a line's attributes. */
  async function linesOf(orderIds: number[]): Promise<Map<number, OrderLine[]>> {
    const byOrder = new Map<number, OrderLine[]>()
    if (orderIds.length === 0) return byOrder
    const rows = await db
      .select({ orderId: orderLineItems.orderId, id: orderLineItems.id, sku: orderLineItems.sku, barcode: orderLineItems.barcode, name: orderLineItems.name, quantity: orderLineItems.quantity, shippable: orderLineItems.shippable, attributes: orderLineItems.options, hsTariffNumber: orderLineItems.hsTariffNumber, originCountry: orderLineItems.originCountry, customsDescription: orderLineItems.customsDescription, customsValue: orderLineItems.customsValue, customsCurrency: orderLineItems.customsCurrency })
      .from(orderLineItems)
      .where(inArray(orderLineItems.orderId, orderIds))
      .orderBy(orderLineItems.id)
    for (const { orderId, ...row } of rows) {
      const line = withLineCustoms(row)
      const lines = byOrder.get(orderId)
      if (lines) lines.push(line)
      else byOrder.set(orderId, [line])
    }
    return byOrder
  }
  const exportOrders = createPostgresOrderExport(db, localWrites)

  return {
    async findOrder(orderId) {
      if (!isInt4(orderId)) return undefined
      const [order] = await db.select({ ...summaryColumns, ...displayColumns, dateOrdered: orders.dateOrdered, customerNotes: orders.customerNotes, attributes: attributeColumns }).from(orders).where(eq(orders.id, orderId))
      return order
    },

    async findOrders(orderIds) {
      const ids = orderIds.filter(isInt4)
      if (ids.length === 0) return []
      return db.select({ ...summaryColumns, ...displayColumns, attributes: attributeColumns }).from(orders).where(inArray(orders.id, ids))
    },

    async orderLines(orderId) {
      if (!isInt4(orderId)) return undefined
      // The lines first: an order with lines exists (its lines go with it), so only an empty answer
      // needs the order's own row to tell "no lines" from "no order".
      const lines = (await linesOf([orderId])).get(orderId)
      if (lines) return lines
      return (await findOrderSummary(orderId)) ? [] : undefined
    },

    async listCompletedOrders({ afterId, limit }) {
      const rows = await db
        .select({ ...summaryColumns, dateOrdered: orders.dateOrdered, customer: orders.email })
        .from(orders)
        .where(and(eq(orders.isCompleted, true), gt(orders.id, Math.min(afterId, 2147483647))))
        .orderBy(orders.id)
        .limit(limit)
      const lines = await linesOf(rows.map((row) => row.id))
      return rows.map((row) => ({ ...row, lines: lines.get(row.id) ?? [] }))
    },

    async findOrderByReference(reference) {
      if (!isStorableText(reference)) return undefined
      const [order] = await db.select(summaryColumns).from(orders).where(eq(orders.reference, reference))
      return order
    },

    exportOrders,
  }
}

/** The writes, and the statuses: a write that sets a status checks it exists in its own transaction. */
function createOrderWrites({ db, wrote }: PostgresContext): Omit<OrdersStore, keyof OrderReads> {
  const statusExists = async (tx: Transaction, handle: string) =>
    (await tx.select({ id: orderStatuses.id }).from(orderStatuses).where(eq(orderStatuses.handle, handle))).length > 0

  return {
    async orderStatusExists(statusHandle) {
      return (await db.select({ id: orderStatuses.id }).from(orderStatuses).where(eq(orderStatuses.handle, statusHandle))).length > 0
    },

    async saveOrderStatus(status) {
      await db.transaction(async (tx) => {
        if (status.isDefault) await tx.update(orderStatuses).set({ isDefault: false })
        await tx.insert(orderStatuses).values(status).onConflictDoUpdate({ target: orderStatuses.handle, set: { name: status.name, isDefault: status.isDefault } })
      })
      wrote(null)
    },

    async listOrderStatuses() {
      return db.select({ handle: orderStatuses.handle, name: orderStatuses.name, isDefault: orderStatuses.isDefault }).from(orderStatuses).orderBy(orderStatuses.id)
    },

    async insertOrder(order, addresses, items) {
      const inserted = await db.transaction(async (tx) => {
        // Orders are numbered by the host; the unique keys on reference and number decide a race: a taken
        // one inserts nothing (ON CONFLICT DO NOTHING waits for a competing insert's commit, then skips),
        // so two instances creating the same order never see a unique violation.
        const [inserted] = await tx.insert(orders).values(order).onConflictDoNothing().returning({ id: orders.id })
        if (!inserted) return 'duplicate' as const
        const { id } = inserted
        if (addresses.length > 0) await tx.insert(orderAddresses).values(addresses.map((address) => ({ ...address, orderId: id })))
        // In pieces: one statement for thousands of lines would pass the protocol's 65,535 parameters.
        for (const piece of inChunks(items, LINE_ROWS_PER_INSERT)) await tx.insert(orderLineItems).values(piece.map((item) => ({ ...item, orderId: id })))
        return id
      })
      return wrote(inserted)
    },

    async updateOrder(orderId, columns) {
      if (!isInt4(orderId)) return false
      const result = await db.transaction(async (tx) => {
        const clash = async (column: typeof orders.reference | typeof orders.number, value: string | undefined) =>
          value !== undefined && (await tx.select({ id: orders.id }).from(orders).where(and(eq(column, value), ne(orders.id, orderId)))).length > 0
        if ((await clash(orders.reference, columns.reference)) || (await clash(orders.number, columns.number))) return 'duplicate' as const
        return (await tx.update(orders).set(columns).where(eq(orders.id, orderId)).returning({ id: orders.id })).length > 0
      }).catch((error: unknown) => {
        // Two orders given the same reference or number at once both pass the check (neither sees the
        // other's uncommitted row); the unique key decides, and the loser is the same refusal.
        if (sqlState(error) === UNIQUE_VIOLATION) return 'duplicate' as const
        throw error
      })
      return wrote(result)
    },

    async setOrderStatus(orderId, statusHandle) {
      const applied = await db.transaction(async (tx) => {
        if (!(await statusExists(tx, statusHandle))) return false
        await tx.update(orders).set({ statusHandle, dateUpdated: new Date() }).where(eq(orders.id, orderId))
        return true
      })
      // Counted after commit: a stamp read before it must not label a result that lacks the write.
      return wrote(applied)
    },

    async updateNotifiedOrder(orderId, statusHandle, plan) {
      const result = await db.transaction(async (tx) => {
        if (!(await statusExists(tx, statusHandle))) return 'no-status' as const
        const [order] = await tx.select({ statusHandle: orders.statusHandle, fields: orders.fields }).from(orders).where(eq(orders.id, orderId)).for('update')
        if (!order) return 'no-order' as const
        const outcome = plan(order)
        const changed = order.statusHandle !== statusHandle || JSON.stringify(outcome.fields) !== JSON.stringify(order.fields)
        if (changed) await tx.update(orders).set({ statusHandle, fields: outcome.fields, dateUpdated: new Date() }).where(eq(orders.id, orderId))
        return { outcome, changed }
      })
      return wrote(result)
    },
  }
}
