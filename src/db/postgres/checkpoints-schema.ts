// The carrier checkpoints table on PostgreSQL.
import { index, integer, pgTable, text, timestamp as pgTimestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import type { CheckpointRow } from '../checkpoints.js'

const timestamp = (name: string) => pgTimestamp(name, { withTimezone: true, precision: 3, mode: 'date' })

export const checkpoints = pgTable(
  'shipments_checkpoints',
  {
    id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
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
    createdAt: timestamp('created_at').notNull().defaultNow(),
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
