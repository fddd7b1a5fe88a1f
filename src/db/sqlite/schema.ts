// The package's SQLite tables: shipments, their history, integrations, and the reference order store.
import { sql } from 'drizzle-orm'
import { referenceSearchKeyOf, trackingNumberKeyOf } from '../tracking-number-key.js'
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import type { ExchangeActivityRow, HistoryRow, IntegrationRow, ShipmentRow, StoredShipmentItem } from '../data-layer.js'
import type { StoredParcel } from '../parcels.js'

/** Milliseconds since the epoch; stored as an integer so indexes and range scans stay cheap. */
const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })
const createdAt = () => timestamp('created_at').notNull().default(sql`(unixepoch('subsec') * 1000)`)
const updatedAt = () => timestamp('updated_at').notNull().default(sql`(unixepoch('subsec') * 1000)`)
const jsonObject = (name: string) =>
  text(name, { mode: 'json' }).$type<Record<string, unknown>>().notNull().default(sql`'{}'`)

export const shipments = sqliteTable(
  'shipments_shipments',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    reference: text('reference').notNull(),
    orderId: integer('order_id').notNull(),
    status: text('status').notNull().default('new'),
    dateShipped: timestamp('date_shipped'),
    dateScheduledShip: timestamp('date_scheduled_ship'),
    trackingNumber: text('tracking_number'),
    trackingUrl: text('tracking_url'),
    carrier: text('carrier'),
    service: text('service'),
    fulfillmentNotes: text('fulfillment_notes'),
    shippingNotes: text('shipping_notes'),
    enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
    fields: jsonObject('fields'),
    dateDeleted: timestamp('date_deleted'),
    /** The status a shipment had when it was cancelled with its order, so it can be restored with it. */
    statusBeforeOrderCancel: text('status_before_order_cancel'),
    /** The order lines the shipment holds (empty: an order-level shipment), with the quantity ordered when allocated. */
    items: text('items', { mode: 'json' }).$type<StoredShipmentItem[]>().notNull().default(sql`'[]'`),
    /** A copy of the shipment's parcels, rewritten by every parcel change (see StoredParcel). */
    parcels: text('parcels', { mode: 'json' }).$type<StoredParcel[]>().notNull().default(sql`'[]'`),
    /** The delivery date the carrier expects, as the tracking service sent it (a date, or a date-time with its offset). */
    estimatedDelivery: text('estimated_delivery'),
    /** Where the estimate came from: the integration's handle. */
    estimatedDeliverySource: text('estimated_delivery_source'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    uniqueIndex('shipments_shipments_reference_unique').on(table.reference),
    index('shipments_shipments_order_idx').on(table.orderId, table.id),
    index('shipments_shipments_status_idx').on(table.status, table.id),
    // Tracking services' webhooks and searches find a shipment by its tracking number, however typed.
    index('shipments_shipments_tracking_number_key_idx').on(trackingNumberKeyOf(table.trackingNumber)),
    // A reference search reads the range of references that start with the text (see referenceSearchKeyOf).
    index('shipments_shipments_reference_search_idx').on(referenceSearchKeyOf.sqlite(table.reference)),
    // The overview: late shipments read only their own rows, at any store size.
    index('shipments_shipments_late_idx')
      .on(table.dateScheduledShip, table.id)
      .where(sql`enabled = 1 AND date_deleted IS NULL AND status NOT IN ('shipped', 'cancelled') AND date_scheduled_ship IS NOT NULL`),
  ],
)

export const shipmentStatusHistory = sqliteTable(
  'shipments_status_history',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    shipmentId: integer('shipment_id')
      .notNull()
      .references(() => shipments.id, { onDelete: 'cascade' }),
    fromStatus: text('from_status'),
    toStatus: text('to_status').notNull(),
    message: text('message'),
    userId: text('user_id'),
    sourceIntegration: text('source_integration'),
    sourceExternalCode: text('source_external_code'),
    createdAt: createdAt(),
  },
  (table) => [index('shipments_status_history_shipment_idx').on(table.shipmentId, table.id)],
)

