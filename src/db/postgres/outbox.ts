// The outbox and webhook subscriptions on PostgreSQL. A claim takes its rows with FOR UPDATE SKIP
// LOCKED, so instances claiming at once each get other rows, and none waits on another.
import { randomUUID } from 'node:crypto'
import { and, asc, desc, eq, gt, inArray, like, lt, ne, sql } from 'drizzle-orm'
import type { NewOutboxMessage, OutboxClaim, OutboxRow, OutboxStore } from '../data-layer.js'
import type { PostgresDatabase } from './connection.js'
import { outbox, outboxAttempts, shipmentExternalReferences, webhookSubscriptions } from './schema.js'

type Transaction = Parameters<Parameters<PostgresDatabase['transaction']>[0]>[0]

/** Writes messages inside the caller's transaction; those of a key with an older pending message stay unclaimed. */
export async function writeOutboxMessages(tx: Transaction | PostgresDatabase, messages: NewOutboxMessage[], claimFor: OutboxClaim | null, now: Date): Promise<OutboxRow[]> {
  const written: OutboxRow[] = []
  for (const message of messages) {
    // One statement: a message behind another instance's (or a dead process's) pending one of its key
    // is written unclaimed, so the sweep delivers it in turn.
    const claimed = claimFor
      ? sql`NOT EXISTS (SELECT 1 FROM shipments_outbox WHERE ordering_key = ${message.orderingKey} AND state = 'pending' AND claimed_by IS DISTINCT FROM ${claimFor.instanceId})`
      : sql`false`
    const [row] = await tx
      .insert(outbox)
      .values({
        messageId: message.messageId ?? randomUUID(),
        kind: message.kind,
        name: message.name,
        orderingKey: message.orderingKey,
        payload: message.payload,
        availableAt: message.availableAt ?? now,
        claimedUntil: claimFor ? sql`CASE WHEN ${claimed} THEN ${new Date(now.getTime() + claimFor.leaseMs)}::timestamptz END` : null,
        claimedBy: claimFor ? sql`CASE WHEN ${claimed} THEN ${claimFor.instanceId} END` : null,
        createdAt: now,
      })
      .onConflictDoNothing()
      .returning()
    if (row) written.push(row)
  }
  return written
}

