// What the stores of every concern on PostgreSQL share: the pool's Drizzle handle, the in-process queue in
// front of the advisory locks, and the count of this instance's writes that the change stamp reads.
// data-layer.ts makes one and hands it to each store.
import type { Mutex } from '../mutex.js'
import type { PostgresDatabase } from './connection.js'
import type { GroupWork, GroupWorkOptions, PostgresGroupCommit } from './group-commit.js'

export type Transaction = Parameters<Parameters<PostgresDatabase['transaction']>[0]>[0]

/**
 * Ids are int4 and text cannot hold NUL on PostgreSQL: a key outside what a column can hold names no
 * row (as on SQLite), rather than failing the query.
 */
export const isInt4 = (value: number) => Number.isInteger(value) && value >= -2147483648 && value <= 2147483647
export const isStorableText = (value: string) => !value.includes('\u0000')

export interface PostgresContext {
  readonly db: PostgresDatabase
  /** Waiting requests queue here, not on the server: N requests for one shipment use one connection. */
  readonly queue: Mutex
  /** Counts a write of this instance for the change stamp (call it after the commit), and hands its result on. */
  wrote<T>(result: T): T
  /** The writes of this instance counted so far. */
  localWrites(): number
  /** The shared group commit (group-commit.ts); null unless the host turned it on (`groupCommit: true`). */
  readonly group: PostgresGroupCommit | null
}

/**
 * A write transaction of a hot path (a shipment's change or creation, a return, a carrier event's
 * scans): in the next group when group commit is on, else a transaction of its own from the pool.
 */
export function writeTransaction<T>(context: PostgresContext, work: GroupWork<T>, options: GroupWorkOptions): Promise<T> {
  if (context.group) return context.group.run(work, options)
  return context.db.transaction((tx) => work(tx, null))
}