/** One row per order the package has advanced, so the advance happens once and never backwards. */
export const orderAdvances = sqliteTable('shipments_order_advances', {
  orderId: integer('order_id').primaryKey(),
  status: text('status').notNull(),
  createdAt: createdAt(),
})

export const integrations = sqliteTable(
  'shipments_integrations',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    handle: text('handle').notNull(),
    /** "true"/"false", or an environment-variable reference such as "$WEBHOOKS_ENABLED". */
    enabled: text('enabled').notNull().default('true'),
    providerId: text('provider_id'),
    settings: jsonObject('settings'),
    /** External status code to internal shipment status. */
    statusMap: text('status_map', { mode: 'json' }).$type<Record<string, string>>().notNull().default(sql`'{}'`),
    /** Internal shipment status to the integration's own code, sent by a push. */
    outboundStatusMap: text('outbound_status_map', { mode: 'json' }).$type<Record<string, string>>().notNull().default(sql`'{}'`),
    /** Shipment statuses whose reaching pushes the shipment to the integration. */
    pushOn: text('push_on', { mode: 'json' }).$type<string[]>().notNull().default(sql`'[]'`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [uniqueIndex('shipments_integrations_handle_unique').on(table.handle)],
)

export const shipmentExternalReferences = sqliteTable(
  'shipments_external_references',
  {
    shipmentId: integer('shipment_id')
      .notNull()
      .references(() => shipments.id, { onDelete: 'cascade' }),
    integrationId: integer('integration_id')
      .notNull()
      .references(() => integrations.id, { onDelete: 'cascade' }),
    externalId: text('external_id'),
    externalUrl: text('external_url'),
    /** When the last applied external event happened; older events never move the status back. */
    lastEventAt: timestamp('last_event_at'),
    /** The outbound direction: when the last push or cancel was attempted, its error, how many attempts. */
    lastPushAt: timestamp('last_push_at'),
    lastPushError: text('last_push_error'),
    pushAttempts: integer('push_attempts').notNull().default(0),
    updatedAt: updatedAt(),
  },
  (table) => [
    primaryKey({ columns: [table.shipmentId, table.integrationId] }),
    // A tracking service's event falls back to the shipment holding its tracker id.
    index('shipments_external_references_external_id_idx').on(table.integrationId, table.externalId),
    // The overview's failing pushes: only those rows, newest first.
    index('shipments_external_references_failing_idx').on(table.lastPushAt).where(sql`last_push_error IS NOT NULL`),
  ],
)

/** Webhook deliveries already applied: the unique key makes a delivery count once, even when raced. */
export const webhookDeliveries = sqliteTable(
  'shipments_webhook_deliveries',
  {
    integrationId: integer('integration_id')
      .notNull()
      .references(() => integrations.id, { onDelete: 'cascade' }),
    deliveryId: text('delivery_id').notNull(),
    outcome: text('outcome', { mode: 'json' }).$type<Record<string, unknown>>().notNull().default(sql`'{}'`),
    createdAt: createdAt(),
  },
  (table) => [primaryKey({ columns: [table.integrationId, table.deliveryId] })],
)

/**
 * The transactional outbox: events and follow-up jobs, written in the transaction of the change that
 * causes them, then handled by one instance at a time (a claim with a lease) until done or failed.
 */
export const outbox = sqliteTable(
  'shipments_outbox',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    messageId: text('message_id').notNull(),
    kind: text('kind', { enum: ['event', 'job'] }).notNull(),
    name: text('name').notNull(),
    /** Messages of one key are handled in id (commit) order: one shipment's events stay in order. */
    orderingKey: text('ordering_key').notNull(),
    payload: jsonObject('payload'),
    state: text('state', { enum: ['pending', 'done', 'skipped', 'failed'] }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    availableAt: timestamp('available_at').notNull(),
    claimedUntil: timestamp('claimed_until'),
    claimedBy: text('claimed_by'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    doneAt: timestamp('done_at'),
  },
  (table) => [
    uniqueIndex('shipments_outbox_message_unique').on(table.messageId),
    index('shipments_outbox_pending_idx').on(table.availableAt, table.id).where(sql`state = 'pending'`),
    index('shipments_outbox_pending_key_idx').on(table.orderingKey, table.id).where(sql`state = 'pending'`),
    index('shipments_outbox_done_idx').on(table.doneAt),
    // The dead letters, which health reports count (bounded) and the system page lists, found without a scan.
    index('shipments_outbox_failed_idx').on(table.id).where(sql`state = 'failed'`),
  ],
)

/** Every attempt of an outbox job: time, HTTP status, duration, short error. */
export const outboxAttempts = sqliteTable(
  'shipments_outbox_attempts',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    outboxId: integer('outbox_id')
      .notNull()
      .references(() => outbox.id, { onDelete: 'cascade' }),
    attemptedAt: timestamp('attempted_at').notNull(),
    statusCode: integer('status_code'),
    durationMs: integer('duration_ms').notNull(),
    error: text('error'),
  },
  (table) => [index('shipments_outbox_attempts_outbox_idx').on(table.outboxId, table.id)],
)

/** Outbound webhook subscriptions: where to send which events, signed with the secret. */
/** Customer notifications: which statuses send which message to whom (see src/notifications/). */
export const notifications = sqliteTable('shipments_notifications', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  /** Shipment statuses whose reaching sends the notification. */
  statuses: text('statuses', { mode: 'json' }).$type<string[]>().notNull().default(sql`'[]'`),
  /** "customer": the order's email; "addresses": the fixed `addresses`. */
  /** Carrier milestones whose scan sends the notification (outForDelivery, attempted, exception, delivered, returnedToSender, estimateLater). */
  triggers: text('triggers', { mode: 'json' }).$type<string[]>().notNull().default(sql`'[]'`),
  recipient: text('recipient').notNull().default('customer'),
  addresses: text('addresses', { mode: 'json' }).$type<string[]>().notNull().default(sql`'[]'`),
  subject: text('subject').notNull(),
  html: text('html').notNull(),
  text: text('text').notNull(),
  /** A BCP 47 tag (the message's language), or null. */
  language: text('language'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
})

/** A shipment's public tracking link is signed with its version here (0 without a row); revoking raises it. */
export const trackingLinks = sqliteTable('shipments_tracking_links', {
  shipmentId: integer('shipment_id')
    .primaryKey()
    .references(() => shipments.id, { onDelete: 'cascade' }),
  version: integer('version').notNull().default(0),
})

export const webhookSubscriptions = sqliteTable('shipments_webhook_subscriptions', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  url: text('url').notNull(),
  /** Event names, or ["*"] for every event. */
  events: text('events', { mode: 'json' }).$type<string[]>().notNull().default(sql`'[]'`),
  secret: text('secret').notNull(),
  description: text('description'),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  /** Failed attempts since the last success; the subscription is disabled when it reaches the limit. */
  failureCount: integer('failure_count').notNull().default(0),
  disabledReason: text('disabled_reason'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
})

/**
 * The order exchange's activity log: one row per request ShipStation made (or tried), so a store admin
 * can see why orders are not showing up. Bounded: each write prunes rows beyond the newest
 * EXCHANGE_ACTIVITY_KEPT.
 */
export const exchangeActivity = sqliteTable('shipments_exchange_activity', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  action: text('action').notNull(),
  page: integer('page'),
  orderNumber: text('order_number'),
  ordersExported: integer('orders_exported'),
  statusCode: integer('status_code').notNull(),
  reason: text('reason'),
  createdAt: createdAt(),
})

