// Carrier checkpoints on SQLite: an insert that skips the scans already kept, a read by shipment.
import { desc, eq } from 'drizzle-orm'
import { CHECKPOINTS_READ_LIMIT, type CheckpointData, type CheckpointRow } from '../checkpoints.js'
import { writeTransaction, type SqliteDatabase } from './dialect.js'
import { checkpoints } from './checkpoints-schema.js'

export function createSqliteCheckpointData(db: SqliteDatabase): CheckpointData {
  return {
    async addCheckpoints(rows, now) {
      if (rows.length === 0) return 0
      return writeTransaction(db, () => {
        let added = 0
        // One statement per row keeps far below SQLite's bound-parameter limit, whatever the event holds.
        for (const row of rows) added += db.insert(checkpoints).values({ ...row, createdAt: now }).onConflictDoNothing().run().changes
        return added
      })
    },
    async shipmentCheckpoints(shipmentId) {
      // The newest LIMIT by carrier time (the index's order, read backwards), handed back oldest first.
      const rows = db
        .select()
        .from(checkpoints)
        .where(eq(checkpoints.shipmentId, shipmentId))
        .orderBy(desc(checkpoints.occurredAt), desc(checkpoints.id))
        .limit(CHECKPOINTS_READ_LIMIT)
        .all() as CheckpointRow[]
      return rows.reverse()
    },
  }
}
