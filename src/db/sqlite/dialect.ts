// SQLite connections: opening, pragmas, write transactions, change stamps, migrations, the lock directory.
import { dirname, isAbsolute, resolve } from 'node:path'
import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3'
import { migrate as runDrizzleMigrations } from 'drizzle-orm/better-sqlite3/migrator'
import { createMutex } from '../mutex.js'
import { databaseErrorOf } from '../driver-errors.js'
import { packageFile } from '../../package-files.js'

/** A Drizzle database over better-sqlite3, the host's or the one the package opened. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type SqliteDatabase = BetterSQLite3Database<any> & { $client: Database.Database }

const migrationsFolder = fileURLToPath(packageFile('drizzle/sqlite'))

/**
 * The WAL size (pages) at which a commit checkpoints: SQLite then copies the pages into the database
 * file and syncs both files inside the commit, on the event loop. At SQLite's default (1,000 pages, about a
 * hundred status changes with their history rows and outbox events) this cost transitions over a third
 * of their throughput; four times as many pages per checkpoint copy the pages rewritten meanwhile once,
 * and sync a quarter as often (a WAL of 16 MB). The data layer's checkpointer (checkpointer.ts) takes
 * checkpoints off the event loop once a host writes steadily.
 */
export const COMMIT_CHECKPOINT_PAGES = 4000

/** How long a connection the package opened waits for another connection's lock (SQLite's busy timeout). */
const OPEN_BUSY_TIMEOUT_MS = 10_000

/**
 * `journal_mode = WAL`, tried again while another connection writes the file. The switch needs the
 * file's exclusive lock, and while another connection holds a write transaction SQLite answers
 * SQLITE_BUSY at once instead of waiting out the busy timeout (two processes opening one fresh file at
 * once: the other's first writes, or its own switch); once that is done the switch goes through, or
 * finds the file in WAL mode already. The thread sleeps between tries, as SQLite's own busy wait does:
 * this runs once, when the database is opened.
 */
function switchToWal(client: Database.Database) {
  const deadline = Date.now() + OPEN_BUSY_TIMEOUT_MS
  const sleeper = new Int32Array(new SharedArrayBuffer(4))
  for (;;) {
    try {
      client.pragma('journal_mode = WAL')
      return
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error
      Atomics.wait(sleeper, 0, 0, 10)
    }
  }
}

/** Opens the embedded default: WAL so readers never block the writer, and a busy timeout for writers. */
export function openSqliteFile(filename: string): SqliteDatabase {
  if (filename !== ':memory:') mkdirSync(dirname(resolve(filename)), { recursive: true })
  const client = new Database(filename)
  try {
    client.pragma(`busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`)
    switchToWal(client)
  } catch (error) {
    client.close()
    throw error
  }
  client.pragma('synchronous = NORMAL')
  client.pragma(`wal_autocheckpoint = ${COMMIT_CHECKPOINT_PAGES}`)
  client.pragma('foreign_keys = ON')
  return drizzle({ client }) as SqliteDatabase
}

/** How many distinct statements a connection keeps prepared (the package issues a few hundred shapes). */
const STATEMENT_CACHE_SIZE = 1000

/**
 * SQL with each `limit ?` (either case) written `limit cast(? as integer)`, same rows for the integer
 * limits the package binds. SQLite takes a bare `LIMIT ?`'s value into its plan, so binding one marks
 * the statement expired and the next run prepares it again: 3.7 µs against 1.2 µs on a one-table
 * lookup, 12 µs more on a shipment's, at every run of every paged read (Drizzle binds every limit, a
 * literal one too). An expression is not planned with, so the statement is prepared once; the plans
 * the package relies on are fixed by its indexes and hints, and `test/sqlite/flat-read-plans.test.ts`
 * checks them.
 */
export const limitBoundOnce = (source: string) => source.replace(/ limit \?/gi, ' limit cast(? as integer)')

