// Customer notification definitions and tracking link versions on PostgreSQL.
import { eq, sql } from 'drizzle-orm'
import type { NotificationRow, NotificationStore } from '../data-layer.js'
import type { PostgresContext } from './context.js'
import { notifications, trackingLinks } from './schema.js'

/** Ids are int4: one outside names no row, as on SQLite. */
const isInt4 = (value: number) => Number.isInteger(value) && value >= -2147483648 && value <= 2147483647

export function createPostgresNotificationStore({ db }: PostgresContext): NotificationStore {
  return {
    async list() {
      return (await db.select().from(notifications).orderBy(notifications.id)) as NotificationRow[]
    },
    async find(id) {
      if (!isInt4(id)) return undefined
      const [row] = await db.select().from(notifications).where(eq(notifications.id, id))
      return row as NotificationRow | undefined
    },
    async insert(values) {
      const [row] = await db.insert(notifications).values({ ...values, createdAt: values.updatedAt }).returning()
      return row as NotificationRow
    },
    async update(id, values) {
      if (!isInt4(id)) return undefined
      const [row] = await db.update(notifications).set(values).where(eq(notifications.id, id)).returning()
      return row as NotificationRow | undefined
    },
    async remove(id) {
      if (!isInt4(id)) return false
      return (await db.delete(notifications).where(eq(notifications.id, id)).returning({ id: notifications.id })).length > 0
    },
    async trackingLinkVersion(shipmentId) {
      if (!isInt4(shipmentId)) return 0
      const [row] = await db.select({ version: trackingLinks.version }).from(trackingLinks).where(eq(trackingLinks.shipmentId, shipmentId))
      return row?.version ?? 0
    },
    async revokeTrackingLink(shipmentId) {
      const [row] = await db
        .insert(trackingLinks)
        .values({ shipmentId, version: 1 })
        .onConflictDoUpdate({ target: trackingLinks.shipmentId, set: { version: sql`${trackingLinks.version} + 1` } })
        .returning({ version: trackingLinks.version })
      return row.version
    },
  }
}
