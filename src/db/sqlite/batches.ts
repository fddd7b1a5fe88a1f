// Label batches on SQLite: a batch and its items written in one transaction, its lease taken by one
// atomic UPDATE (the file's write lock serializes every instance), items read through the batch's index.
import { and, asc, desc, eq, gt, inArray, isNull, lt, lte, notInArray, or, sql } from 'drizzle-orm'
import type { NewOutboxMessage, OutboxClaim, OutboxRow } from '../data-layer.js'
import type { LabelBatchCounts, LabelBatchItemRow, LabelBatchItemState, LabelBatchRow, LabelBatchStore } from '../batches.js'
import type { SqliteContext } from './context.js'
import { labelBatches, labelBatchItems } from './batches-schema.js'

/** The most items one INSERT carries: far below SQLite's bound-parameter limit (5 columns each). */
const INSERT_CHUNK = 500

export const emptyCounts = (): LabelBatchCounts => ({ queued: 0, bought: 0, failed: 0, skipped: 0, cancelled: 0 })

type Store = LabelBatchStore<NewOutboxMessage, OutboxClaim, OutboxRow>
type ItemRows = Pick<Store, 'dueItems' | 'updateItem' | 'expandItem' | 'counts' | 'items'>

export function createSqliteBatchStore(context: SqliteContext): Store {
  return { ...createBatchRows(context), ...createItemRows(context) }
}

const countsOf = (db: SqliteContext['db'], batchId: number): LabelBatchCounts => {
  const rows = db
    .select({ state: labelBatchItems.state, count: sql<number>`count(*)` })
    .from(labelBatchItems)
    .where(eq(labelBatchItems.batchId, batchId))
    .groupBy(labelBatchItems.state)
    .all()
  const counts = emptyCounts()
  for (const row of rows) counts[row.state] = Number(row.count)
  return counts
}

/** A batch's items: the due ones, an outcome, a shipment's item made one per parcel, counts, pages. */
function createItemRows({ db, group }: SqliteContext): ItemRows {
  return {
    async dueItems(batchId, now, limit, except) {
      return db
        .select()
        .from(labelBatchItems)
        .where(
          and(
            eq(labelBatchItems.batchId, batchId),
            eq(labelBatchItems.state, 'queued'),
            or(isNull(labelBatchItems.nextAttemptAt), lte(labelBatchItems.nextAttemptAt, now)),
            except.length > 0 ? notInArray(labelBatchItems.id, [...except]) : undefined,
          ),
        )
        .orderBy(asc(labelBatchItems.position), asc(labelBatchItems.id))
        .limit(limit)
        .all() as LabelBatchItemRow[]
    },

    async updateItem(itemId, columns, now, onlyIfQueued) {
      return group.run(
        () =>
          db
            .update(labelBatchItems)
            .set({ ...columns, updatedAt: now })
            .where(and(eq(labelBatchItems.id, itemId), onlyIfQueued ? eq(labelBatchItems.state, 'queued') : undefined))
            .returning()
            .get() as LabelBatchItemRow | undefined,
      )
    },

    async expandItem(itemId, parcelIds, now) {
      if (parcelIds.length === 0) return
      await group.run(() => {
        const item = db.select().from(labelBatchItems).where(eq(labelBatchItems.id, itemId)).get() as LabelBatchItemRow | undefined
        if (!item || item.parcelId !== null) return
        db.update(labelBatchItems).set({ parcelId: parcelIds[0]!, updatedAt: now }).where(eq(labelBatchItems.id, itemId)).run()
        const more = parcelIds.slice(1).map((parcelId) => ({ batchId: item.batchId, position: item.position, shipmentId: item.shipmentId, parcelId, state: 'queued' as const, updatedAt: now }))
        for (let start = 0; start < more.length; start += INSERT_CHUNK) db.insert(labelBatchItems).values(more.slice(start, start + INSERT_CHUNK)).run()
      })
    },

    async counts(batchId) {
      return countsOf(db, batchId)
    },

    async items(batchId, { state, after, limit }) {
      return db
        .select()
        .from(labelBatchItems)
        .where(
          and(
            eq(labelBatchItems.batchId, batchId),
            state ? eq(labelBatchItems.state, state as LabelBatchItemState) : undefined,
            after ? or(gt(labelBatchItems.position, after.position), and(eq(labelBatchItems.position, after.position), gt(labelBatchItems.id, after.id))) : undefined,
          ),
        )
        .orderBy(asc(labelBatchItems.position), asc(labelBatchItems.id))
        .limit(limit)
        .all() as LabelBatchItemRow[]
    },

  }
}

