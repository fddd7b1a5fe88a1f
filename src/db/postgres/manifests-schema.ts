// The manifest tables on PostgreSQL: a manifest and the labels in it (each label in one manifest at most).
import { index, integer, pgTable, primaryKey, text, timestamp as pgTimestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import type { ManifestParcelRow, ManifestRow, ManifestState } from '../manifests.js'

const timestamp = (name: string) => pgTimestamp(name, { withTimezone: true, precision: 3, mode: 'date' })
const createdAt = () => timestamp('created_at').notNull().defaultNow()
const updatedAt = () => timestamp('updated_at').notNull().defaultNow()

export const manifests = pgTable(
  'shipments_manifests',
  {
    id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
    integrationId: integer('integration_id').notNull(),
    carrier: text('carrier').notNull(),
    shipFrom: text('ship_from').notNull(),
    state: text('state').$type<ManifestState>().notNull(),
    externalId: text('external_id'),
    formUrl: text('form_url'),
    parcelCount: integer('parcel_count').notNull(),
    error: text('error'),
    userId: text('user_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [index('shipments_manifests_created_idx').on(table.createdAt, table.id)],
)

export const manifestParcels = pgTable(
  'shipments_manifest_parcels',
  {
    manifestId: integer('manifest_id')
      .notNull()
      .references(() => manifests.id, { onDelete: 'cascade' }),
    parcelId: integer('parcel_id').notNull(),
    operationId: text('operation_id').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.manifestId, table.parcelId] }),
    uniqueIndex('shipments_manifest_parcels_operation_unique').on(table.operationId),
    index('shipments_manifest_parcels_parcel_idx').on(table.parcelId),
  ],
)

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const rowsMatch: [Same<typeof manifests.$inferSelect, ManifestRow>, Same<typeof manifestParcels.$inferSelect, ManifestParcelRow>] = [true, true]
void rowsMatch
