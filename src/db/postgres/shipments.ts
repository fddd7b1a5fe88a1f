// Shipments on PostgreSQL: rows, history, the change committed under the mutex, creation and allocation.
// Every write is a transaction from the pool; the transition mutex is an in-process queue (so waiting
// requests do not hold connections) in front of a transaction-scoped advisory lock, held until commit and
// released by the server if the process dies.
import { trackingNumberKey } from '../../text.js'
import { and, count, desc, eq, gt, inArray, isNull, ne, sql } from 'drizzle-orm'
import {
  LockTimeoutError,
  ShipmentMissingError,
  allocatedByLine,
  allocationsByOrder,
  allocationToCheck,
  checkAllocation,
  orderComplete,
  transitionLockName,
  unchangedOutcome,
  type ExternalEventMark,
  type FillableColumns,
  type OutboxClaim,
  type ShipmentChangeOutcome,
  type ShipmentChangePlan,
  type ShipmentChangeRequest,
  type ShipmentRow,
  type ShipmentsStore,
  type AttentionRow,
} from '../data-layer.js'
import { insertCheckpoints } from './checkpoints.js'
import { localLockTimeout, sqlState } from './connection.js'
import { isInt4, writeTransaction, type PostgresContext, type Transaction } from './context.js'
import { recordDelivery } from './integrations.js'
import { ADVISORY_LOCK_CLASS } from './locks.js'
import { commitInOneStatement, readShipmentForChange, rowAfter, type ShipmentForChange } from './one-statement-change.js'
import { writeOutboxMessages } from './outbox.js'
import { attentionOrders, orderAdvances, orders, orderStatuses, shipmentExternalReferences, shipments, shipmentStatusHistory, statusCounts } from './schema.js'
import { referenceSearchBounds, referenceSearchKeyOf, trackingNumberKeyOf } from '../tracking-number-key.js'

/** lock_not_available: the lock_timeout of the transaction ran out. */
const LOCK_NOT_AVAILABLE = '55P03'

/** A search: references that start with `text` (an index range, see referenceSearchKeyOf), or the tracking number `text`. */
function referenceOrTrackingNumber(text: string) {
  const [from, to] = referenceSearchBounds(text)
  const key = referenceSearchKeyOf.postgres(shipments.reference)
  return sql`((${key} >= ${from} AND ${key} < ${to}) OR ${trackingNumberKeyOf(shipments.trackingNumber)} = ${trackingNumberKey(text)})`
}