// The reference order store: the package's own order tables, used when the host brings no order store.

export const orderStatuses = sqliteTable(
  'shipments_order_statuses',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    handle: text('handle').notNull(),
    name: text('name').notNull(),
    isDefault: integer('is_default', { mode: 'boolean' }).notNull().default(false),
  },
  (table) => [uniqueIndex('shipments_order_statuses_handle_unique').on(table.handle)],
)

export const orders = sqliteTable(
  'shipments_orders',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    number: text('number').notNull(),
    reference: text('reference').notNull(),
    email: text('email'),
    customerId: integer('customer_id'),
    statusHandle: text('status_handle'),
    isCompleted: integer('is_completed', { mode: 'boolean' }).notNull().default(false),
    /** Decimal amounts as text, so no binary rounding creeps into money. */
    totalPrice: text('total_price').notNull().default('0'),
    totalTax: text('total_tax').notNull().default('0'),
    totalShipping: text('total_shipping').notNull().default('0'),
    totalDiscount: text('total_discount').notNull().default('0'),
    couponCode: text('coupon_code'),
    paymentMethod: text('payment_method'),
    shippingMethod: text('shipping_method'),
    customerNotes: text('customer_notes'),
    internalNotes: text('internal_notes'),
    isGift: integer('is_gift', { mode: 'boolean' }).notNull().default(false),
    giftMessage: text('gift_message'),
    customField1: text('custom_field_1'),
    customField2: text('custom_field_2'),
    customField3: text('custom_field_3'),
    fields: jsonObject('fields'),
    dateOrdered: timestamp('date_ordered'),
    dateUpdated: timestamp('date_updated').notNull().default(sql`(unixepoch('subsec') * 1000)`),
    /**
     * Why the order cannot be exported to ShipStation (spec 4.3: its addresses and line items), or null.
     * Kept by database triggers on the order, its addresses and its items (migration 0002): never written
     * by the package's code, and a host's writes need not know it.
     */
    exportProblem: text('export_problem'),
  },
  (table) => [
    uniqueIndex('shipments_orders_reference_unique').on(table.reference),
    uniqueIndex('shipments_orders_number_unique').on(table.number),
    // The export scans completed orders by dateUpdated, then id (stable page edges).
    index('shipments_orders_export_idx').on(table.isCompleted, table.dateUpdated, table.id),
    // The exportable ones alone: the export's count and page starts are read from this index only.
    // The filter's columns come last (constant here) so that SQLite counts without reading the table.
    index('shipments_orders_exportable_idx')
      .on(table.dateUpdated, table.id, table.isCompleted, table.exportProblem)
      .where(sql`${table.isCompleted} = 1 AND ${table.exportProblem} IS NULL`),
  ],
)

