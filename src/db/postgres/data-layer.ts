// The data layer on PostgreSQL (node-postgres): every write a transaction from the pool; the transition
// mutex is an in-process queue (so waiting requests do not hold connections) in front of a
// transaction-scoped advisory lock, held until commit and released by the server if the process dies.
import { and, count, desc, eq, isNull, lte, ne, or, sql } from 'drizzle-orm'
import { likePattern } from '../like.js'
import {
  LockTimeoutError,
  ShipmentMissingError,
  transitionLockName,
  type DataLayer,
  type ExternalEventMark,
  type ShipmentChangeOutcome,
} from '../data-layer.js'
import { createMutex } from '../mutex.js'
import { createPostgresChangeStamp, localLockTimeout, sqlState, type PostgresDatabase } from './connection.js'
import { ADVISORY_LOCK_CLASS } from './locks.js'
import { createPostgresOrderExport } from './order-export.js'
import { createPostgresOutboxStore, writeOutboxMessages } from './outbox.js'
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

type Transaction = Parameters<Parameters<PostgresDatabase['transaction']>[0]>[0]

/** lock_not_available: the lock_timeout of the transaction ran out. */
const LOCK_NOT_AVAILABLE = '55P03'

/**
 * Ids are int4 and text cannot hold NUL on PostgreSQL: a key outside what a column can hold names no
 * row (as on SQLite), rather than failing the query.
 */
const isInt4 = (value: number) => Number.isInteger(value) && value >= -2147483648 && value <= 2147483647
const isStorableText = (value: string) => !value.includes('\u0000')