/** The lock every creation and allocation of the order takes (and the attention list's refresh). */
export const lockOrder = (tx: Transaction, orderId: number) =>
  tx.execute(sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_CLASS.orderShipments}::int, ${orderId}::int)`)

/** True when the integration already applied a later event to the shipment (the row is locked until commit). */
async function externalEventIsStale(tx: Transaction, shipmentId: number, event: ExternalEventMark): Promise<boolean> {
  const [reference] = await tx
    .select({ lastEventAt: shipmentExternalReferences.lastEventAt })
    .from(shipmentExternalReferences)
    .where(and(eq(shipmentExternalReferences.shipmentId, shipmentId), eq(shipmentExternalReferences.integrationId, event.integrationId)))
    .for('update')
  return reference?.lastEventAt != null && event.occurredAt < reference.lastEventAt
}

/** Moves the integration's last-event mark forward, with the event's remote ids. */
async function markExternalEvent(tx: Transaction, shipmentId: number, event: ExternalEventMark, now: Date): Promise<void> {
  const values = {
    lastEventAt: event.occurredAt,
    updatedAt: now,
    ...(event.externalId != null && { externalId: event.externalId }),
    ...(event.externalUrl != null && { externalUrl: event.externalUrl }),
  }
  await tx
    .insert(shipmentExternalReferences)
    .values({ shipmentId, integrationId: event.integrationId, ...values })
    .onConflictDoUpdate({ target: [shipmentExternalReferences.shipmentId, shipmentExternalReferences.integrationId], set: values })
}

/** Keeps a change's checkpoints in its transaction (under the shipment's locks), with their messages. */
async function keepCheckpoints(tx: Transaction, scans: NonNullable<ShipmentChangeRequest['checkpoints']>, current: ShipmentRow, claimFor: OutboxClaim | null, now: Date) {
  const added = await insertCheckpoints(tx, scans.rows, now)
  return added.length > 0 ? writeOutboxMessages(tx, scans.messages(added, current), claimFor, now) : []
}

/** Writes the order's attention row as decided (null: the order needs none), under the order's lock the caller holds. */
export async function keepAttentionRow(tx: Transaction, orderId: number, row: AttentionRow | null, now: Date): Promise<void> {
  if (!row) {
    await tx.delete(attentionOrders).where(eq(attentionOrders.orderId, orderId))
    return
  }
  const values = { ...row, orderId, updatedAt: now }
  await tx.insert(attentionOrders).values(values).onConflictDoUpdate({ target: attentionOrders.orderId, set: values })
}

/** The items of the order's shipments that hold an allocation, but for `exceptId`'s. */
export const activeShipmentsOf = (tx: Transaction, orderId: number, exceptId: number | null) =>
  tx
    .select({ items: shipments.items })
    .from(shipments)
    .where(
      and(
        eq(shipments.orderId, orderId),
        exceptId === null ? undefined : ne(shipments.id, exceptId),
        eq(shipments.enabled, true),
        isNull(shipments.dateDeleted),
        ne(shipments.status, 'cancelled'),
      ),
    )

function createShipmentChange(context: PostgresContext): Pick<ShipmentsStore, 'commitShipmentChange'> {
  const { db, queue, group } = context
  return {
    async commitShipmentChange(id, request) {
      // `authorized`: the status the caller's authorize() approved, read before the transaction: host
      // code never runs while a connection, the advisory lock and the row lock are held.
      // `orderToLock`: the order whose lock the change will need, as the row read before said (its order
      // never changes); taken in the first round trip, after the shipment's, in the order every change takes them.
      const commit = (deadline: number | null, authorized: string | null, orderToLock: number | null) =>
        writeTransaction(context, async (tx): Promise<ShipmentChangeOutcome | 'status-moved'> => {
          let orderLocked: number | null = null
          if (deadline !== null) {
            // One round trip: the lock timeout is set (left to right) before the locks are waited for.
            const orderLock = orderToLock !== null ? sql`, pg_advisory_xact_lock(${ADVISORY_LOCK_CLASS.orderShipments}::int, ${orderToLock}::int)` : sql``
            await tx.execute(
              sql`SELECT ${localLockTimeout(deadline - Date.now())}, pg_advisory_xact_lock(${ADVISORY_LOCK_CLASS.shipmentTransition}::int, ${id}::int)${orderLock}`,
            )
            orderLocked = orderToLock
          }
          // FOR UPDATE: a change without the mutex (a field merge) still reads and writes one row atomically.
          const [before] = await tx.select().from(shipments).where(eq(shipments.id, id)).for('update')
          if (!before) throw new ShipmentMissingError(id)
          // Another instance moved the shipment between the authorization and the lock: authorize again.
          if (authorized !== null && before.status !== authorized) return 'status-moved'
          const now = new Date()
          const stale = request.externalEvent ? await externalEventIsStale(tx, id, request.externalEvent) : false
          // The ledger row commits with the change it caused, or not at all: a crash before the commit
          // leaves the delivery unrecorded, so the sender's retry applies it.
          const duplicate = request.delivery ? !(await recordDelivery(tx, request.delivery, stale ? { outcome: 'stale' } : null, now)) : false
          if (duplicate) return unchangedOutcome(before, { stale, duplicate })
          // The event's scans commit with the change (a refused change keeps none), under its locks; a
          // stale event's too, since they still say where the parcel was.
          const scans = request.checkpoints ? await keepCheckpoints(tx, request.checkpoints, before, request.claimFor ?? null, now) : []
          if (stale) return { ...unchangedOutcome(before, { stale, duplicate }), messages: scans }
          if (request.externalEvent) await markExternalEvent(tx, id, request.externalEvent, now)
          const plan = request.plan(before)
          const [history] = plan.history
            ? await tx
                .insert(shipmentStatusHistory)
                .values({ ...plan.history, shipmentId: id })
                .returning({ id: shipmentStatusHistory.id })
            : [null]
          const toCheck = allocationToCheck(before, plan.columns)
          // Serialized per order: allocations must not both count the other's quantity as free, and two
          // last shipments shipped at once must not both count the other as open.
          if ((toCheck || plan.claimOrderAdvance !== null) && orderLocked !== before.orderId) await lockOrder(tx, before.orderId)
          if (toCheck) checkAllocation(toCheck, allocatedByLine(await activeShipmentsOf(tx, before.orderId, id)))
          const [row] = await tx.update(shipments).set(plan.columns).where(eq(shipments.id, id)).returning()
          const { orderAdvanceClaimed, orderAdvanced } = await orderAdvanceOf(tx, row, plan, request.advanceOrderInTransaction === true, now)
          const outcome = { row, previousStatus: before.status, historyId: history?.id ?? null, orderAdvanceClaimed, orderAdvanced, stale: false, duplicate: false }
          const messages = request.messages ? await writeOutboxMessages(tx, request.messages(outcome), request.claimFor ?? null, now) : []
          return { ...outcome, messages: [...scans, ...messages] }
        }, { ownLockTimeout: deadline !== null, deadline })

      /**
       * The common change (no integration event or delivery, no allocation to check, no order advance,
       * one event at most) in one statement after the read: 'moved' when the row changed since the read,
       * 'interactive' when the change needs the interactive transaction ('interactive-order': with the order's lock).
       */
      const commitOneStatement = async (current: ShipmentForChange, deadline: number | null): Promise<ShipmentChangeOutcome | 'moved' | 'interactive' | 'interactive-order'> => {
        const plan = request.plan(current.row)
        if (plan.claimOrderAdvance !== null || allocationToCheck(current.row, plan.columns)) return 'interactive-order'
        if (plan.history && current.historyId === null) return 'interactive'
        const now = new Date()
        const outcome = {
          row: rowAfter(current.row, plan.columns),
          previousStatus: current.row.status,
          historyId: plan.history ? current.historyId : null,
          orderAdvanceClaimed: false,
          orderAdvanced: false,
          stale: false,
          duplicate: false,
        }
        const messages = request.messages ? request.messages(outcome) : []
        if (messages.length > 1 || messages.some((message) => message.kind !== 'event')) return 'interactive'
        const change = {
          shipment: current,
          after: outcome.row,
          history: plan.history,
          event: messages[0] ?? null,
          claimFor: request.claimFor ?? null,
          lockTimeoutMs: deadline === null ? null : deadline - Date.now(),
          lockClass: ADVISORY_LOCK_CLASS.shipmentTransition,
          now,
        }
        // In a group, on the group's connection (its locks then last until the group commits), with the
        // lock's wait what is left of the deadline when the group runs it.
        const written = group
          ? await group.run((_tx, client) => commitInOneStatement(client!, { ...change, lockTimeoutMs: deadline === null ? null : deadline - Date.now() }), {
              ownLockTimeout: deadline !== null,
              oneStatement: true,
              deadline,
            })
          : await commitInOneStatement(db.$client, change)
        return written === 'moved' ? 'moved' : { ...outcome, messages: written }
      }

      /**
       * Authorizes against the row as it is now, then commits; again if the row (in the interactive
       * transaction: the status) moved in between. The read serves the authorization and the plan: the
       * statement that writes checks, under the lock, that the row is still the version read.
       */
      const authorizeAndCommit = async (deadline: number | null) => {
        const oneStatement = !request.externalEvent && !request.delivery && !request.checkpoints
        for (;;) {
          let authorized: string | null = null
          let orderToLock: number | null = null
          if (request.authorize || oneStatement) {
            // A history id is set aside only for a change under the mutex (a status change, nearly always).
            const current = await readShipmentForChange(db, id, deadline !== null)
            if (!current) throw new ShipmentMissingError(id)
            if (request.authorize) {
              await request.authorize(current.row)
              authorized = current.row.status
            }
            if (oneStatement) {
              const outcome = await commitOneStatement(current, deadline)
              if (outcome === 'moved') continue
              if (outcome === 'interactive-order') orderToLock = current.row.orderId
              else if (outcome !== 'interactive') return outcome
            }
          }
          const outcome = await commit(deadline, authorized, orderToLock)
          if (outcome !== 'status-moved') return outcome
        }
      }
      if (!isInt4(id)) throw new ShipmentMissingError(id)
      if (request.lockTimeoutMs === undefined) return authorizeAndCommit(null)
      const name = transitionLockName(id)
      const deadline = Date.now() + request.lockTimeoutMs
      return queue.withLock(name, request.lockTimeoutMs, async () => {
        try {
          return await authorizeAndCommit(deadline)
        } catch (error) {
          if (sqlState(error) === LOCK_NOT_AVAILABLE) throw new LockTimeoutError(name)
          throw error
        }
      })
    },
  }
}

export function createPostgresShipmentsStore(context: PostgresContext): ShipmentsStore {
  const { db } = context
  async function findShipment(id: number) {
    if (!isInt4(id)) return undefined
    const [row] = await db.select().from(shipments).where(eq(shipments.id, id))
    return row
  }
  /** Shipments not deleted (of one status), from the counts the trigger keeps. */
  const keptCount = async (status?: string) => {
    const [{ total }] = await db
      .select({ total: sql<string>`coalesce(sum(${statusCounts.count}), 0)` })
      .from(statusCounts)
      .where(status !== undefined ? eq(statusCounts.status, status) : undefined)
    return Number(total)
  }
  /** The ids of the shipments whose external reference at the integration has this id (a subquery). */
  const externalReferenceHolders = (reference: { integrationId: number; externalId: string }) =>
    db
      .select({ id: shipmentExternalReferences.shipmentId })
      .from(shipmentExternalReferences)
      .where(and(eq(shipmentExternalReferences.integrationId, reference.integrationId), eq(shipmentExternalReferences.externalId, reference.externalId)))

  return {
    findShipment,

    async updateShipmentColumns(id, columns, fillEmpty = {}, options = {}) {
      if (!isInt4(id)) return undefined
      const fills = Object.fromEntries(Object.entries(fillEmpty).map(([column, value]) => [column, sql`coalesce(${shipments[column as keyof FillableColumns]}, ${value})`]))
      const keptNumber = options.unlessTrackingNumberChanges && columns.trackingNumber != null ? sql` AND (${shipments.trackingNumber} IS NULL OR ${shipments.trackingNumber} = ${columns.trackingNumber ?? null})` : sql``
      const update = (handle: Transaction | typeof db) => handle.update(shipments).set({ ...columns, ...fills }).where(sql`${eq(shipments.id, id)}${keptNumber}`).returning()
      // One statement: in a group it shares the commit, alone it commits by itself.
      const [row] = context.group ? await context.group.run((tx) => update(tx), { ownLockTimeout: false, oneStatement: true }) : await update(db)
      return row
    },

    ...createShipmentChange(context),

    async createShipments(orderId, orderReference, plan, userId, messages, attention) {
      return writeTransaction(context, async (tx) => {
        // Numbering reads the count and then inserts, and allocation reads what is held: one creator per order at a time.
        await lockOrder(tx, orderId)
        // The count and what the active shipments hold, in one read of the order's shipments.
        const {
          rows: [existing],
        } = await tx.execute<{ total: number; active: Array<Pick<ShipmentRow, 'items'>['items']> }>(sql`
          SELECT count(*)::int AS total,
                 coalesce(json_agg(${shipments.items}) FILTER (WHERE ${shipments.enabled} AND ${shipments.dateDeleted} IS NULL AND ${shipments.status} <> 'cancelled'), '[]') AS active
            FROM ${shipments} WHERE ${shipments.orderId} = ${orderId}`)
        const allocated = allocatedByLine(existing.active.map((items) => ({ items })))
        const itemLists = plan(allocated)
        for (const items of itemLists) {
          checkAllocation(items, allocated)
          for (const item of items) allocated.set(item.lineItemId, (allocated.get(item.lineItemId) ?? 0) + item.quantity)
        }
        if (itemLists.length === 0) return { rows: [], messages: [] }
        const now = new Date()
        const created = await tx
          .insert(shipments)
          .values(
            itemLists.map((items, index) => ({
              orderId,
              reference: `${orderReference}-s${String(existing.total + index + 1).padStart(3, '0')}`,
              status: 'new',
              items,
              createdAt: now,
              updatedAt: now,
            })),
          )
          .returning()
        created.sort((a, b) => a.id - b.id)
        await tx
          .insert(shipmentStatusHistory)
          .values(created.map((row) => ({ shipmentId: row.id, fromStatus: null, toStatus: 'new', userId, createdAt: now })))
        if (attention) await keepAttentionRow(tx, orderId, attention(allocated), now)
        return { rows: created, messages: messages ? await writeOutboxMessages(tx, messages.of(created), messages.claimFor, now) : [] }
      }, { ownLockTimeout: false })
    },

    async listShipments(query) {
      if (query.orderId !== undefined && !isInt4(query.orderId)) return { rows: [], total: 0 }
      if (query.externalReference && !isInt4(query.externalReference.integrationId)) return { rows: [], total: 0 }
      const where = and(
        query.orderId !== undefined ? eq(shipments.orderId, query.orderId) : undefined,
        query.status !== undefined ? eq(shipments.status, query.status) : undefined,
        query.referenceStartsWith ? referenceOrTrackingNumber(query.referenceStartsWith) : undefined,
        query.trackingNumber !== undefined ? sql`${trackingNumberKeyOf(shipments.trackingNumber)} = ${trackingNumberKey(query.trackingNumber)}` : undefined,
        query.externalReference ? inArray(shipments.id, externalReferenceHolders(query.externalReference)) : undefined,
        query.includeDeleted ? undefined : isNull(shipments.dateDeleted),
      )
      // Without a filter that narrows by an index of its own, the total is the kept count (never a count of every shipment).
      const keptTotal = query.orderId === undefined && !query.referenceStartsWith && query.trackingNumber === undefined && !query.externalReference && !query.includeDeleted
      const page = query.afterId !== undefined ? and(where, gt(shipments.id, query.afterId)) : where
      const pageRows = () => db.select().from(shipments).where(page).orderBy(shipments.id).limit(query.limit).offset(query.offset)
      const counted = () => db.select({ total: count() }).from(shipments).where(where).then(([row]) => row.total)
      if (!keptTotal && query.afterId === undefined && query.offset === 0) {
        // A first page that is not full is the whole count (a tracking event's lookup, an order's
        // shipments): one statement instead of two.
        const rows = await pageRows()
        return { rows, total: rows.length < query.limit ? rows.length : await counted() }
      }
      const [total, rows] = await Promise.all([keptTotal ? keptCount(query.status) : counted(), pageRows()])
      return { rows, total }
    },

    async allocations(orderIds) {
      const ids = orderIds.filter(isInt4)
      if (ids.length === 0) return new Map()
      const rows = await db
        .select({ orderId: shipments.orderId, items: shipments.items })
        .from(shipments)
        .where(and(inArray(shipments.orderId, ids), eq(shipments.enabled, true), isNull(shipments.dateDeleted), ne(shipments.status, 'cancelled')))
      return allocationsByOrder(rows)
    },

    async shipmentHistory(shipmentId) {
      if (!isInt4(shipmentId)) return []
      return db.select().from(shipmentStatusHistory).where(eq(shipmentStatusHistory.shipmentId, shipmentId)).orderBy(desc(shipmentStatusHistory.id))
    },

    async setShipmentDeleted(id, deleted, now, messages) {
      if (!isInt4(id)) return undefined
      return db.transaction(async (tx) => {
        if (!deleted) {
          const [before] = await tx.select().from(shipments).where(eq(shipments.id, id)).for('update')
          const toCheck = before ? allocationToCheck(before, { dateDeleted: null }) : null
          if (toCheck) {
            await lockOrder(tx, before.orderId)
            checkAllocation(toCheck, allocatedByLine(await activeShipmentsOf(tx, before.orderId, id)))
          }
        }
        const [row] = await tx
          .update(shipments)
          .set({ dateDeleted: deleted ? sql`coalesce(${shipments.dateDeleted}, ${now})` : null, updatedAt: now })
          .where(eq(shipments.id, id))
          .returning()
        if (!row) return undefined
        return { row, messages: messages ? await writeOutboxMessages(tx, messages.of(row), messages.claimFor, now) : [] }
      })
    },
  }
}

/**
 * The order advance a change causes, under the order's lock: claimed once the order's live shipments
 * complete it (one claim per order and status), and, for the reference store, applied here: the order
 * takes the status when it exists, as the store's setOrderStatus would.
 */
async function orderAdvanceOf(tx: Transaction, row: ShipmentRow, plan: ShipmentChangePlan, inTransaction: boolean, now: Date) {
  if (plan.claimOrderAdvance === null) return { orderAdvanceClaimed: false, orderAdvanced: false }
  const status = plan.claimOrderAdvance
  const live = await tx
    .select({ status: shipments.status, items: shipments.items })
    .from(shipments)
    .where(and(eq(shipments.orderId, row.orderId), eq(shipments.enabled, true), isNull(shipments.dateDeleted)))
  if (!orderComplete(live, plan.requireCoverage)) return { orderAdvanceClaimed: false, orderAdvanced: false }
  if (!inTransaction) {
    const claimed = await tx.insert(orderAdvances).values({ orderId: row.orderId, status, createdAt: now }).onConflictDoNothing().returning({ orderId: orderAdvances.orderId })
    return { orderAdvanceClaimed: claimed.length > 0, orderAdvanced: false }
  }
  // The claim and the order's status in one statement: the order moves only when this change claimed its advance.
  const { rows } = await tx.execute<{ claimed: number; advanced: number }>(sql`
    WITH claimed AS (
      INSERT INTO ${orderAdvances} (order_id, status, created_at) VALUES (${row.orderId}, ${status}, ${now.toISOString()}::timestamptz)
      ON CONFLICT DO NOTHING RETURNING order_id
    ), advanced AS (
      UPDATE ${orders} SET status_handle = ${status}, date_updated = ${now.toISOString()}::timestamptz
       WHERE id IN (SELECT order_id FROM claimed) AND EXISTS (SELECT 1 FROM ${orderStatuses} WHERE handle = ${status})
      RETURNING id
    )
    SELECT (SELECT count(*) FROM claimed)::int AS claimed, (SELECT count(*) FROM advanced)::int AS advanced`)
  return { orderAdvanceClaimed: Number(rows[0].claimed) > 0, orderAdvanced: Number(rows[0].advanced) > 0 }
}
