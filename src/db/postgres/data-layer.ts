// The data layer on PostgreSQL (node-postgres): every write a transaction from the pool; the transition
// mutex is an in-process queue (so waiting requests do not hold connections) in front of a
// transaction-scoped advisory lock, held until commit and released by the server if the process dies.
import { inChunks } from '../../in-chunks.js'
import { trackingNumberKey } from '../../text.js'
import { and, count, desc, eq, gt, gte, inArray, isNotNull, isNull, lt, lte, ne, notInArray, sql } from 'drizzle-orm'
import type { OrderLine } from '../../orders/order-store.js'
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
  type DataLayer,
  type DeliveryOutcome,
  type ExternalEventMark,
  type FillableColumns,
  type ShipmentChangeOutcome,
} from '../data-layer.js'
import { createMutex } from '../mutex.js'
import { createAdvisoryLockSession } from './lock-session.js'
import { createPostgresNotificationStore } from './notifications.js'
import { createPostgresParcelStore } from './parcels.js'
import { createPostgresReturnStore } from './returns.js'
import { createPostgresCheckpointData } from './checkpoints.js'
import { createPostgresChangeStamp, localLockTimeout, sqlState, type PostgresDatabase } from './connection.js'
import { ADVISORY_LOCK_CLASS } from './locks.js'
import { createPostgresOrderExport } from './order-export.js'
import { commitInOneStatement, readShipmentForChange, rowAfter, type ShipmentForChange } from './one-statement-change.js'
import { createPostgresOutboxStore, writeOutboxMessages } from './outbox.js'
import {
  attentionOrders,
  exchangeActivity,
  integrations,
  orderAddresses,
  orderAdvances,
  orderLineItems,
  orders,
  orderStatuses,
  packageState,
  shipmentExternalReferences,
  shipments,
  shipmentStatusHistory,
  shippedCounts,
  statusCounts,
  webhookDeliveries,
} from './schema.js'
import { referenceSearchBounds, referenceSearchKeyOf, trackingNumberKeyOf } from '../tracking-number-key.js'

/** Order lines written per statement: far below either engine's limit on bound parameters. */
const LINE_ROWS_PER_INSERT = 500

type Transaction = Parameters<Parameters<PostgresDatabase['transaction']>[0]>[0]

/** lock_not_available: the lock_timeout of the transaction ran out. */
const LOCK_NOT_AVAILABLE = '55P03'
/** SQLSTATE unique_violation. */
const UNIQUE_VIOLATION = '23505'

/**
 * Ids are int4 and text cannot hold NUL on PostgreSQL: a key outside what a column can hold names no
 * row (as on SQLite), rather than failing the query.
 */
const isInt4 = (value: number) => Number.isInteger(value) && value >= -2147483648 && value <= 2147483647
const isStorableText = (value: string) => !value.includes('\u0000')

/** The activity log's refused rows (status 400 and above), or its answered ones: each kept against its own bound. */
const exchangeActivityOutcome = (refused: boolean) =>
  refused ? sql`${exchangeActivity.statusCode} >= 400` : sql`${exchangeActivity.statusCode} < 400`

/** A search: references that start with `text` (an index range, see referenceSearchKeyOf), or the tracking number `text`. */
function referenceOrTrackingNumber(text: string) {
  const [from, to] = referenceSearchBounds(text)
  const key = referenceSearchKeyOf.postgres(shipments.reference)
  return sql`((${key} >= ${from} AND ${key} < ${to}) OR ${trackingNumberKeyOf(shipments.trackingNumber)} = ${trackingNumberKey(text)})`
}

