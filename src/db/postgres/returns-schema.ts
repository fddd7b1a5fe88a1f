// The returns tables on PostgreSQL: returns with their lines (JSON, as shipments keep their items) and history.
import { sql } from 'drizzle-orm'
import { index, integer, json, pgTable, text, timestamp as pgTimestamp } from 'drizzle-orm/pg-core'
import type { ReturnHistoryRow, ReturnLabelState, ReturnLine, ReturnRow, ReturnState } from '../returns.js'

const timestamp = (name: string) => pgTimestamp(name, { withTimezone: true, precision: 3, mode: 'date' })
const createdAt = () => timestamp('created_at').notNull().defaultNow()
const updatedAt = () => timestamp('updated_at').notNull().defaultNow()
const id = () => integer('id').primaryKey().generatedByDefaultAsIdentity()

export const returns = pgTable(
  'shipments_returns',
  {
    id: id(),
    // No foreign key to the orders: a host's order store keeps its orders elsewhere.
    orderId: integer('order_id').notNull(),
    reference: text('reference').notNull(),
    state: text('state').$type<ReturnState>().notNull(),
    lines: json('lines').$type<ReturnLine[]>().notNull().default(sql`'[]'::json`),
    stateMessage: text('state_message'),
    trackingNumber: text('tracking_number'),
    trackingUrl: text('tracking_url'),
    carrier: text('carrier'),
    service: text('service'),
    labelUrl: text('label_url'),
    labelFormat: text('label_format'),
    labelCost: text('label_cost'),
    labelCurrency: text('label_currency'),
    labelOperationId: text('label_operation_id'),
    labelExternalId: text('label_external_id'),
    labelIntegrationId: integer('label_integration_id'),
    labelState: text('label_state').$type<ReturnLabelState>(),
    dateReceived: timestamp('date_received'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    index('shipments_returns_order_idx').on(table.orderId, table.id),
    index('shipments_returns_state_idx').on(table.state, table.id),
    index('shipments_returns_tracking_idx').on(table.trackingNumber),
  ],
)

export const returnHistory = pgTable(
  'shipments_return_history',
  {
    id: id(),
    returnId: integer('return_id')
      .notNull()
      .references(() => returns.id, { onDelete: 'cascade' }),
    fromState: text('from_state'),
    toState: text('to_state').notNull(),
    message: text('message'),
    userId: text('user_id'),
    source: text('source').notNull(),
    createdAt: createdAt(),
  },
  (table) => [index('shipments_return_history_return_idx').on(table.returnId, table.id)],
)

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const rowsMatch: [Same<typeof returns.$inferSelect, ReturnRow>, Same<typeof returnHistory.$inferSelect, ReturnHistoryRow>] = [true, true]
void rowsMatch
