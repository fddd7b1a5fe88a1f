// The shipment service: the one update path every change goes through (API, gateway, ShipStation).
import { and, count, desc, eq, isNull, ne, sql, type SQL } from 'drizzle-orm'
import type { FastifyBaseLogger } from 'fastify'
import { orderAdvances, shipmentExternalReferences, shipments, shipmentStatusHistory } from '../db/sqlite/schema.js'
import { writeTransaction, type ShipmentsDatabase } from '../db/sqlite/dialect.js'
import { LockTimeoutError, type Mutex } from '../db/sqlite/mutex.js'
import { ShipmentsErrors, ShipmentUpdateRejectedError } from '../errors.js'
import type { ShipmentsEvents } from '../events.js'
import type { ShipmentFieldDefinition } from '../options.js'
import type { OrderStore } from '../orders/order-store.js'
import {
  toHistoryEntry,
  toShipment,
  type Shipment,
  type ShipmentHistoryEntry,
  type ShipmentRow,
  type ShipmentStatus,
} from './shipment.js'
import { parseShipmentUpdate, type ShipmentPatch, type ShipmentUpdateInput } from './update-input.js'

export interface UpdateContext {
  /** The user making the change, recorded on the history row. */
  userId?: string | null
  /**
   * Called under the shipment's lock when the status really changes, with the status re-read under
   * the lock; throw to refuse the transition (the API checks the transition permission here).
   */
  authorizeTransition?: (from: ShipmentStatus, to: ShipmentStatus) => void | Promise<void>
  /**
   * The update is an integration's event: it is applied under the shipment's lock, and only when it
   * is not older than the last event applied from that integration, so late deliveries never move a
   * shipment back.
   */
  externalEvent?: ExternalEvent
}

export interface ExternalEvent {
  integrationId: number
  occurredAt: Date
  /** The shipment's id and page at the integration, kept as its external reference. */
  externalId?: string | null
  externalUrl?: string | null
}

export interface UpdateResult {
  shipment: Shipment
  /** The transition applied, or null when the status did not change. */
  transition: { from: ShipmentStatus; to: ShipmentStatus; historyId: number } | null
  /** True when an external event was older than the last one applied, and so changed nothing. */
  stale: boolean
}

export interface ListShipmentsQuery {
  orderId?: number
  status?: ShipmentStatus
  includeDeleted?: boolean
  page?: number
  perPage?: number
}

export interface ShipmentPage {
  shipments: Shipment[]
  total: number
  page: number
  perPage: number
}

export interface CreateShipmentsOptions {
  /** How many shipments to create. Default 1. */
  count?: number
  userId?: string | null
}

export interface ShipmentServiceDependencies {
  db: ShipmentsDatabase
  mutex: Mutex
  events: ShipmentsEvents
  orderStore: OrderStore
  logger: FastifyBaseLogger
  timeZone: string
  shipmentFields: ShipmentFieldDefinition[]
  shippedOrderStatus: string | null
  lockTimeoutMs: number
}

export type ShipmentService = ReturnType<typeof createShipmentService>

/** The mutex name of spec 3.3. */
export const transitionLockName = (shipmentId: number) => `shipments:shipment:${shipmentId}:transition`

/** A column value as better-sqlite3 stores it: times as epoch milliseconds, objects as JSON text. */
function encodeColumnValue(value: unknown): unknown {
  if (value instanceof Date) return value.getTime()
  if (typeof value === 'boolean') return value ? 1 : 0
  if (value !== null && typeof value === 'object') return JSON.stringify(value)
  return value
}

