// Parcels, label operations, rate quotes and boxes on SQLite: a change is one IMMEDIATE transaction.
import { and, asc, desc, eq, getTableColumns, gte, inArray, isNotNull, sql } from 'drizzle-orm'
import type { ParcelStore } from '../data-layer.js'
import { storedParcels, type LabelOperationRow, type ParcelRow } from '../parcels.js'
import { shapedInsert, shapedUpdate } from './shaped-statements.js'
import type { SqliteContext } from './context.js'
import { boxes, labelAttempts, labelOperations, parcelHistory, parcels, rateQuotes } from './deliveries-schema.js'
import { orderAddresses, orderLineItems, shipments } from './schema.js'

/** SQLite's answer to a second active operation of a parcel (the partial unique index). */
const isUniqueViolation = (error: unknown) => (error as { code?: unknown })?.code === 'SQLITE_CONSTRAINT_UNIQUE'

/**
 * Every write commits in the shared group commit (see group-commit.ts), with the writes of the requests
 * that come with it: a label purchase writes six to eight times, each a commit of its own before. The
 * plans are pure, so a task run again (its group rolled back for another's failure) writes the same.
 */
export function createSqliteParcelStore({ db, group, writeMessages }: SqliteContext): ParcelStore {
  // Prepared once: every tracking event and label purchase reads them.
  const selectOfShipment = db.select().from(parcels).where(eq(parcels.shipmentId, sql.placeholder('shipmentId'))).orderBy(asc(parcels.id)).prepare()
  const countOfShipment = db.select({ count: sql<number>`count(*)` }).from(parcels).where(eq(parcels.shipmentId, sql.placeholder('shipmentId'))).prepare()
  const selectById = db.select().from(parcels).where(eq(parcels.id, sql.placeholder('id'))).prepare()
  const selectByTrackingNumber = db.select().from(parcels).where(eq(parcels.trackingNumber, sql.placeholder('trackingNumber'))).orderBy(desc(parcels.id)).limit(1).prepare()
  // An order's summary carries it: read for every return request and label purchase.
  const { id: _id, orderId: _orderId, ...addressColumns } = getTableColumns(orderAddresses)
  const selectShippingAddress = db
    .select(addressColumns)
    .from(orderAddresses)
    .where(and(eq(orderAddresses.orderId, sql.placeholder('orderId')), eq(orderAddresses.kind, 'shipping')))
    .prepare()
  // A label purchase's writes, prepared once per shape (see shaped-statements.ts).
  const selectShipmentId = db.select({ id: shipments.id }).from(shipments).where(eq(shipments.id, sql.placeholder('id'))).prepare()
  const selectActiveOperation = db
    .select()
    .from(labelOperations)
    .where(and(eq(labelOperations.parcelId, sql.placeholder('parcelId')), inArray(labelOperations.state, ['pending', 'purchased'])))
    .prepare()
  const selectOperation = db.select().from(labelOperations).where(eq(labelOperations.operationId, sql.placeholder('operationId'))).prepare()
  const parcelInsert = shapedInsert(db, parcels)
  const parcelUpdate = shapedUpdate(db, parcels, parcels.id)
  const historyInsert = shapedInsert(db, parcelHistory)
  const shipmentParcelsUpdate = shapedUpdate(db, shipments, shipments.id)
  const operationInsert = shapedInsert(db, labelOperations)
  const operationUpdate = shapedUpdate(db, labelOperations, labelOperations.operationId)
  const attemptInsert = shapedInsert(db, labelAttempts)
  const listSync = (shipmentId: number) => selectOfShipment.all({ shipmentId }) as ParcelRow[]
  const findSync = (id: number) => selectById.get({ id }) as ParcelRow | undefined
  return {
    async list(shipmentId) {
      return listSync(shipmentId)
    },
    async find(parcelId) {
      return findSync(parcelId)
    },
    async findByTrackingNumber(trackingNumber) {
      return selectByTrackingNumber.get({ trackingNumber }) as ParcelRow | undefined
    },
    async change(target, plan) {
      return group.run(() => {
        const now = new Date()
        let current: ParcelRow | undefined
        let shipmentId: number
        if ('parcelId' in target) {
          current = findSync(target.parcelId)
          if (!current) return undefined
          shipmentId = current.shipmentId
        } else {
          if (!selectShipmentId.get({ id: target.shipmentId })) return undefined
          shipmentId = target.shipmentId
        }
        const planned = plan(current, (countOfShipment.get({ shipmentId }) as { count: number }).count)
        let row: ParcelRow
        if (planned.insert) {
          row = parcelInsert.insertReturning({ ...planned.insert, ...planned.columns, shipmentId, createdAt: now, updatedAt: now }) as ParcelRow
        } else if (planned.remove) {
          row = current!
          db.delete(parcels).where(eq(parcels.id, row.id)).run()
        } else if (planned.columns) {
          row = parcelUpdate.updateReturning(current!.id, { ...planned.columns, updatedAt: now }) as ParcelRow
        } else {
          row = current!
        }
        if (planned.operation) {
          operationUpdate.update(planned.operation.operationId, { ...planned.operation.columns, updatedAt: now })
        }
        if (planned.history && !planned.remove) historyInsert.insert({ ...planned.history, parcelId: row.id, shipmentId, createdAt: now })
        // The IMMEDIATE transaction holds the file: no other parcel change can interleave with the copy.
        const after = listSync(shipmentId)
        shipmentParcelsUpdate.update(shipmentId, { parcels: storedParcels(after) })
        const messages = planned.messages ? writeMessages(planned.messages(row, after), planned.claimFor ?? null, now) : []
        return { row, messages }
      })
    },

    async beginOperation(values) {
      try {
        return await group.run(() => operationInsert.insertReturning({ ...values, state: 'pending' }) as LabelOperationRow)
      } catch (error) {
        if (isUniqueViolation(error)) return 'busy'
        throw error
      }
    },
    async activeOperation(parcelId) {
      return selectActiveOperation.get({ parcelId }) as LabelOperationRow | undefined
    },
    async findOperation(operationId) {
      return selectOperation.get({ operationId }) as LabelOperationRow | undefined
    },
    async updateOperation(operationId, columns) {
      await group.run(() => operationUpdate.update(operationId, { ...columns, updatedAt: new Date() }))
    },
    async operations(parcelId) {
      return db.select().from(labelOperations).where(eq(labelOperations.parcelId, parcelId)).orderBy(desc(labelOperations.id)).all() as LabelOperationRow[]
    },
    async recordAttempt(attempt) {
      await group.run(() => attemptInsert.insert(attempt))
    },
    async attempts(operationId) {
      return db.select().from(labelAttempts).where(eq(labelAttempts.operationId, operationId)).orderBy(asc(labelAttempts.id)).all()
    },

    async failedAttempts(since, limit) {
      return db.select().from(labelAttempts).where(and(isNotNull(labelAttempts.error), gte(labelAttempts.createdAt, since))).orderBy(desc(labelAttempts.id)).limit(limit).all()
    },

    async orderLineMeasures(orderId) {
      const { id, weight, weightUnit, length, width, height, dimensionUnit } = getTableColumns(orderLineItems)
      const measures = { id, weight, weightUnit, length, width, height, dimensionUnit }
      return db
        .select(measures)
        .from(orderLineItems)
        .where(eq(orderLineItems.orderId, orderId))
        .orderBy(asc(orderLineItems.id))
        .all()
    },

    async orderShippingAddress(orderId) {
      return selectShippingAddress.get({ orderId })
    },

    async insertQuotes(quotes) {
      if (quotes.length === 0) return []
      return db.insert(rateQuotes).values(quotes).returning().all()
    },
    async findQuote(id) {
      return db.select().from(rateQuotes).where(eq(rateQuotes.id, id)).get()
    },

    async listBoxes() {
      return db.select().from(boxes).orderBy(asc(boxes.id)).all()
    },
    async findBox(id) {
      return db.select().from(boxes).where(eq(boxes.id, id)).get()
    },
    async insertBox(values) {
      const now = new Date()
      return db.insert(boxes).values({ ...values, createdAt: now, updatedAt: now }).returning().get()
    },
    async updateBox(id, values) {
      return db.update(boxes).set({ ...values, updatedAt: new Date() }).where(eq(boxes.id, id)).returning().get()
    },
    async removeBox(id) {
      return db.delete(boxes).where(eq(boxes.id, id)).run().changes > 0
    },
  }
}
