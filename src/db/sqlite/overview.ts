// The overview's bounded queries and the attention list on SQLite: counts from the kept counts the
// triggers maintain, late shipments off their partial index, failing pushes, and the attention rows.
import { and, count, desc, eq, gt, gte, isNotNull, isNull, lt, sql } from 'drizzle-orm'
import type { AttentionStore, OverviewQueries } from '../data-layer.js'
import type { SqliteContext } from './context.js'
import { writeTransaction } from './dialect.js'
import { attentionOrders, integrations, shipmentExternalReferences, shipments, shippedCounts, statusCounts } from './schema.js'
import { keepAttentionRow, type createSqliteAllocationReader } from './shipments.js'

export function createSqliteOverviewQueries({ db }: SqliteContext): OverviewQueries {
  // Written as the partial index's own condition (constants, not parameters), so SQLite reads that index.
  const lateWhere = (now: Date) =>
    and(sql`enabled = 1 AND date_deleted IS NULL AND status NOT IN ('shipped', 'cancelled') AND date_scheduled_ship IS NOT NULL`, lt(shipments.dateScheduledShip, now))
  const failingPushWhere = and(isNotNull(shipmentExternalReferences.lastPushError), isNull(shipments.dateDeleted))
  const failingPushColumns = {
    shipmentId: shipments.id,
    shipmentReference: shipments.reference,
    integrationHandle: integrations.handle,
    lastPushAt: shipmentExternalReferences.lastPushAt,
    // Never null here: the filter keeps failed pushes only.
    lastPushError: sql<string>`${shipmentExternalReferences.lastPushError}`,
    pushAttempts: shipmentExternalReferences.pushAttempts,
  }

  return {
    async countShipmentsByStatus() {
      const rows = db.select({ status: statusCounts.status, total: sql<number>`sum(${statusCounts.count})` }).from(statusCounts).groupBy(statusCounts.status).all()
      return Object.fromEntries(rows.filter((row) => row.total > 0).map((row) => [row.status, row.total]))
    },

    async countShippedByQuarterHour(from, to) {
      // From the kept counts: at most one row per quarter hour and slot of the window, at any volume.
      return db
        .select({ quarterHour: shippedCounts.quarterHour, count: sql<number>`sum(${shippedCounts.count})` })
        .from(shippedCounts)
        .where(and(gte(shippedCounts.quarterHour, Math.floor(from.getTime() / 900_000)), lt(shippedCounts.quarterHour, Math.ceil(to.getTime() / 900_000))))
        .groupBy(shippedCounts.quarterHour)
        .orderBy(shippedCounts.quarterHour)
        .all()
        .filter((row) => row.count > 0)
    },

    async lateShipments(now, limit) {
      const where = lateWhere(now)
      const { total } = db.select({ total: count() }).from(shipments).where(where).get()!
      const rows = db.select().from(shipments).where(where).orderBy(shipments.dateScheduledShip, shipments.id).limit(limit).all()
      return { rows, total }
    },

    async failingPushes(limit) {
      const { total } = db
        .select({ total: count() })
        .from(shipmentExternalReferences)
        .innerJoin(shipments, eq(shipments.id, shipmentExternalReferences.shipmentId))
        .where(failingPushWhere)
        .get()!
      const rows = db
        .select(failingPushColumns)
        .from(shipmentExternalReferences)
        .innerJoin(shipments, eq(shipments.id, shipmentExternalReferences.shipmentId))
        .innerJoin(integrations, eq(integrations.id, shipmentExternalReferences.integrationId))
        .where(failingPushWhere)
        .orderBy(desc(shipmentExternalReferences.lastPushAt), desc(shipments.id))
        .limit(limit)
        .all()
      return { rows, total }
    },
  }
}

export function createSqliteAttentionStore({ db }: SqliteContext, allocatedInOrder: ReturnType<typeof createSqliteAllocationReader>): AttentionStore {
  const attentionColumns = {
    orderId: attentionOrders.orderId,
    reference: attentionOrders.reference,
    statusHandle: attentionOrders.statusHandle,
    dateOrdered: attentionOrders.dateOrdered,
    customer: attentionOrders.customer,
    linesMissing: attentionOrders.linesMissing,
    unitsMissing: attentionOrders.unitsMissing,
  }

  return {
    async refreshAttention(orderId, decide) {
      return writeTransaction(db, () => {
        const row = decide(allocatedInOrder(orderId))
        keepAttentionRow(db, orderId, row, new Date())
        return row
      })
    },

    async attentionRows({ afterOrderId, offset, limit }) {
      return db
        .select(attentionColumns)
        .from(attentionOrders)
        .where(afterOrderId !== undefined ? gt(attentionOrders.orderId, afterOrderId) : undefined)
        .orderBy(attentionOrders.orderId)
        .limit(limit)
        .offset(offset ?? 0)
        .all()
    },

    async countAttentionRows() {
      return db.select({ total: count() }).from(attentionOrders).get()!.total
    },
  }
}