export const orderLineItems = sqliteTable(
  'shipments_order_line_items',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    orderId: integer('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    sku: text('sku'),
    /** The unit's barcode (GTIN or the host's own), which a pack station scans; null: its SKU stands. */
    barcode: text('barcode'),
    name: text('name').notNull(),
    weight: real('weight'),
    /** g, kg, lb or oz. */
    weightUnit: text('weight_unit'),
    /** The unit's size for packing, exact decimals as text in `dimension_unit` (mm, cm or in); null when unknown. */
    length: text('length'),
    width: text('width'),
    height: text('height'),
    dimensionUnit: text('dimension_unit'),
    quantity: integer('quantity').notNull().default(1),
    /** False for lines that never ship (digital goods, services): shipments do not allocate them. */
    shippable: integer('shippable', { mode: 'boolean' }).notNull().default(true),
    price: text('price').notNull().default('0'),
    imageUrl: text('image_url'),
    /** Customs: the Harmonized System tariff number, the ISO country of origin, a description for the form, one unit's declared value (an exact decimal) and its currency. */
    hsTariffNumber: text('hs_tariff_number'),
    originCountry: text('origin_country'),
    customsDescription: text('customs_description'),
    customsValue: text('customs_value'),
    customsCurrency: text('customs_currency'),
    options: text('options', { mode: 'json' }).$type<Record<string, string>>().notNull().default(sql`'{}'`),
  },
  (table) => [index('shipments_order_line_items_order_idx').on(table.orderId, table.id)],
)

