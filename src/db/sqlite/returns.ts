// Returns on SQLite: a change is one IMMEDIATE transaction, which serializes every writer of the file,
// allocation's included; so the ledger read inside it is the one the change is checked against.
import { and, asc, count, desc, eq, isNull, lt, sql } from 'drizzle-orm'
import type { ReturnStore } from '../data-layer.js'
import { returnedByLine, shippedByLine, type ReturnLedger, type ReturnRow } from '../returns.js'
import { writeTransaction, type SqliteDatabase } from './dialect.js'
import type { createSqliteOutboxWriter } from './outbox.js'
import { returnHistory, returns } from './returns-schema.js'
import { shipments } from './schema.js'

export function createSqliteReturnStore(db: SqliteDatabase, writeMessages: ReturnType<typeof createSqliteOutboxWriter>): ReturnStore {
  // Every tracking event asks (a return's number names the return): prepared once.
  const selectByTrackingNumber = db.select().from(returns).where(eq(returns.trackingNumber, sql.placeholder('trackingNumber'))).orderBy(desc(returns.id)).limit(1).prepare()
  const findSync = (id: number) => db.select().from(returns).where(eq(returns.id, id)).get()
  const ofOrderSync = (orderId: number) => db.select().from(returns).where(eq(returns.orderId, orderId)).orderBy(asc(returns.id)).all()
  const ledgerSync = (orderId: number, exceptReturnId: number | null): ReturnLedger => {
    const shipped = db
      .select({ items: shipments.items })
      .from(shipments)
      .where(and(eq(shipments.orderId, orderId), eq(shipments.status, 'shipped'), eq(shipments.enabled, true), isNull(shipments.dateDeleted)))
      .all()
    return { shipped: shippedByLine(shipped), returned: returnedByLine(ofOrderSync(orderId), exceptReturnId) }
  }
  return {
    async find(id) {
      return findSync(id)
    },
    async ofOrder(orderId) {
      return ofOrderSync(orderId)
    },
    async list(query) {
      return db
        .select()
        .from(returns)
        .where(
          and(
            query.state === undefined ? undefined : eq(returns.state, query.state as ReturnRow['state']),
            query.orderId === undefined ? undefined : eq(returns.orderId, query.orderId),
            query.createdBefore === undefined ? undefined : lt(returns.createdAt, query.createdBefore),
            query.beforeId === undefined ? undefined : lt(returns.id, query.beforeId),
          ),
        )
        .orderBy(desc(returns.id))
        .limit(query.limit)
        .all()
    },
    async findByTrackingNumber(trackingNumber) {
      return selectByTrackingNumber.get({ trackingNumber })
    },
    async history(returnId) {
      return db.select().from(returnHistory).where(eq(returnHistory.returnId, returnId)).orderBy(desc(returnHistory.id)).all()
    },
    async ledger(orderId) {
      return ledgerSync(orderId, null)
    },
    async change(target, plan) {
      return writeTransaction(db, () => {
        const now = new Date()
        const current = 'returnId' in target ? findSync(target.returnId) : undefined
        if ('returnId' in target && !current) return undefined
        const orderId = current ? current.orderId : (target as { orderId: number }).orderId
        const planned = plan(current, ledgerSync(orderId, current?.id ?? null))
        let row: ReturnRow
        if (planned.insert) {
          const [{ total }] = db.select({ total: count() }).from(returns).where(eq(returns.orderId, orderId)).all() as [{ total: number }]
          const reference = `${planned.insert.orderReference}-r${String(total + 1).padStart(3, '0')}`
          row = db
            .insert(returns)
            .values({ orderId, reference, state: planned.insert.state, lines: planned.insert.lines, ...planned.columns, createdAt: now, updatedAt: now })
            .returning()
            .get()
        } else if (planned.columns) {
          row = db.update(returns).set({ ...planned.columns, updatedAt: now }).where(eq(returns.id, current!.id)).returning().get()
        } else {
          row = current!
        }
        if (planned.history) db.insert(returnHistory).values({ ...planned.history, returnId: row.id, createdAt: now }).run()
        const messages = planned.messages ? writeMessages(planned.messages(row), planned.claimFor ?? null, now) : []
        return { row, messages }
      })
    },
    async beginLabel(returnId, operation) {
      const changed = db
        .update(returns)
        .set({ labelOperationId: operation.operationId, labelIntegrationId: operation.integrationId, labelState: 'pending', labelExternalId: null, carrier: operation.carrier, service: operation.service, updatedAt: new Date() })
        .where(and(eq(returns.id, returnId), isNull(returns.labelOperationId)))
        .run().changes
      return changed > 0
    },
    async updateLabel(returnId, columns) {
      db.update(returns).set({ ...columns, updatedAt: new Date() }).where(eq(returns.id, returnId)).run()
    },
  }
}