/**
 * A Drizzle database over the same connection whose queries reuse prepared statements: Drizzle prepares
 * every query it runs afresh, and on a tracking event's path preparing the statements cost more than
 * running them. Statements are kept per SQL text (bounded, oldest dropped first); better-sqlite3 runs a
 * statement to completion before it returns (the package never iterates one), so sharing is safe. Drizzle
 * switches a statement to raw rows right before the uses that want them, and never back: a statement
 * taken from the cache starts in the default mode again. `$client` stays the connection itself.
 */
export function withStatementCache(db: SqliteDatabase): SqliteDatabase {
  const client = db.$client
  const statements = new Map<string, Database.Statement>()
  const prepare = (source: string) => {
    let statement = statements.get(source)
    if (statement) {
      if (statement.reader) statement.raw(false)
      return statement
    }
    statement = client.prepare(limitBoundOnce(source))
    if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!)
    statements.set(source, statement)
    return statement
  }
  const caching = new Proxy(client, {
    get(target, property) {
      if (property === 'prepare') return prepare
      const value = Reflect.get(target, property, target) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  const cached = drizzle({ client: caching }) as SqliteDatabase
  Object.defineProperty(cached, '$client', { value: client, enumerable: true })
  return cached
}

/** The file the database lives in, or null for an in-memory or temporary database. */
export function databaseFile(db: SqliteDatabase): string | null {
  const name = db.$client.name
  if (!name || name === ':memory:') return null
  return isAbsolute(name) ? name : resolve(name)
}

/** Where cross-process lock files live: beside the database file. */
export function lockDirectoryFor(db: SqliteDatabase): string | null {
  const file = databaseFile(db)
  return file ? `${file}-locks` : null
}

/**
 * Runs `work` in a write transaction that takes SQLite's write lock at BEGIN (IMMEDIATE), so a
 * read-then-write inside it can never fail halfway with SQLITE_BUSY. `work` must be synchronous.
 */
export function writeTransaction<T>(db: SqliteDatabase, work: (tx: SqliteDatabase) => T): T {
  let runImmediate = immediateRunners.get(db.$client)
  if (!runImmediate) {
    // One better-sqlite3 transaction function per connection, reused: building one per call (as
    // db.transaction does) costs more than the hot path's queries. Statements run on the same
    // connection, so `db` itself is the transaction's handle; nested calls become savepoints.
    const transactionFunction = db.$client.transaction((task: () => unknown) => task())
    runImmediate = transactionFunction.immediate as (task: () => unknown) => unknown
    immediateRunners.set(db.$client, runImmediate)
  }
  const result = runImmediate(() => work(db)) as T
  // A nested call is a savepoint: only the outermost transaction commits.
  if (!db.$client.inTransaction) commitListeners.get(db.$client)?.()
  return result
}
const immediateRunners = new WeakMap<Database.Database, (task: () => unknown) => unknown>()
const commitListeners = new WeakMap<Database.Database, () => void>()

/** Calls `listener` after each write transaction of writeTransaction on this connection commits. */
export function onWriteCommit(db: SqliteDatabase, listener: () => void): void {
  commitListeners.set(db.$client, listener)
}

/**
 * writeTransaction, waiting at most `waitMs` (not the connection's busy timeout, `busyTimeoutMs`) for
 * another connection's write lock; throws SQLITE_BUSY (see isBusy) when it was not had in time. The
 * wait is SQLite's busy handler, which sleeps the thread: other processes hold the lock only for
 * their synchronous transactions.
 */
export function writeTransactionWaiting<T>(db: SqliteDatabase, waitMs: number, busyTimeoutMs: number, work: (tx: SqliteDatabase) => T): T {
  const wait = Math.max(0, Math.ceil(waitMs))
  // Within 50 ms of the connection's own timeout (the default lockTimeoutMs and busy timeout are both
  // 10 s): not worth two pragmas on every transition.
  if (busyTimeoutMs > 0 && Math.abs(wait - busyTimeoutMs) <= 50) return writeTransaction(db, work)
  db.$client.pragma(`busy_timeout = ${wait}`)
  try {
    return writeTransaction(db, work)
  } finally {
    db.$client.pragma(`busy_timeout = ${busyTimeoutMs}`)
  }
}

/** True for SQLite's "database is locked": another connection held the write lock for the whole wait. */
export const isBusy = (error: unknown) => typeof (error as { code?: unknown })?.code === 'string' && (error as { code: string }).code.startsWith('SQLITE_BUSY')

/** Per connection: row changes the change stamps leave out (see `leaveUncounted`). */
const uncountedChanges = new WeakMap<Database.Database, number>()

/**
 * Row changes no cached query result depends on (the outbox's delivery bookkeeping, the order
 * exchange's activity log): the change stamps of this connection do not move for them, so a
 * ShipStation request or a delivered event does not empty the export's caches.
 */
export function leaveUncounted(db: SqliteDatabase, changes: number): void {
  if (changes > 0) uncountedChanges.set(db.$client, (uncountedChanges.get(db.$client) ?? 0) + changes)
}

/**
 * A stamp that changes whenever anything is written to the database: by this connection
 * (total_changes, exact and nearly free, less the changes left uncounted) or committed by another one
 * (data_version, a few microseconds to read). Caches of query results stay valid as long as it stays
 * the same. `otherConnectionsCheckMs` > 0 reads data_version at most that often, so another process's
 * writes are seen within that time instead of at once.
 */
export function createChangeStamp(db: SqliteDatabase, otherConnectionsCheckMs = 0): () => string {
  const both = db.$client.prepare(`SELECT total_changes(), (SELECT data_version FROM pragma_data_version)`).raw()
  const counted = (total: number) => total - (uncountedChanges.get(db.$client) ?? 0)
  const read = () => {
    const [total, version] = both.get() as [number, number]
    return { total: counted(total), version }
  }
  if (otherConnectionsCheckMs <= 0) {
    return () => {
      const { total, version } = read()
      return `${total}.${version}`
    }
  }
  const totalChanges = db.$client.prepare('SELECT total_changes()').pluck()
  let dataVersion = 0
  let readAt = Number.NEGATIVE_INFINITY
  return () => {
    const now = performance.now()
    if (now - readAt < otherConnectionsCheckMs) return `${counted(totalChanges.get() as number)}.${dataVersion}`
    readAt = now
    const { total, version } = read()
    dataVersion = version
    return `${total}.${version}`
  }
}

/**
 * Applies the package's committed migrations to `db`, using its own migrations table. Processes
 * sharing the file take turns (a file lock in `lockDirectory`, by default beside the file), since the
 * migrator reads its progress outside its transaction; `null` (one process per file) locks in-process.
 */
export async function migrateSqlite(
  db: SqliteDatabase,
  migrationsTable: string,
  lockDirectory?: string | null,
  onLockCompromised?: (lockName: string, error: Error) => void,
): Promise<void> {
  const mutex = createMutex({ directory: lockDirectory === undefined ? lockDirectoryFor(db) : lockDirectory, onCompromised: onLockCompromised })
  await mutex.withLock('shipments:migrate', 60_000, () =>
    runDrizzleMigrations(db, { migrationsFolder, migrationsTable }),
  )
}

/**
 * A better-sqlite3 error (alone, or under Drizzle's query error) as the package's error. SQLite's messages
 * name tables, columns and constraints, never a bound value, so they are kept.
 */
export const sqliteDatabaseError = (error: unknown) =>
  databaseErrorOf(
    error,
    (candidate) => candidate instanceof Database.SqliteError,
    (failure) => {
      const { message, code } = failure as { message: string; code?: unknown }
      return { message, code: typeof code === 'string' ? code : undefined }
    },
  )
