// The manifest tables on SQLite: a manifest and the labels in it (each label in one manifest at most).
import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import type { ManifestParcelRow, ManifestRow, ManifestState } from '../manifests.js'

const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' })
const createdAt = () => timestamp('created_at').notNull().default(sql`(unixepoch('subsec') * 1000)`)
const updatedAt = () => timestamp('updated_at').notNull().default(sql`(unixepoch('subsec') * 1000)`)

export const manifests = sqliteTable(
  'shipments_manifests',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
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

export const manifestParcels = sqliteTable(
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
