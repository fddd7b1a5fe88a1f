// Manifests on SQLite: a creation is one IMMEDIATE transaction (in the group commit), which serializes every
// writer of the file, so the labels it checks inside it are the ones it takes; the unique key on
// operation_id stands behind that. A day's labels are a range of the label operations' primary key.
import { and, asc, desc, eq, gte, inArray, isNull, lt, max, min, sql } from 'drizzle-orm'
import type { NewOutboxMessage, OutboxRow } from '../data-layer.js'
import { firstOperationIdFrom, OPERATION_CLOCK_MARGIN_MS, type EligibleLabelRow, type ManifestParcelRow, type ManifestRow, type ManifestStore } from '../manifests.js'
import type { SqliteContext } from './context.js'
import { labelOperations, parcels } from './deliveries-schema.js'
import { manifestParcels, manifests } from './manifests-schema.js'

export function createSqliteManifestStore({ db, group, writeMessages }: SqliteContext): ManifestStore<NewOutboxMessage, OutboxRow> {
  const probe = db
    .select({ id: labelOperations.id, createdAt: labelOperations.createdAt })
    .from(labelOperations)
    .where(gte(labelOperations.id, sql.placeholder('id')))
    .orderBy(asc(labelOperations.id))
    .limit(1)
    .prepare()
  const bounds = () => db.select({ min: min(labelOperations.id), max: max(labelOperations.id) }).from(labelOperations).get()

  /** The label columns of operations bought and still their parcel's, in no manifest. */
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

  const find = (id: number) => db.select().from(manifests).where(eq(manifests.id, id)).get()

  return {
    async eligible(query) {
      const range = bounds()
      if (!range || range.min === null || range.max === null) return []
      const at = async (time: number) => firstOperationIdFrom(async (id) => probe.get({ id }), { min: range.min!, max: range.max! }, new Date(time))
      const firstId = await at(query.from.getTime() - OPERATION_CLOCK_MARGIN_MS)
      const endId = await at(query.to.getTime() + OPERATION_CLOCK_MARGIN_MS)
      const rows = db
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
        .all()
      return rows as EligibleLabelRow[]
    },

    async create(manifest, labels) {
      return group.run(() => {
        const operationIds = labels.map((label) => label.operationId)
        // Checked again inside the transaction: still bought, still the parcel's, in no manifest.
        const free = db
          .select({ parcelId: parcels.id, operationId: labelOperations.operationId })
          .from(labelOperations)
          .innerJoin(parcels, holding)
          .leftJoin(manifestParcels, eq(manifestParcels.operationId, labelOperations.operationId))
          .where(and(inArray(labelOperations.operationId, operationIds), stillBought))
          .all()
        if (free.length === 0) return undefined
        const order = new Map(operationIds.map((id, index) => [id, index]))
        free.sort((a, b) => order.get(a.operationId)! - order.get(b.operationId)!)
        const now = new Date()
        const row = db
          .insert(manifests)
          .values({ ...manifest, state: 'pending', externalId: null, formUrl: null, parcelCount: free.length, error: null, createdAt: now, updatedAt: now })
          .returning()
          .get() as ManifestRow
        const held = db
          .insert(manifestParcels)
          .values(free.map((label) => ({ manifestId: row.id, parcelId: label.parcelId, operationId: label.operationId })))
          .onConflictDoNothing({ target: manifestParcels.operationId })
          .returning()
          .all() as ManifestParcelRow[]
        return { row, parcels: held }
      })
    },

    async markCreated(id, values, messages) {
      return group.run(() => {
        const now = new Date()
        const row = db.update(manifests).set({ state: 'created', externalId: values.externalId, formUrl: values.formUrl, error: null, updatedAt: now }).where(eq(manifests.id, id)).returning().get() as ManifestRow
        return { row, messages: writeMessages(messages(row), null, now) }
      })
    },

    async markFailed(id, error) {
      return group.run(() => {
        db.delete(manifestParcels).where(eq(manifestParcels.manifestId, id)).run()
        return db.update(manifests).set({ state: 'failed', error, updatedAt: new Date() }).where(eq(manifests.id, id)).returning().get() as ManifestRow
      })
    },

    async find(id) {
      return find(id)
    },

    async parcels(manifestId) {
      return db.select().from(manifestParcels).where(eq(manifestParcels.manifestId, manifestId)).orderBy(asc(manifestParcels.parcelId)).all()
    },

    async list(query) {
      return db
        .select()
        .from(manifests)
        .where(query.beforeId === undefined ? undefined : lt(manifests.id, query.beforeId))
        .orderBy(desc(manifests.id))
        .limit(query.limit)
        .all()
    },
  }
}
