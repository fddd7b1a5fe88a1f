// The carrier checkpoints table on SQLite.
import { sql } from 'drizzle-orm'
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import type { CheckpointRow } from '../checkpoints.js'

const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })

export const checkpoints = sqliteTable(
  'shipments_checkpoints',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    // No foreign keys: shipments are only soft-deleted, and parcels live in tables of their own.
    shipmentId: integer('shipment_id').notNull(),
    parcelId: integer('parcel_id'),
    trackingNumber: text('tracking_number').notNull(),
    source: text('source').notNull(),
    occurredAt: timestamp('occurred_at').notNull(),
    occurredAtText: text('occurred_at_text').notNull(),
    message: text('message'),
    location: text('location'),
    status: text('status'),
    subStatus: text('sub_status'),
    signedBy: text('signed_by'),
    dedupeKey: text('dedupe_key').notNull(),
    createdAt: timestamp('created_at').notNull().default(sql`(unixepoch('subsec') * 1000)`),
  },
  (table) => [
    uniqueIndex('shipments_checkpoints_dedupe_unique').on(table.shipmentId, table.dedupeKey),
    // A shipment's timeline reads its own rows only, in the carrier's order.
    index('shipments_checkpoints_shipment_idx').on(table.shipmentId, table.occurredAt, table.id),
  ],
)

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const rowsMatch: Same<typeof checkpoints.$inferSelect, CheckpointRow> = true
void rowsMatch
