// Shipments on SQLite: rows, history, the change committed under the mutex, creation and allocation. A
// write of several statements (a transition, a creation) runs in one IMMEDIATE transaction; a write of
// one statement (plain columns) is a single autocommit statement, atomic on its own. The transition
// mutex is an in-process queue per shipment, backed across processes by the IMMEDIATE transaction
// itself: SQLite's write lock serializes every writer of the file, and the status is re-read inside it.
import { trackingNumberKey } from '../../text.js'
import { and, count, desc, eq, getTableColumns, gt, inArray, isNull, ne, sql, type Column } from 'drizzle-orm'
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
  type HistoryRow,
  type NewHistoryRow,
  type ShipmentChangeOutcome,
  type ShipmentColumns,
  type ShipmentRow,
  type ShipmentsStore,
  type AttentionRow,
} from '../data-layer.js'
import type { createSqliteCheckpointWriter } from './checkpoints.js'
import type { SqliteContext } from './context.js'
import { isBusy, writeTransaction, type SqliteDatabase } from './dialect.js'
import type { createSqliteDeliveryLedger } from './integrations.js'
import { attentionOrders, orderAdvances, orders, orderStatuses, shipmentExternalReferences, shipments, shipmentStatusHistory, statusCounts } from './schema.js'
import { referenceSearchBounds, referenceSearchKeyOf, trackingNumberKeyOf } from '../tracking-number-key.js'

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

/** A search: references that start with `text` (an index range, see referenceSearchKeyOf), or the tracking number `text`. */
function referenceOrTrackingNumber(text: string) {
  const [from, to] = referenceSearchBounds(text)
  const key = referenceSearchKeyOf.sqlite(shipments.reference)
  return sql`((${key} >= ${from} AND ${key} < ${to}) OR ${trackingNumberKeyOf(shipments.trackingNumber)} = ${trackingNumberKey(text)})`
}

/** The items of an order's shipments that hold an allocation, by line: for a change's check and the attention list. */
export function createSqliteAllocationReader(db: SqliteDatabase) {
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
  return allocatedInOrder
}

/** What the shipments' store takes from the other concerns: their writes and reads inside its transactions. */
export interface SqliteShipmentsDependencies {
  allocatedInOrder: ReturnType<typeof createSqliteAllocationReader>
  recordDelivery: ReturnType<typeof createSqliteDeliveryLedger>
  insertCheckpoints: ReturnType<typeof createSqliteCheckpointWriter>
}

function createShipmentRows(db: SqliteDatabase) {
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
  const insertOrderAdvance = db
    .insert(orderAdvances)
    .values({ orderId: sql.placeholder('orderId'), status: sql.placeholder('status'), createdAt: sql.placeholder('createdAt') })
    .onConflictDoNothing()
    .prepare()
  // The reference store's order advance in the change's transaction (see advanceOrderInTransaction): the
  // order takes the status when it exists, as the store's setOrderStatus would.
  const advanceOrder = db
    .update(orders)
    .set({ statusHandle: sql.placeholder('status') as unknown as string, dateUpdated: sql.placeholder('now') as unknown as Date })
    .where(and(eq(orders.id, sql.placeholder('orderId')), sql`exists (select 1 from ${orderStatuses} where ${orderStatuses.handle} = ${sql.placeholder('status')})`))
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
  return { findRow, insertHistory, selectLive, insertOrderAdvance, advanceOrder, updateRow }
}

function createExternalEventMarks(db: SqliteDatabase) {
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
  return { externalEventIsStale, markExternalEvent }
}