export function createPostgresDataLayer(db: PostgresDatabase, options: { owned: boolean }): DataLayer {
  // Waiting requests queue here, not on the server: N requests for one shipment use one connection.
  const queue = createMutex({ directory: null })
  let localWrites = 0
  const wrote = <T>(result: T) => {
    localWrites++
    return result
  }

  const lockOrder = (tx: Transaction, orderId: number) =>
    tx.execute(sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_CLASS.orderShipments}::int, ${orderId}::int)`)

  /** Moves the integration's last-event mark forward; false when the event is older than the mark. */
  async function recordExternalEvent(tx: Transaction, shipmentId: number, event: ExternalEventMark, now: Date): Promise<boolean> {
    const [reference] = await tx
      .select({ lastEventAt: shipmentExternalReferences.lastEventAt })
      .from(shipmentExternalReferences)
      .where(and(eq(shipmentExternalReferences.shipmentId, shipmentId), eq(shipmentExternalReferences.integrationId, event.integrationId)))
      .for('update')
    if (reference?.lastEventAt && event.occurredAt < reference.lastEventAt) return false
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
    return true
  }

  async function findShipment(id: number) {
    if (!isInt4(id)) return undefined
    const [row] = await db.select().from(shipments).where(eq(shipments.id, id))
    return row
  }

  const statusExists = async (tx: Transaction, handle: string) =>
    (await tx.select({ id: orderStatuses.id }).from(orderStatuses).where(eq(orderStatuses.handle, handle))).length > 0
  const summaryColumns = { id: orders.id, reference: orders.reference, statusHandle: orders.statusHandle, isCompleted: orders.isCompleted }
  const exportOrders = createPostgresOrderExport(db, () => localWrites)

  return {
    engine: 'postgres',

    findShipment,

    async updateShipmentColumns(id, columns) {
      if (!isInt4(id)) return undefined
      const [row] = await db.update(shipments).set(columns).where(eq(shipments.id, id)).returning()
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
          if (request.externalEvent && !(await recordExternalEvent(tx, id, request.externalEvent, now))) {
            return { row: before, previousStatus: before.status, historyId: null, orderAdvanceClaimed: false, stale: true, messages: [] }
          }
          const plan = request.plan(before)
          const [history] = plan.history
            ? await tx
                .insert(shipmentStatusHistory)
                .values({ ...plan.history, shipmentId: id })
                .returning({ id: shipmentStatusHistory.id })
            : [null]
          const [row] = await tx.update(shipments).set(plan.columns).where(eq(shipments.id, id)).returning()
          let orderAdvanceClaimed = false
          if (plan.claimOrderAdvance !== null) {
            // Serialized per order: two last shipments shipped at once must not both count the other as open.
            await lockOrder(tx, row.orderId)
            const [{ total }] = await tx
              .select({ total: count() })
              .from(shipments)
              .where(and(eq(shipments.orderId, row.orderId), eq(shipments.enabled, true), isNull(shipments.dateDeleted), ne(shipments.status, 'shipped')))
            if (total === 0) {
              const claimed = await tx
                .insert(orderAdvances)
                .values({ orderId: row.orderId, status: plan.claimOrderAdvance, createdAt: now })
                .onConflictDoNothing()
                .returning({ orderId: orderAdvances.orderId })
              orderAdvanceClaimed = claimed.length > 0
            }
          }
          const outcome = { row, previousStatus: before.status, historyId: history?.id ?? null, orderAdvanceClaimed, stale: false }
          const messages = request.messages ? await writeOutboxMessages(tx, request.messages(outcome), request.claimFor ?? null, now) : []
          return { ...outcome, messages }
        })

      /** Authorizes against the row as it is now, then commits; again if the status moved in between. */
      const authorizeAndCommit = async (deadline: number | null) => {
        for (;;) {
          let authorized: string | null = null
          if (request.authorize) {
            const current = await findShipment(id)
            if (!current) throw new ShipmentMissingError(id)
            await request.authorize(current)
            authorized = current.status
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

    async createShipments(orderId, orderReference, howMany, userId, messages) {
      return db.transaction(async (tx) => {
        // Numbering reads the count and then inserts: one creator per order at a time.
        await lockOrder(tx, orderId)
        const [existing] = await tx.select({ total: count() }).from(shipments).where(eq(shipments.orderId, orderId))
        const now = new Date()
        const created = await tx
          .insert(shipments)
          .values(
            Array.from({ length: howMany }, (_, index) => ({
              orderId,
              reference: `${orderReference}-s${String(existing.total + index + 1).padStart(3, '0')}`,
              status: 'new',
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
      const where = and(
        query.orderId !== undefined ? eq(shipments.orderId, query.orderId) : undefined,
        query.status !== undefined ? eq(shipments.status, query.status) : undefined,
        query.referenceContains ? sql`${shipments.reference} ILIKE ${likePattern(query.referenceContains)} ESCAPE '\\'` : undefined,
        query.includeDeleted ? undefined : isNull(shipments.dateDeleted),
      )
      const [[{ total }], rows] = await Promise.all([
        db.select({ total: count() }).from(shipments).where(where),
        db.select().from(shipments).where(where).orderBy(shipments.id).limit(query.limit).offset(query.offset),
      ])
      return { rows, total }
    },

    async shipmentHistory(shipmentId) {
      if (!isInt4(shipmentId)) return []
      return db.select().from(shipmentStatusHistory).where(eq(shipmentStatusHistory.shipmentId, shipmentId)).orderBy(desc(shipmentStatusHistory.id))
    },

    async setShipmentDeleted(id, deleted, now, messages) {
      if (!isInt4(id)) return undefined
      return db.transaction(async (tx) => {
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

    async claimDelivery(integrationId, deliveryId) {
      const claimed = await db
        .insert(webhookDeliveries)
        .values({ integrationId, deliveryId, createdAt: new Date() })
        .onConflictDoNothing()
        .returning({ deliveryId: webhookDeliveries.deliveryId })
      return claimed.length > 0
    },

    async releaseDelivery(integrationId, deliveryId) {
      await db.delete(webhookDeliveries).where(and(eq(webhookDeliveries.integrationId, integrationId), eq(webhookDeliveries.deliveryId, deliveryId)))
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

    async recordExchangeActivity(entry, { keep, every }) {
      // Not counted in localWrites: no cache reads this table. Now and then a prune by id (the primary key).
      const [{ id }] = await db.insert(exchangeActivity).values(entry).returning({ id: exchangeActivity.id })
      if (id % every === 0) await db.delete(exchangeActivity).where(lte(exchangeActivity.id, id - keep))
    },

    async exchangeActivity(limit) {
      return db.select().from(exchangeActivity).orderBy(desc(exchangeActivity.id)).limit(limit)
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
      const [order] = await db.select(summaryColumns).from(orders).where(eq(orders.id, orderId))
      return order
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
        // Orders are numbered by the host; the per-order lock is not needed, the unique keys decide a race.
        const [taken] = await tx.select({ id: orders.id }).from(orders).where(or(eq(orders.reference, order.reference), eq(orders.number, order.number)))
        if (taken) return 'duplicate' as const
        const [{ id }] = await tx.insert(orders).values(order).returning({ id: orders.id })
        if (addresses.length > 0) await tx.insert(orderAddresses).values(addresses.map((address) => ({ ...address, orderId: id })))
        if (items.length > 0) await tx.insert(orderLineItems).values(items.map((item) => ({ ...item, orderId: id })))
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

    outbox: createPostgresOutboxStore(db),

    async withNamedLock(name, key, timeoutMs, task) {
      // In-process first, so waiting callers do not each hold a connection; then a session advisory
      // lock on a connection of its own, released by the server if this process dies.
      return queue.withLock(`${name}:${key}`, timeoutMs, async () => {
        const client = await db.$client.connect()
        const lost = (error: Error) => void error
        client.on('error', lost)
        let locked = false
        try {
          await client.query(`SELECT set_config('lock_timeout', $1, false)`, [`${Math.max(1, timeoutMs)}ms`])
          try {
            await client.query('SELECT pg_advisory_lock($1, $2)', [ADVISORY_LOCK_CLASS[name], key])
          } catch (error) {
            if (sqlState(error) === LOCK_NOT_AVAILABLE) throw new LockTimeoutError(`${name}:${key}`)
            throw error
          }
          locked = true
          await client.query('RESET lock_timeout')
          return await task()
        } finally {
          if (locked) await client.query('SELECT pg_advisory_unlock($1, $2)', [ADVISORY_LOCK_CLASS[name], key]).catch(lost)
          client.off('error', lost)
          client.release()
        }
      })
    },

    async close() {
      if (options.owned) await db.$client.end()
    },
  }
}
