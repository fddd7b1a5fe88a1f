// The tables for crossing borders on PostgreSQL: a parcel's customs declaration and a shipment's ship-to check.
import { sql } from 'drizzle-orm'
import { boolean, index, integer, jsonb, pgTable, text, timestamp as pgTimestamp } from 'drizzle-orm/pg-core'
import type { AddressCheckRow, AddressDecision, AddressProblemRow, AddressVerdict, CheckedAddress, CustomsDeclarationRow, CustomsFormRow, CustomsItemRow } from '../customs.js'

const timestamp = (name: string) => pgTimestamp(name, { withTimezone: true, precision: 3, mode: 'date' })
const createdAt = () => timestamp('created_at').notNull().defaultNow()
const updatedAt = () => timestamp('updated_at').notNull().defaultNow()

export const customsDeclarations = pgTable(
  'shipments_customs_declarations',
  {
    parcelId: integer('parcel_id').primaryKey(),
    shipmentId: integer('shipment_id').notNull(),
    contentsType: text('contents_type').notNull(),
    contentsExplanation: text('contents_explanation'),
    nonDeliveryOption: text('non_delivery_option').notNull(),
    restrictionType: text('restriction_type').notNull(),
    restrictionComments: text('restriction_comments'),
    signer: text('signer'),
    incoterm: text('incoterm').notNull(),
    eelPfc: text('eel_pfc'),
    certify: boolean('certify').notNull(),
    currency: text('currency').notNull(),
    items: jsonb('items').$type<CustomsItemRow[]>().notNull(),
    edited: boolean('edited').notNull(),
    forms: jsonb('forms').$type<CustomsFormRow[]>().notNull().default(sql`'[]'::jsonb`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [index('shipments_customs_declarations_shipment_idx').on(table.shipmentId)],
)

export const addressChecks = pgTable('shipments_address_checks', {
  shipmentId: integer('shipment_id').primaryKey(),
  shipTo: jsonb('ship_to').$type<CheckedAddress>(),
  verdict: text('verdict').$type<AddressVerdict>(),
  suggestion: jsonb('suggestion').$type<CheckedAddress>(),
  problems: jsonb('problems').$type<AddressProblemRow[]>().notNull().default(sql`'[]'::jsonb`),
  fingerprint: text('fingerprint'),
  decision: text('decision').$type<AddressDecision>(),
  checkedAt: timestamp('checked_at'),
  updatedAt: updatedAt(),
})

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const rowsMatch: [Same<typeof customsDeclarations.$inferSelect, CustomsDeclarationRow>, Same<typeof addressChecks.$inferSelect, AddressCheckRow>] = [true, true]
void rowsMatch