export function createPostgresDataLayer(db: PostgresDatabase, options: { owned: boolean }): DataLayer {
  // Waiting requests queue here, not on the server: N requests for one shipment use one connection.
  const queue = createMutex({ directory: null })
  const lockSession = createAdvisoryLockSession(db.$client)
  let localWrites = 0
  const wrote = <T>(result: T) => {
    localWrites++
    return result
  }

  const lockOrder = (tx: Transaction, orderId: number) =>
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

  /** Records a delivery in the dedupe ledger; false when it was recorded before. */
  async function recordDelivery(executor: Transaction | PostgresDatabase, delivery: { integrationId: number; deliveryId: string }, outcome: DeliveryOutcome | null, now: Date) {
    if (!isInt4(delivery.integrationId) || !isStorableText(delivery.deliveryId)) return false
    const recorded = await executor
      .insert(webhookDeliveries)
      .values({ ...delivery, ...(outcome && { outcome: { ...outcome } }), createdAt: now })
      .onConflictDoNothing()
      .returning({ deliveryId: webhookDeliveries.deliveryId })
    return recorded.length > 0
  }

  /** The items of the order's shipments that hold an allocation, but for `exceptId`'s. */
  const activeShipmentsOf = (tx: Transaction, orderId: number, exceptId: number | null) =>
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

  async function findShipment(id: number) {
    if (!isInt4(id)) return undefined
    const [row] = await db.select().from(shipments).where(eq(shipments.id, id))
    return row
  }

  const statusExists = async (tx: Transaction, handle: string) =>
    (await tx.select({ id: orderStatuses.id }).from(orderStatuses).where(eq(orderStatuses.handle, handle))).length > 0
  const summaryColumns = { id: orders.id, reference: orders.reference, statusHandle: orders.statusHandle, isCompleted: orders.isCompleted, email: orders.email }
  const findOrderSummary = async (orderId: number) => (await db.select(summaryColumns).from(orders).where(eq(orders.id, orderId)))[0]
  // What the admin order page shows beside the summary: one indexed lookup each (unique keys). Drizzle
  // writes a single-table query's columns unqualified, so the order's own are named with their table.
  const orderColumn = (column: typeof orders.id | typeof orders.statusHandle) => sql`${orders}.${sql.identifier(column.name)}`
  const displayColumns = {
    customerName: sql<string | null>`(select ${orderAddresses.fullName} from ${orderAddresses} where ${orderAddresses.orderId} = ${orderColumn(orders.id)} and ${orderAddresses.kind} = 'shipping')`,
    statusName: sql<string | null>`(select ${orderStatuses.name} from ${orderStatuses} where ${orderStatuses.handle} = ${orderColumn(orders.statusHandle)})`,
  }
  // Written as the partial index's own condition (constants, not parameters), so every plan can use it.
  const lateWhere = (now: Date) =>
    and(sql`enabled AND date_deleted IS NULL AND status NOT IN ('shipped', 'cancelled') AND date_scheduled_ship IS NOT NULL`, lt(shipments.dateScheduledShip, now))
  /** Shipments not deleted (of one status), from the counts the trigger keeps. */
  const keptCount = async (status?: string) => {
    const [{ total }] = await db
      .select({ total: sql<string>`coalesce(sum(${statusCounts.count}), 0)` })
      .from(statusCounts)
      .where(status !== undefined ? eq(statusCounts.status, status) : undefined)
    return Number(total)
  }
  const attentionColumns = {
    orderId: attentionOrders.orderId,
    reference: attentionOrders.reference,
    statusHandle: attentionOrders.statusHandle,
    dateOrdered: attentionOrders.dateOrdered,
    customer: attentionOrders.customer,
    linesMissing: attentionOrders.linesMissing,
    unitsMissing: attentionOrders.unitsMissing,
  }
  const failingPushWhere = and(isNotNull(shipmentExternalReferences.lastPushError), isNull(shipments.dateDeleted))
  const failingPushColumns = {
    shipmentId: shipments.id,
    shipmentReference: shipments.reference,
    integrationHandle: integrations.handle,
    lastPushAt: shipmentExternalReferences.lastPushAt,
    // Never null here: the filter keeps failed pushes only.
    lastPushError: sql<string>`${shipmentExternalReferences.lastPushError}`,
    pushAttempts: shipmentExternalReferences.pushAttempts,
  }
  /** The lines of these orders, by order, each in id order; options are a line's attributes. */
  async function linesOf(orderIds: number[]): Promise<Map<number, OrderLine[]>> {
    const byOrder = new Map<number, OrderLine[]>()
    if (orderIds.length === 0) return byOrder
    const rows = await db
      .select({ orderId: orderLineItems.orderId, id: orderLineItems.id, sku: orderLineItems.sku, name: orderLineItems.name, quantity: orderLineItems.quantity, shippable: orderLineItems.shippable, attributes: orderLineItems.options })
      .from(orderLineItems)
      .where(inArray(orderLineItems.orderId, orderIds))
      .orderBy(orderLineItems.id)
    for (const { orderId, ...line } of rows) {
      const lines = byOrder.get(orderId)
      if (lines) lines.push(line)
      else byOrder.set(orderId, [line])
    }
    return byOrder
  }
  /** The ids of the shipments whose external reference at the integration has this id (a subquery). */
  const externalReferenceHolders = (reference: { integrationId: number; externalId: string }) =>
    db
      .select({ id: shipmentExternalReferences.shipmentId })
      .from(shipmentExternalReferences)
      .where(and(eq(shipmentExternalReferences.integrationId, reference.integrationId), eq(shipmentExternalReferences.externalId, reference.externalId)))
  const exportOrders = createPostgresOrderExport(db, () => localWrites)

  return {
    engine: 'postgres',

    findShipment,

    async updateShipmentColumns(id, columns, fillEmpty = {}, options = {}) {
      if (!isInt4(id)) return undefined
      const fills = Object.fromEntries(Object.entries(fillEmpty).map(([column, value]) => [column, sql`coalesce(${shipments[column as keyof FillableColumns]}, ${value})`]))
      const keptNumber = options.unlessTrackingNumberChanges && columns.trackingNumber != null ? sql` AND (${shipments.trackingNumber} IS NULL OR ${shipments.trackingNumber} = ${columns.trackingNumber ?? null})` : sql``
      const [row] = await db.update(shipments).set({ ...columns, ...fills }).where(sql`${eq(shipments.id, id)}${keptNumber}`).returning()
      return row
    },

    async commitShipmentChange(id, request) {
      // `authorized`: the status the caller's authorize() approved, read before the transaction: host
      // code never runs while a connection, the advisory lock and the row lock are held.
      const commit = (deadline: number | null, authorized: string | null) =>
        db.transaction(async (tx): Promise<ShipmentChangeOutcome | 'status-moved'> => {
          if (deadline !== null) {
            // One round trip: the lock timeout is set (left to right) before the lock is waited for.
            await tx.execute(
              sql`SELECT ${localLockTimeout(deadline - Date.now())}, pg_advisory_xact_lock(${ADVISORY_LOCK_CLASS.shipmentTransition}::int, ${id}::int)`,
            )
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
          if (stale || duplicate) return unchangedOutcome(before, { stale, duplicate })
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
          if (toCheck || plan.claimOrderAdvance !== null) await lockOrder(tx, before.orderId)
          if (toCheck) checkAllocation(toCheck, allocatedByLine(await activeShipmentsOf(tx, before.orderId, id)))
          const [row] = await tx.update(shipments).set(plan.columns).where(eq(shipments.id, id)).returning()
          let orderAdvanceClaimed = false
          if (plan.claimOrderAdvance !== null) {
            const live = await tx
              .select({ status: shipments.status, items: shipments.items })
              .from(shipments)
              .where(and(eq(shipments.orderId, row.orderId), eq(shipments.enabled, true), isNull(shipments.dateDeleted)))
            if (orderComplete(live, plan.requireCoverage)) {
              const claimed = await tx
                .insert(orderAdvances)
                .values({ orderId: row.orderId, status: plan.claimOrderAdvance, createdAt: now })
                .onConflictDoNothing()
                .returning({ orderId: orderAdvances.orderId })
              orderAdvanceClaimed = claimed.length > 0
            }
          }
          const outcome = { row, previousStatus: before.status, historyId: history?.id ?? null, orderAdvanceClaimed, stale: false, duplicate: false }
          const messages = request.messages ? await writeOutboxMessages(tx, request.messages(outcome), request.claimFor ?? null, now) : []
          return { ...outcome, messages }
        })

      /**
       * The common change (no integration event or delivery, no allocation to check, no order advance,
       * one event at most) in one statement after the read: 'moved' when the row changed since the read,
       * 'interactive' when the change needs the interactive transaction.
       */
      const commitOneStatement = async (current: ShipmentForChange, deadline: number | null): Promise<ShipmentChangeOutcome | 'moved' | 'interactive'> => {
        const plan = request.plan(current.row)
        if (plan.claimOrderAdvance !== null || allocationToCheck(current.row, plan.columns)) return 'interactive'
        if (plan.history && current.historyId === null) return 'interactive'
        const now = new Date()
        const outcome = {
          row: rowAfter(current.row, plan.columns),
          previousStatus: current.row.status,
          historyId: plan.history ? current.historyId : null,
          orderAdvanceClaimed: false,
          stale: false,
          duplicate: false,
        }
        const messages = request.messages ? request.messages(outcome) : []
        if (messages.length > 1 || messages.some((message) => message.kind !== 'event')) return 'interactive'
        const written = await commitInOneStatement(
          db,
          {
            shipment: current,
            after: outcome.row,
            history: plan.history,
            event: messages[0] ?? null,
            claimFor: request.claimFor ?? null,
            lockTimeoutMs: deadline === null ? null : deadline - Date.now(),
            lockClass: ADVISORY_LOCK_CLASS.shipmentTransition,
            now,
          },
        )
        return written === 'moved' ? 'moved' : { ...outcome, messages: written }
      }

      /**
       * Authorizes against the row as it is now, then commits; again if the row (in the interactive
       * transaction: the status) moved in between. The read serves the authorization and the plan: the
       * statement that writes checks, under the lock, that the row is still the version read.
       */
      const authorizeAndCommit = async (deadline: number | null) => {
        const oneStatement = !request.externalEvent && !request.delivery
        for (;;) {
          let authorized: string | null = null
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
              if (outcome !== 'interactive') return outcome
            }
          }
          const outcome = await commit(deadline, authorized)
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

    async createShipments(orderId, orderReference, plan, userId, messages) {
      return db.transaction(async (tx) => {
        // Numbering reads the count and then inserts, and allocation reads what is held: one creator per order at a time.
        await lockOrder(tx, orderId)
        const [[existing], active] = await Promise.all([
          tx.select({ total: count() }).from(shipments).where(eq(shipments.orderId, orderId)),
          activeShipmentsOf(tx, orderId, null),
        ])
        const allocated = allocatedByLine(active)
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
        return { rows: created, messages: messages ? await writeOutboxMessages(tx, messages.of(created), messages.claimFor, now) : [] }
      })
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

    async recordExchangeActivity(entry, { keep, keepRefused, every }) {
      // Not counted in localWrites: no cache reads this table. Now and then a prune by id, answered and
      // refused rows each against their own bound (anyone can send refused requests: they must not
      // evict the answered ones).
      const [{ id }] = await db.insert(exchangeActivity).values(entry).returning({ id: exchangeActivity.id })
      if (id % every !== 0) return
      for (const [rows, kept] of [[exchangeActivityOutcome(false), keep], [exchangeActivityOutcome(true), keepRefused]] as const) {
        const [newestDropped] = await db.select({ id: exchangeActivity.id }).from(exchangeActivity).where(rows).orderBy(desc(exchangeActivity.id)).limit(1).offset(kept)
        if (newestDropped) await db.delete(exchangeActivity).where(and(rows, lte(exchangeActivity.id, newestDropped.id)))
      }
    },

    async exchangeActivity(limit, refused) {
      const rows = refused === undefined ? undefined : exchangeActivityOutcome(refused)
      return db.select().from(exchangeActivity).where(rows).orderBy(desc(exchangeActivity.id)).limit(limit)
    },

    async countShipmentsByStatus() {
      const rows = await db.select({ status: statusCounts.status, total: sql<string>`sum(${statusCounts.count})` }).from(statusCounts).groupBy(statusCounts.status)
      return Object.fromEntries(rows.map((row) => [row.status, Number(row.total)]).filter(([, total]) => (total as number) > 0))
    },

    async refreshAttention(orderId, decide) {
      if (!isInt4(orderId)) return null
      return db.transaction(async (tx) => {
        // The lock every creation and allocation of the order takes: refreshes never cross a change, or each other.
        await lockOrder(tx, orderId)
        const row = decide(allocatedByLine(await activeShipmentsOf(tx, orderId, null)))
        if (!row) {
          await tx.delete(attentionOrders).where(eq(attentionOrders.orderId, orderId))
          return null
        }
        const values = { ...row, orderId, updatedAt: new Date() }
        await tx.insert(attentionOrders).values(values).onConflictDoUpdate({ target: attentionOrders.orderId, set: values })
        return row
      })
    },

    async attentionRows({ afterOrderId, offset, limit }) {
      return db
        .select(attentionColumns)
        .from(attentionOrders)
        .where(afterOrderId !== undefined ? gt(attentionOrders.orderId, afterOrderId) : undefined)
        .orderBy(attentionOrders.orderId)
        .limit(limit)
        .offset(offset ?? 0)
    },

    async countAttentionRows() {
      const [{ total }] = await db.select({ total: count() }).from(attentionOrders)
      return total
    },

    async packageState(key) {
      const [row] = await db.select({ value: packageState.value }).from(packageState).where(eq(packageState.key, key))
      return row?.value ?? null
    },

    async setPackageState(key, value) {
      await db.insert(packageState).values({ key, value }).onConflictDoUpdate({ target: packageState.key, set: { value } })
    },

    async countShippedByQuarterHour(from, to) {
      // From the kept counts: at most one row per quarter hour and slot of the window, at any volume.
      const rows = await db
        .select({ quarterHour: shippedCounts.quarterHour, count: sql<string>`sum(${shippedCounts.count})` })
        .from(shippedCounts)
        .where(and(gte(shippedCounts.quarterHour, Math.floor(from.getTime() / 900_000)), lt(shippedCounts.quarterHour, Math.ceil(to.getTime() / 900_000))))
        .groupBy(shippedCounts.quarterHour)
        .orderBy(shippedCounts.quarterHour)
      return rows.map((row) => ({ quarterHour: row.quarterHour, count: Number(row.count) })).filter((row) => row.count > 0)
    },

    async lateShipments(now, limit) {
      const where = lateWhere(now)
      const [[{ total }], rows] = await Promise.all([
        db.select({ total: count() }).from(shipments).where(where),
        db.select().from(shipments).where(where).orderBy(shipments.dateScheduledShip, shipments.id).limit(limit),
      ])
      return { rows, total }
    },

    async failingPushes(limit) {
      const [[{ total }], rows] = await Promise.all([
        db
          .select({ total: count() })
          .from(shipmentExternalReferences)
          .innerJoin(shipments, eq(shipments.id, shipmentExternalReferences.shipmentId))
          .where(failingPushWhere),
        db
          .select(failingPushColumns)
          .from(shipmentExternalReferences)
          .innerJoin(shipments, eq(shipments.id, shipmentExternalReferences.shipmentId))
          .innerJoin(integrations, eq(integrations.id, shipmentExternalReferences.integrationId))
          .where(failingPushWhere)
          .orderBy(sql`${shipmentExternalReferences.lastPushAt} desc nulls last`, desc(shipments.id))
          .limit(limit),
      ])
      return { rows, total }
    },

    async newestExchangeActivity(action) {
      if (!isStorableText(action)) return undefined
      const [row] = await db.select().from(exchangeActivity).where(eq(exchangeActivity.action, action)).orderBy(desc(exchangeActivity.id)).limit(1)
      return row
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

    createChangeStamp(otherInstancesMs) {
      return createPostgresChangeStamp(db, () => localWrites, otherInstancesMs)
    },

    async findOrder(orderId) {
      if (!isInt4(orderId)) return undefined
      const [order] = await db.select({ ...summaryColumns, ...displayColumns, dateOrdered: orders.dateOrdered, customerNotes: orders.customerNotes }).from(orders).where(eq(orders.id, orderId))
      return order
    },

    async findOrders(orderIds) {
      const ids = orderIds.filter(isInt4)
      if (ids.length === 0) return []
      return db.select({ ...summaryColumns, ...displayColumns }).from(orders).where(inArray(orders.id, ids))
    },

    async orderLines(orderId) {
      if (!isInt4(orderId) || !(await findOrderSummary(orderId))) return undefined
      return (await linesOf([orderId])).get(orderId) ?? []
    },

    async listCompletedOrders({ afterId, limit }) {
      const rows = await db
        .select({ ...summaryColumns, dateOrdered: orders.dateOrdered, customer: orders.email })
        .from(orders)
        .where(and(eq(orders.isCompleted, true), gt(orders.id, Math.min(afterId, 2147483647))))
        .orderBy(orders.id)
        .limit(limit)
      const lines = await linesOf(rows.map((row) => row.id))
      return rows.map((row) => ({ ...row, lines: lines.get(row.id) ?? [] }))
    },

    async findOrderByReference(reference) {
      if (!isStorableText(reference)) return undefined
      const [order] = await db.select(summaryColumns).from(orders).where(eq(orders.reference, reference))
      return order
    },

    async orderStatusExists(statusHandle) {
      return (await db.select({ id: orderStatuses.id }).from(orderStatuses).where(eq(orderStatuses.handle, statusHandle))).length > 0
    },

    async saveOrderStatus(status) {
      await db.transaction(async (tx) => {
        if (status.isDefault) await tx.update(orderStatuses).set({ isDefault: false })
        await tx.insert(orderStatuses).values(status).onConflictDoUpdate({ target: orderStatuses.handle, set: { name: status.name, isDefault: status.isDefault } })
      })
      wrote(null)
    },

    async listOrderStatuses() {
      return db.select({ handle: orderStatuses.handle, name: orderStatuses.name, isDefault: orderStatuses.isDefault }).from(orderStatuses).orderBy(orderStatuses.id)
    },

    async insertOrder(order, addresses, items) {
      const inserted = await db.transaction(async (tx) => {
        // Orders are numbered by the host; the unique keys on reference and number decide a race: a taken
        // one inserts nothing (ON CONFLICT DO NOTHING waits for a competing insert's commit, then skips),
        // so two instances creating the same order never see a unique violation.
        const [inserted] = await tx.insert(orders).values(order).onConflictDoNothing().returning({ id: orders.id })
        if (!inserted) return 'duplicate' as const
        const { id } = inserted
        if (addresses.length > 0) await tx.insert(orderAddresses).values(addresses.map((address) => ({ ...address, orderId: id })))
        // In pieces: one statement for thousands of lines would pass the protocol's 65,535 parameters.
        for (const piece of inChunks(items, LINE_ROWS_PER_INSERT)) await tx.insert(orderLineItems).values(piece.map((item) => ({ ...item, orderId: id })))
        return id
      })
      return wrote(inserted)
    },

    async updateOrder(orderId, columns) {
      if (!isInt4(orderId)) return false
      const result = await db.transaction(async (tx) => {
        const clash = async (column: typeof orders.reference | typeof orders.number, value: string | undefined) =>
          value !== undefined && (await tx.select({ id: orders.id }).from(orders).where(and(eq(column, value), ne(orders.id, orderId)))).length > 0
        if ((await clash(orders.reference, columns.reference)) || (await clash(orders.number, columns.number))) return 'duplicate' as const
        return (await tx.update(orders).set(columns).where(eq(orders.id, orderId)).returning({ id: orders.id })).length > 0
      }).catch((error: unknown) => {
        // Two orders given the same reference or number at once both pass the check (neither sees the
        // other's uncommitted row); the unique key decides, and the loser is the same refusal.
        if (sqlState(error) === UNIQUE_VIOLATION) return 'duplicate' as const
        throw error
      })
      return wrote(result)
    },

    async setOrderStatus(orderId, statusHandle) {
      const applied = await db.transaction(async (tx) => {
        if (!(await statusExists(tx, statusHandle))) return false
        await tx.update(orders).set({ statusHandle, dateUpdated: new Date() }).where(eq(orders.id, orderId))
        return true
      })
      // Counted after commit: a stamp read before it must not label a result that lacks the write.
      return wrote(applied)
    },

    async updateNotifiedOrder(orderId, statusHandle, plan) {
      const result = await db.transaction(async (tx) => {
        if (!(await statusExists(tx, statusHandle))) return 'no-status' as const
        const [order] = await tx.select({ statusHandle: orders.statusHandle, fields: orders.fields }).from(orders).where(eq(orders.id, orderId)).for('update')
        if (!order) return 'no-order' as const
        const outcome = plan(order)
        const changed = order.statusHandle !== statusHandle || JSON.stringify(outcome.fields) !== JSON.stringify(order.fields)
        if (changed) await tx.update(orders).set({ statusHandle, fields: outcome.fields, dateUpdated: new Date() }).where(eq(orders.id, orderId))
        return { outcome, changed }
      })
      return wrote(result)
    },

    exportOrders,

    notifications: createPostgresNotificationStore(db),

    parcels: createPostgresParcelStore(db),
    checkpoints: createPostgresCheckpointData(db),

    returns: createPostgresReturnStore(db),

    outbox: createPostgresOutboxStore(db),

    async withNamedLock(name, key, timeoutMs, task) {
      // In-process first, so waiting callers do not each try the server; then a session advisory lock
      // on the lock session's own connection (never one of the pool's, which the task needs).
      const deadline = Date.now() + timeoutMs
      return queue.withLock(`${name}:${key}`, timeoutMs, async () => {
        const release = await lockSession.acquire(ADVISORY_LOCK_CLASS[name], key, `${name}:${key}`, deadline)
        try {
          return await task()
        } finally {
          await release()
        }
      })
    },

    async close() {
      await lockSession.close()
      if (options.owned) await db.$client.end()
    },
  }
}
