// The deliveries tables on PostgreSQL: parcels, their history, label operations and attempts, rate quotes, boxes.
import { sql } from 'drizzle-orm'
import { boolean, index, integer, json, pgTable, text, timestamp as pgTimestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import type { BoxRow, LabelAttemptRow, LabelOperationRow, LabelOperationState, ParcelHistoryRow, ParcelItem, ParcelRow, RateQuoteRow } from '../parcels.js'

const timestamp = (name: string) => pgTimestamp(name, { withTimezone: true, precision: 3, mode: 'date' })
const createdAt = () => timestamp('created_at').notNull().defaultNow()
const updatedAt = () => timestamp('updated_at').notNull().defaultNow()
const id = () => integer('id').primaryKey().generatedByDefaultAsIdentity()

export const boxes = pgTable('shipments_boxes', {
  id: id(),
  name: text('name').notNull(),
  innerLength: text('inner_length').notNull(),
  innerWidth: text('inner_width').notNull(),
  innerHeight: text('inner_height').notNull(),
  dimensionUnit: text('dimension_unit').notNull(),
  emptyWeight: text('empty_weight').notNull(),
  maxWeight: text('max_weight').notNull(),
  weightUnit: text('weight_unit').notNull(),
  enabled: boolean('enabled').notNull().default(true),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
})

export const parcels = pgTable(
  'shipments_parcels',
  {
    id: id(),
    // No foreign key to the shipments table: shipments are only ever soft-deleted, and the tables stay apart.
    shipmentId: integer('shipment_id').notNull(),
    /** Exact decimals as text, with their units: no binary rounding reaches a weight or a size. */
    weight: text('weight').notNull(),
    weightUnit: text('weight_unit').notNull(),
    length: text('length'),
    width: text('width'),
    height: text('height'),
    dimensionUnit: text('dimension_unit'),
    boxId: integer('box_id').references(() => boxes.id, { onDelete: 'set null' }),
    items: json('items').$type<ParcelItem[]>().notNull().default(sql`'[]'::json`),
    status: text('status').notNull().default('pending'),
    trackingNumber: text('tracking_number'),
    trackingUrl: text('tracking_url'),
    carrier: text('carrier'),
    service: text('service'),
    labelUrl: text('label_url'),
    labelFormat: text('label_format'),
    labelCost: text('label_cost'),
    labelCurrency: text('label_currency'),
    labelOperationId: text('label_operation_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [index('shipments_parcels_shipment_idx').on(table.shipmentId, table.id), index('shipments_parcels_tracking_idx').on(table.trackingNumber)],
)

export const parcelHistory = pgTable(
  'shipments_parcel_history',
  {
    id: id(),
    parcelId: integer('parcel_id')
      .notNull()
      .references(() => parcels.id, { onDelete: 'cascade' }),
    shipmentId: integer('shipment_id').notNull(),
    action: text('action').notNull(),
    message: text('message'),
    userId: text('user_id'),
    createdAt: createdAt(),
  },
  (table) => [index('shipments_parcel_history_parcel_idx').on(table.parcelId, table.id)],
)

export const labelOperations = pgTable(
  'shipments_label_operations',
  {
    id: id(),
    operationId: text('operation_id').notNull(),
    parcelId: integer('parcel_id')
      .notNull()
      .references(() => parcels.id, { onDelete: 'cascade' }),
    shipmentId: integer('shipment_id').notNull(),
    integrationId: integer('integration_id').notNull(),
    providerId: text('provider_id').notNull(),
    quoteId: integer('quote_id'),
    carrier: text('carrier').notNull(),
    service: text('service').notNull(),
    state: text('state').$type<LabelOperationState>().notNull().default('pending'),
    externalId: text('external_id'),
    error: text('error'),
    userId: text('user_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    uniqueIndex('shipments_label_operations_operation_unique').on(table.operationId),
    // One label in the making or bought per parcel, whatever the number of instances racing to buy it.
    uniqueIndex('shipments_label_operations_active_unique').on(table.parcelId).where(sql`state in ('pending', 'purchased')`),
    index('shipments_label_operations_parcel_idx').on(table.parcelId, table.id),
  ],
)

export const labelAttempts = pgTable(
  'shipments_label_attempts',
  {
    id: id(),
    operationId: text('operation_id').notNull(),
    step: text('step').notNull(),
    request: json('request').$type<Record<string, unknown>>().notNull().default(sql`'{}'::json`),
    response: json('response').$type<Record<string, unknown>>().notNull().default(sql`'{}'::json`),
    statusCode: integer('status_code'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
    createdAt: createdAt(),
  },
  (table) => [
    index('shipments_label_attempts_operation_idx').on(table.operationId, table.id),
    // The provider calls that failed, newest first, for the admin's system page: found without a scan.
    index('shipments_label_attempts_failed_idx').on(table.id).where(sql`error IS NOT NULL`),
  ],
)

export const rateQuotes = pgTable(
  'shipments_rate_quotes',
  {
    id: id(),
    shipmentId: integer('shipment_id').notNull(),
    parcelId: integer('parcel_id')
      .notNull()
      .references(() => parcels.id, { onDelete: 'cascade' }),
    integrationId: integer('integration_id').notNull(),
    carrier: text('carrier').notNull(),
    service: text('service').notNull(),
    amount: text('amount').notNull(),
    currency: text('currency').notNull(),
    deliveryDays: integer('delivery_days'),
    deliveryDate: text('delivery_date'),
    externalRateId: text('external_rate_id'),
    fingerprint: text('fingerprint').notNull(),
    expiresAt: timestamp('expires_at').notNull(),
    createdAt: createdAt(),
  },
  (table) => [index('shipments_rate_quotes_parcel_idx').on(table.parcelId, table.id)],
)

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const rowsMatch: [
  Same<typeof parcels.$inferSelect, ParcelRow>,
  Same<typeof parcelHistory.$inferSelect, ParcelHistoryRow>,
  Same<typeof labelOperations.$inferSelect, LabelOperationRow>,
  Same<typeof labelAttempts.$inferSelect, LabelAttemptRow>,
  Same<typeof rateQuotes.$inferSelect, RateQuoteRow>,
  Same<typeof boxes.$inferSelect, BoxRow>,
] = [true, true, true, true, true, true]
void rowsMatch
