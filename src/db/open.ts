// Choosing the engine: a SQLite file name, a PostgreSQL connection string, or a host's Drizzle database
// over better-sqlite3 or a node-postgres pool. Each engine's modules are loaded only when it is used.
import type { DataLayer, Engine } from './data-layer.js'
import { withDriverErrorsTranslated } from './driver-errors.js'
import type { SqliteDatabase } from './sqlite/dialect.js'
import type { PostgresDatabase } from './postgres/connection.js'
import type * as sqliteSchema from './sqlite/schema.js'
import type * as postgresSchema from './postgres/schema.js'

export type { SqliteDatabase, PostgresDatabase }

/** What `database` accepts: a file name, a connection string, or a host's Drizzle database. */
export type ShipmentsDatabase = SqliteDatabase | PostgresDatabase

import { MIGRATIONS_TABLE } from './health.js'

export { MIGRATIONS_TABLE }

/** The database the package works on, with its engine and the Drizzle tables of that engine. */
export type DatabaseHandle =
  | { engine: 'sqlite'; db: SqliteDatabase; schema: typeof sqliteSchema }
  | { engine: 'postgres'; db: PostgresDatabase; schema: typeof postgresSchema }

export interface OpenOptions {
  lockDirectory?: string | null
  onLockCompromised?: (lockName: string, error: Error) => void
  /** A SQLite checkpoint worker that failed (checkpoints go back inside commits). */
  onCheckpointError?: (error: Error) => void
  /** Errors of idle pooled connections (PostgreSQL). */
  onPoolError: (error: Error) => void
  /** PostgreSQL: concurrent changes share a transaction (see postgres/group-commit.ts). Default false. */
  groupCommit?: boolean
}

const isPostgresUrl = (value: string) => /^postgres(ql)?:\/\//i.test(value)
/**
 * The scheme of a string that reads as a URL. Anything but postgres(ql):// would otherwise be taken for a
 * SQLite file name: `postgress://host/x` became the file `./postgress:/host/x`, and better-sqlite3 reads
 * no URI either (`file:///x` too became a file under `./file:`). Two letters at least, so a Windows
 * drive (`C://`) stays a path.
 */
const urlScheme = (value: string) => /^([a-z][a-z0-9+.-]+):\/\//i.exec(value)?.[1]

function isDrizzleSqlite(value: unknown): value is SqliteDatabase {
  const candidate = value as { select?: unknown; transaction?: unknown; $client?: { prepare?: unknown } }
  return typeof candidate?.select === 'function' && typeof candidate.transaction === 'function' && typeof candidate.$client?.prepare === 'function'
}

function isDrizzlePostgresPool(value: unknown): value is PostgresDatabase {
  const candidate = value as { select?: unknown; transaction?: unknown; $client?: { connect?: unknown; totalCount?: unknown } }
  return (
    typeof candidate?.select === 'function' &&
    typeof candidate.transaction === 'function' &&
    typeof candidate.$client?.connect === 'function' &&
    typeof candidate.$client.totalCount === 'number'
  )
}

/**
 * Opens a SQLite file as the package does for a file name (WAL, busy timeout, foreign keys) and
 * returns its Drizzle database; close it with `db.$client.close()`. The driver is loaded only here,
 * so a host on PostgreSQL never needs better-sqlite3 installed.
 */
export async function openSqliteFile(filename: string): Promise<SqliteDatabase> {
  const dialect = await import('./sqlite/dialect.js')
  return dialect.openSqliteFile(filename)
}

/** The engine `database` names, or why it names none. */
export function engineOf(database: unknown): { engine: Engine } | { problem: string } {
  if (typeof database === 'string') {
    if (database.trim() === '') return { problem: 'must not be empty' }
    if (isPostgresUrl(database)) return { engine: 'postgres' }
    const scheme = urlScheme(database)
    // Only the scheme is named: the rest of the string may hold a password.
    if (scheme !== undefined) return { problem: `"${scheme}://" is not a scheme the package opens: give a postgres:// or postgresql:// connection string, or a SQLite file name (a path, not a URL)` }
    return { engine: 'sqlite' }
  }
  if (isDrizzleSqlite(database)) return { engine: 'sqlite' }
  if (isDrizzlePostgresPool(database)) return { engine: 'postgres' }
  const client = (database as { $client?: { connect?: unknown } } | null)?.$client
  if (typeof client?.connect === 'function') return { problem: 'a Drizzle database over a node-postgres Client: pass one over a pg.Pool, which can run transactions side by side' }
  return { problem: 'must be a SQLite file name, a postgres:// connection string, or a Drizzle database over better-sqlite3 or a pg.Pool' }
}

export interface OpenedDatabase {
  data: DataLayer
  handle: DatabaseHandle
}

/** Opens (or adopts) the database, and with `migrate` brings its tables up to date first. */
export async function openDatabase(database: string | ShipmentsDatabase, migrate: boolean, options: OpenOptions): Promise<OpenedDatabase> {
  const found = engineOf(database)
  if ('problem' in found) throw new TypeError(`database: ${found.problem}`)
  const owned = typeof database === 'string'
  if (found.engine === 'sqlite') {
    const [{ openSqliteFile, migrateSqlite, sqliteDatabaseError }, { createSqliteDataLayer }, schema] = await Promise.all([
      import('./sqlite/dialect.js'),
      import('./sqlite/data-layer.js'),
      import('./sqlite/schema.js'),
    ])
    const db = owned ? openSqliteFile(database) : (database as SqliteDatabase)
    try {
      if (migrate) await migrateSqlite(db, MIGRATIONS_TABLE, options.lockDirectory, options.onLockCompromised)
    } catch (error) {
      if (owned) db.$client.close()
      throw error
    }
    // The one place this engine's driver errors are wrapped (see driver-errors.ts).
    const data = withDriverErrorsTranslated(createSqliteDataLayer(db, { ...options, owned }), sqliteDatabaseError)
    return { data, handle: { engine: 'sqlite', db, schema } }
  }
  const [{ openPostgres, migratePostgres, postgresDatabaseError }, { createPostgresDataLayer }, schema] = await Promise.all([
    import('./postgres/connection.js'),
    import('./postgres/data-layer.js'),
    import('./postgres/schema.js'),
  ])
  const db = owned ? openPostgres(database, options.onPoolError) : (database as PostgresDatabase)
  try {
    if (migrate) await migratePostgres(db, MIGRATIONS_TABLE)
  } catch (error) {
    if (owned) await db.$client.end()
    throw error
  }
  return { data: withDriverErrorsTranslated(createPostgresDataLayer(db, { owned, groupCommit: options.groupCommit ?? false }), postgresDatabaseError), handle: { engine: 'postgres', db, schema } }
}

/**
 * Applies the package's committed migrations to a host's Drizzle database (SQLite or PostgreSQL),
 * with the package's own migrations table; instances migrating at once take turns.
 */
export async function migrate(db: ShipmentsDatabase): Promise<void> {
  const found = engineOf(db)
  if ('problem' in found) throw new TypeError(`migrate(): the database ${found.problem}`)
  if (found.engine === 'sqlite') {
    const { migrateSqlite } = await import('./sqlite/dialect.js')
    return migrateSqlite(db as SqliteDatabase, MIGRATIONS_TABLE)
  }
  const { migratePostgres } = await import('./postgres/connection.js')
  return migratePostgres(db as PostgresDatabase, MIGRATIONS_TABLE)
}
