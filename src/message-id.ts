// Outbox message ids: UUIDs version 7 (RFC 9562), whose first 48 bits are the creation time in milliseconds.
import { randomUUID } from 'node:crypto'

/**
 * A new message id, in creation order to the millisecond. The outbox's unique index on the id then
 * grows at its end, like its other indexes: with version 4 ids every event wrote a random page of it,
 * a third of the pages a SQLite status change commits. The random part is Node's own (pooled)
 * version 4 UUID, whose version digit becomes a 7; the `uuid` package's v7 draws fresh bytes from
 * the system on every call, four times the cost.
 */
export function newMessageId(): string {
  const time = Date.now().toString(16).padStart(12, '0')
  return `${time.slice(0, 8)}-${time.slice(8)}-7${randomUUID().slice(15)}`
}