export function createPostgresOutboxStore(db: PostgresDatabase): OutboxStore {
  return {
    async enqueue(messages, claimFor) {
      return db.transaction((tx) => writeOutboxMessages(tx, messages, claimFor, new Date()))
    },

    async claimDue(instanceId, leaseMs, limit) {
      const now = new Date()
      const claimed = await db
        .update(outbox)
        .set({ claimedBy: instanceId, claimedUntil: new Date(now.getTime() + leaseMs) })
        .where(
          inArray(
            outbox.id,
            sql`(SELECT o.id FROM shipments_outbox o
              WHERE o.state = 'pending' AND o.available_at <= ${now} AND (o.claimed_until IS NULL OR o.claimed_until < ${now})
                AND NOT EXISTS (SELECT 1 FROM shipments_outbox e WHERE e.ordering_key = o.ordering_key AND e.state = 'pending' AND e.id < o.id)
              ORDER BY o.id LIMIT ${limit} FOR UPDATE SKIP LOCKED)`,
          ),
        )
        .returning()
      return claimed.sort((a, b) => a.id - b.id)
    },

    async complete(ids, followUps, claimFor) {
      if (ids.length === 0 && followUps.length === 0) return []
      return db.transaction(async (tx) => {
        const now = new Date()
        if (ids.length > 0) await tx.update(outbox).set({ state: 'done', doneAt: now, claimedUntil: null }).where(inArray(outbox.id, ids))
        return writeOutboxMessages(tx, followUps, claimFor, now)
      })
    },

    async recordAttempt(id, record, claimFor) {
      return db.transaction(async (tx) => {
        await tx.insert(outboxAttempts).values({ ...record.attempt, outboxId: id })
        const { outcome } = record
        await tx
          .update(outbox)
          .set({
            attempts: sql`${outbox.attempts} + 1`,
            lastError: record.attempt.error,
            claimedUntil: null,
            ...(outcome.state === 'retry' ? { availableAt: outcome.retryAt } : { state: outcome.state, doneAt: record.attempt.attemptedAt }),
          })
          .where(eq(outbox.id, id))
        return writeOutboxMessages(tx, record.followUps ?? [], claimFor, record.attempt.attemptedAt)
      })
    },

    async requeue(messageId) {
      const [row] = await db
        .update(outbox)
        .set({ state: 'pending', attempts: 0, availableAt: new Date(), claimedUntil: null, claimedBy: null, doneAt: null })
        .where(and(eq(outbox.messageId, messageId), eq(outbox.kind, 'job'), ne(outbox.state, 'pending')))
        .returning()
      return row
    },

    async find(messageId) {
      const [row] = await db.select().from(outbox).where(eq(outbox.messageId, messageId))
      return row
    },

    async list(query) {
      return db
        .select()
        .from(outbox)
        .where(
          and(
            query.state ? eq(outbox.state, query.state) : undefined,
            query.kind ? eq(outbox.kind, query.kind) : undefined,
            query.name ? eq(outbox.name, query.name) : undefined,
            query.orderingKeyPrefix ? like(outbox.orderingKey, `${query.orderingKeyPrefix.replace(/[^A-Za-z0-9:-]/g, '')}%`) : undefined,
            query.afterId !== undefined ? gt(outbox.id, query.afterId) : undefined,
          ),
        )
        .orderBy(query.newestFirst ? desc(outbox.id) : asc(outbox.id))
        .limit(query.limit)
    },

    async attempts(outboxId) {
      return db.select().from(outboxAttempts).where(eq(outboxAttempts.outboxId, outboxId)).orderBy(desc(outboxAttempts.id))
    },

    async prune(before) {
      const deleted = await db.delete(outbox).where(and(ne(outbox.state, 'pending'), lt(outbox.doneAt, before))).returning({ id: outbox.id })
      return deleted.length
    },

    async listSubscriptions() {
      return db.select().from(webhookSubscriptions).orderBy(webhookSubscriptions.id)
    },

    async findSubscription(id) {
      const [row] = await db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, id))
      return row
    },

    async insertSubscription(values) {
      const [row] = await db.insert(webhookSubscriptions).values({ ...values, createdAt: values.updatedAt }).returning()
      return row
    },

    async updateSubscription(id, values) {
      const [row] = await db.update(webhookSubscriptions).set(values).where(eq(webhookSubscriptions.id, id)).returning()
      return row
    },

    async deleteSubscription(id) {
      return (await db.delete(webhookSubscriptions).where(eq(webhookSubscriptions.id, id)).returning({ id: webhookSubscriptions.id })).length > 0
    },

    async recordSubscriptionResult(id, succeeded, disableAt, reason) {
      const failures = succeeded ? sql`0` : sql`${webhookSubscriptions.failureCount} + 1`
      // One statement: the count and the disabling cannot be split by another instance's result.
      const [row] = await db
        .update(webhookSubscriptions)
        .set({
          failureCount: failures,
          ...(!succeeded && {
            enabled: sql`${webhookSubscriptions.enabled} AND ${webhookSubscriptions.failureCount} + 1 < ${disableAt}`,
            disabledReason: sql`CASE WHEN ${webhookSubscriptions.enabled} AND ${webhookSubscriptions.failureCount} + 1 >= ${disableAt} THEN ${reason} ELSE ${webhookSubscriptions.disabledReason} END`,
          }),
        })
        .where(eq(webhookSubscriptions.id, id))
        .returning()
      return row
    },

    async recordPushAttempt(shipmentId, integrationId, at, error, reference) {
      const values = {
        lastPushAt: at,
        lastPushError: error,
        updatedAt: at,
        ...(reference.externalId != null && { externalId: reference.externalId }),
        ...(reference.externalUrl != null && { externalUrl: reference.externalUrl }),
      }
      await db
        .insert(shipmentExternalReferences)
        .values({ shipmentId, integrationId, pushAttempts: 1, ...values })
        .onConflictDoUpdate({
          target: [shipmentExternalReferences.shipmentId, shipmentExternalReferences.integrationId],
          set: { ...values, pushAttempts: sql`${shipmentExternalReferences.pushAttempts} + 1` },
        })
    },
  }
}
