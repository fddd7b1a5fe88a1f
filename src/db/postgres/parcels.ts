// Parcels, label operations, rate quotes and boxes on PostgreSQL: a change reads the parcel FOR UPDATE
// inside its transaction, so two instances changing one parcel take turns.
import { and, asc, desc, eq, getTableColumns, gte, inArray, isNotNull, sql } from 'drizzle-orm'
import type { ParcelStore } from '../data-layer.js'
import { storedParcels, type LabelOperationRow, type ParcelRow } from '../parcels.js'
import { sqlState, type PostgresDatabase } from './connection.js'
import type { PostgresContext } from './context.js'
import { writeOutboxMessages } from './outbox.js'
import { boxes, labelAttempts, labelOperations, parcelHistory, parcels, rateQuotes } from './deliveries-schema.js'
import { orderAddresses, orderLineItems, shipments } from './schema.js'

type Transaction = Parameters<Parameters<PostgresDatabase['transaction']>[0]>[0]

/** Ids are int4: one outside names no row, as on SQLite. */
const isInt4 = (value: number) => Number.isInteger(value) && value >= -2147483648 && value <= 2147483647
const UNIQUE_VIOLATION = '23505'

/** The store's parts: the parcels and their change, the label operations with their attempts, and what rates and packing read. */
type ParcelRows = Pick<ParcelStore, 'list' | 'find' | 'findByTrackingNumber' | 'change'>
type LabelOperationRows = Pick<ParcelStore, 'beginOperation' | 'activeOperation' | 'findOperation' | 'updateOperation' | 'operations' | 'recordAttempt' | 'attempts' | 'failedAttempts'>

export function createPostgresParcelStore(context: PostgresContext): ParcelStore {
  return { ...createParcelRows(context), ...createLabelOperationRows(context), ...createQuoteAndBoxRows(context) }
}

function createParcelRows({ db }: PostgresContext): ParcelRows {
  const listIn = async (tx: Transaction | PostgresDatabase, shipmentId: number) =>
    (await tx.select().from(parcels).where(eq(parcels.shipmentId, shipmentId)).orderBy(asc(parcels.id))) as ParcelRow[]
  return {
    async list(shipmentId) {
      if (!isInt4(shipmentId)) return []
      return listIn(db, shipmentId)
    },
    async find(parcelId) {
      if (!isInt4(parcelId)) return undefined
      const [row] = await db.select().from(parcels).where(eq(parcels.id, parcelId))
      return row as ParcelRow | undefined
    },
    async findByTrackingNumber(trackingNumber) {
      const [row] = await db.select().from(parcels).where(eq(parcels.trackingNumber, trackingNumber)).orderBy(desc(parcels.id)).limit(1)
      return row as ParcelRow | undefined
    },
    async change(target, plan) {
      const id = 'parcelId' in target ? target.parcelId : target.shipmentId
      if (!isInt4(id)) return undefined
      return db.transaction(async (tx) => {
        const now = new Date()
        let current: ParcelRow | undefined
        let shipmentId: number
        // Changes of one shipment's parcels take turns on the shipment row (locked first, then the parcel:
        // one order for every change), so each rewrites the shipment's copy of its parcels from a list no
        // other change is still writing to.
        const lockShipment = async (id: number) =>
          (await tx.select({ id: shipments.id }).from(shipments).where(eq(shipments.id, id)).for('no key update')).length > 0
        if ('parcelId' in target) {
          const [owner] = await tx.select({ shipmentId: parcels.shipmentId }).from(parcels).where(eq(parcels.id, target.parcelId))
          if (!owner || !(await lockShipment(owner.shipmentId))) return undefined
          ;[current] = (await tx.select().from(parcels).where(eq(parcels.id, target.parcelId)).for('update')) as ParcelRow[]
          if (!current) return undefined
          shipmentId = current.shipmentId
        } else {
          if (!(await lockShipment(target.shipmentId))) return undefined
          shipmentId = target.shipmentId
        }
        const [{ count }] = await tx.select({ count: sql<number>`count(*)::int` }).from(parcels).where(eq(parcels.shipmentId, shipmentId))
        const planned = plan(current, count)
        let row: ParcelRow
        if (planned.insert) {
          ;[row] = (await tx.insert(parcels).values({ ...planned.insert, ...planned.columns, shipmentId, createdAt: now, updatedAt: now }).returning()) as ParcelRow[]
        } else if (planned.remove) {
          row = current!
          await tx.delete(parcels).where(eq(parcels.id, row.id))
        } else if (planned.columns) {
          ;[row] = (await tx.update(parcels).set({ ...planned.columns, updatedAt: now }).where(eq(parcels.id, current!.id)).returning()) as ParcelRow[]
        } else {
          row = current!
        }
        if (planned.operation) {
          await tx.update(labelOperations).set({ ...planned.operation.columns, updatedAt: now }).where(eq(labelOperations.operationId, planned.operation.operationId))
        }
        if (planned.history && !planned.remove) await tx.insert(parcelHistory).values({ ...planned.history, parcelId: row.id, shipmentId, createdAt: now })
        const after = await listIn(tx, shipmentId)
        await tx.update(shipments).set({ parcels: storedParcels(after) }).where(eq(shipments.id, shipmentId))
        const messages = planned.messages ? await writeOutboxMessages(tx, planned.messages(row, after), planned.claimFor ?? null, now) : []
        return { row, messages }
      })
    },
  }
}

