// The data layer on SQLite (better-sqlite3): synchronous inside, the async contract outside. A write of
// several statements (a transition, a creation, an order and its tracking entry) runs in one IMMEDIATE
// transaction; a write of one statement (plain columns, an integration, a delivery claim) is a single
// autocommit statement, atomic on its own. The transition mutex is an in-process queue per shipment,
// backed across processes by the IMMEDIATE transaction itself: SQLite's write lock serializes every
// writer of the file, and the status is re-read inside it.
import { and, count, desc, eq, isNull, lte, ne, or, sql } from 'drizzle-orm'
import { likePattern } from '../like.js'
import {
  LockTimeoutError,
  ShipmentMissingError,
  transitionLockName,
  type DataLayer,
  type ExternalEventMark,
  type HistoryRow,
  type IntegrationRow,
  type ShipmentChangeOutcome,
  type ShipmentColumns,
  type ShipmentRow,
} from '../data-layer.js'
import { createMutex } from '../mutex.js'
import { createChangeStamp, isBusy, leaveUncounted, lockDirectoryFor, writeTransaction, writeTransactionWaiting, type SqliteDatabase } from './dialect.js'
import { createOrderExportQueries } from './order-export.js'
import { createSqliteOutboxStore, createSqliteOutboxWriter } from './outbox.js'
import {
  exchangeActivity,
  integrations,
  orderAddresses,
  orderAdvances,
  orderLineItems,
  orders,
  orderStatuses,
  shipmentExternalReferences,
  shipments,
  shipmentStatusHistory,
  webhookDeliveries,
} from './schema.js'

export interface SqliteDataLayerOptions {
  /** Directory of the named locks' files (pushes); undefined: beside the database file; null: in-process only. */
  lockDirectory?: string | null
  /** Called when a held file lock was lost. */
  onLockCompromised?: (lockName: string, error: Error) => void
  /** Close the connection with the data layer (the package opened it). */
  owned: boolean
}

/** A column value as better-sqlite3 stores it: times as epoch milliseconds, objects as JSON text. */
function encodeColumnValue(value: unknown): unknown {
  if (value instanceof Date) return value.getTime()
  if (typeof value === 'boolean') return value ? 1 : 0
  if (value !== null && typeof value === 'object') return JSON.stringify(value)
  return value
}

