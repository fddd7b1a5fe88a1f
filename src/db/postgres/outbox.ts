// The outbox and webhook subscriptions on PostgreSQL. Sweeps claim one instance at a time (a
// transaction-level advisory lock), so two instances never split one key's run of events between them.
import { newMessageId } from '../../message-id.js'
import { and, asc, desc, eq, gt, inArray, isNull, like, lt, lte, ne, or, sql } from 'drizzle-orm'
import { TAKEN_OVER_ATTEMPT_ERROR, type NewOutboxMessage, type OutboxClaim, type OutboxRow, type OutboxStore } from '../data-layer.js'
import type { PostgresDatabase } from './connection.js'
import type { PostgresContext } from './context.js'
import { ADVISORY_LOCK_CLASS } from './locks.js'
import { outbox, outboxAttempts, shipmentExternalReferences, webhookSubscriptions } from './schema.js'

type Transaction = Parameters<Parameters<PostgresDatabase['transaction']>[0]>[0]

/**
 * Writes messages inside the caller's transaction, claimed by `claimFor` unless they must wait (see
 * OutboxStore.enqueue): an event behind an older pending event of its key this instance does not hold,
 * a job behind any older pending job of its key. One statement for all of them: its NOT EXISTS reads do
 * not see the statement's own rows, which changes nothing for an event (an earlier event of its key in
 * the batch is either claimed here, so no obstacle, or waits behind an older row that stops this one
 * too); a job behind an earlier job of its key in the batch is written unclaimed here.
 */
export async function writeOutboxMessages(tx: Transaction | PostgresDatabase, messages: NewOutboxMessage[], claimFor: OutboxClaim | null, now: Date): Promise<OutboxRow[]> {
  if (messages.length === 0) return []
  const jobKeysBefore = new Set<string>()
  const rows = messages.map((message) => {
    // A message that must wait is written unclaimed, left to the sweep or to the hand-off of the job before it.
    const behindJobOfBatch = message.kind === 'job' && jobKeysBefore.has(message.orderingKey)
    if (message.kind === 'job') jobKeysBefore.add(message.orderingKey)
    const waitsFor = message.kind === 'job' ? sql`true` : sql`claimed_by IS DISTINCT FROM ${claimFor?.instanceId ?? null}`
    const claimed =
      claimFor && !behindJobOfBatch
        ? sql`NOT EXISTS (SELECT 1 FROM shipments_outbox WHERE ordering_key = ${message.orderingKey} AND state = 'pending' AND kind = ${message.kind} AND ${waitsFor})`
        : null
    return {
      messageId: message.messageId ?? newMessageId(),
      kind: message.kind,
      name: message.name,
      orderingKey: message.orderingKey,
      payload: message.payload,
      availableAt: message.availableAt ?? now,
      claimedUntil: claimFor && claimed ? sql`CASE WHEN ${claimed} THEN ${new Date(now.getTime() + claimFor.leaseMs)}::timestamptz END` : null,
      claimedBy: claimFor && claimed ? sql`CASE WHEN ${claimed} THEN ${claimFor.instanceId} END` : null,
      createdAt: now,
    }
  })
  const written = await tx.insert(outbox).values(rows).onConflictDoNothing().returning()
  // Ids follow the rows' order (one sequence, one statement); RETURNING's own order is not promised.
  return written.sort((a, b) => a.id - b.id)
}

/** The outbox's parts: delivery (writes, claims, outcomes), upkeep (the admin's reads and requeue, the prune), subscriptions. */
type OutboxDelivery = Pick<OutboxStore, 'enqueue' | 'claimDue' | 'renewClaims' | 'complete' | 'recordAttempt'>
type OutboxUpkeep = Pick<OutboxStore, 'requeue' | 'dismiss' | 'find' | 'list' | 'attempts' | 'prune'>

export function createPostgresOutboxStore(context: PostgresContext): OutboxStore {
  return { ...createOutboxDelivery(context), ...createOutboxUpkeep(context), ...createWebhookSubscriptionRows(context) }
}

