// Customer notification definitions and tracking link versions on SQLite.
import { eq, sql } from 'drizzle-orm'
import type { NotificationRow, NotificationStore } from '../data-layer.js'
import type { SqliteContext } from './context.js'
import { notifications, trackingLinks } from './schema.js'

export function createSqliteNotificationStore({ db }: SqliteContext): NotificationStore {
  return {
    async list() {
      return db.select().from(notifications).orderBy(notifications.id).all() as NotificationRow[]
    },
    async find(id) {
      return db.select().from(notifications).where(eq(notifications.id, id)).get() as NotificationRow | undefined
    },
    async insert(values) {
      return db.insert(notifications).values({ ...values, createdAt: values.updatedAt }).returning().get() as NotificationRow
    },
    async update(id, values) {
      return db.update(notifications).set(values).where(eq(notifications.id, id)).returning().get() as NotificationRow | undefined
    },
    async remove(id) {
      return db.delete(notifications).where(eq(notifications.id, id)).run().changes > 0
    },
    async trackingLinkVersion(shipmentId) {
      return db.select({ version: trackingLinks.version }).from(trackingLinks).where(eq(trackingLinks.shipmentId, shipmentId)).get()?.version ?? 0
    },
    async revokeTrackingLink(shipmentId) {
      return db
        .insert(trackingLinks)
        .values({ shipmentId, version: 1 })
        .onConflictDoUpdate({ target: trackingLinks.shipmentId, set: { version: sql`${trackingLinks.version} + 1` } })
        .returning({ version: trackingLinks.version })
        .get()!.version
    },
  }
}
