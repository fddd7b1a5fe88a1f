// Returns on SQLite: a change is one IMMEDIATE transaction, which serializes every writer of the file,
// allocation's included; so the ledger read inside it is the one the change is checked against.
import { and, asc, desc, eq, isNull, lt, sql } from 'drizzle-orm'
import type { ReturnStore } from '../data-layer.js'
import { returnedByLine, shippedByLine, type ReturnLedger, type ReturnRow } from '../returns.js'
import type { SqliteContext } from './context.js'
import { returnHistory, returns } from './returns-schema.js'
import { shipments } from './schema.js'
import { shapedInsert, shapedUpdate } from './shaped-statements.js'

export function createSqliteReturnStore({ db, group, writeMessages }: SqliteContext): ReturnStore {
  // Every tracking event asks (a return's number names the return): prepared once.
  const selectByTrackingNumber = db.select().from(returns).where(eq(returns.trackingNumber, sql.placeholder('trackingNumber'))).orderBy(desc(returns.id)).limit(1).prepare()
  // A return request reads these in its transaction: prepared once.
  const selectById = db.select().from(returns).where(eq(returns.id, sql.placeholder('id'))).prepare()
  const selectOfOrder = db.select().from(returns).where(eq(returns.orderId, sql.placeholder('orderId'))).orderBy(asc(returns.id)).prepare()
  // The ledger needs of the order's other returns only what they hold: whole rows (twenty columns, each
  // mapped by Drizzle) were a fifth of a return request's time.
  const selectHeldOfOrder = db
    .select({ id: returns.id, state: returns.state, lines: returns.lines })
    .from(returns)
    .where(eq(returns.orderId, sql.placeholder('orderId')))
    .prepare()
  const selectShippedItems = db
    .select({ items: shipments.items })
    .from(shipments)
    // `+status`: by the order's index. Without statistics SQLite weighs the order and the status indexes
    // alike and took the status one, reading every shipped shipment of the shop for each request.
    .where(and(eq(shipments.orderId, sql.placeholder('orderId')), sql`+${shipments.status} = 'shipped'`, eq(shipments.enabled, true), isNull(shipments.dateDeleted)))
    .prepare()
  // A request's and a change's writes, prepared once per set of columns.
  const returnInsert = shapedInsert(db, returns)
  const returnUpdate = shapedUpdate(db, returns, returns.id)
  const historyInsert = shapedInsert(db, returnHistory)
  const findSync = (id: number) => selectById.get({ id })
  const ofOrderSync = (orderId: number) => selectOfOrder.all({ orderId })
  const heldOfOrderSync = (orderId: number) => selectHeldOfOrder.all({ orderId })
  const ledgerOf = (orderId: number, orderReturns: Array<Pick<ReturnRow, 'id' | 'state' | 'lines'>>, exceptReturnId: number | null): ReturnLedger => ({
    shipped: shippedByLine(selectShippedItems.all({ orderId })),
    returned: returnedByLine(orderReturns, exceptReturnId),
  })
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
      return ledgerOf(orderId, heldOfOrderSync(orderId), null)
    },
    async change(target, plan) {
      // In the shared commit of the writes that come with it (see group-commit.ts): a commit of its own
      // was a third of a request's database time. The plan is pure, so running it twice (a group rolled
      // back for another task's failure) writes the same.
      return group.run(() => {
        const now = new Date()
        const current = 'returnId' in target ? findSync(target.returnId) : undefined
        if ('returnId' in target && !current) return undefined
        const orderId = current ? current.orderId : (target as { orderId: number }).orderId
        const orderReturns = heldOfOrderSync(orderId)
        const planned = plan(current, ledgerOf(orderId, orderReturns, current?.id ?? null))
        let row: ReturnRow
        if (planned.insert) {
          // Numbered by the order's returns, all of them read for the ledger just now.
          const reference = `${planned.insert.orderReference}-r${String(orderReturns.length + 1).padStart(3, '0')}`
          row = returnInsert.insertReturning({ orderId, reference, state: planned.insert.state, lines: planned.insert.lines, ...planned.columns, createdAt: now, updatedAt: now })
        } else if (planned.columns) {
          row = returnUpdate.updateReturning(current!.id, { ...planned.columns, updatedAt: now })!
        } else {
          row = current!
        }
        if (planned.history) historyInsert.insert({ ...planned.history, returnId: row.id, createdAt: now })
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
