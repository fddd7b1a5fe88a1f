// What the stores of every concern on SQLite share: the connection (with its statement cache), the group
// commit, the in-process queue of transitions and the outbox's writer, with which a change of any concern
// writes its messages in its own transaction. data-layer.ts makes one and hands it to each store.
import type { NewOutboxMessage, OutboxClaim, OutboxRow } from '../data-layer.js'
import type { Mutex } from '../mutex.js'
import type { SqliteDatabase } from './dialect.js'
import type { GroupCommit } from './group-commit.js'

/** Writes messages inside the caller's write transaction (see createSqliteOutboxWriter in outbox.ts). */
export type OutboxWriter = (messages: NewOutboxMessage[], claimFor: OutboxClaim | null, now: Date) => OutboxRow[]

export interface SqliteContext {
  readonly db: SqliteDatabase
  /** Updates and transitions that arrive together commit together (see group-commit.ts). */
  readonly group: GroupCommit
  /** Transitions of one shipment in this process wait here, in order, without touching the database. */
  readonly queue: Mutex
  readonly writeMessages: OutboxWriter
}
