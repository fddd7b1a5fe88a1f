// A shipment change as two round trips: the row read with its version (autocommit), then one statement
// that takes the transition lock, re-reads the row under it, and only when it is the version read writes
// the history row, the row and the outbox messages; its implicit transaction commits them together.
import { getTableColumns, type Column } from 'drizzle-orm'
import type { NewHistoryRow, NewOutboxMessage, OutboxClaim, OutboxRow, ShipmentColumns, ShipmentRow } from '../data-layer.js'
import type pg from 'pg'
import { outbox, shipments, shipmentStatusHistory } from './schema.js'
import { parsePostgresTimestamp } from './timestamps.js'
import { newMessageId } from '../../message-id.js'

/**
 * Values read the same whatever type parsers the host set on pg globally (a host's pool may be passed
 * in): every year as itself, as the package's Drizzle reads do (see timestamps.ts).
 */
const TYPE_PARSERS: Record<number, (text: string) => unknown> = {
  16: (text) => text === 't', // bool
  21: Number, // int2
  23: Number, // int4
  114: (text) => JSON.parse(text), // json
  3802: (text) => JSON.parse(text), // jsonb
  1184: parsePostgresTimestamp, // timestamptz
}
const types = { getTypeParser: (oid: number) => TYPE_PARSERS[oid] ?? ((text: string) => text) }

type Columns = Record<string, Column>
const quoted = (column: Column) => `"${column.name}"`
const shipmentColumns = Object.entries(getTableColumns(shipments) as Columns)
const outboxColumns = Object.entries(getTableColumns(outbox) as Columns)
const historyColumns = Object.entries(getTableColumns(shipmentStatusHistory) as Columns)
/** What a change may write: every column but the key, the reference, the order and the creation date. */
const writableColumns = shipmentColumns.filter(([key]) => !['id', 'reference', 'orderId', 'createdAt'].includes(key))

/** A row of `columns` from an array-mode result, starting at `offset`. */
function rowOf<T>(columns: Array<[string, Column]>, values: unknown[], offset = 0): T {
  const row: Record<string, unknown> = {}
  for (let index = 0; index < columns.length; index++) row[columns[index][0]] = values[offset + index]
  return row as T
}

/** The shipment as read for a change: its row, its row version (xmin), and a history id set aside for it. */
export interface ShipmentForChange {
  row: ShipmentRow
  version: string
  /** Taken from the history sequence when asked for: the id the change's history row will have. */
  historyId: number | null
}

const READ_TEXT = `SELECT ${shipmentColumns.map(([, column]) => quoted(column)).join(', ')}, xmin::text FROM shipments_shipments WHERE id = $1`
// The history id comes from the row's read: the change's events carry it, and they are written in the
// same statement as the history row. A read whose change writes no history leaves a gap in the ids.
const READ_WITH_HISTORY_ID_TEXT = READ_TEXT.replace(', xmin::text FROM', ", xmin::text, nextval('shipments_status_history_id_seq')::int FROM")

/** Reads the shipment with its version; `withHistoryId` also sets a history id aside. Undefined for no shipment. */
export async function readShipmentForChange(db: { $client: pg.Pool }, id: number, withHistoryId: boolean): Promise<ShipmentForChange | undefined> {
  const { rows } = await db.$client.query<unknown[]>({
    name: withHistoryId ? 'shipments_read_for_change_h1' : 'shipments_read_for_change_1',
    text: withHistoryId ? READ_WITH_HISTORY_ID_TEXT : READ_TEXT,
    values: [id],
    rowMode: 'array',
    types,
  })
  if (rows.length === 0) return undefined
  const values = rows[0]
  return { row: rowOf<ShipmentRow>(shipmentColumns, values), version: values[shipmentColumns.length] as string, historyId: withHistoryId ? (values[shipmentColumns.length + 1] as number) : null }
}

