// The outbox and webhook subscriptions on SQLite. One writer at a time holds the file, so a claim is
// one UPDATE ... RETURNING over the due rows: two processes can never claim the same message.
import { randomUUID } from 'node:crypto'
import { and, asc, desc, eq, gt, like, lt, ne, sql } from 'drizzle-orm'
import type { NewOutboxMessage, OutboxClaim, OutboxRow, OutboxStore } from '../data-layer.js'
import { leaveUncounted, writeTransaction, type SqliteDatabase } from './dialect.js'
import { outbox, outboxAttempts, shipmentExternalReferences, webhookSubscriptions } from './schema.js'

/**
 * Writes messages inside the caller's transaction; those of a key with an older pending message stay
 * unclaimed. Prepared once: the insert is on every transition's path.
 */
export function createSqliteOutboxWriter(db: SqliteDatabase) {
  const olderPending = db.$client.prepare(
    `SELECT 1 FROM shipments_outbox WHERE ordering_key = ? AND state = 'pending' AND (claimed_by IS NULL OR claimed_by <> ?) LIMIT 1`,
  )
  const insert = db.$client.prepare(
    `INSERT INTO shipments_outbox (message_id, kind, name, ordering_key, payload, available_at, claimed_until, claimed_by, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING *`,
  )
  return function writeMessages(messages: NewOutboxMessage[], claimFor: OutboxClaim | null, now: Date): OutboxRow[] {
    const written: OutboxRow[] = []
    for (const message of messages) {
      // A message behind another instance's (or a dead process's) pending one waits for the sweep, in order.
      const claim = claimFor && !olderPending.get(message.orderingKey, claimFor.instanceId) ? claimFor : null
      const row = insert.get(
        message.messageId ?? randomUUID(),
        message.kind,
        message.name,
        message.orderingKey,
        JSON.stringify(message.payload),
        (message.availableAt ?? now).getTime(),
        claim ? now.getTime() + claim.leaseMs : null,
        claim?.instanceId ?? null,
        now.getTime(),
      ) as Record<string, unknown> | undefined
      if (row) written.push(decodeRow(row))
    }
    return written
  }
}

