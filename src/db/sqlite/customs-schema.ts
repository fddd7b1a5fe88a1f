// The tables for crossing borders on SQLite: a parcel's customs declaration and a shipment's ship-to check.
import { sql } from 'drizzle-orm'
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import type { AddressCheckRow, AddressDecision, AddressProblemRow, AddressVerdict, CheckedAddress, CustomsDeclarationRow, CustomsFormRow, CustomsItemRow } from '../customs.js'

const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })
const createdAt = () => timestamp('created_at').notNull().default(sql`(unixepoch('subsec') * 1000)`)
const updatedAt = () => timestamp('updated_at').notNull().default(sql`(unixepoch('subsec') * 1000)`)

export const customsDeclarations = sqliteTable(
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
    certify: integer('certify', { mode: 'boolean' }).notNull(),
    currency: text('currency').notNull(),
    items: text('items', { mode: 'json' }).$type<CustomsItemRow[]>().notNull(),
    edited: integer('edited', { mode: 'boolean' }).notNull(),
    forms: text('forms', { mode: 'json' }).$type<CustomsFormRow[]>().notNull().default(sql`'[]'`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [index('shipments_customs_declarations_shipment_idx').on(table.shipmentId)],
)

export const addressChecks = sqliteTable('shipments_address_checks', {
  shipmentId: integer('shipment_id').primaryKey(),
  shipTo: text('ship_to', { mode: 'json' }).$type<CheckedAddress>(),
  verdict: text('verdict').$type<AddressVerdict>(),
  suggestion: text('suggestion', { mode: 'json' }).$type<CheckedAddress>(),
  problems: text('problems', { mode: 'json' }).$type<AddressProblemRow[]>().notNull().default(sql`'[]'`),
  fingerprint: text('fingerprint'),
  decision: text('decision').$type<AddressDecision>(),
  checkedAt: timestamp('checked_at'),
  updatedAt: updatedAt(),
})

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const rowsMatch: [Same<typeof customsDeclarations.$inferSelect, CustomsDeclarationRow>, Same<typeof addressChecks.$inferSelect, AddressCheckRow>] = [true, true]
void rowsMatch
