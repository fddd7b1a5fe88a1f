// The reference order store: the OrderStore interface on the package's own order tables.
import { eq } from 'drizzle-orm'
import { orders, orderStatuses } from '../db/sqlite/schema.js'
import type { ShipmentsDatabase } from '../db/sqlite/dialect.js'
import type { OrderStore, OrderSummary } from './order-store.js'

export class UnknownOrderStatusError extends Error {
  constructor(readonly statusHandle: string) {
    super(`Order status "${statusHandle}" does not exist.`)
    this.name = 'UnknownOrderStatusError'
  }
}

export function createReferenceOrderStore(db: ShipmentsDatabase): OrderStore {
  const summaryColumns = {
    id: orders.id,
    reference: orders.reference,
    statusHandle: orders.statusHandle,
    isCompleted: orders.isCompleted,
  }

  return {
    async findOrder(orderId): Promise<OrderSummary | null> {
      return db.select(summaryColumns).from(orders).where(eq(orders.id, orderId)).get() ?? null
    },

    async findOrderByReference(reference): Promise<OrderSummary | null> {
      return db.select(summaryColumns).from(orders).where(eq(orders.reference, reference)).get() ?? null
    },

    async setOrderStatus(orderId, statusHandle) {
      const status = db.select({ id: orderStatuses.id }).from(orderStatuses).where(eq(orderStatuses.handle, statusHandle)).get()
      if (!status) throw new UnknownOrderStatusError(statusHandle)
      db.update(orders).set({ statusHandle, dateUpdated: new Date() }).where(eq(orders.id, orderId)).run()
    },
  }
}
