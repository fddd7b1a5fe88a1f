// Carrier checkpoints on PostgreSQL: an insert that skips the scans already kept, a read by shipment.
import { desc, eq } from 'drizzle-orm'
import { CHECKPOINTS_READ_LIMIT, type CheckpointData, type CheckpointRow } from '../checkpoints.js'
import type { NewOutboxMessage, OutboxClaim, OutboxRow } from '../data-layer.js'
import type { PostgresDatabase } from './connection.js'
import { writeOutboxMessages } from './outbox.js'
import { checkpoints } from './checkpoints-schema.js'

/** Ids are int4: one outside names no row, as on SQLite. */
const isInt4 = (value: number) => Number.isInteger(value) && value >= -2147483648 && value <= 2147483647

export function createPostgresCheckpointData(db: PostgresDatabase): CheckpointData<NewOutboxMessage, OutboxClaim, OutboxRow> {
  return {
    async addCheckpoints(rows, now, messages) {
      if (rows.length === 0) return { added: [], messages: [] }
      return db.transaction(async (tx) => {
        // One statement: the unique key skips the scans kept before, also when two events race.
        const added = (await tx
          .insert(checkpoints)
          .values(rows.map((row) => ({ ...row, createdAt: now })))
          .onConflictDoNothing()
          .returning()) as CheckpointRow[]
        const outbox = messages && added.length > 0 ? messages.of(added) : []
        return { added, messages: outbox.length > 0 ? await writeOutboxMessages(tx, outbox, messages!.claimFor, now) : [] }
      })
    },
    async shipmentCheckpoints(shipmentId) {
      if (!isInt4(shipmentId)) return []
      const rows = (await db
        .select()
        .from(checkpoints)
        .where(eq(checkpoints.shipmentId, shipmentId))
        .orderBy(desc(checkpoints.occurredAt), desc(checkpoints.id))
        .limit(CHECKPOINTS_READ_LIMIT)) as CheckpointRow[]
      return rows.reverse()
    },
  }
}
