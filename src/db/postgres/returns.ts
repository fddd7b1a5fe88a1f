// Returns on PostgreSQL: a change takes the order's transaction-scoped advisory lock (the one
// allocation takes), so competing returns of an order, on any instance, are checked one after another.
import { and, asc, desc, eq, isNull, lt, sql } from 'drizzle-orm'
import type { ReturnStore } from '../data-layer.js'
import { returnedByLine, shippedByLine, type ReturnLedger, type ReturnRow } from '../returns.js'
import type { PostgresDatabase } from './connection.js'
import { writeTransaction, type PostgresContext } from './context.js'
import { ADVISORY_LOCK_CLASS } from './locks.js'
import { writeOutboxMessages } from './outbox.js'
import { returnHistory, returns } from './returns-schema.js'
import { shipments } from './schema.js'

type Transaction = Parameters<Parameters<PostgresDatabase['transaction']>[0]>[0]

/** Ids are int4: one outside names no row, as on SQLite. */
const isInt4 = (value: number) => Number.isInteger(value) && value >= -2147483648 && value <= 2147483647

export function createPostgresReturnStore(context: PostgresContext): ReturnStore {
  const { db } = context
  const ofOrderIn = (tx: Transaction | PostgresDatabase, orderId: number) => tx.select().from(returns).where(eq(returns.orderId, orderId)).orderBy(asc(returns.id))
  /** The order's ledger, and how many returns the order has (a new return's number). */
  const ledgerIn = async (tx: Transaction | PostgresDatabase, orderId: number, exceptReturnId: number | null): Promise<ReturnLedger & { returnCount: number }> => {
    const [shipped, rows] = await Promise.all([
      tx
        .select({ items: shipments.items })
        .from(shipments)
        .where(and(eq(shipments.orderId, orderId), eq(shipments.status, 'shipped'), eq(shipments.enabled, true), isNull(shipments.dateDeleted))),
      // Of the order's returns, only what they hold (whole rows cost Drizzle a mapping of twenty columns each).
      tx.select({ id: returns.id, state: returns.state, lines: returns.lines }).from(returns).where(eq(returns.orderId, orderId)),
    ])
    return { shipped: shippedByLine(shipped), returned: returnedByLine(rows, exceptReturnId), returnCount: rows.length }
  }
  return {
    async find(id) {
      if (!isInt4(id)) return undefined
      const [row] = await db.select().from(returns).where(eq(returns.id, id))
      return row
    },
    async ofOrder(orderId) {
      if (!isInt4(orderId)) return []
      return ofOrderIn(db, orderId)
    },
    async list(query) {
      if (query.orderId !== undefined && !isInt4(query.orderId)) return []
      return db
        .select()
        .from(returns)
        .where(
          and(
            query.state === undefined ? undefined : eq(returns.state, query.state as ReturnRow['state']),
            query.orderId === undefined ? undefined : eq(returns.orderId, query.orderId),
            query.createdBefore === undefined ? undefined : lt(returns.createdAt, query.createdBefore),
            query.beforeId === undefined ? undefined : lt(returns.id, Math.min(query.beforeId, 2147483647)),
          ),
        )
        .orderBy(desc(returns.id))
        .limit(query.limit)
    },
    async findByTrackingNumber(trackingNumber) {
      if (trackingNumber.includes('\u0000')) return undefined
      const [row] = await db.select().from(returns).where(eq(returns.trackingNumber, trackingNumber)).orderBy(desc(returns.id)).limit(1)
      return row
    },
    async history(returnId) {
      if (!isInt4(returnId)) return []
      return db.select().from(returnHistory).where(eq(returnHistory.returnId, returnId)).orderBy(desc(returnHistory.id))
    },
    async ledger(orderId) {
      if (!isInt4(orderId)) return { shipped: new Map(), returned: new Map() }
      const { shipped, returned } = await ledgerIn(db, orderId, null)
      return { shipped, returned }
    },
    async change(target, plan) {
      const id = 'returnId' in target ? target.returnId : target.orderId
      if (!isInt4(id)) return undefined
      return writeTransaction(context, async (tx) => {
        const now = new Date()
        let orderId: number
        let current: ReturnRow | undefined
        if ('returnId' in target) {
          const [found] = await tx.select({ orderId: returns.orderId }).from(returns).where(eq(returns.id, target.returnId))
          if (!found) return undefined
          orderId = found.orderId
        } else {
          orderId = target.orderId
        }
        // The order's lock first, then the return as it is under it.
        await tx.execute(sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_CLASS.orderShipments}::int, ${orderId}::int)`)
        if ('returnId' in target) {
          ;[current] = await tx.select().from(returns).where(eq(returns.id, target.returnId))
          if (!current) return undefined
        }
        const { returnCount, ...ledger } = await ledgerIn(tx, orderId, current?.id ?? null)
        const planned = plan(current, ledger)
        let row: ReturnRow
        if (planned.insert) {
          // Numbered by the order's returns, all of them read for the ledger just now (under the order's lock).
          const reference = `${planned.insert.orderReference}-r${String(returnCount + 1).padStart(3, '0')}`
          ;[row] = (await tx
            .insert(returns)
            .values({ orderId, reference, state: planned.insert.state, lines: planned.insert.lines, ...planned.columns, createdAt: now, updatedAt: now })
            .returning()) as [ReturnRow]
        } else if (planned.columns) {
          ;[row] = (await tx.update(returns).set({ ...planned.columns, updatedAt: now }).where(eq(returns.id, current!.id)).returning()) as [ReturnRow]
        } else {
          row = current!
        }
        if (planned.history) await tx.insert(returnHistory).values({ ...planned.history, returnId: row.id, createdAt: now })
        const messages = planned.messages ? await writeOutboxMessages(tx, planned.messages(row), planned.claimFor ?? null, now) : []
        return { row, messages }
      }, { ownLockTimeout: false })
    },
    async beginLabel(returnId, operation) {
      const changed = await db
        .update(returns)
        .set({ labelOperationId: operation.operationId, labelIntegrationId: operation.integrationId, labelState: 'pending', labelExternalId: null, carrier: operation.carrier, service: operation.service, updatedAt: new Date() })
        .where(and(eq(returns.id, returnId), isNull(returns.labelOperationId)))
        .returning({ id: returns.id })
      return changed.length > 0
    },
    async updateLabel(returnId, columns) {
      await db.update(returns).set({ ...columns, updatedAt: new Date() }).where(eq(returns.id, returnId))
    },
  }
}