function createShipmentChange(
  { db, group, queue, writeMessages }: SqliteContext,
  { allocatedInOrder, recordDelivery, insertCheckpoints }: SqliteShipmentsDependencies,
  { findRow, insertHistory, selectLive, insertOrderAdvance, advanceOrder, updateRow }: ReturnType<typeof createShipmentRows>,
): Pick<ShipmentsStore, 'commitShipmentChange'> {
  const { externalEventIsStale, markExternalEvent } = createExternalEventMarks(db)
  return {
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
        if (duplicate) return unchangedOutcome(before, { stale, duplicate })
        // The event's scans commit with it (see the PostgreSQL twin): a stale event's too.
        const added = request.checkpoints ? insertCheckpoints(request.checkpoints.rows, now) : []
        const scans = added.length > 0 ? writeMessages(request.checkpoints!.messages(added, before), request.claimFor ?? null, now) : []
        if (stale) return { ...unchangedOutcome(before, { stale, duplicate }), messages: scans }
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
        const orderAdvanced =
          orderAdvanceClaimed && request.advanceOrderInTransaction === true && advanceOrder.run({ orderId: row.orderId, status: plan.claimOrderAdvance, now }).changes > 0
        const outcome = { row, previousStatus: before.status, historyId, orderAdvanceClaimed, orderAdvanced, stale: false, duplicate: false }
        const messages = request.messages ? writeMessages(request.messages(outcome), request.claimFor ?? null, now) : []
        return { ...outcome, messages: [...scans, ...messages] }
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
  }
}

export function createSqliteShipmentsStore(context: SqliteContext, dependencies: SqliteShipmentsDependencies): ShipmentsStore {
  const { db, group, writeMessages } = context
  const { allocatedInOrder } = dependencies
  const rows = createShipmentRows(db)
  const { findRow, updateRow } = rows
  // A tracking event's lookup by number (the first page of a list filtered by it alone).
  const withTrackingNumberKey = and(sql`${trackingNumberKeyOf(shipments.trackingNumber)} = ${sql.placeholder('key')}`, isNull(shipments.dateDeleted))
  const selectByTrackingNumber = db.select().from(shipments).where(withTrackingNumberKey).orderBy(shipments.id).limit(sql.placeholder('limit')).prepare()
  const countByTrackingNumber = db.select({ total: count() }).from(shipments).where(withTrackingNumberKey).prepare()
  /** Shipments not deleted (of one status), from the counts the triggers keep. */
  const keptCount = (status?: string) =>
    Number(
      db
        .select({ total: sql<number>`coalesce(sum(${statusCounts.count}), 0)` })
        .from(statusCounts)
        .where(status !== undefined ? eq(statusCounts.status, status) : undefined)
        .get()!.total,
    )
  /** The ids of the shipments whose external reference at the integration has this id (a subquery). */
  const externalReferenceHolders = (reference: { integrationId: number; externalId: string }) =>
    db
      .select({ id: shipmentExternalReferences.shipmentId })
      .from(shipmentExternalReferences)
      .where(and(eq(shipmentExternalReferences.integrationId, reference.integrationId), eq(shipmentExternalReferences.externalId, reference.externalId)))

  return {
    async findShipment(id) {
      return findRow(id)
    },

    async updateShipmentColumns(id, columns, fillEmpty, options = {}) {
      // One UPDATE ... RETURNING is atomic on its own and doubles as the existence check.
      return group.run(() => updateRow(id, columns, { fillEmpty, unlessTrackingNumberChanges: options.unlessTrackingNumberChanges }))
    },

    ...createShipmentChange(context, dependencies, rows),

    async createShipments(orderId, orderReference, plan, userId, messages, attention) {
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
        if (attention && created.length > 0) keepAttentionRow(db, orderId, attention(allocated), now)
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
  }
}

/** Writes the order's attention row as decided (null: the order needs none), inside the caller's write transaction. */
export function keepAttentionRow(db: SqliteDatabase, orderId: number, row: AttentionRow | null, now: Date): void {
  if (!row) {
    db.delete(attentionOrders).where(eq(attentionOrders.orderId, orderId)).run()
    return
  }
  const values = { ...row, orderId, updatedAt: now }
  db.insert(attentionOrders).values(values).onConflictDoUpdate({ target: attentionOrders.orderId, set: values }).run()
}