// Parameters: $1 id, $2 version, $3 take the transition lock, $4 its lock_timeout, $5 its class; the
// history row from $6; the shipment's writable columns after it; then the event and its claim. One
// event at most, in scalar parameters: with arrays the server's estimate of a generic plan is ten rows
// of events, so it planned every execution anew (0.4 ms of its time, twice the execution's).
const rowStart = 6 + historyColumns.length
const eventStart = rowStart + writableColumns.length
const param = (index: number, column?: Column) => `$${index}${column ? `::${column.getSQLType()}` : ''}`
const [eventId, eventName, eventKey, eventPayload, eventAvailableAt, instanceId, claimedUntil, createdAt] = Array.from({ length: 8 }, (_, index) => `$${eventStart + index}`)
const CHANGE_TEXT = `
WITH locked AS (
  SELECT set_config('lock_timeout', $4::text, true), pg_advisory_xact_lock($5::int, $1::int) WHERE $3::boolean
), target AS (
  SELECT id FROM shipments_shipments
   WHERE id = $1::int AND xmin = $2::xid AND (NOT $3::boolean OR EXISTS (SELECT FROM locked))
   FOR UPDATE
), history AS (
  INSERT INTO shipments_status_history (${historyColumns.map(([, column]) => quoted(column)).join(', ')})
  SELECT ${historyColumns.map(([, column], index) => param(6 + index, column)).join(', ')}
    FROM target WHERE $6::int IS NOT NULL
), updated AS (
  UPDATE shipments_shipments SET ${writableColumns.map(([, column], index) => `${quoted(column)} = ${param(rowStart + index, column)}`).join(', ')}
    FROM target WHERE shipments_shipments.id = target.id
  RETURNING shipments_shipments.id
), event AS (
  INSERT INTO shipments_outbox (message_id, kind, name, ordering_key, payload, available_at, claimed_until, claimed_by, created_at)
  SELECT ${eventId}::text, 'event', ${eventName}::text, ${eventKey}::text, ${eventPayload}::json, ${eventAvailableAt}::timestamptz,
         CASE WHEN claim.held THEN ${claimedUntil}::timestamptz END, CASE WHEN claim.held THEN ${instanceId}::text END, ${createdAt}::timestamptz
    FROM target, (
      -- Claimed unless it must wait (see writeOutboxMessages): behind an older pending event of its key
      -- this instance does not hold. The row is the version read, so no change of the shipment (and
      -- no event of it) committed since that read.
      SELECT ${instanceId}::text IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM shipments_outbox o
         WHERE o.ordering_key = ${eventKey}::text AND o.state = 'pending' AND o.kind = 'event' AND o.claimed_by IS DISTINCT FROM ${instanceId}::text
      )
    ) AS claim(held)
   WHERE ${eventName}::text IS NOT NULL
  ON CONFLICT DO NOTHING
  RETURNING ${outboxColumns.map(([, column]) => quoted(column)).join(', ')}
)
SELECT (SELECT count(*) FROM updated)::int, event.* FROM (SELECT 1) AS one LEFT JOIN event ON true`

export interface OneStatementChange {
  shipment: ShipmentForChange
  /** The row after the change: the row read with the plan's columns. */
  after: ShipmentRow
  history: NewHistoryRow | null
  /** The change's event, if any (a job's claim depends on the jobs before it: the interactive transaction's). */
  event: NewOutboxMessage | null
  claimFor: OutboxClaim | null
  /** Take the transition lock, waiting at most this long; null: no lock (a change without the mutex). */
  lockTimeoutMs: number | null
  lockClass: number
  now: Date
}

/** Writes the change in one statement; 'moved' when the row is no longer the version read (nothing written). */
export async function commitInOneStatement(client: pg.Pool | pg.PoolClient, change: OneStatementChange): Promise<OutboxRow[] | 'moved'> {
  const { shipment, after, history, event, claimFor, now } = change
  const encode = ([, column]: [string, Column], value: unknown) => (value === null || value === undefined ? null : column.mapToDriverValue(value))
  const historyRow = history ? { ...history, id: shipment.historyId, shipmentId: shipment.row.id } : null
  const values: unknown[] = [
    shipment.row.id,
    shipment.version,
    change.lockTimeoutMs !== null,
    `${Math.max(1, Math.ceil(change.lockTimeoutMs ?? 1))}ms`,
    change.lockClass,
    ...historyColumns.map((entry) => (historyRow ? encode(entry, (historyRow as Record<string, unknown>)[entry[0]]) : null)),
    ...writableColumns.map((entry) => encode(entry, (after as unknown as Record<string, unknown>)[entry[0]])),
    event ? (event.messageId ?? newMessageId()) : null,
    event?.name ?? null,
    event?.orderingKey ?? null,
    event ? JSON.stringify(event.payload) : null,
    event ? (event.availableAt ?? now).toISOString() : null,
    claimFor?.instanceId ?? null,
    claimFor ? new Date(now.getTime() + claimFor.leaseMs).toISOString() : null,
    now.toISOString(),
  ]
  const { rows } = await client.query<unknown[]>({ name: 'shipments_change_1', text: CHANGE_TEXT, values, rowMode: 'array', types })
  if (rows[0][0] === 0) return 'moved'
  return rows[0][1] === null ? [] : [rowOf<OutboxRow>(outboxColumns, rows[0], 1)]
}

/** The row a plan's columns make of the row read (what the UPDATE writes, so what it would return). */
export const rowAfter = (row: ShipmentRow, columns: ShipmentColumns): ShipmentRow => ({ ...row, ...columns })
