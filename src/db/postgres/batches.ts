// Label batches on PostgreSQL: a batch and its items written in one transaction, its lease taken by one
// atomic UPDATE over a row chosen FOR UPDATE SKIP LOCKED (two instances never take one batch), items read
// through the batch's index.
import { and, asc, desc, eq, gt, inArray, isNull, lt, lte, notInArray, or, sql } from 'drizzle-orm'
import type { NewOutboxMessage, OutboxClaim, OutboxRow } from '../data-layer.js'
import type { LabelBatchCounts, LabelBatchItemRow, LabelBatchRow, LabelBatchStore } from '../batches.js'
import type { PostgresDatabase } from './connection.js'
import { isInt4, type PostgresContext, type Transaction } from './context.js'
import { writeOutboxMessages } from './outbox.js'
import { labelBatches, labelBatchItems } from './batches-schema.js'

/** The most items one INSERT carries (5 parameters each, far below the protocol's 65,535). */
const INSERT_CHUNK = 1000

const emptyCounts = (): LabelBatchCounts => ({ queued: 0, bought: 0, failed: 0, skipped: 0, cancelled: 0 })

async function countsIn(tx: Transaction | PostgresDatabase, batchId: number): Promise<LabelBatchCounts> {
  const rows = await tx
    .select({ state: labelBatchItems.state, count: sql<number>`count(*)::int` })
    .from(labelBatchItems)
    .where(eq(labelBatchItems.batchId, batchId))
    .groupBy(labelBatchItems.state)
  const counts = emptyCounts()
  for (const row of rows) counts[row.state] = Number(row.count)
  return counts
}

type Store = LabelBatchStore<NewOutboxMessage, OutboxClaim, OutboxRow>
type ItemRows = Pick<Store, 'dueItems' | 'updateItem' | 'expandItem' | 'counts' | 'items'>

export function createPostgresBatchStore(context: PostgresContext): Store {
  return { ...createBatchRows(context), ...createItemRows(context) }
}

/** A batch's items: the due ones, an outcome, a shipment's item made one per parcel, counts, pages. */
function createItemRows({ db, wrote }: PostgresContext): ItemRows {
  return {
    async dueItems(batchId, now, limit, except) {
      return (await db
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
        .limit(limit)) as LabelBatchItemRow[]
    },

    async updateItem(itemId, columns, now, onlyIfQueued) {
      const [row] = (await db
        .update(labelBatchItems)
        .set({ ...columns, updatedAt: now })
        .where(and(eq(labelBatchItems.id, itemId), onlyIfQueued ? eq(labelBatchItems.state, 'queued') : undefined))
        .returning()) as LabelBatchItemRow[]
      return row ? wrote(row) : undefined
    },

    async expandItem(itemId, parcelIds, now) {
      if (parcelIds.length === 0) return
      await db.transaction(async (tx) => {
        const [item] = (await tx.select().from(labelBatchItems).where(eq(labelBatchItems.id, itemId)).for('update')) as LabelBatchItemRow[]
        if (!item || item.parcelId !== null) return
        await tx.update(labelBatchItems).set({ parcelId: parcelIds[0]!, updatedAt: now }).where(eq(labelBatchItems.id, itemId))
        const more = parcelIds.slice(1).map((parcelId) => ({ batchId: item.batchId, position: item.position, shipmentId: item.shipmentId, parcelId, state: 'queued' as const, updatedAt: now }))
        for (let start = 0; start < more.length; start += INSERT_CHUNK) await tx.insert(labelBatchItems).values(more.slice(start, start + INSERT_CHUNK))
      })
      wrote(undefined)
    },

    async counts(batchId) {
      return isInt4(batchId) ? countsIn(db, batchId) : emptyCounts()
    },

    async items(batchId, { state, after, limit }) {
      if (!isInt4(batchId)) return []
      return (await db
        .select()
        .from(labelBatchItems)
        .where(
          and(
            eq(labelBatchItems.batchId, batchId),
            state ? eq(labelBatchItems.state, state) : undefined,
            after ? or(gt(labelBatchItems.position, after.position), and(eq(labelBatchItems.position, after.position), gt(labelBatchItems.id, after.id))) : undefined,
          ),
        )
        .orderBy(asc(labelBatchItems.position), asc(labelBatchItems.id))
        .limit(limit)) as LabelBatchItemRow[]
    },

  }
}