export function createShipmentService(deps: ShipmentServiceDependencies) {
  const { db, mutex, events, orderStore, logger, timeZone } = deps
  const fieldsByHandle = new Map(deps.shipmentFields.map((field) => [field.handle, field]))
  const present = (shipment: ShipmentRow) => toShipment(shipment, timeZone)

  // The hot path's statements are prepared once: building and preparing SQL per call cost more than
  // running it. Updates are prepared per set of changed columns, which is small and bounded.
  const selectById = db.select().from(shipments).where(eq(shipments.id, sql.placeholder('id'))).prepare()
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
  /** Applies `changes` to the shipment and returns the row as saved, or undefined when there is none. */
  function updateRow(id: number, changes: Partial<typeof shipments.$inferInsert>): ShipmentRow | undefined {
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

  const findRow = (id: number) => selectById.get({ id }) as ShipmentRow | undefined

  function requireRow(id: number): ShipmentRow {
    const row = Number.isSafeInteger(id) ? findRow(id) : undefined
    if (!row) throw new ShipmentsErrors.ShipmentNotFound(id)
    return row
  }

  /** Writes the patch (and the transition, when there is one) in one IMMEDIATE transaction. */
  function commitPatch(id: number, patch: ShipmentPatch, userId: string | null, externalEvent?: ExternalEvent) {
    const now = new Date()
    if (patch.status === undefined && !externalEvent && Object.keys(patch.fields).length === 0) {
      // Nothing to read first: one UPDATE ... RETURNING is atomic on its own and doubles as the
      // existence check, which spares the hot path a query and an explicit transaction.
      const after = updateRow(id, { ...patch.columns, updatedAt: now })
      if (!after) throw new ShipmentsErrors.ShipmentNotFound(id)
      return { after, transition: null, orderAdvance: null, stale: false }
    }
    return writeTransaction(db, (tx) => {
      // The existence check happens here, in the transaction, to spare the hot path a query.
      const before = requireRow(id)
      if (externalEvent && !recordExternalEvent(tx, id, externalEvent, now)) {
        return { after: before, transition: null, orderAdvance: null, stale: true }
      }
      const changes: Partial<typeof shipments.$inferInsert> = { ...patch.columns, updatedAt: now }
      if (Object.keys(patch.fields).length > 0) {
        const fields = { ...before.fields }
        for (const [handle, value] of Object.entries(patch.fields)) {
          if (value === null) delete fields[handle]
          else fields[handle] = value
        }
        changes.fields = fields
      }

      let transition: UpdateResult['transition'] = null
      let orderAdvance: string | null = null
      const target = patch.status
      if (target !== undefined && target !== before.status) {
        changes.status = target
        if (target === 'shipped' && !before.dateShipped) changes.dateShipped = now
        const history = insertHistory.get({
          shipmentId: id,
          fromStatus: before.status,
          toStatus: target,
          message: patch.statusMessage,
          userId,
          sourceIntegration: patch.integrationHandle,
          sourceExternalCode: patch.externalCode,
          createdAt: now,
        }) as { id: number }
        transition = { from: before.status as ShipmentStatus, to: target, historyId: history.id }
      }

      const after = updateRow(id, changes)!
      if (transition?.to === 'shipped') orderAdvance = claimOrderAdvance(after)
      return { after, transition, orderAdvance, stale: false }
    })
  }

  /** Moves the integration's last-event mark forward; false when the event is older than the mark. */
  function recordExternalEvent(tx: ShipmentsDatabase, shipmentId: number, event: ExternalEvent, now: Date): boolean {
    const reference = tx
      .select({ lastEventAt: shipmentExternalReferences.lastEventAt })
      .from(shipmentExternalReferences)
      .where(
        and(
          eq(shipmentExternalReferences.shipmentId, shipmentId),
          eq(shipmentExternalReferences.integrationId, event.integrationId),
        ),
      )
      .get()
    if (reference?.lastEventAt && event.occurredAt < reference.lastEventAt) return false
    const values = {
      lastEventAt: event.occurredAt,
      updatedAt: now,
      ...(event.externalId != null && { externalId: event.externalId }),
      ...(event.externalUrl != null && { externalUrl: event.externalUrl }),
    }
    tx.insert(shipmentExternalReferences)
      .values({ shipmentId, integrationId: event.integrationId, ...values })
      .onConflictDoUpdate({ target: [shipmentExternalReferences.shipmentId, shipmentExternalReferences.integrationId], set: values })
      .run()
    return true
  }

  /**
   * Claims the one-time advance of the shipment's order when every enabled, live shipment of it is
   * shipped. Returns the status to apply after commit, or null.
   */
  function claimOrderAdvance(shipment: ShipmentRow): string | null {
    const status = deps.shippedOrderStatus
    if (!status) return null
    const unshipped = countUnshipped.get({ orderId: shipment.orderId }) as { total: number }
    if (unshipped.total > 0) return null
    const claimed = insertOrderAdvance.run({ orderId: shipment.orderId, status, createdAt: new Date() })
    return claimed.changes > 0 ? status : null
  }

  async function applyOrderAdvance(orderId: number, status: string, shipmentId: number) {
    try {
      await orderStore.setOrderStatus(orderId, status)
      events.emitCommitted('orderAdvanced', { orderId, status, shipmentId })
    } catch (error) {
      logger.error({ err: error, orderId, status }, 'Could not advance the order of a shipped shipment')
    }
  }

  async function update(id: number, input: ShipmentUpdateInput | unknown, context: UpdateContext = {}): Promise<UpdateResult> {
    let patch: ShipmentPatch
    try {
      patch = parseShipmentUpdate(input, { fieldsByHandle, timeZone, now: Date.now() })
    } catch (error) {
      requireRow(id) // an unknown shipment is a 404 before it is a validation error
      throw error
    }
    const userId = context.userId ?? null

    if (patch.status === undefined && !context.externalEvent) {
      const { after } = commitWithServiceErrors(id, () => commitPatch(id, patch, userId))
      return { shipment: present(after), transition: null, stale: false }
    }

    const target = patch.status
    let committed: ReturnType<typeof commitPatch>
    try {
      committed = await mutex.withLock(transitionLockName(id), deps.lockTimeoutMs, async () => {
        const current = requireRow(id).status as ShipmentStatus
        if (target !== undefined && current !== target) await context.authorizeTransition?.(current, target)
        return commitWithServiceErrors(id, () => commitPatch(id, patch, userId, context.externalEvent))
      })
    } catch (error) {
      if (!(error instanceof LockTimeoutError)) throw error
      throw new ShipmentUpdateRejectedError(
        `Couldn't update shipment ${id} right now because another update is in progress. Please try again.`,
        { cause: error },
      )
    }

    const shipment = present(committed.after)
    if (committed.transition) {
      events.emitCommitted('shipmentStatusChanged', {
        shipment,
        from: committed.transition.from,
        to: committed.transition.to,
        message: patch.statusMessage,
        historyId: committed.transition.historyId,
        userId,
        sourceIntegration: patch.integrationHandle,
        externalCode: patch.externalCode,
      })
    }
    if (committed.orderAdvance) await applyOrderAdvance(shipment.orderId, committed.orderAdvance, id)
    return { shipment, transition: committed.transition, stale: committed.stale }
  }

  /** A database failure while saving becomes the service-level 422 of spec 7.1, logged in full. */
  function commitWithServiceErrors<T>(id: number, commit: () => T): T {
    try {
      return commit()
    } catch (error) {
      if (error instanceof ShipmentsErrors.ShipmentNotFound) throw error
      logger.error({ err: error, shipmentId: id }, 'Saving a shipment failed')
      throw new ShipmentUpdateRejectedError(`Couldn't update shipment ${id}: the change could not be saved.`, {
        cause: error,
      })
    }
  }

  async function create(orderId: number, options: CreateShipmentsOptions = {}): Promise<Shipment[]> {
    const howMany = options.count ?? 1
    if (!Number.isSafeInteger(howMany) || howMany < 1 || howMany > 100) {
      throw new RangeError('count must be an integer from 1 to 100')
    }
    const order = await orderStore.findOrder(orderId)
    if (!order) throw new ShipmentsErrors.OrderNotFound(orderId)
    const userId = options.userId ?? null

    const rows = writeTransaction(db, (tx) => {
      const existing = tx.select({ total: count() }).from(shipments).where(eq(shipments.orderId, orderId)).get()!
      const now = new Date()
      const created: ShipmentRow[] = []
      for (let index = 1; index <= howMany; index++) {
        const number = existing.total + index
        const row = tx
          .insert(shipments)
          .values({
            orderId,
            reference: `${order.reference}-s${String(number).padStart(3, '0')}`,
            status: 'new',
            createdAt: now,
            updatedAt: now,
          })
          .returning()
          .get()
        tx.insert(shipmentStatusHistory)
          .values({ shipmentId: row.id, fromStatus: null, toStatus: 'new', userId, createdAt: now })
          .run()
        created.push(row)
      }
      return created
    })

    const result = rows.map(present)
    for (const shipment of result) {
      events.emitCommitted('shipmentCreated', { shipment, userId, sourceIntegration: null, externalCode: null })
    }
    return result
  }

  async function get(id: number): Promise<Shipment | null> {
    const row = Number.isSafeInteger(id) ? findRow(id) : undefined
    return row ? present(row) : null
  }

  async function list(query: ListShipmentsQuery = {}): Promise<ShipmentPage> {
    const page = Math.max(1, Math.floor(query.page ?? 1))
    const perPage = Math.min(100, Math.max(1, Math.floor(query.perPage ?? 50)))
    const conditions: SQL[] = []
    if (query.orderId !== undefined) conditions.push(eq(shipments.orderId, query.orderId))
    if (query.status !== undefined) conditions.push(eq(shipments.status, query.status))
    if (!query.includeDeleted) conditions.push(isNull(shipments.dateDeleted))
    const where = and(...conditions)
    const { total } = db.select({ total: count() }).from(shipments).where(where).get()!
    const rows = db
      .select()
      .from(shipments)
      .where(where)
      .orderBy(shipments.id)
      .limit(perPage)
      .offset((page - 1) * perPage)
      .all()
    return { shipments: rows.map(present), total, page, perPage }
  }

  async function history(id: number): Promise<ShipmentHistoryEntry[]> {
    requireRow(id)
    const rows = db
      .select()
      .from(shipmentStatusHistory)
      .where(eq(shipmentStatusHistory.shipmentId, id))
      .orderBy(desc(shipmentStatusHistory.id))
      .all()
    return rows.map((row) => toHistoryEntry(row, timeZone))
  }

  function setDeleted(id: number, deleted: boolean): Shipment {
    requireRow(id)
    const now = new Date()
    const row = db
      .update(shipments)
      .set({ dateDeleted: deleted ? sql`coalesce(${shipments.dateDeleted}, ${now.getTime()})` : null, updatedAt: now })
      .where(eq(shipments.id, id))
      .returning()
      .get()!
    const shipment = present(row)
    events.emitCommitted(deleted ? 'shipmentDeleted' : 'shipmentRestored', { shipment })
    return shipment
  }

  return {
    create,
    get,
    list,
    update,
    history,
    /** Soft-deletes: the shipment stays readable and updatable (spec 4.1), but leaves default lists. */
    async softDelete(id: number) {
      return setDeleted(id, true)
    },
    async restore(id: number) {
      return setDeleted(id, false)
    },
  }
}
