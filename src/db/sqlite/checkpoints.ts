// Carrier checkpoints on SQLite: an insert that skips the scans already kept, a read by shipment.
import { desc, eq, getTableColumns, sql } from 'drizzle-orm'
import { CHECKPOINTS_READ_LIMIT, type CheckpointData, type CheckpointRow, type NewCheckpoint } from '../checkpoints.js'
import type { NewOutboxMessage, OutboxClaim, OutboxRow } from '../data-layer.js'
import type { SqliteContext } from './context.js'
import type { SqliteDatabase } from './dialect.js'
import { checkpoints } from './checkpoints-schema.js'

/** Inserts the checkpoints not kept yet, inside the caller's write transaction; answers those added. */
export function createSqliteCheckpointWriter(db: SqliteDatabase): (rows: readonly NewCheckpoint[], now: Date) => CheckpointRow[] {
  // Every carrier event with scans inserts them: prepared once, every column a parameter (null when absent).
  const columnKeys = Object.keys(getTableColumns(checkpoints)).filter((key) => key !== 'id') as Array<keyof typeof checkpoints.$inferInsert>
  const insertCheckpoint = db
    .insert(checkpoints)
    .values(Object.fromEntries(columnKeys.map((key) => [key, sql.placeholder(key)])) as unknown as typeof checkpoints.$inferInsert)
    .onConflictDoNothing()
    .returning()
    .prepare()
  return (rows, now) => {
    const added: CheckpointRow[] = []
    // One statement per row keeps far below SQLite's bound-parameter limit, whatever the event holds.
    for (const row of rows) {
      const values: Record<string, unknown> = { ...row, createdAt: now }
      const inserted = insertCheckpoint.get(Object.fromEntries(columnKeys.map((key) => [key, values[key] ?? null]))) as CheckpointRow | undefined
      if (inserted) added.push(inserted)
    }
    return added
  }
}

export function createSqliteCheckpointData(
  { db, group, writeMessages }: SqliteContext,
  insertCheckpoints: ReturnType<typeof createSqliteCheckpointWriter>,
): CheckpointData<NewOutboxMessage, OutboxClaim, OutboxRow> {
  return {
    async addCheckpoints(rows, now, messages) {
      if (rows.length === 0) return { added: [], messages: [] }
      // In a shared commit (group-commit.ts). Safe to run twice, as a shared commit's task must be: the
      // inserts skip what is kept, and a rolled-back run leaves nothing. The write transaction serializes
      // every writer of the file, so the messages' outbox ids follow commit order.
      return group.run(() => {
        const added = insertCheckpoints(rows, now)
        const outbox = messages && added.length > 0 ? messages.of(added) : []
        return { added, messages: outbox.length > 0 ? writeMessages(outbox, messages!.claimFor, now) : [] }
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
