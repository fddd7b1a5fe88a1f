// PostgreSQL connections: the pool the package opens, migrations under a session advisory lock, the
// change stamp, and the advisory-lock keys the package uses.
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { sql } from 'drizzle-orm'
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres'
import { migrate as runDrizzleMigrations } from 'drizzle-orm/node-postgres/migrator'
import { ADVISORY_LOCK_CLASS } from './locks.js'
import * as schema from './schema.js'
import { readTimestampsExactly } from './timestamps.js'
import { databaseErrorOf } from '../driver-errors.js'
import { packageFile } from '../../package-files.js'

// Before any query: this module is loaded whenever the package works on PostgreSQL (see timestamps.ts).
readTimestampsExactly(schema)

/** A Drizzle database over a node-postgres pool, the host's or the one the package opened. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type PostgresDatabase = NodePgDatabase<any> & { $client: pg.Pool }

const migrationsFolder = fileURLToPath(packageFile('drizzle/postgres'))

/** Opens a pool; `onError` hears about idle connections the server dropped (a pool without a listener would crash the process). */
export function openPostgres(connectionString: string, onError: (error: Error) => void): PostgresDatabase {
  const pool = new pg.Pool({ connectionString, max: 10, connectionTimeoutMillis: 10_000 })
  pool.on('error', onError)
  // A connection lost while checked out (a server restart mid-transaction) emits on the client itself.
  pool.on('connect', (client) => client.on('error', onError))
  return drizzle({ client: pool }) as PostgresDatabase
}

/**
 * Applies the package's committed migrations with its own migrations table (in `public`, beside the
 * tables). Instances migrating at once take turns on a session advisory lock, which the server
 * releases if an instance dies while holding it.
 */
export async function migratePostgres(db: PostgresDatabase, migrationsTable: string): Promise<void> {
  const client = await db.$client.connect()
  const lost = (error: Error) => void error // the failing query rejects; this keeps the event from crashing the process
  client.on('error', lost)
  try {
    await client.query('SELECT pg_advisory_lock($1, 0)', [ADVISORY_LOCK_CLASS.migrate])
    try {
      // On the client holding the lock: a host pool of one connection must not wait on itself.
      await runDrizzleMigrations(drizzle({ client }), { migrationsFolder, migrationsTable, migrationsSchema: 'public' })
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, 0)', [ADVISORY_LOCK_CLASS.migrate])
    }
  } finally {
    client.off('error', lost)
    client.release()
  }
}

/**
 * A stamp that changes when the package's cached tables change (see migration 0001): the change
 * sequence, read at most every `otherInstancesMs`; a counter of this instance's own writes, so they
 * show at once; and the current second, so no cached result outlives a second even if it was read
 * while another instance's write was between advancing the sequence and committing.
 */
export function createPostgresChangeStamp(db: PostgresDatabase, localWrites: () => number, otherInstancesMs: number) {
  let sequenceValue = ''
  let readAt = Number.NEGATIVE_INFINITY
  return async () => {
    const now = performance.now()
    if (now - readAt >= otherInstancesMs) {
      // is_called too: the first nextval() leaves last_value as it was and only sets is_called. A named
      // (server-prepared) statement: the export reads it on every request.
      const { rows } = await db.$client.query<[string]>({
        name: 'shipments-change-stamp',
        text: "SELECT last_value || '.' || is_called FROM shipments_change_seq",
        rowMode: 'array',
      })
      sequenceValue = rows[0][0]
      readAt = now
    }
    return `${localWrites()}.${sequenceValue}.${Math.floor(Date.now() / 1000)}`
  }
}

/** The SQLSTATE of a database error, looking through Drizzle's wrapper. */
export function sqlState(error: unknown): string | undefined {
  for (let current = error as { code?: unknown; cause?: unknown } | undefined; current; current = current.cause as typeof current) {
    if (typeof current.code === 'string' && /^[0-9A-Z]{5}$/.test(current.code)) return current.code
  }
  return undefined
}

/** `SET LOCAL lock_timeout`, as an expression that takes parameters (select it before anything that waits). */
export const localLockTimeout = (milliseconds: number) => sql`set_config('lock_timeout', ${`${Math.max(1, Math.ceil(milliseconds))}ms`}, true)`

/**
 * A node-postgres error (alone, or under Drizzle's query error) as the package's error: the SQLSTATE, the
 * constraint, and the server's message, except for data exceptions (class 22), whose messages quote the
 * value refused (`invalid input syntax for type integer: "..."`). A PostgreSQL error's detail (`Key
 * (handle)=(...) already exists`) is dropped. Connection failures keep their message (an address, no value).
 */
export const postgresDatabaseError = (error: unknown) =>
  databaseErrorOf(
    error,
    (candidate) => candidate instanceof pg.DatabaseError,
    (failure) => {
      const { message, code, constraint, column } = failure as { message: string; code?: unknown; constraint?: unknown; column?: unknown }
      const sqlState = typeof code === 'string' ? code : undefined
      if (!(failure instanceof pg.DatabaseError)) return { message, code: sqlState }
      const described = sqlState?.startsWith('22') ? `a value the database refuses${typeof column === 'string' ? ` in column "${column}"` : ''}` : message
      return { message: described, code: sqlState, constraint: typeof constraint === 'string' ? constraint : undefined }
    },
  )
