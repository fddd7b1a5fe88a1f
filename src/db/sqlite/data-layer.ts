// The data layer on SQLite (better-sqlite3): synchronous inside, the async contract outside. A write of
// several statements (a transition, a creation, an order and its tracking entry) runs in one IMMEDIATE
// transaction; a write of one statement (plain columns, an integration, a delivery claim) is a single
// autocommit statement, atomic on its own. The transition mutex is an in-process queue per shipment,
// backed across processes by the IMMEDIATE transaction itself: SQLite's write lock serializes every
// writer of the file, and the status is re-read inside it.
import { inChunks } from '../../in-chunks.js'
import { trackingNumberKey } from '../../text.js'
import { and, count, desc, eq, getTableColumns, gt, gte, inArray, isNotNull, isNull, lt, lte, ne, notInArray, sql, type Column } from 'drizzle-orm'
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
  type HistoryRow,
  type IntegrationRow,
  type NewHistoryRow,
  type ShipmentChangeOutcome,
  type ShipmentColumns,
  type ShipmentRow,
} from '../data-layer.js'
import { createMutex } from '../mutex.js'
import { createSqliteNamedLocks } from './named-locks.js'
import { createSqliteNotificationStore } from './notifications.js'
import { createSqliteParcelStore } from './parcels.js'
import { createSqliteReturnStore } from './returns.js'
import { createSqliteCheckpointData } from './checkpoints.js'
import { createCheckpointer } from './checkpointer.js'
import { createChangeStamp, isBusy, leaveUncounted, lockDirectoryFor, onWriteCommit, withStatementCache, writeTransaction, type SqliteDatabase } from './dialect.js'
import { createGroupCommit } from './group-commit.js'
import { createOrderExportQueries } from './order-export.js'
import { createSqliteOutboxStore, createSqliteOutboxWriter } from './outbox.js'
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

export interface SqliteDataLayerOptions {
  /** Directory of the named locks' files (pushes); undefined: beside the database file; null: in-process only. */
  lockDirectory?: string | null
  /** Called when a held file lock was lost. */
  onLockCompromised?: (lockName: string, error: Error) => void
  /** Close the connection with the data layer (the package opened it); its checkpoints then run in a worker thread. */
  owned: boolean
  /** A checkpoint worker that failed: checkpoints are back inside commits. */
  onCheckpointError?: (error: Error) => void
}

const SHIPMENT_COLUMNS = Object.entries(getTableColumns(shipments) as Record<string, Column>)
const SHIPMENT_COLUMN_LIST = SHIPMENT_COLUMNS.map(([, column]) => `"${column.name}"`).join(', ')

/** A shipment row read as an array, decoded as Drizzle decodes it (null stays null). */
function decodeShipment(values: unknown[] | undefined): ShipmentRow | undefined {
  if (!values) return undefined
  const row: Record<string, unknown> = {}
  for (let index = 0; index < SHIPMENT_COLUMNS.length; index++) {
    const value = values[index]
    row[SHIPMENT_COLUMNS[index][0]] = value === null ? null : SHIPMENT_COLUMNS[index][1].mapFromDriverValue(value)
  }
  return row as unknown as ShipmentRow
}

/** A column value as better-sqlite3 stores it: times as epoch milliseconds, objects as JSON text. */
function encodeColumnValue(value: unknown): unknown {
  if (value instanceof Date) return value.getTime()
  if (typeof value === 'boolean') return value ? 1 : 0
  if (value !== null && typeof value === 'object') return JSON.stringify(value)
  return value
}

/** The activity log's refused rows (status 400 and above), or its answered ones: each kept against its own bound. */
const exchangeActivityOutcome = (refused: boolean) =>
  refused ? sql`${exchangeActivity.statusCode} >= 400` : sql`${exchangeActivity.statusCode} < 400`

