// Manifests on PostgreSQL: a creation is one transaction that checks each label again and inserts it with
// ON CONFLICT DO NOTHING on the unique operation_id, so of two instances racing for a label the second
// waits for the first's commit and leaves the label out; with none left it rolls back and writes nothing.
// A day's labels are a range of the label operations' primary key.
import { and, asc, desc, eq, gte, inArray, isNull, lt, max, min, sql } from 'drizzle-orm'
import type { NewOutboxMessage, OutboxRow } from '../data-layer.js'
import { firstOperationIdFrom, OPERATION_CLOCK_MARGIN_MS, type EligibleLabelRow, type ManifestParcelRow, type ManifestRow, type ManifestStore } from '../manifests.js'
import { isInt4, type PostgresContext } from './context.js'
import { labelOperations, parcels } from './deliveries-schema.js'
import { manifestParcels, manifests } from './manifests-schema.js'
import { writeOutboxMessages } from './outbox.js'

/** Thrown inside a creation whose labels all went to another manifest: the transaction rolls back. */
class NothingLeft extends Error {}

export function createPostgresManifestStore({ db, wrote }: PostgresContext): ManifestStore<NewOutboxMessage, OutboxRow> {
  const probe = async (id: number) => {
    const [row] = await db.select({ id: labelOperations.id, createdAt: labelOperations.createdAt }).from(labelOperations).where(gte(labelOperations.id, id)).orderBy(asc(labelOperations.id)).limit(1)
    return row
  }
  const eligibleColumns = {
    operationId: labelOperations.operationId,
    parcelId: parcels.id,
    shipmentId: parcels.shipmentId,
    integrationId: labelOperations.integrationId,
    carrier: sql<string>`coalesce(${parcels.carrier}, ${labelOperations.carrier})`,
    externalId: labelOperations.externalId,
    trackingNumber: parcels.trackingNumber,
    createdAt: labelOperations.createdAt,
  }
  // By the parcel's primary key; the parcel must still hold the operation (a voided or replaced label does not).
  const holding = and(eq(parcels.id, labelOperations.parcelId), eq(parcels.labelOperationId, labelOperations.operationId))
  const stillBought = and(eq(labelOperations.state, 'purchased'), isNull(manifestParcels.operationId), sql`${labelOperations.externalId} is not null`, sql`${parcels.trackingNumber} is not null`)

  return {
    async eligible(query) {
      if (!isInt4(query.integrationId)) return []
      const [range] = await db.select({ min: min(labelOperations.id), max: max(labelOperations.id) }).from(labelOperations)
      if (!range || range.min === null || range.max === null) return []
      const at = (time: number) => firstOperationIdFrom(probe, { min: range.min!, max: range.max! }, new Date(time))
      const firstId = await at(query.from.getTime() - OPERATION_CLOCK_MARGIN_MS)
      const endId = await at(query.to.getTime() + OPERATION_CLOCK_MARGIN_MS)
      const rows = await db
        .select(eligibleColumns)
        .from(labelOperations)
        .innerJoin(parcels, holding)
        .leftJoin(manifestParcels, eq(manifestParcels.operationId, labelOperations.operationId))
        .where(
          and(
            gte(labelOperations.id, firstId),
            lt(labelOperations.id, endId),
            eq(labelOperations.integrationId, query.integrationId),
            gte(labelOperations.createdAt, query.from),
            lt(labelOperations.createdAt, query.to),
            stillBought,
            query.carrier === undefined ? undefined : sql`lower(coalesce(${parcels.carrier}, ${labelOperations.carrier})) = lower(${query.carrier})`,
          ),
        )
        .orderBy(asc(labelOperations.id))
        .limit(query.limit)
      return rows as EligibleLabelRow[]
    },

    async create(manifest, labels) {
      const operationIds = labels.map((label) => label.operationId)
      try {
        return wrote(
          await db.transaction(async (tx) => {
            const free = await tx
              .select({ parcelId: parcels.id, operationId: labelOperations.operationId })
              .from(labelOperations)
              .innerJoin(parcels, holding)
              .leftJoin(manifestParcels, eq(manifestParcels.operationId, labelOperations.operationId))
              .where(and(inArray(labelOperations.operationId, operationIds), stillBought))
            if (free.length === 0) throw new NothingLeft()
            const order = new Map(operationIds.map((id, index) => [id, index]))
            free.sort((a, b) => order.get(a.operationId)! - order.get(b.operationId)!)
            const now = new Date()
            const [row] = (await tx
              .insert(manifests)
              .values({ ...manifest, state: 'pending', externalId: null, formUrl: null, parcelCount: free.length, error: null, createdAt: now, updatedAt: now })
              .returning()) as [ManifestRow]
            // A label another instance's manifest took since the read above: its insert waits for that commit, then does nothing.
            const held = (await tx
              .insert(manifestParcels)
              .values(free.map((label) => ({ manifestId: row.id, parcelId: label.parcelId, operationId: label.operationId })))
              .onConflictDoNothing({ target: manifestParcels.operationId })
              .returning()) as ManifestParcelRow[]
            if (held.length === 0) throw new NothingLeft()
            if (held.length === free.length) return { row, parcels: held }
            const [counted] = (await tx.update(manifests).set({ parcelCount: held.length }).where(eq(manifests.id, row.id)).returning()) as [ManifestRow]
            return { row: counted, parcels: held }
          }),
        )
      } catch (error) {
        if (error instanceof NothingLeft) return undefined
        throw error
      }
    },

    async markCreated(id, values, messages) {
      return wrote(
        await db.transaction(async (tx) => {
          const now = new Date()
          const [row] = (await tx.update(manifests).set({ state: 'created', externalId: values.externalId, formUrl: values.formUrl, error: null, updatedAt: now }).where(eq(manifests.id, id)).returning()) as [ManifestRow]
          return { row, messages: await writeOutboxMessages(tx, messages(row), null, now) }
        }),
      )
    },

    async markFailed(id, error) {
      return wrote(
        await db.transaction(async (tx) => {
          await tx.delete(manifestParcels).where(eq(manifestParcels.manifestId, id))
          const [row] = (await tx.update(manifests).set({ state: 'failed', error, updatedAt: new Date() }).where(eq(manifests.id, id)).returning()) as [ManifestRow]
          return row
        }),
      )
    },

    async find(id) {
      if (!isInt4(id)) return undefined
      const [row] = await db.select().from(manifests).where(eq(manifests.id, id))
      return row
    },

    async parcels(manifestId) {
      if (!isInt4(manifestId)) return []
      return db.select().from(manifestParcels).where(eq(manifestParcels.manifestId, manifestId)).orderBy(asc(manifestParcels.parcelId))
    },

    async list(query) {
      return db
        .select()
        .from(manifests)
        .where(query.beforeId === undefined ? undefined : lt(manifests.id, Math.min(query.beforeId, 2147483647)))
        .orderBy(desc(manifests.id))
        .limit(query.limit)
    },
  }
}
