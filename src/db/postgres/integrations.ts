// The gateway's integrations on PostgreSQL: their rows, the dedupe ledger of their webhook deliveries, and
// the shipments' external references at them.
import { desc, eq, sql } from 'drizzle-orm'
import type { DeliveryOutcome, IntegrationsStore } from '../data-layer.js'
import type { PostgresDatabase } from './connection.js'
import { isInt4, isStorableText, type PostgresContext, type Transaction } from './context.js'
import { integrations, shipmentExternalReferences, webhookDeliveries } from './schema.js'

/** Records a delivery in the dedupe ledger; false when it was recorded before. */
export async function recordDelivery(executor: Transaction | PostgresDatabase, delivery: { integrationId: number; deliveryId: string }, outcome: DeliveryOutcome | null, now: Date) {
  if (!isInt4(delivery.integrationId) || !isStorableText(delivery.deliveryId)) return false
  const recorded = await executor
    .insert(webhookDeliveries)
    .values({ ...delivery, ...(outcome && { outcome: { ...outcome } }), createdAt: now })
    .onConflictDoNothing()
    .returning({ deliveryId: webhookDeliveries.deliveryId })
  return recorded.length > 0
}

export function createPostgresIntegrationsStore({ db, wrote }: PostgresContext): IntegrationsStore {
  return {
    async findIntegration(handle) {
      if (!isStorableText(handle)) return undefined
      const [row] = await db.select().from(integrations).where(eq(integrations.handle, handle))
      return row
    },

    async listIntegrations() {
      // Byte order, as on SQLite, whatever the database's collation.
      return db.select().from(integrations).orderBy(sql`${integrations.handle} COLLATE "C"`)
    },

    async insertIntegration(values) {
      const [row] = await db
        .insert(integrations)
        .values({ ...values, createdAt: values.updatedAt })
        .returning()
      return wrote(row)
    },

    async updateIntegration(id, values) {
      const [row] = await db.update(integrations).set(values).where(eq(integrations.id, id)).returning()
      return wrote(row)
    },

    async deleteIntegration(id) {
      wrote(await db.delete(integrations).where(eq(integrations.id, id)))
    },

    async recordDelivery(integrationId, deliveryId, outcome) {
      return recordDelivery(db, { integrationId, deliveryId }, outcome, new Date())
    },

    async recentDeliveries(integrationId, limit) {
      if (!isInt4(integrationId)) return []
      return db
        .select({ deliveryId: webhookDeliveries.deliveryId, outcome: webhookDeliveries.outcome, createdAt: webhookDeliveries.createdAt })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.integrationId, integrationId))
        .orderBy(desc(webhookDeliveries.createdAt))
        .limit(limit)
    },

    async setExternalReference(shipmentId, integrationId, externalId, externalUrl) {
      const values = { externalId, externalUrl, updatedAt: new Date() }
      await db
        .insert(shipmentExternalReferences)
        .values({ shipmentId, integrationId, ...values })
        .onConflictDoUpdate({ target: [shipmentExternalReferences.shipmentId, shipmentExternalReferences.integrationId], set: values })
    },

    async externalReferences(shipmentId) {
      return db
        .select({
          integrationHandle: integrations.handle,
          externalId: shipmentExternalReferences.externalId,
          externalUrl: shipmentExternalReferences.externalUrl,
          lastPushAt: shipmentExternalReferences.lastPushAt,
          lastPushError: shipmentExternalReferences.lastPushError,
          pushAttempts: shipmentExternalReferences.pushAttempts,
        })
        .from(shipmentExternalReferences)
        .innerJoin(integrations, eq(integrations.id, shipmentExternalReferences.integrationId))
        .where(eq(shipmentExternalReferences.shipmentId, shipmentId))
        .orderBy(sql`${integrations.handle} COLLATE "C"`)
    },
  }
}