/** A search: references that start with `text` (an index range, see referenceSearchKeyOf), or the tracking number `text`. */
function referenceOrTrackingNumber(text: string) {
  const [from, to] = referenceSearchBounds(text)
  const key = referenceSearchKeyOf.sqlite(shipments.reference)
  return sql`((${key} >= ${from} AND ${key} < ${to}) OR ${trackingNumberKeyOf(shipments.trackingNumber)} = ${trackingNumberKey(text)})`
}

export function createSqliteDataLayer(connection: SqliteDatabase, options: SqliteDataLayerOptions): DataLayer {
  const db = withStatementCache(connection)
  // Transitions of one shipment in this process wait here, in order, without touching the database;
  // across processes the IMMEDIATE transaction's write lock is the other half (spec 3.3).
  const queue = createMutex({ directory: null })
  // The connection's own wait for another writer; a transition waits at most until its lock deadline instead.
  const busyTimeoutMs = db.$client.pragma('busy_timeout', { simple: true }) as number
  // Updates and transitions that arrive together commit together (see group-commit.ts).
  const group = createGroupCommit(db, busyTimeoutMs)
  // A file the package opened is checkpointed off the event loop (see checkpointer.ts).
  const checkpointer = options.owned ? createCheckpointer(db, { onError: options.onCheckpointError }) : null
  if (checkpointer) onWriteCommit(db, checkpointer.committed)
  // Named locks held across asynchronous work (a push, a label purchase) cannot be a transaction: they
  // are rows of the file (see named-locks.ts), or in this process only when the host says it runs one
  // process per file (lockDirectory: null) or the database is in memory.
  const lockDirectory = options.lockDirectory === undefined ? lockDirectoryFor(db) : options.lockDirectory
  const namedLocks = lockDirectory === null ? createMutex({ directory: null }) : createSqliteNamedLocks(db, { onCompromised: options.onLockCompromised, group })

  // The hot path's statements are prepared once: building and preparing SQL per call cost more than
  // running it. Updates are prepared per set of changed columns, which is small and bounded. Rows come
  // as arrays, decoded by the columns' own mappings: Drizzle's generic mapping of each row cost as much
  // as the statements themselves on a transition's path.
  const selectById = db.$client.prepare(`SELECT ${SHIPMENT_COLUMN_LIST} FROM shipments_shipments WHERE id = ?`).raw()
  const findRow = (id: number) => decodeShipment(selectById.get(id) as unknown[] | undefined)
  const insertHistoryStatement = db.$client.prepare(
    `INSERT INTO shipments_status_history (shipment_id, from_status, to_status, message, user_id, source_integration, source_external_code, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const insertHistory = (shipmentId: number, history: NewHistoryRow) =>
    Number(
      insertHistoryStatement.run(shipmentId, history.fromStatus, history.toStatus, history.message, history.userId, history.sourceIntegration, history.sourceExternalCode, history.createdAt.getTime())
        .lastInsertRowid,
    )
  // The order's live shipments (enabled, not deleted) when a shipment is shipped: for the order advance.
  const selectLive = db
    .select({ status: shipments.status, items: shipments.items })
    .from(shipments)
    .where(and(eq(shipments.orderId, sql.placeholder('orderId')), eq(shipments.enabled, true), isNull(shipments.dateDeleted)))
    .prepare()
  // The items of the order's other shipments that hold an allocation (0 excepts none: ids start at 1).
  const selectActiveItems = db
    .select({ items: shipments.items })
    .from(shipments)
    .where(
      and(
        eq(shipments.orderId, sql.placeholder('orderId')),
        ne(shipments.id, sql.placeholder('exceptId')),
        eq(shipments.enabled, true),
        isNull(shipments.dateDeleted),
        ne(shipments.status, 'cancelled'),
      ),
    )
    .prepare()
  const allocatedInOrder = (orderId: number, exceptId = 0) => allocatedByLine(selectActiveItems.all({ orderId, exceptId }) as Pick<ShipmentRow, 'items'>[])
  const insertOrderAdvance = db
    .insert(orderAdvances)
    .values({ orderId: sql.placeholder('orderId'), status: sql.placeholder('status'), createdAt: sql.placeholder('createdAt') })
    .onConflictDoNothing()
    .prepare()
  // Parameters by position (binding by name cost as much as the statement): the changed columns and the
  // filled ones in the order of the key, then the id and, with the tracking-number condition, the number.
  const updateStatements = new Map<string, ReturnType<typeof prepareUpdate>>()
  function prepareUpdate(columns: readonly string[], fills: readonly string[], unlessTrackingNumberChanges: boolean, returning: boolean) {
    const name = (key: string) => `"${(shipments[key as keyof typeof shipments.$inferSelect] as Column).name}"`
    const set = [...columns.map((key) => `${name(key)} = ?`), ...fills.map((key) => `${name(key)} = coalesce(${name(key)}, ?)`)]
    const keptNumber = unlessTrackingNumberChanges ? ' AND (tracking_number IS NULL OR tracking_number = ?)' : ''
    const statement = db.$client.prepare(`UPDATE shipments_shipments SET ${set.join(', ')} WHERE id = ?${keptNumber}${returning ? ` RETURNING ${SHIPMENT_COLUMN_LIST}` : ''}`)
    return returning ? statement.raw() : statement
  }
  /**
   * Writes the columns, and those of `fillEmpty` that are empty; with `unlessTrackingNumberChanges`, only
   * while the stored tracking number is empty or the one written. Returns the row as it is now, read
   * back, or (`known`: the row as read in this transaction) merged from it without a read; undefined
   * when no row was written.
   */
  function updateRow(
    id: number,
    changes: ShipmentColumns,
    { fillEmpty = {}, unlessTrackingNumberChanges = false, known }: { fillEmpty?: FillableColumns; unlessTrackingNumberChanges?: boolean; known?: ShipmentRow } = {},
  ): ShipmentRow | undefined {
    const columns = Object.keys(changes).sort()
    const fills = Object.keys(fillEmpty).sort()
    const keptNumber = unlessTrackingNumberChanges && columns.includes('trackingNumber')
    const returning = known === undefined
    const key = `${columns.join(',')};${fills.join(',')};${keptNumber};${returning}`
    let statement = updateStatements.get(key)
    if (!statement) {
      if (updateStatements.size >= 256) updateStatements.clear()
      statement = prepareUpdate(columns, fills, keptNumber, returning)
      updateStatements.set(key, statement)
    }
    const values: unknown[] = []
    for (const column of columns) values.push(encodeColumnValue(changes[column as keyof ShipmentColumns]))
    for (const column of fills) values.push(fillEmpty[column as keyof FillableColumns])
    values.push(id)
    if (keptNumber) values.push(changes.trackingNumber)
    if (!returning) return statement.run(...values).changes > 0 ? { ...known, ...changes } : undefined
    return decodeShipment(statement.get(...values) as unknown[] | undefined)
  }

  // A tracking event's statements, prepared once (see the hot path's above).
  const selectLastEventAt = db
    .select({ lastEventAt: shipmentExternalReferences.lastEventAt })
    .from(shipmentExternalReferences)
    .where(and(eq(shipmentExternalReferences.shipmentId, sql.placeholder('shipmentId')), eq(shipmentExternalReferences.integrationId, sql.placeholder('integrationId'))))
    .prepare()
  /** True when the integration already applied a later event to the shipment. */
  function externalEventIsStale(shipmentId: number, event: ExternalEventMark): boolean {
    const reference = selectLastEventAt.get({ shipmentId, integrationId: event.integrationId })
    return reference?.lastEventAt != null && event.occurredAt < reference.lastEventAt
  }

  // An event without remote ids keeps the ones stored (coalesce), as a row written without them would.
  const upsertExternalEvent = db
    .insert(shipmentExternalReferences)
    .values({
      shipmentId: sql.placeholder('shipmentId'),
      integrationId: sql.placeholder('integrationId'),
      lastEventAt: sql.placeholder('lastEventAt'),
      updatedAt: sql.placeholder('updatedAt'),
      externalId: sql.placeholder('externalId'),
      externalUrl: sql.placeholder('externalUrl'),
    })
    .onConflictDoUpdate({
      target: [shipmentExternalReferences.shipmentId, shipmentExternalReferences.integrationId],
      set: {
        lastEventAt: sql`excluded.last_event_at`,
        updatedAt: sql`excluded.updated_at`,
        externalId: sql`coalesce(excluded.external_id, ${shipmentExternalReferences.externalId})`,
        externalUrl: sql`coalesce(excluded.external_url, ${shipmentExternalReferences.externalUrl})`,
      },
    })
    .prepare()
  /** Moves the integration's last-event mark forward, with the event's remote ids. */
  function markExternalEvent(shipmentId: number, event: ExternalEventMark, now: Date): void {
    upsertExternalEvent.run({
      shipmentId,
      integrationId: event.integrationId,
      lastEventAt: event.occurredAt,
      updatedAt: now,
      externalId: event.externalId ?? null,
      externalUrl: event.externalUrl ?? null,
    })
  }

  const insertDelivery = db
    .insert(webhookDeliveries)
    .values({ integrationId: sql.placeholder('integrationId'), deliveryId: sql.placeholder('deliveryId'), outcome: sql.placeholder('outcome'), createdAt: sql.placeholder('createdAt') })
    .onConflictDoNothing()
    .prepare()
  /** Records a delivery in the dedupe ledger; false when it was recorded before. */
  const recordDelivery = (delivery: { integrationId: number; deliveryId: string }, outcome: DeliveryOutcome | null, now: Date) =>
    insertDelivery.run({ ...delivery, outcome: outcome ? { ...outcome } : {}, createdAt: now }).changes > 0

  // A tracking event's lookup by number (the first page of a list filtered by it alone).
  const withTrackingNumberKey = and(sql`${trackingNumberKeyOf(shipments.trackingNumber)} = ${sql.placeholder('key')}`, isNull(shipments.dateDeleted))
  const selectByTrackingNumber = db.select().from(shipments).where(withTrackingNumberKey).orderBy(shipments.id).limit(sql.placeholder('limit')).prepare()
  const countByTrackingNumber = db.select({ total: count() }).from(shipments).where(withTrackingNumberKey).prepare()
  const selectIntegration = db.select().from(integrations).where(eq(integrations.handle, sql.placeholder('handle'))).prepare()
  const selectStatusId = db.select({ id: orderStatuses.id }).from(orderStatuses).where(eq(orderStatuses.handle, sql.placeholder('handle'))).prepare()
  const statusExists = (handle: string) => selectStatusId.get({ handle }) !== undefined
  const summaryColumns = { id: orders.id, reference: orders.reference, statusHandle: orders.statusHandle, isCompleted: orders.isCompleted, email: orders.email }
  // What the admin order page shows beside the summary: one indexed lookup each (unique keys). Drizzle
  // writes a single-table query's columns unqualified, so the order's own are named with their table.
  const orderColumn = (column: typeof orders.id | typeof orders.statusHandle) => sql`${orders}.${sql.identifier(column.name)}`
  const displayColumns = {
    customerName: sql<string | null>`(select ${orderAddresses.fullName} from ${orderAddresses} where ${orderAddresses.orderId} = ${orderColumn(orders.id)} and ${orderAddresses.kind} = 'shipping')`,
    statusName: sql<string | null>`(select ${orderStatuses.name} from ${orderStatuses} where ${orderStatuses.handle} = ${orderColumn(orders.statusHandle)})`,
  }
  // An order read by id (a label's addresses, a mail, an event that moves the order) and a package
  // setting (the ship-from address, read by every rate and label): prepared once.
  const selectOrder = db
    .select({ ...summaryColumns, ...displayColumns, dateOrdered: orders.dateOrdered, customerNotes: orders.customerNotes })
    .from(orders)
    .where(eq(orders.id, sql.placeholder('orderId')))
    .prepare()
  const selectPackageState = db.select({ value: packageState.value }).from(packageState).where(eq(packageState.key, sql.placeholder('key'))).prepare()
  // Written as the partial index's own condition (constants, not parameters), so SQLite reads that index.
  const lateWhere = (now: Date) =>
    and(sql`enabled = 1 AND date_deleted IS NULL AND status NOT IN ('shipped', 'cancelled') AND date_scheduled_ship IS NOT NULL`, lt(shipments.dateScheduledShip, now))
  /** Shipments not deleted (of one status), from the counts the triggers keep. */
  const keptCount = (status?: string) =>
    Number(
      db
        .select({ total: sql<number>`coalesce(sum(${statusCounts.count}), 0)` })
        .from(statusCounts)
        .where(status !== undefined ? eq(statusCounts.status, status) : undefined)
        .get()!.total,
    )
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
  const lineColumns = { orderId: orderLineItems.orderId, id: orderLineItems.id, sku: orderLineItems.sku, name: orderLineItems.name, quantity: orderLineItems.quantity, shippable: orderLineItems.shippable, attributes: orderLineItems.options }
  // One order's lines are read on every change that ships (the allocation check): prepared once.
  const selectOrderId = db.select({ id: orders.id }).from(orders).where(eq(orders.id, sql.placeholder('orderId'))).prepare()
  const selectLinesOfOrder = db.select(lineColumns).from(orderLineItems).where(eq(orderLineItems.orderId, sql.placeholder('orderId'))).orderBy(orderLineItems.id).prepare()
  // A page of completed orders: an attention refresh (an outbox job after every change of an order's
  // allocation) reads the page of one, so it is prepared once.
  const selectCompletedOrders = db
    .select({ ...summaryColumns, dateOrdered: orders.dateOrdered, customer: orders.email })
    .from(orders)
    .where(and(eq(orders.isCompleted, true), gt(orders.id, sql.placeholder('afterId'))))
    .orderBy(orders.id)
    .limit(sql.placeholder('limit'))
    .prepare()
  function linesOf(orderIds: number[]): Map<number, OrderLine[]> {
    const byOrder = new Map<number, OrderLine[]>()
    if (orderIds.length === 0) return byOrder
    const rows =
      orderIds.length === 1
        ? selectLinesOfOrder.all({ orderId: orderIds[0] })
        : db.select(lineColumns).from(orderLineItems).where(inArray(orderLineItems.orderId, orderIds)).orderBy(orderLineItems.id).all()
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
  const exportOrders = createOrderExportQueries(db)
  const writeMessages = createSqliteOutboxWriter(db)

  return {
    engine: 'sqlite',

    async findShipment(id) {
      return findRow(id)
    },

    async updateShipmentColumns(id, columns, fillEmpty, options = {}) {
      // One UPDATE ... RETURNING is atomic on its own and doubles as the existence check.
      return group.run(() => updateRow(id, columns, { fillEmpty, unlessTrackingNumberChanges: options.unlessTrackingNumberChanges }))
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
        const stale = request.externalEvent ? externalEventIsStale(id, request.externalEvent) : false
        // The ledger row commits with the change it caused, or not at all (see the PostgreSQL twin).
        const duplicate = request.delivery ? !recordDelivery(request.delivery, stale ? { outcome: 'stale' } : null, now) : false
        if (stale || duplicate) return unchangedOutcome(before, { stale, duplicate })
        if (request.externalEvent) markExternalEvent(id, request.externalEvent, now)
        const plan = request.plan(before)
        const historyId = plan.history ? insertHistory(id, plan.history) : null
        // The IMMEDIATE transaction serializes every writer of the file: no other allocation can interleave.
        const toCheck = allocationToCheck(before, plan.columns)
        if (toCheck) checkAllocation(toCheck, allocatedInOrder(before.orderId, id))
        const row = updateRow(id, plan.columns, { known: before })!
        let orderAdvanceClaimed = false
        if (plan.claimOrderAdvance !== null && orderComplete(selectLive.all({ orderId: row.orderId }) as ShipmentRow[], plan.requireCoverage)) {
          orderAdvanceClaimed = insertOrderAdvance.run({ orderId: row.orderId, status: plan.claimOrderAdvance, createdAt: now }).changes > 0
        }
        const outcome = { row, previousStatus: before.status, historyId, orderAdvanceClaimed, stale: false, duplicate: false }
        const messages = request.messages ? writeMessages(request.messages(outcome), request.claimFor ?? null, now) : []
        return { ...outcome, messages }
      }
      if (request.lockTimeoutMs === undefined) return group.run(commit(null)) as Promise<ShipmentChangeOutcome>
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
            outcome = await group.run(commit(authorized), deadline)
          } catch (error) {
            if (isBusy(error)) throw new LockTimeoutError(name)
            throw error
          }
          if (outcome !== 'status-moved') return outcome
        }
      })
    },

    async createShipments(orderId, orderReference, plan, userId, messages) {
      return writeTransaction(db, () => {
        const existing = db.select({ total: count() }).from(shipments).where(eq(shipments.orderId, orderId)).get()!
        const allocated = allocatedInOrder(orderId)
        const itemLists = plan(allocated)
        const now = new Date()
        const created: ShipmentRow[] = []
        for (const [index, items] of itemLists.entries()) {
          checkAllocation(items, allocated)
          for (const item of items) allocated.set(item.lineItemId, (allocated.get(item.lineItemId) ?? 0) + item.quantity)
          const reference = `${orderReference}-s${String(existing.total + index + 1).padStart(3, '0')}`
          const row = db.insert(shipments).values({ orderId, reference, status: 'new', items, createdAt: now, updatedAt: now }).returning().get()
          db.insert(shipmentStatusHistory).values({ shipmentId: row.id, fromStatus: null, toStatus: 'new', userId, createdAt: now }).run()
          created.push(row)
        }
        return { rows: created, messages: messages ? writeMessages(messages.of(created), messages.claimFor, now) : [] }
      })
    },

    async listShipments(query) {
      const onlyTrackingNumber =
        query.trackingNumber !== undefined && query.orderId === undefined && query.status === undefined && !query.referenceStartsWith && !query.externalReference && !query.includeDeleted
      if (onlyTrackingNumber && query.afterId === undefined && query.offset === 0) {
        const rows = selectByTrackingNumber.all({ key: trackingNumberKey(query.trackingNumber!), limit: query.limit })
        // A first page that is not full is the whole count.
        const total = rows.length < query.limit ? rows.length : countByTrackingNumber.get({ key: trackingNumberKey(query.trackingNumber!) })!.total
        return { rows, total }
      }
      const where = and(
        query.orderId !== undefined ? eq(shipments.orderId, query.orderId) : undefined,
        // With an order named, its index (`+status` keeps SQLite, which has no statistics, off the status index).
        query.status !== undefined ? (query.orderId !== undefined ? sql`+${shipments.status} = ${query.status}` : eq(shipments.status, query.status)) : undefined,
        query.referenceStartsWith ? referenceOrTrackingNumber(query.referenceStartsWith) : undefined,
        query.trackingNumber !== undefined ? sql`${trackingNumberKeyOf(shipments.trackingNumber)} = ${trackingNumberKey(query.trackingNumber)}` : undefined,
        query.externalReference ? inArray(shipments.id, externalReferenceHolders(query.externalReference)) : undefined,
        query.includeDeleted ? undefined : isNull(shipments.dateDeleted),
      )
      // Without a filter that narrows by an index of its own, the total is the kept count (never a count of every shipment).
      const keptTotal = query.orderId === undefined && !query.referenceStartsWith && query.trackingNumber === undefined && !query.externalReference && !query.includeDeleted
      const page = query.afterId !== undefined ? and(where, gt(shipments.id, query.afterId)) : where
      const rows = db.select().from(shipments).where(page).orderBy(shipments.id).limit(query.limit).offset(query.offset).all()
      // A first page that is not full is the whole count.
      const firstPageHoldsAll = query.afterId === undefined && query.offset === 0 && rows.length < query.limit
      const total = keptTotal ? keptCount(query.status) : firstPageHoldsAll ? rows.length : db.select({ total: count() }).from(shipments).where(where).get()!.total
      return { rows, total }
    },

    async allocations(orderIds) {
      if (orderIds.length === 0) return new Map()
      const rows = db
        .select({ orderId: shipments.orderId, items: shipments.items })
        .from(shipments)
        .where(and(inArray(shipments.orderId, [...orderIds]), eq(shipments.enabled, true), isNull(shipments.dateDeleted), ne(shipments.status, 'cancelled')))
        .all()
      return allocationsByOrder(rows)
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
        const before = deleted ? undefined : findRow(id)
        const toCheck = before ? allocationToCheck(before, { dateDeleted: null }) : null
        if (toCheck) checkAllocation(toCheck, allocatedInOrder(before!.orderId, id))
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

    async recordDelivery(integrationId, deliveryId, outcome) {
      return recordDelivery({ integrationId, deliveryId }, outcome, new Date())
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

    async recordExchangeActivity(entry, { keep, keepRefused, every }) {
      // One autocommit insert; now and then a prune by id, answered and refused rows each against their
      // own bound (anyone can send refused requests: they must not evict the answered ones).
      const { id } = db.insert(exchangeActivity).values(entry).returning({ id: exchangeActivity.id }).get()!
      let pruned = 0
      if (id % every === 0) {
        for (const [rows, kept] of [[exchangeActivityOutcome(false), keep], [exchangeActivityOutcome(true), keepRefused]] as const) {
          const newestDropped = db.select({ id: exchangeActivity.id }).from(exchangeActivity).where(rows).orderBy(desc(exchangeActivity.id)).limit(1).offset(kept).get()
          if (newestDropped) pruned += db.delete(exchangeActivity).where(and(rows, lte(exchangeActivity.id, newestDropped.id))).run().changes
        }
      }
      // A log of requests: no cached result depends on it (a ShipStation request must not empty the export's caches).
      leaveUncounted(db, 1 + pruned)
    },

    async exchangeActivity(limit, refused) {
      const rows = refused === undefined ? undefined : exchangeActivityOutcome(refused)
      return db.select().from(exchangeActivity).where(rows).orderBy(desc(exchangeActivity.id)).limit(limit).all()
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

    async countShipmentsByStatus() {
      const rows = db.select({ status: statusCounts.status, total: sql<number>`sum(${statusCounts.count})` }).from(statusCounts).groupBy(statusCounts.status).all()
      return Object.fromEntries(rows.filter((row) => row.total > 0).map((row) => [row.status, row.total]))
    },

    async refreshAttention(orderId, decide) {
      return writeTransaction(db, () => {
        const row = decide(allocatedInOrder(orderId))
        if (!row) {
          db.delete(attentionOrders).where(eq(attentionOrders.orderId, orderId)).run()
          return null
        }
        const values = { ...row, orderId, updatedAt: new Date() }
        db.insert(attentionOrders).values(values).onConflictDoUpdate({ target: attentionOrders.orderId, set: values }).run()
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
        .all()
    },

    async countAttentionRows() {
      return db.select({ total: count() }).from(attentionOrders).get()!.total
    },

    async packageState(key) {
      return selectPackageState.get({ key })?.value ?? null
    },

    async setPackageState(key, value) {
      db.insert(packageState).values({ key, value }).onConflictDoUpdate({ target: packageState.key, set: { value } }).run()
    },

    async countShippedByQuarterHour(from, to) {
      // From the kept counts: at most one row per quarter hour and slot of the window, at any volume.
      return db
        .select({ quarterHour: shippedCounts.quarterHour, count: sql<number>`sum(${shippedCounts.count})` })
        .from(shippedCounts)
        .where(and(gte(shippedCounts.quarterHour, Math.floor(from.getTime() / 900_000)), lt(shippedCounts.quarterHour, Math.ceil(to.getTime() / 900_000))))
        .groupBy(shippedCounts.quarterHour)
        .orderBy(shippedCounts.quarterHour)
        .all()
        .filter((row) => row.count > 0)
    },

    async lateShipments(now, limit) {
      const where = lateWhere(now)
      const { total } = db.select({ total: count() }).from(shipments).where(where).get()!
      const rows = db.select().from(shipments).where(where).orderBy(shipments.dateScheduledShip, shipments.id).limit(limit).all()
      return { rows, total }
    },

    async failingPushes(limit) {
      const { total } = db
        .select({ total: count() })
        .from(shipmentExternalReferences)
        .innerJoin(shipments, eq(shipments.id, shipmentExternalReferences.shipmentId))
        .where(failingPushWhere)
        .get()!
      const rows = db
        .select(failingPushColumns)
        .from(shipmentExternalReferences)
        .innerJoin(shipments, eq(shipments.id, shipmentExternalReferences.shipmentId))
        .innerJoin(integrations, eq(integrations.id, shipmentExternalReferences.integrationId))
        .where(failingPushWhere)
        .orderBy(desc(shipmentExternalReferences.lastPushAt), desc(shipments.id))
        .limit(limit)
        .all()
      return { rows, total }
    },

    async newestExchangeActivity(action) {
      return db.select().from(exchangeActivity).where(eq(exchangeActivity.action, action)).orderBy(desc(exchangeActivity.id)).limit(1).get()
    },

    createChangeStamp(otherInstancesMs) {
      const stamp = createChangeStamp(db, otherInstancesMs)
      return async () => stamp()
    },

    async findOrder(orderId) {
      return selectOrder.get({ orderId })
    },

    async findOrders(orderIds) {
      if (orderIds.length === 0) return []
      return db.select({ ...summaryColumns, ...displayColumns }).from(orders).where(inArray(orders.id, [...orderIds])).all()
    },

    async orderLines(orderId) {
      if (!selectOrderId.get({ orderId })) return undefined
      return linesOf([orderId]).get(orderId) ?? []
    },

    async listCompletedOrders({ afterId, limit }) {
      const rows = selectCompletedOrders.all({ afterId, limit })
      const lines = linesOf(rows.map((row) => row.id))
      return rows.map((row) => ({ ...row, lines: lines.get(row.id) ?? [] }))
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
        // The unique keys on reference and number decide: a taken one inserts nothing (no error, no read first).
        const inserted = db.insert(orders).values(order).onConflictDoNothing().returning({ id: orders.id }).get()
        if (!inserted) return 'duplicate' as const
        const { id } = inserted
        if (addresses.length > 0) db.insert(orderAddresses).values(addresses.map((address) => ({ ...address, orderId: id }))).run()
        // In pieces: one statement for thousands of lines would pass SQLite's limit on bound parameters.
        for (const piece of inChunks(items, LINE_ROWS_PER_INSERT)) db.insert(orderLineItems).values(piece.map((item) => ({ ...item, orderId: id }))).run()
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

    notifications: createSqliteNotificationStore(db),

    parcels: createSqliteParcelStore(db, group, writeMessages),
    checkpoints: createSqliteCheckpointData(db, group, writeMessages),

    returns: createSqliteReturnStore(db, group, writeMessages),

    outbox: createSqliteOutboxStore(db, writeMessages, group),

    async withNamedLock(name, key, timeoutMs, task) {
      return namedLocks.withLock(`${name}:${key}`, timeoutMs, task)
    },

    async close() {
      await checkpointer?.close()
      group.flush()
      if (options.owned) db.$client.close()
    },
  }
}