/** The batches: created with their items, listed, their lease, their end, retry and cancel. */
function createBatchRows({ db, group, writeMessages }: SqliteContext): Omit<Store, keyof ItemRows> {
  const findSync = (id: number) => db.select().from(labelBatches).where(eq(labelBatches.id, id)).get() as LabelBatchRow | undefined
  const countsSync = (batchId: number) => countsOf(db, batchId)

  return {
    async createBatch(batch, items, now) {
      return group.run(() => {
        const row = db.insert(labelBatches).values({ state: 'queued', settings: batch.settings, userId: batch.userId, createdAt: now, updatedAt: now }).returning().get() as LabelBatchRow
        for (let start = 0; start < items.length; start += INSERT_CHUNK) {
          const chunk = items.slice(start, start + INSERT_CHUNK).map((item) => ({ ...item, batchId: row.id, state: 'queued' as const, updatedAt: now }))
          db.insert(labelBatchItems).values(chunk).run()
        }
        return row
      })
    },

    async findBatch(id) {
      return findSync(id)
    },

    async listBatches({ beforeId, limit }) {
      return db
        .select()
        .from(labelBatches)
        .where(beforeId !== undefined ? lt(labelBatches.id, beforeId) : undefined)
        .orderBy(desc(labelBatches.id))
        .limit(limit)
        .all() as LabelBatchRow[]
    },

    async claimBatch(owner, leaseMs, now) {
      return group.run(() => {
        // Chosen and taken in one statement: two instances never both take it.
        const due = db
          .select({ id: labelBatches.id })
          .from(labelBatches)
          .where(and(inArray(labelBatches.state, ['queued', 'running']), or(isNull(labelBatches.leaseExpiresAt), lt(labelBatches.leaseExpiresAt, now))))
          .orderBy(asc(labelBatches.id))
          .limit(1)
        return db
          .update(labelBatches)
          .set({ state: 'running', leaseOwner: owner, leaseExpiresAt: new Date(now.getTime() + leaseMs), updatedAt: now })
          .where(eq(labelBatches.id, sql`(${due})`))
          .returning()
          .get() as LabelBatchRow | undefined
      })
    },

    async renewLease(batchId, owner, leaseMs, now) {
      const renewed = await group.run(() =>
        db
          .update(labelBatches)
          .set({ leaseExpiresAt: new Date(now.getTime() + leaseMs) })
          .where(and(eq(labelBatches.id, batchId), eq(labelBatches.leaseOwner, owner), eq(labelBatches.state, 'running')))
          .run(),
      )
      return renewed.changes > 0
    },

    async releaseLease(batchId, owner) {
      await group.run(() =>
        db
          .update(labelBatches)
          .set({ leaseOwner: null, leaseExpiresAt: null })
          .where(and(eq(labelBatches.id, batchId), eq(labelBatches.leaseOwner, owner)))
          .run(),
      )
    },

    async finishBatch(batchId, owner, now, messages) {
      return group.run(() => {
        const counts = countsSync(batchId)
        if (counts.queued > 0) return undefined
        const batch = db
          .update(labelBatches)
          .set({ state: 'finished', leaseOwner: null, leaseExpiresAt: null, finishedAt: now, updatedAt: now })
          .where(and(eq(labelBatches.id, batchId), eq(labelBatches.leaseOwner, owner), eq(labelBatches.state, 'running')))
          .returning()
          .get() as LabelBatchRow | undefined
        if (!batch) return undefined
        const failed = db
          .select()
          .from(labelBatchItems)
          .where(and(eq(labelBatchItems.batchId, batchId), eq(labelBatchItems.state, 'failed')))
          .orderBy(asc(labelBatchItems.position), asc(labelBatchItems.id))
          .all() as LabelBatchItemRow[]
        const outbox = messages.of(batch, counts, failed)
        return { batch, messages: outbox.length > 0 ? writeMessages(outbox, messages.claimFor, now) : [] }
      })
    },

    async retryFailed(batchId, now) {
      return group.run(() => {
        const current = findSync(batchId)
        if (!current || current.state === 'cancelled') return undefined
        const retried = db
          .update(labelBatchItems)
          .set({ state: 'queued', reason: null, nextAttemptAt: null, updatedAt: now })
          .where(and(eq(labelBatchItems.batchId, batchId), eq(labelBatchItems.state, 'failed')))
          .run().changes
        if (retried === 0 || current.state !== 'finished') return { batch: current, retried }
        const batch = db
          .update(labelBatches)
          .set({ state: 'queued', finishedAt: null, leaseOwner: null, leaseExpiresAt: null, updatedAt: now })
          .where(eq(labelBatches.id, batchId))
          .returning()
          .get() as LabelBatchRow
        return { batch, retried }
      })
    },

    async cancelBatch(batchId, now) {
      return group.run(() => {
        const batch = db
          .update(labelBatches)
          .set({ state: 'cancelled', leaseOwner: null, leaseExpiresAt: null, finishedAt: now, updatedAt: now })
          .where(and(eq(labelBatches.id, batchId), inArray(labelBatches.state, ['queued', 'running'])))
          .returning()
          .get() as LabelBatchRow | undefined
        if (!batch) return undefined
        const cancelled = db
          .update(labelBatchItems)
          .set({ state: 'cancelled', updatedAt: now })
          .where(and(eq(labelBatchItems.batchId, batchId), eq(labelBatchItems.state, 'queued')))
          .run().changes
        return { batch, cancelled }
      })
    },
  }
}