function createOutboxDelivery({ db }: PostgresContext): OutboxDelivery {
  return {
    async enqueue(messages, claimFor) {
      return db.transaction((tx) => writeOutboxMessages(tx, messages, claimFor, new Date()))
    },

    async claimDue(instanceId, leaseMs, limit) {
      // A run of events is taken at once (behind this instance's own, too), not one per key and round:
      // what a dead process left drains at full speed once its lease is over. A job only as the first of
      // its key's pending jobs, and while no other job of the key is held (a redelivery waits for the one
      // in flight); those behind it are handed off one by one (recordAttempt). The lock makes another
      // instance's claim wait for this one's commit, so it sees these rows held: without it, both could
      // read the same expired run, and each take a part of it.
      //
      // Nested loops off for this transaction (set_config(..., true) is SET LOCAL, in the lock's round
      // trip): on a large outbox, ANALYZE's sample of its delivered rows holds few pending ones or none,
      // and the planner, counting on a row or two, took the waiting messages' anti join as a nested
      // loop, each pending message against every other: quadratic in the backlog (135 ms for 800
      // pending beside 10 million delivered, against 1 ms for the hash join it takes with them off).
      // The transaction's other statements look rows up by id, with no join a nested loop would serve.
      const claimed = await db.transaction(async (tx) => {
        await tx.execute(sql`SELECT set_config('enable_nestloop', 'off', true), pg_advisory_xact_lock(${ADVISORY_LOCK_CLASS.outboxClaim}::int, 0)`)
        const now = new Date()
        const candidates = await tx.execute<{ id: number; kind: string; claimed_until: Date | string | null }>(sql`
          SELECT o.id, o.kind, o.claimed_until FROM shipments_outbox o
          WHERE o.state = 'pending' AND o.available_at <= ${now} AND (o.claimed_until IS NULL OR o.claimed_until < ${now})
            AND NOT EXISTS (
              SELECT 1 FROM shipments_outbox e
              WHERE e.ordering_key = o.ordering_key AND e.state = 'pending' AND e.kind = o.kind
                AND ((e.id < o.id AND (o.kind = 'job' OR e.available_at > ${now} OR (e.claimed_until >= ${now} AND e.claimed_by <> ${instanceId})))
                  OR (o.kind = 'job' AND e.claimed_until >= ${now})))
          ORDER BY o.id LIMIT ${limit} FOR UPDATE SKIP LOCKED`)
        if (candidates.rows.length === 0) return []
        // A job whose claim ran out was held by an instance that stopped renewing it: log that attempt.
        const takenOver = candidates.rows.filter((row) => row.kind === 'job' && row.claimed_until !== null).map((row) => Number(row.id))
        if (takenOver.length > 0) {
          await tx.insert(outboxAttempts).values(takenOver.map((outboxId) => ({ outboxId, attemptedAt: now, statusCode: null, durationMs: 0, error: TAKEN_OVER_ATTEMPT_ERROR })))
          await tx.update(outbox).set({ attempts: sql`${outbox.attempts} + 1`, lastError: TAKEN_OVER_ATTEMPT_ERROR }).where(inArray(outbox.id, takenOver))
        }
        return tx
          .update(outbox)
          .set({ claimedBy: instanceId, claimedUntil: new Date(now.getTime() + leaseMs) })
          .where(inArray(outbox.id, candidates.rows.map((row) => Number(row.id))))
          .returning()
      })
      return claimed.sort((a, b) => a.id - b.id)
    },

    async renewClaims(instanceId, ids, leaseMs) {
      if (ids.length === 0) return
      await db
        .update(outbox)
        .set({ claimedUntil: new Date(Date.now() + leaseMs) })
        .where(and(inArray(outbox.id, ids), eq(outbox.claimedBy, instanceId), eq(outbox.state, 'pending')))
    },

    async complete(ids, followUps, claimFor) {
      if (ids.length === 0 && followUps.length === 0) return []
      if (followUps.length === 0) {
        // The batch's done mark alone (no subscription or pushing integration wants a follow-up): one
        // prepared statement, committed on its own, where a transaction took three round trips.
        await db.$client.query({
          name: 'shipments_outbox_done_1',
          text: "UPDATE shipments_outbox SET state = 'done', done_at = $2::timestamptz, claimed_until = NULL WHERE id = ANY($1::int[])",
          values: [ids, new Date().toISOString()],
        })
        return []
      }
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
        const moveOn = {
          attempts: sql`${outbox.attempts} + 1`,
          lastError: record.attempt.error,
          claimedUntil: null,
          ...(outcome.state === 'retry' ? { availableAt: outcome.retryAt } : { state: outcome.state, doneAt: record.attempt.attemptedAt }),
        }
        if (outcome.state === 'retry' || !claimFor) {
          await tx.update(outbox).set(moveOn).where(eq(outbox.id, id))
          return writeOutboxMessages(tx, record.followUps ?? [], claimFor, record.attempt.attemptedAt)
        }
        // One statement moves the job on and hands off to the job that waited behind it: the first
        // pending job of its key (the finished one still reads as pending within the statement), if
        // nobody holds it.
        const finished = tx.$with('finished').as(tx.update(outbox).set(moveOn).where(eq(outbox.id, id)).returning({ orderingKey: outbox.orderingKey }))
        const now = new Date()
        const next = await tx
          .with(finished)
          .update(outbox)
          .set({ claimedBy: claimFor.instanceId, claimedUntil: new Date(now.getTime() + claimFor.leaseMs) })
          .where(
            and(
              eq(
                outbox.id,
                sql`(SELECT n.id FROM shipments_outbox n, ${finished} f
                  WHERE n.ordering_key = f.ordering_key AND n.kind = 'job' AND n.state = 'pending' AND n.id <> ${id} ORDER BY n.id LIMIT 1)`,
              ),
              lte(outbox.availableAt, now),
              or(isNull(outbox.claimedUntil), lt(outbox.claimedUntil, now)),
            ),
          )
          .returning()
        return [...(await writeOutboxMessages(tx, record.followUps ?? [], claimFor, record.attempt.attemptedAt)), ...next]
      })
    },
  }
}

