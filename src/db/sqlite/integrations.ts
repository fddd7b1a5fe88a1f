// The gateway's integrations on SQLite: their rows, the dedupe ledger of their webhook deliveries, and the
// shipments' external references at them.
import { desc, eq, sql } from 'drizzle-orm'
import type { DeliveryOutcome, IntegrationRow, IntegrationsStore } from '../data-layer.js'
import type { SqliteContext } from './context.js'
import type { SqliteDatabase } from './dialect.js'
import { integrations, shipmentExternalReferences, webhookDeliveries } from './schema.js'

/** The dedupe ledger's insert, prepared once: a webhook's change records its delivery in its own transaction. */
export function createSqliteDeliveryLedger(db: SqliteDatabase) {
  const insertDelivery = db
    .insert(webhookDeliveries)
    .values({ integrationId: sql.placeholder('integrationId'), deliveryId: sql.placeholder('deliveryId'), outcome: sql.placeholder('outcome'), createdAt: sql.placeholder('createdAt') })
    .onConflictDoNothing()
    .prepare()
  /** Records a delivery in the dedupe ledger; false when it was recorded before. */
  const recordDelivery = (delivery: { integrationId: number; deliveryId: string }, outcome: DeliveryOutcome | null, now: Date) =>
    insertDelivery.run({ ...delivery, outcome: outcome ? { ...outcome } : {}, createdAt: now }).changes > 0
  return recordDelivery
}

export function createSqliteIntegrationsStore({ db }: SqliteContext, recordDelivery: ReturnType<typeof createSqliteDeliveryLedger>): IntegrationsStore {
  const selectIntegration = db.select().from(integrations).where(eq(integrations.handle, sql.placeholder('handle'))).prepare()

  return {
    async findIntegration(handle) {
      return selectIntegration.get({ handle }) as IntegrationRow | undefined
    },

    async listIntegrations() {
      return db.select().from(integrations).orderBy(integrations.handle).all()
    },

    async insertIntegration(values) {
      return db
        .insert(integrations)
        .values({ ...values, createdAt: values.updatedAt })
        .returning()
        .get()
    },

    async updateIntegration(id, values) {
      return db.update(integrations).set(values).where(eq(integrations.id, id)).returning().get()!
    },

    async deleteIntegration(id) {
      db.delete(integrations).where(eq(integrations.id, id)).run()
    },

    async recordDelivery(integrationId, deliveryId, outcome) {
      return recordDelivery({ integrationId, deliveryId }, outcome, new Date())
    },

    async recentDeliveries(integrationId, limit) {
      return db
        .select({ deliveryId: webhookDeliveries.deliveryId, outcome: webhookDeliveries.outcome, createdAt: webhookDeliveries.createdAt })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.integrationId, integrationId))
        .orderBy(desc(webhookDeliveries.createdAt))
        .limit(limit)
        .all()
    },

    async setExternalReference(shipmentId, integrationId, externalId, externalUrl) {
      const values = { externalId, externalUrl, updatedAt: new Date() }
      db.insert(shipmentExternalReferences)
        .values({ shipmentId, integrationId, ...values })
        .onConflictDoUpdate({ target: [shipmentExternalReferences.shipmentId, shipmentExternalReferences.integrationId], set: values })
        .run()
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
        .orderBy(integrations.handle)
        .all()
    },
  }
}