/** The batches: created with their items, listed, their lease, their end, retry and cancel. */
function createBatchRows({ db, wrote }: PostgresContext): Omit<Store, keyof ItemRows> {
  const findIn = async (tx: Transaction | PostgresDatabase, id: number) => (await tx.select().from(labelBatches).where(eq(labelBatches.id, id)))[0] as LabelBatchRow | undefined

  return {
    async createBatch(batch, items, now) {
      return wrote(
        await db.transaction(async (tx) => {
          const [row] = (await tx.insert(labelBatches).values({ state: 'queued', settings: batch.settings, userId: batch.userId, createdAt: now, updatedAt: now }).returning()) as LabelBatchRow[]
          for (let start = 0; start < items.length; start += INSERT_CHUNK) {
            await tx.insert(labelBatchItems).values(items.slice(start, start + INSERT_CHUNK).map((item) => ({ ...item, batchId: row!.id, state: 'queued' as const, updatedAt: now })))
          }
          return row!
        }),
      )
    },

    async findBatch(id) {
      return isInt4(id) ? findIn(db, id) : undefined
    },

    async listBatches({ beforeId, limit }) {
      return (await db
        .select()
        .from(labelBatches)
        .where(beforeId !== undefined && isInt4(beforeId) ? lt(labelBatches.id, beforeId) : undefined)
        .orderBy(desc(labelBatches.id))
        .limit(limit)) as LabelBatchRow[]
    },

    async claimBatch(owner, leaseMs, now) {
      // Chosen and taken in one statement; SKIP LOCKED lets two instances claiming at once take different batches.
      const due = db
        .select({ id: labelBatches.id })
        .from(labelBatches)
        .where(and(inArray(labelBatches.state, ['queued', 'running']), or(isNull(labelBatches.leaseExpiresAt), lt(labelBatches.leaseExpiresAt, now))))
        .orderBy(asc(labelBatches.id))
        .limit(1)
        .for('update', { skipLocked: true })
      const [row] = (await db
        .update(labelBatches)
        .set({ state: 'running', leaseOwner: owner, leaseExpiresAt: new Date(now.getTime() + leaseMs), updatedAt: now })
        .where(and(eq(labelBatches.id, sql`(${due})`), inArray(labelBatches.state, ['queued', 'running']), or(isNull(labelBatches.leaseExpiresAt), lt(labelBatches.leaseExpiresAt, now))))
        .returning()) as LabelBatchRow[]
      return row ? wrote(row) : undefined
    },

    async renewLease(batchId, owner, leaseMs, now) {
      const rows = await db
        .update(labelBatches)
        .set({ leaseExpiresAt: new Date(now.getTime() + leaseMs) })
        .where(and(eq(labelBatches.id, batchId), eq(labelBatches.leaseOwner, owner), eq(labelBatches.state, 'running')))
        .returning({ id: labelBatches.id })
      return rows.length > 0
    },

    async releaseLease(batchId, owner) {
      await db.update(labelBatches).set({ leaseOwner: null, leaseExpiresAt: null }).where(and(eq(labelBatches.id, batchId), eq(labelBatches.leaseOwner, owner)))
    },

    async finishBatch(batchId, owner, now, messages) {
      const outcome = await db.transaction(async (tx) => {
        // The batch row first (FOR UPDATE): a retry or a cancel waits for the finish, or the finish sees it.
        const [held] = await tx
          .select({ id: labelBatches.id })
          .from(labelBatches)
          .where(and(eq(labelBatches.id, batchId), eq(labelBatches.leaseOwner, owner), eq(labelBatches.state, 'running')))
          .for('update')
        if (!held) return undefined
        const counts = await countsIn(tx, batchId)
        if (counts.queued > 0) return undefined
        const [batch] = (await tx
          .update(labelBatches)
          .set({ state: 'finished', leaseOwner: null, leaseExpiresAt: null, finishedAt: now, updatedAt: now })
          .where(eq(labelBatches.id, batchId))
          .returning()) as LabelBatchRow[]
        const failed = (await tx
          .select()
          .from(labelBatchItems)
          .where(and(eq(labelBatchItems.batchId, batchId), eq(labelBatchItems.state, 'failed')))
          .orderBy(asc(labelBatchItems.position), asc(labelBatchItems.id))) as LabelBatchItemRow[]
        const outbox = messages.of(batch!, counts, failed)
        return { batch: batch!, messages: outbox.length > 0 ? await writeOutboxMessages(tx, outbox, messages.claimFor, now) : [] }
      })
      return outcome ? wrote(outcome) : undefined
    },

    async retryFailed(batchId, now) {
      if (!isInt4(batchId)) return undefined
      const outcome = await db.transaction(async (tx) => {
        const [current] = (await tx.select().from(labelBatches).where(eq(labelBatches.id, batchId)).for('update')) as LabelBatchRow[]
        if (!current || current.state === 'cancelled') return undefined
        const retried = (
          await tx
            .update(labelBatchItems)
            .set({ state: 'queued', reason: null, nextAttemptAt: null, updatedAt: now })
            .where(and(eq(labelBatchItems.batchId, batchId), eq(labelBatchItems.state, 'failed')))
            .returning({ id: labelBatchItems.id })
        ).length
        if (retried === 0 || current.state !== 'finished') return { batch: current, retried }
        const [batch] = (await tx
          .update(labelBatches)
          .set({ state: 'queued', finishedAt: null, leaseOwner: null, leaseExpiresAt: null, updatedAt: now })
          .where(eq(labelBatches.id, batchId))
          .returning()) as LabelBatchRow[]
        return { batch: batch!, retried }
      })
      return outcome ? wrote(outcome) : undefined
    },

    async cancelBatch(batchId, now) {
      if (!isInt4(batchId)) return undefined
      const outcome = await db.transaction(async (tx) => {
        const [batch] = (await tx
          .update(labelBatches)
          .set({ state: 'cancelled', leaseOwner: null, leaseExpiresAt: null, finishedAt: now, updatedAt: now })
          .where(and(eq(labelBatches.id, batchId), inArray(labelBatches.state, ['queued', 'running'])))
          .returning()) as LabelBatchRow[]
        if (!batch) return undefined
        const cancelled = (
          await tx
            .update(labelBatchItems)
            .set({ state: 'cancelled', updatedAt: now })
            .where(and(eq(labelBatchItems.batchId, batchId), eq(labelBatchItems.state, 'queued')))
            .returning({ id: labelBatchItems.id })
        ).length
        return { batch, cancelled }
      })
      return outcome ? wrote(outcome) : undefined
    },
  }
}
