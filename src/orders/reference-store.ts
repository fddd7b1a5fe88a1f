// The reference order store: the OrderStore interface on the package's own order tables.
import { eq } from 'drizzle-orm'
import { orders, orderStatuses } from '../db/sqlite/schema.js'
import { writeTransaction, type ShipmentsDatabase } from '../db/sqlite/dialect.js'
import { createOrderExportQueries } from '../db/sqlite/order-export.js'
import type { OrderStore, OrderSummary, ShipNotificationResult } from './order-store.js'

export class UnknownOrderStatusError extends Error {
  constructor(readonly statusHandle: string) {
    super(`Order status "${statusHandle}" does not exist.`)
    this.name = 'UnknownOrderStatusError'
  }
}

/**
 * A custom field of the reference store's orders (its field layout). Values live in the order's
 * `fields` JSON column under the handle; a `matrix` field holds blocks of sub-field values (the
 * tracking entry of a shipping notification is one such block).
 */
export interface OrderFieldDefinition {
  handle: string
  type: 'text' | 'dropdown' | 'matrix'
  /** The choices of a dropdown (the store field of ShipStation's export). */
  options?: string[]
  /** The sub-field handles of a matrix field's blocks. */
  subFields?: string[]
}

export interface ReferenceOrderStoreOptions {
  /** The custom fields orders carry. Default none. */
  orderFields?: OrderFieldDefinition[]
}

export function createReferenceOrderStore(db: ShipmentsDatabase, options: ReferenceOrderStoreOptions = {}): OrderStore {
  const fieldsByHandle = new Map((options.orderFields ?? []).map((field) => [field.handle, field]))
  const exportOrders = createOrderExportQueries(db)
  const summaryColumns = {
    id: orders.id,
    reference: orders.reference,
    statusHandle: orders.statusHandle,
    isCompleted: orders.isCompleted,
  }
  const statusExists = (handle: string) =>
    db.select({ id: orderStatuses.id }).from(orderStatuses).where(eq(orderStatuses.handle, handle)).get() !== undefined

  return {
    async findOrder(orderId): Promise<OrderSummary | null> {
      return db.select(summaryColumns).from(orders).where(eq(orders.id, orderId)).get() ?? null
    },

    async findOrderByReference(reference): Promise<OrderSummary | null> {
      return db.select(summaryColumns).from(orders).where(eq(orders.reference, reference)).get() ?? null
    },

    async setOrderStatus(orderId, statusHandle) {
      if (!statusExists(statusHandle)) throw new UnknownOrderStatusError(statusHandle)
      db.update(orders).set({ statusHandle, dateUpdated: new Date() }).where(eq(orders.id, orderId)).run()
    },

    async exportOrders(query) {
      return exportOrders(query)
    },

    async recordShipNotification(orderId, change): Promise<ShipNotificationResult> {
      return writeTransaction(db, (tx) => {
        if (!statusExists(change.statusHandle)) throw new UnknownOrderStatusError(change.statusHandle)
        const order = tx.select({ statusHandle: orders.statusHandle, fields: orders.fields }).from(orders).where(eq(orders.id, orderId)).get()
        if (!order) throw new Error(`Order ${orderId} does not exist.`)

        let trackingSkipped: string | null = null
        let fields = order.fields
        if (change.tracking) {
          const field = fieldsByHandle.get(change.tracking.fieldHandle)
          if (field?.type !== 'matrix') {
            trackingSkipped = `the order field "${change.tracking.fieldHandle}" does not exist or is not a matrix field`
          } else {
            const subFields = new Set(field.subFields ?? [])
            const missing = Object.keys(change.tracking.values).filter((handle) => !subFields.has(handle))
            if (missing.length > 0) trackingSkipped = `the matrix field "${field.handle}" has no sub-field ${missing.map((handle) => `"${handle}"`).join(', ')}`
            const block = Object.fromEntries(Object.entries(change.tracking.values).filter(([handle]) => subFields.has(handle)))
            // One tracking entry per order: a later notification replaces the block, never appends one.
            if (Object.values(block).some((value) => value !== '')) fields = { ...fields, [field.handle]: [block] }
          }
        }

        const changed = order.statusHandle !== change.statusHandle || JSON.stringify(fields) !== JSON.stringify(order.fields)
        // An unchanged order is not saved, so a repeated notification leaves dateUpdated (and the export) alone.
        if (changed) tx.update(orders).set({ statusHandle: change.statusHandle, fields, dateUpdated: new Date() }).where(eq(orders.id, orderId)).run()
        return { changed, trackingSkipped }
      })
    },
  }
}
