// The overview's bounded queries and the attention list on PostgreSQL: counts from the kept counts the
// trigger maintains, late shipments off their partial index, failing pushes, and the attention rows.
import { and, count, desc, eq, gt, gte, isNotNull, isNull, lt, sql } from 'drizzle-orm'
import { allocatedByLine, type AttentionStore, type OverviewQueries } from '../data-layer.js'
import { isInt4, type PostgresContext } from './context.js'
import { attentionOrders, integrations, shipmentExternalReferences, shipments, shippedCounts, statusCounts } from './schema.js'
import { activeShipmentsOf, keepAttentionRow, lockOrder } from './shipments.js'

export function createPostgresOverviewQueries({ db }: PostgresContext): OverviewQueries {
  // Written as the partial index's own condition (constants, not parameters), so every plan can use it.
  const lateWhere = (now: Date) =>
    and(sql`enabled AND date_deleted IS NULL AND status NOT IN ('shipped', 'cancelled') AND date_scheduled_ship IS NOT NULL`, lt(shipments.dateScheduledShip, now))
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
      const rows = await db.select({ status: statusCounts.status, total: sql<string>`sum(${statusCounts.count})` }).from(statusCounts).groupBy(statusCounts.status)
      return Object.fromEntries(rows.map((row) => [row.status, Number(row.total)]).filter(([, total]) => (total as number) > 0))
    },

    async countShippedByQuarterHour(from, to) {
      // From the kept counts: at most one row per quarter hour and slot of the window, at any volume.
      const rows = await db
        .select({ quarterHour: shippedCounts.quarterHour, count: sql<string>`sum(${shippedCounts.count})` })
        .from(shippedCounts)
        .where(and(gte(shippedCounts.quarterHour, Math.floor(from.getTime() / 900_000)), lt(shippedCounts.quarterHour, Math.ceil(to.getTime() / 900_000))))
        .groupBy(shippedCounts.quarterHour)
        .orderBy(shippedCounts.quarterHour)
      return rows.map((row) => ({ quarterHour: row.quarterHour, count: Number(row.count) })).filter((row) => row.count > 0)
    },

    async lateShipments(now, limit) {
      const where = lateWhere(now)
      const [[{ total }], rows] = await Promise.all([
        db.select({ total: count() }).from(shipments).where(where),
        db.select().from(shipments).where(where).orderBy(shipments.dateScheduledShip, shipments.id).limit(limit),
      ])
      return { rows, total }
    },

    async failingPushes(limit) {
      const [[{ total }], rows] = await Promise.all([
        db
          .select({ total: count() })
          .from(shipmentExternalReferences)
          .innerJoin(shipments, eq(shipments.id, shipmentExternalReferences.shipmentId))
          .where(failingPushWhere),
        db
          .select(failingPushColumns)
          .from(shipmentExternalReferences)
          .innerJoin(shipments, eq(shipments.id, shipmentExternalReferences.shipmentId))
          .innerJoin(integrations, eq(integrations.id, shipmentExternalReferences.integrationId))
          .where(failingPushWhere)
          .orderBy(sql`${shipmentExternalReferences.lastPushAt} desc nulls last`, desc(shipments.id))
          .limit(limit),
      ])
      return { rows, total }
    },
  }
}

export function createPostgresAttentionStore({ db }: PostgresContext): AttentionStore {
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
      if (!isInt4(orderId)) return null
      return db.transaction(async (tx) => {
        // The lock every creation and allocation of the order takes: refreshes never cross a change, or each other.
        await lockOrder(tx, orderId)
        const row = decide(allocatedByLine(await activeShipmentsOf(tx, orderId, null)))
        await keepAttentionRow(tx, orderId, row, new Date())
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
    },

    async countAttentionRows() {
      const [{ total }] = await db.select({ total: count() }).from(attentionOrders)
      return total
    },
  }
}
