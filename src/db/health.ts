// The facts a health report reads from the database, each bounded (an index and a limit, never a scan of
// a table): the migrations applied, the outbox's oldest due message, its dead letters and who holds claims.
import { readFileSync } from 'node:fs'
import { packageFile } from '../package-files.js'

/** The package's own migrations table, on either engine; a host's `__drizzle_migrations` is never touched. */
export const MIGRATIONS_TABLE = '__shipments_migrations'

export interface HealthFacts {
  /** Rows of the package's migrations table, and the newest one's stamp (drizzle's `created_at`, the journal's `when`). */
  migrations: { applied: number; newest: number | null }
  /** When the oldest pending message that is due now became due; null when none is. */
  oldestDueAt: Date | null
  /** Pending messages that are due, counted up to the cap. */
  backlog: number
  /** Orders on the attention list, counted up to the cap. */
  attentionOrders: number
  /** Failed (dead-lettered) messages, counted up to the cap. */
  deadLetters: number
  /** The instances holding live claims on pending messages, with how many (over at most the cap's messages). */
  claims: Array<{ instanceId: string; messages: number }>
  /** The label batches running now with a live lease, and who holds each (at most 20, oldest first). */
  batchLeases: Array<{ batchId: number; owner: string }>
}

export interface HealthQueries {
  healthFacts(now: Date, cap: number): Promise<HealthFacts>
  /** The database server's version as it says it (SQLite's library version, PostgreSQL's server_version). */
  databaseVersion(): Promise<string>
}

/** The migrations this package ships for an engine: how many, and the newest one's stamp. Read once. */
export function shippedMigrations(engine: 'sqlite' | 'postgres'): { count: number; newest: number | null; tags: string[] } {
  const journal = JSON.parse(readFileSync(packageFile(`drizzle/${engine}/meta/_journal.json`), 'utf8')) as { entries: Array<{ when: number; tag: string }> }
  const stamps = journal.entries.map((entry) => entry.when)
  return { count: stamps.length, newest: stamps.length > 0 ? Math.max(...stamps) : null, tags: journal.entries.map((entry) => entry.tag) }
}