export function createSqliteOutboxStore(db: SqliteDatabase, writeMessages: ReturnType<typeof createSqliteOutboxWriter>): OutboxStore {
  const markDone = db.$client.prepare(`UPDATE shipments_outbox SET state = 'done', done_at = ?, claimed_until = NULL WHERE id IN (SELECT value FROM json_each(?))`)
  return {
    async enqueue(messages, claimFor) {
      return writeTransaction(db, () => writeMessages(messages, claimFor, new Date()))
    },

    async claimDue(instanceId, leaseMs, limit) {
      const now = Date.now()
      const claimed = db.all<Record<string, unknown>>(sql`
        UPDATE shipments_outbox SET claimed_by = ${instanceId}, claimed_until = ${now + leaseMs}
        WHERE id IN (
          SELECT o.id FROM shipments_outbox o
          WHERE o.state = 'pending' AND o.available_at <= ${now} AND (o.claimed_until IS NULL OR o.claimed_until < ${now})
            AND NOT EXISTS (SELECT 1 FROM shipments_outbox e WHERE e.ordering_key = o.ordering_key AND e.state = 'pending' AND e.id < o.id)
          ORDER BY o.id LIMIT ${limit})
        RETURNING *`).map(decodeRow).sort((a, b) => a.id - b.id)
      // Delivery bookkeeping: no cached query result depends on it.
      leaveUncounted(db, claimed.length)
      return claimed
    },

    async complete(ids, followUps, claimFor) {
      if (ids.length === 0 && followUps.length === 0) return []
      return writeTransaction(db, () => {
        const now = new Date()
        if (ids.length > 0) leaveUncounted(db, markDone.run(now.getTime(), JSON.stringify(ids)).changes)
        const written = writeMessages(followUps, claimFor, now)
        leaveUncounted(db, written.length)
        return written
      })
    },

    async recordAttempt(id, record, claimFor) {
      return writeTransaction(db, () => {
        db.insert(outboxAttempts).values({ ...record.attempt, outboxId: id }).run()
        const { outcome } = record
        db.update(outbox)
          .set({
            attempts: sql`${outbox.attempts} + 1`,
            lastError: record.attempt.error,
            claimedUntil: null,
            ...(outcome.state === 'retry' ? { availableAt: outcome.retryAt } : { state: outcome.state, doneAt: record.attempt.attemptedAt }),
          })
          .where(eq(outbox.id, id))
          .run()
        return writeMessages(record.followUps ?? [], claimFor, record.attempt.attemptedAt)
      })
    },

    async requeue(messageId) {
      return db
        .update(outbox)
        .set({ state: 'pending', attempts: 0, availableAt: new Date(), claimedUntil: null, claimedBy: null, doneAt: null })
        .where(and(eq(outbox.messageId, messageId), eq(outbox.kind, 'job'), ne(outbox.state, 'pending')))
        .returning()
        .get()
    },

    async find(messageId) {
      return db.select().from(outbox).where(eq(outbox.messageId, messageId)).get()
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
        .all()
    },

    async attempts(outboxId) {
      return db.select().from(outboxAttempts).where(eq(outboxAttempts.outboxId, outboxId)).orderBy(desc(outboxAttempts.id)).all()
    },

    async prune(before) {
      return db.delete(outbox).where(and(ne(outbox.state, 'pending'), lt(outbox.doneAt, before))).run().changes
    },

    async listSubscriptions() {
      return db.select().from(webhookSubscriptions).orderBy(webhookSubscriptions.id).all()
    },

    async findSubscription(id) {
      return db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, id)).get()
    },

    async insertSubscription(values) {
      return db.insert(webhookSubscriptions).values({ ...values, createdAt: values.updatedAt }).returning().get()
    },

    async updateSubscription(id, values) {
      return db.update(webhookSubscriptions).set(values).where(eq(webhookSubscriptions.id, id)).returning().get()
    },

    async deleteSubscription(id) {
      return db.delete(webhookSubscriptions).where(eq(webhookSubscriptions.id, id)).run().changes > 0
    },

    async recordSubscriptionResult(id, succeeded, disableAt, reason) {
      const failures = succeeded ? sql`0` : sql`${webhookSubscriptions.failureCount} + 1`
      return writeTransaction(db, () => {
        const row = db.update(webhookSubscriptions).set({ failureCount: failures }).where(eq(webhookSubscriptions.id, id)).returning().get()
        if (!row || succeeded || !row.enabled || row.failureCount < disableAt) return row
        return db.update(webhookSubscriptions).set({ enabled: false, disabledReason: reason, updatedAt: new Date() }).where(eq(webhookSubscriptions.id, id)).returning().get()
      })
    },

    async recordPushAttempt(shipmentId, integrationId, at, error, reference) {
      const values = {
        lastPushAt: at,
        lastPushError: error,
        updatedAt: at,
        ...(reference.externalId != null && { externalId: reference.externalId }),
        ...(reference.externalUrl != null && { externalUrl: reference.externalUrl }),
      }
      db.insert(shipmentExternalReferences)
        .values({ shipmentId, integrationId, pushAttempts: 1, ...values })
        .onConflictDoUpdate({
          target: [shipmentExternalReferences.shipmentId, shipmentExternalReferences.integrationId],
          set: { ...values, pushAttempts: sql`${shipmentExternalReferences.pushAttempts} + 1` },
        })
        .run()
    },
  }
}

/** A raw row of shipments_outbox, as Drizzle's typed selects return it. */
function decodeRow(raw: Record<string, unknown>): OutboxRow {
  const date = (value: unknown) => (value === null ? null : new Date(Number(value)))
  return {
    id: Number(raw.id),
    messageId: String(raw.message_id),
    kind: raw.kind as OutboxRow['kind'],
    name: String(raw.name),
    orderingKey: String(raw.ordering_key),
    payload: JSON.parse(String(raw.payload)) as Record<string, unknown>,
    state: raw.state as OutboxRow['state'],
    attempts: Number(raw.attempts),
    availableAt: date(raw.available_at)!,
    claimedUntil: date(raw.claimed_until),
    claimedBy: (raw.claimed_by as string | null) ?? null,
    lastError: (raw.last_error as string | null) ?? null,
    createdAt: date(raw.created_at)!,
    doneAt: date(raw.done_at),
  }
}