export function createSqliteDataLayer(db: SqliteDatabase, options: SqliteDataLayerOptions): DataLayer {
  // Transitions of one shipment in this process wait here, in order, without touching the database;
  // across processes the IMMEDIATE transaction's write lock is the other half (spec 3.3).
  const queue = createMutex({ directory: null })
  // The connection's own wait for another writer; a transition waits at most until its lock deadline instead.
  const busyTimeoutMs = db.$client.pragma('busy_timeout', { simple: true }) as number
  // Named locks held across asynchronous work (a push to an integration) cannot be a transaction:
  // they are lock files, shared by every process on the file.
  const namedLocks = createMutex({
    directory: options.lockDirectory === undefined ? lockDirectoryFor(db) : options.lockDirectory,
    onCompromised: options.onLockCompromised,
  })

  // The hot path's statements are prepared once: building and preparing SQL per call cost more than
  // running it. Updates are prepared per set of changed columns, which is small and bounded.
  const selectById = db.select().from(shipments).where(eq(shipments.id, sql.placeholder('id'))).prepare()
  const findRow = (id: number) => selectById.get({ id }) as ShipmentRow | undefined
  const insertHistory = db
    .insert(shipmentStatusHistory)
    .values({
      shipmentId: sql.placeholder('shipmentId'),
      fromStatus: sql.placeholder('fromStatus'),
      toStatus: sql.placeholder('toStatus'),
      message: sql.placeholder('message'),
      userId: sql.placeholder('userId'),
      sourceIntegration: sql.placeholder('sourceIntegration'),
      sourceExternalCode: sql.placeholder('sourceExternalCode'),
      createdAt: sql.placeholder('createdAt'),
    })
    .returning({ id: shipmentStatusHistory.id })
    .prepare()
  const countUnshipped = db
    .select({ total: count() })
    .from(shipments)
    .where(
      and(
        eq(shipments.orderId, sql.placeholder('orderId')),
        eq(shipments.enabled, true),
        isNull(shipments.dateDeleted),
        ne(shipments.status, 'shipped'),
      ),
    )
    .prepare()
  const insertOrderAdvance = db
    .insert(orderAdvances)
    .values({ orderId: sql.placeholder('orderId'), status: sql.placeholder('status'), createdAt: sql.placeholder('createdAt') })
    .onConflictDoNothing()
    .prepare()
  const updateStatements = new Map<string, ReturnType<typeof prepareUpdate>>()
  function prepareUpdate(columns: readonly string[]) {
    // Wrapped in sql`` so values go to the driver as given (encodeColumnValue), null included.
    const placeholders = Object.fromEntries(columns.map((column) => [column, sql`${sql.placeholder(column)}`]))
    return db.update(shipments).set(placeholders).where(eq(shipments.id, sql.placeholder('id'))).returning().prepare()
  }
  function updateRow(id: number, changes: ShipmentColumns): ShipmentRow | undefined {
    const columns = Object.keys(changes).sort()
    const key = columns.join(',')
    let statement = updateStatements.get(key)
    if (!statement) {
      if (updateStatements.size >= 256) updateStatements.clear()
      statement = prepareUpdate(columns)
      updateStatements.set(key, statement)
    }
    const values: Record<string, unknown> = { id }
    for (const [column, value] of Object.entries(changes)) values[column] = encodeColumnValue(value)
    return statement.get(values) as ShipmentRow | undefined
  }

  /** Moves the integration's last-event mark forward; false when the event is older than the mark. */
  function recordExternalEvent(shipmentId: number, event: ExternalEventMark, now: Date): boolean {
    const reference = db
      .select({ lastEventAt: shipmentExternalReferences.lastEventAt })
      .from(shipmentExternalReferences)
      .where(and(eq(shipmentExternalReferences.shipmentId, shipmentId), eq(shipmentExternalReferences.integrationId, event.integrationId)))
      .get()
    if (reference?.lastEventAt && event.occurredAt < reference.lastEventAt) return false
    const values = {
      lastEventAt: event.occurredAt,
      updatedAt: now,
      ...(event.externalId != null && { externalId: event.externalId }),
      ...(event.externalUrl != null && { externalUrl: event.externalUrl }),
    }
    db.insert(shipmentExternalReferences)
      .values({ shipmentId, integrationId: event.integrationId, ...values })
      .onConflictDoUpdate({ target: [shipmentExternalReferences.shipmentId, shipmentExternalReferences.integrationId], set: values })
      .run()
    return true
  }

  const selectIntegration = db.select().from(integrations).where(eq(integrations.handle, sql.placeholder('handle'))).prepare()
  const statusExists = (handle: string) =>
    db.select({ id: orderStatuses.id }).from(orderStatuses).where(eq(orderStatuses.handle, handle)).get() !== undefined
  const summaryColumns = { id: orders.id, reference: orders.reference, statusHandle: orders.statusHandle, isCompleted: orders.isCompleted }
  const exportOrders = createOrderExportQueries(db)
  const writeMessages = createSqliteOutboxWriter(db)

  return {
    engine: 'sqlite',

    async findShipment(id) {
      return findRow(id)
    },

    async updateShipmentColumns(id, columns) {
      // One UPDATE ... RETURNING is atomic on its own and doubles as the existence check.
      return updateRow(id, columns)
    },

    async commitShipmentChange(id, request) {
      // better-sqlite3 transactions are synchronous: everything asynchronous (the authorization) happens
      // before the transaction, under the in-process queue; `authorized` is the status it approved,
      // read again inside the transaction, where no other process can move it any more.
      const commit = (authorized: string | null) => (): ShipmentChangeOutcome | 'status-moved' => {
        const before = findRow(id)
        if (!before) throw new ShipmentMissingError(id)
        // Another process moved the shipment between the authorization and the write lock: authorize again.
        if (authorized !== null && before.status !== authorized) return 'status-moved'
        const now = new Date()
        if (request.externalEvent && !recordExternalEvent(id, request.externalEvent, now)) {
          return { row: before, previousStatus: before.status, historyId: null, orderAdvanceClaimed: false, stale: true, messages: [] }
        }
        const plan = request.plan(before)
        const history = plan.history ? (insertHistory.get({ ...plan.history, shipmentId: id }) as { id: number }) : null
        const row = updateRow(id, plan.columns)!
        let orderAdvanceClaimed = false
        if (plan.claimOrderAdvance !== null && (countUnshipped.get({ orderId: row.orderId }) as { total: number }).total === 0) {
          orderAdvanceClaimed = insertOrderAdvance.run({ orderId: row.orderId, status: plan.claimOrderAdvance, createdAt: now }).changes > 0
        }
        const outcome = { row, previousStatus: before.status, historyId: history?.id ?? null, orderAdvanceClaimed, stale: false }
        const messages = request.messages ? writeMessages(request.messages(outcome), request.claimFor ?? null, now) : []
        return { ...outcome, messages }
      }
      if (request.lockTimeoutMs === undefined) return writeTransaction(db, commit(null)) as ShipmentChangeOutcome
      const name = transitionLockName(id)
      const deadline = Date.now() + request.lockTimeoutMs
      return queue.withLock(name, request.lockTimeoutMs, async () => {
        for (;;) {
          let authorized: string | null = null
          if (request.authorize) {
            const current = findRow(id)
            if (!current) throw new ShipmentMissingError(id)
            await request.authorize(current)
            authorized = current.status
          }
          let outcome: ShipmentChangeOutcome | 'status-moved'
          try {
            // Another process's write transaction is waited for until the deadline, no longer.
            outcome = writeTransactionWaiting(db, deadline - Date.now(), busyTimeoutMs, commit(authorized))
          } catch (error) {
            if (isBusy(error)) throw new LockTimeoutError(name)
            throw error
          }
          if (outcome !== 'status-moved') return outcome
        }
      })
    },

    async createShipments(orderId, orderReference, howMany, userId, messages) {
      return writeTransaction(db, () => {
        const existing = db.select({ total: count() }).from(shipments).where(eq(shipments.orderId, orderId)).get()!
        const now = new Date()
        const created: ShipmentRow[] = []
        for (let index = 1; index <= howMany; index++) {
          const reference = `${orderReference}-s${String(existing.total + index).padStart(3, '0')}`
          const row = db.insert(shipments).values({ orderId, reference, status: 'new', createdAt: now, updatedAt: now }).returning().get()
          db.insert(shipmentStatusHistory).values({ shipmentId: row.id, fromStatus: null, toStatus: 'new', userId, createdAt: now }).run()
          created.push(row)
        }
        return { rows: created, messages: messages ? writeMessages(messages.of(created), messages.claimFor, now) : [] }
      })
    },

    async listShipments(query) {
      const where = and(
        query.orderId !== undefined ? eq(shipments.orderId, query.orderId) : undefined,
        query.status !== undefined ? eq(shipments.status, query.status) : undefined,
        query.referenceContains ? sql`${shipments.reference} LIKE ${likePattern(query.referenceContains)} ESCAPE '\\'` : undefined,
        query.includeDeleted ? undefined : isNull(shipments.dateDeleted),
      )
      const { total } = db.select({ total: count() }).from(shipments).where(where).get()!
      const rows = db.select().from(shipments).where(where).orderBy(shipments.id).limit(query.limit).offset(query.offset).all()
      return { rows, total }
    },

    async shipmentHistory(shipmentId): Promise<HistoryRow[]> {
      return db
        .select()
        .from(shipmentStatusHistory)
        .where(eq(shipmentStatusHistory.shipmentId, shipmentId))
        .orderBy(desc(shipmentStatusHistory.id))
        .all()
    },

    async setShipmentDeleted(id, deleted, now, messages) {
      return writeTransaction(db, () => {
        const row = db
          .update(shipments)
          .set({ dateDeleted: deleted ? sql`coalesce(${shipments.dateDeleted}, ${now.getTime()})` : null, updatedAt: now })
          .where(eq(shipments.id, id))
          .returning()
          .get()
        if (!row) return undefined
        return { row, messages: messages ? writeMessages(messages.of(row), messages.claimFor, now) : [] }
      })
    },

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

    async claimDelivery(integrationId, deliveryId) {
      return db.insert(webhookDeliveries).values({ integrationId, deliveryId, createdAt: new Date() }).onConflictDoNothing().run().changes > 0
    },

    async releaseDelivery(integrationId, deliveryId) {
      db.delete(webhookDeliveries)
        .where(and(eq(webhookDeliveries.integrationId, integrationId), eq(webhookDeliveries.deliveryId, deliveryId)))
        .run()
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

    async recordExchangeActivity(entry, { keep, every }) {
      // One autocommit insert; now and then a prune by id (the primary key).
      const { id } = db.insert(exchangeActivity).values(entry).returning({ id: exchangeActivity.id }).get()!
      const pruned = id % every === 0 ? db.delete(exchangeActivity).where(lte(exchangeActivity.id, id - keep)).run().changes : 0
      // A log of requests: no cached result depends on it (a ShipStation request must not empty the export's caches).
      leaveUncounted(db, 1 + pruned)
    },

    async exchangeActivity(limit) {
      return db.select().from(exchangeActivity).orderBy(desc(exchangeActivity.id)).limit(limit).all()
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

    createChangeStamp(otherInstancesMs) {
      const stamp = createChangeStamp(db, otherInstancesMs)
      return async () => stamp()
    },

    async findOrder(orderId) {
      return db.select(summaryColumns).from(orders).where(eq(orders.id, orderId)).get()
    },

    async findOrderByReference(reference) {
      return db.select(summaryColumns).from(orders).where(eq(orders.reference, reference)).get()
    },

    async orderStatusExists(statusHandle) {
      return statusExists(statusHandle)
    },

    async saveOrderStatus(status) {
      writeTransaction(db, () => {
        if (status.isDefault) db.update(orderStatuses).set({ isDefault: false }).run()
        db.insert(orderStatuses).values(status).onConflictDoUpdate({ target: orderStatuses.handle, set: { name: status.name, isDefault: status.isDefault } }).run()
      })
    },

    async listOrderStatuses() {
      return db.select({ handle: orderStatuses.handle, name: orderStatuses.name, isDefault: orderStatuses.isDefault }).from(orderStatuses).orderBy(orderStatuses.id).all()
    },

    async insertOrder(order, addresses, items) {
      return writeTransaction(db, () => {
        const taken = db.select({ id: orders.id }).from(orders).where(or(eq(orders.reference, order.reference), eq(orders.number, order.number))).get()
        if (taken) return 'duplicate' as const
        const { id } = db.insert(orders).values(order).returning({ id: orders.id }).get()
        if (addresses.length > 0) db.insert(orderAddresses).values(addresses.map((address) => ({ ...address, orderId: id }))).run()
        if (items.length > 0) db.insert(orderLineItems).values(items.map((item) => ({ ...item, orderId: id }))).run()
        return id
      })
    },

    async updateOrder(orderId, columns) {
      return writeTransaction(db, () => {
        const clash = (column: typeof orders.reference | typeof orders.number, value: string | undefined) =>
          value !== undefined && db.select({ id: orders.id }).from(orders).where(and(eq(column, value), ne(orders.id, orderId))).get() !== undefined
        if (clash(orders.reference, columns.reference) || clash(orders.number, columns.number)) return 'duplicate' as const
        return db.update(orders).set(columns).where(eq(orders.id, orderId)).run().changes > 0
      })
    },

    async setOrderStatus(orderId, statusHandle) {
      return writeTransaction(db, () => {
        if (!statusExists(statusHandle)) return false
        db.update(orders).set({ statusHandle, dateUpdated: new Date() }).where(eq(orders.id, orderId)).run()
        return true
      })
    },

    async updateNotifiedOrder(orderId, statusHandle, plan) {
      return writeTransaction(db, () => {
        if (!statusExists(statusHandle)) return 'no-status' as const
        const order = db.select({ statusHandle: orders.statusHandle, fields: orders.fields }).from(orders).where(eq(orders.id, orderId)).get()
        if (!order) return 'no-order' as const
        const outcome = plan(order)
        const changed = order.statusHandle !== statusHandle || JSON.stringify(outcome.fields) !== JSON.stringify(order.fields)
        if (changed) db.update(orders).set({ statusHandle, fields: outcome.fields, dateUpdated: new Date() }).where(eq(orders.id, orderId)).run()
        return { outcome, changed }
      })
    },

    async exportOrders(query) {
      return exportOrders(query)
    },

    outbox: createSqliteOutboxStore(db, writeMessages),

    async withNamedLock(name, key, timeoutMs, task) {
      return namedLocks.withLock(`${name}:${key}`, timeoutMs, task)
    },

    async close() {
      if (options.owned) db.$client.close()
    },
  }
}