function createOutboxUpkeep({ db }: PostgresContext): OutboxUpkeep {
  return {
    async requeue(messageId) {
      const [row] = await db
        .update(outbox)
        .set({ state: 'pending', attempts: 0, availableAt: new Date(), claimedUntil: null, claimedBy: null, doneAt: null })
        .where(and(eq(outbox.messageId, messageId), eq(outbox.kind, 'job'), ne(outbox.state, 'pending')))
        .returning()
      return row
    },

    async dismiss(messageId, note) {
      const [row] = await db
        .update(outbox)
        .set({ state: 'skipped', lastError: note, claimedUntil: null, claimedBy: null })
        .where(and(eq(outbox.messageId, messageId), eq(outbox.kind, 'job'), eq(outbox.state, 'failed')))
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

    async prune(before, limit) {
      // On the index of done_at; rows another instance is deleting are skipped, not waited for.
      const result = await db.$client.query(
        `DELETE FROM shipments_outbox WHERE id IN (
           SELECT id FROM shipments_outbox WHERE done_at < $1 AND state <> 'pending' ORDER BY done_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [before, limit],
      )
      return result.rowCount ?? 0
    },
  }
}

/** The webhook subscriptions, and the push attempts recorded on a shipment's external reference. */
function createWebhookSubscriptionRows({ db }: PostgresContext): Omit<OutboxStore, keyof OutboxDelivery | keyof OutboxUpkeep> {
  return {
    async listSubscriptions() {
      return db.select().from(webhookSubscriptions).orderBy(webhookSubscriptions.id)
    },

    async findSubscription(id) {
      // Ids are int4: a larger one names no subscription (as on SQLite) rather than failing the query.
      if (!Number.isInteger(id) || id < -2147483648 || id > 2147483647) return undefined
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
      // One statement: the count and the disabling cannot be split by another instance's result. A
      // disabled subscription's count stays where it stopped (deliveries still in flight when it was
      // disabled change nothing), so enabling it again starts from a known state.
      const [row] = await db
        .update(webhookSubscriptions)
        .set({
          failureCount: failures,
          ...(!succeeded && {
            enabled: sql`${webhookSubscriptions.enabled} AND ${webhookSubscriptions.failureCount} + 1 < ${disableAt}`,
            disabledReason: sql`CASE WHEN ${webhookSubscriptions.enabled} AND ${webhookSubscriptions.failureCount} + 1 >= ${disableAt} THEN ${reason} ELSE ${webhookSubscriptions.disabledReason} END`,
          }),
        })
        .where(and(eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.enabled, true)))
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
