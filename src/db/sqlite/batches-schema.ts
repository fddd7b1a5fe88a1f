// The label batch tables on SQLite: a batch (a durable job with a lease) and its items, one per parcel.
import { sql } from 'drizzle-orm'
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import type { LabelBatchItemRow, LabelBatchItemState, LabelBatchRow, LabelBatchSettings, LabelBatchState } from '../batches.js'

const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })
const createdAt = () => timestamp('created_at').notNull().default(sql`(unixepoch('subsec') * 1000)`)
const updatedAt = () => timestamp('updated_at').notNull().default(sql`(unixepoch('subsec') * 1000)`)

export const labelBatches = sqliteTable(
  'shipments_label_batches',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    state: text('state').$type<LabelBatchState>().notNull(),
    settings: text('settings', { mode: 'json' }).$type<LabelBatchSettings>().notNull(),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: timestamp('lease_expires_at'),
    userId: text('user_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    finishedAt: timestamp('finished_at'),
  },
  (table) => [index('shipments_label_batches_state_idx').on(table.state, table.id)],
)

export const labelBatchItems = sqliteTable(
  'shipments_label_batch_items',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    batchId: integer('batch_id')
      .notNull()
      .references(() => labelBatches.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    shipmentId: integer('shipment_id').notNull(),
    parcelId: integer('parcel_id'),
    state: text('state').$type<LabelBatchItemState>().notNull(),
    rule: text('rule'),
    carrier: text('carrier'),
    service: text('service'),
    operationId: text('operation_id'),
    reason: text('reason'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at'),
    updatedAt: updatedAt(),
  },
  (table) => [
    index('shipments_label_batch_items_batch_idx').on(table.batchId, table.state, table.position),
    index('shipments_label_batch_items_parcel_idx').on(table.parcelId),
  ],
)

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const rowsMatch: [Same<typeof labelBatches.$inferSelect, LabelBatchRow>, Same<typeof labelBatchItems.$inferSelect, LabelBatchItemRow>] = [true, true]
void rowsMatch