function createLabelOperationRows({ db }: PostgresContext): LabelOperationRows {
  return {
    async beginOperation(values) {
      try {
        const [row] = await db.insert(labelOperations).values({ ...values, state: 'pending' }).returning()
        return row as LabelOperationRow
      } catch (error) {
        if (sqlState(error) === UNIQUE_VIOLATION) return 'busy'
        throw error
      }
    },
    async activeOperation(parcelId) {
      if (!isInt4(parcelId)) return undefined
      const [row] = await db
        .select()
        .from(labelOperations)
        .where(and(eq(labelOperations.parcelId, parcelId), inArray(labelOperations.state, ['pending', 'purchased'])))
      return row as LabelOperationRow | undefined
    },
    async findOperation(operationId) {
      const [row] = await db.select().from(labelOperations).where(eq(labelOperations.operationId, operationId))
      return row as LabelOperationRow | undefined
    },
    async updateOperation(operationId, columns) {
      await db.update(labelOperations).set({ ...columns, updatedAt: new Date() }).where(eq(labelOperations.operationId, operationId))
    },
    async operations(parcelId) {
      if (!isInt4(parcelId)) return []
      return (await db.select().from(labelOperations).where(eq(labelOperations.parcelId, parcelId)).orderBy(desc(labelOperations.id))) as LabelOperationRow[]
    },
    async recordAttempt(attempt) {
      await db.insert(labelAttempts).values(attempt)
    },
    async attempts(operationId) {
      return db.select().from(labelAttempts).where(eq(labelAttempts.operationId, operationId)).orderBy(asc(labelAttempts.id))
    },

    async failedAttempts(since, limit) {
      return db.select().from(labelAttempts).where(and(isNotNull(labelAttempts.error), gte(labelAttempts.createdAt, since))).orderBy(desc(labelAttempts.id)).limit(limit)
    },
  }
}

/** An order's line measures and shipping address (what rates and packing read), rate quotes and the box catalogue. */
function createQuoteAndBoxRows({ db }: PostgresContext): Omit<ParcelStore, keyof ParcelRows | keyof LabelOperationRows> {
  return {
    async orderLineMeasures(orderId) {
      if (!isInt4(orderId)) return []
      const { id, weight, weightUnit, length, width, height, dimensionUnit } = getTableColumns(orderLineItems)
      const measures = { id, weight, weightUnit, length, width, height, dimensionUnit }
      return db
        .select(measures)
        .from(orderLineItems)
        .where(eq(orderLineItems.orderId, orderId))
        .orderBy(asc(orderLineItems.id))
    },

    async orderShippingAddress(orderId) {
      if (!isInt4(orderId)) return undefined
      const { id: _id, orderId: _orderId, ...address } = getTableColumns(orderAddresses)
      const [row] = await db
        .select(address)
        .from(orderAddresses)
        .where(and(eq(orderAddresses.orderId, orderId), eq(orderAddresses.kind, 'shipping')))
      return row
    },

    async insertQuotes(quotes) {
      if (quotes.length === 0) return []
      return db.insert(rateQuotes).values(quotes).returning()
    },
    async findQuote(id) {
      if (!isInt4(id)) return undefined
      const [row] = await db.select().from(rateQuotes).where(eq(rateQuotes.id, id))
      return row
    },

    async listBoxes() {
      return db.select().from(boxes).orderBy(asc(boxes.id))
    },
    async findBox(id) {
      if (!isInt4(id)) return undefined
      const [row] = await db.select().from(boxes).where(eq(boxes.id, id))
      return row
    },
    async insertBox(values) {
      const now = new Date()
      const [row] = await db.insert(boxes).values({ ...values, createdAt: now, updatedAt: now }).returning()
      return row
    },
    async updateBox(id, values) {
      if (!isInt4(id)) return undefined
      const [row] = await db.update(boxes).set({ ...values, updatedAt: new Date() }).where(eq(boxes.id, id)).returning()
      return row
    },
    async removeBox(id) {
      if (!isInt4(id)) return false
      return (await db.delete(boxes).where(eq(boxes.id, id)).returning({ id: boxes.id })).length > 0
    },
  }
}
