// Carrier checkpoints on PostgreSQL: an insert that skips the scans already kept, a read by shipment.
import { desc, eq, inArray } from 'drizzle-orm'
import { CHECKPOINTS_READ_LIMIT, type CheckpointData, type CheckpointRow, type NewCheckpoint } from '../checkpoints.js'
import type { NewOutboxMessage, OutboxClaim, OutboxRow } from '../data-layer.js'
import type { PostgresDatabase } from './connection.js'
import { writeTransaction, type PostgresContext } from './context.js'
import { writeOutboxMessages } from './outbox.js'
import { checkpoints } from './checkpoints-schema.js'
import { shipments } from './schema.js'

type Transaction = Parameters<Parameters<PostgresDatabase['transaction']>[0]>[0]

/** Ids are int4: one outside names no row, as on SQLite. */
const isInt4 = (value: number) => Number.isInteger(value) && value >= -2147483648 && value <= 2147483647

/** Inserts the checkpoints not kept yet in the caller's transaction; answers those added. */
export async function insertCheckpoints(tx: Transaction, rows: readonly NewCheckpoint[], now: Date): Promise<CheckpointRow[]> {
  if (rows.length === 0) return []
  // One statement: the unique key skips the scans kept before, also when two events race.
  return (await tx
    .insert(checkpoints)
    .values(rows.map((row) => ({ ...row, createdAt: now })))
    .onConflictDoNothing()
    .returning()) as CheckpointRow[]
}

export function createPostgresCheckpointData(context: PostgresContext): CheckpointData<NewOutboxMessage, OutboxClaim, OutboxRow> {
  const { db } = context
  return {
    async addCheckpoints(rows, now, messages) {
      if (rows.length === 0) return { added: [], messages: [] }
      return writeTransaction(context, async (tx) => {
        // The shipment's row lock first, as every change of a shipment that writes its events holds it
        // until commit (a transition takes it right after its advisory lock): the milestone event's
        // outbox id is then taken after every earlier event of the shipment committed, so the sequence
        // follows commit order.
        const shipmentIds = [...new Set(rows.map((row) => row.shipmentId))].filter(isInt4).sort((a, b) => a - b)
        await tx.select({ id: shipments.id }).from(shipments).where(inArray(shipments.id, shipmentIds)).orderBy(shipments.id).for('no key update')
        const added = await insertCheckpoints(tx, rows, now)
        const outbox = messages && added.length > 0 ? messages.of(added) : []
        return { added, messages: outbox.length > 0 ? await writeOutboxMessages(tx, outbox, messages!.claimFor, now) : [] }
      }, { ownLockTimeout: false })
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