export const orderAddresses = sqliteTable(
  'shipments_order_addresses',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    orderId: integer('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['billing', 'shipping'] }).notNull(),
    fullName: text('full_name'),
    company: text('company'),
    address1: text('address1'),
    address2: text('address2'),
    city: text('city'),
    state: text('state'),
    postalCode: text('postal_code'),
    countryCode: text('country_code'),
    phone: text('phone'),
    email: text('email'),
  },
  (table) => [uniqueIndex('shipments_order_addresses_order_kind_unique').on(table.orderId, table.kind)],
)

// The deliveries tables (parcels, label operations, rate quotes, boxes) live in a file of their own.
export * from './deliveries-schema.js'
// The returns tables (reverse shipments) too.
export * from './returns-schema.js'
export * from './checkpoints-schema.js'
// The label batches (durable jobs buying a day's labels by the shipping rules).
export * from './batches-schema.js'
// The day's manifests (a carrier's end-of-day form, such as USPS's SCAN form) and the labels in them.
export * from './manifests-schema.js'
// Crossing borders: customs declarations per parcel, ship-to checks per shipment.
export * from './customs-schema.js'

// Rows read the same as on PostgreSQL: a column that drifts between the two schemas fails the type check.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const rowsMatch: [
  Same<typeof shipments.$inferSelect, ShipmentRow>,
  Same<typeof shipmentStatusHistory.$inferSelect, HistoryRow>,
  Same<typeof integrations.$inferSelect, IntegrationRow>,
  Same<typeof exchangeActivity.$inferSelect, ExchangeActivityRow>,
] = [true, true, true, true]
void rowsMatch

/**
 * Shipments not deleted, by status, kept by triggers on shipments_shipments in the transaction of every
 * write (see the migration `status_counts`): the overview and the lists read their totals here instead
 * of counting every shipment. Each status is spread over STATUS_COUNT_SLOTS rows (by shipment id), so
 * concurrent changes on PostgreSQL rarely wait for the same row; a total is the sum of its slots.
 */
export const statusCounts = sqliteTable(
  'shipments_status_counts',
  {
    status: text('status').notNull(),
    slot: integer('slot').notNull(),
    count: integer('count').notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.status, table.slot] })],
)

/**
 * Shipments not deleted that shipped in each quarter hour since the epoch (`floor(ms / 900000)`), kept
 * by the same triggers: the overview's shipped-per-day series reads at most one row per quarter hour
 * and slot of its window, however many shipments a day the store ships. Spread over slots as above.
 */
export const shippedCounts = sqliteTable(
  'shipments_shipped_counts',
  {
    quarterHour: integer('quarter_hour').notNull(),
    slot: integer('slot').notNull(),
    count: integer('count').notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.quarterHour, table.slot] })],
)

/**
 * Completed orders whose active shipments do not hold every shippable line in full (the attention
 * list), one row each, kept by the `attentionRefresh` outbox job that every change of an order's
 * allocation writes in its own transaction: the list and its count read only these rows.
 */
export const attentionOrders = sqliteTable('shipments_attention_orders', {
  orderId: integer('order_id').primaryKey(),
  reference: text('reference').notNull(),
  statusHandle: text('status_handle'),
  dateOrdered: timestamp('date_ordered'),
  customer: text('customer'),
  linesMissing: integer('lines_missing').notNull(),
  unitsMissing: integer('units_missing').notNull(),
  updatedAt: updatedAt(),
})

/** Small facts the package keeps about its own data (whether the attention rows were built, say). */
export const packageState = sqliteTable('shipments_package_state', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
})
