// What the store-size benches share (`store-size.ts`, `outbox-size.ts`): fresh databases of either engine,
// a seeding session, the store opened as a host opens it, and the summary figures.
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import { fastifyShipments, type DatabaseHandle, type ShipmentsPluginOptions } from 'fastify-shipments'
import { adminQuery, emptyPostgresDatabase } from './postgres-admin.js'

export function positiveInteger(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, not "${process.env[name]}"`)
  return value
}

export type Engine = 'sqlite' | 'postgres'
export const ENGINES: readonly Engine[] = (process.env.BENCH_DATABASE ?? 'both') === 'both' ? ['sqlite', 'postgres'] : [process.env.BENCH_DATABASE as Engine]
const workDirectory = mkdtempSync(join(tmpdir(), 'shipments-size-'))
// The SQLite stores go with the process, whatever ends it (a 10-million-row outbox is a 2 GB file).
process.on('exit', () => rmSync(workDirectory, { recursive: true, force: true }))

/** One instant for every store of the run: a store seeded twice gets the same dates (and quarter hours). */
export const SEED_TIME = new Date()

/** A file name (SQLite) or the URL of a new, empty database (PostgreSQL). */
export async function freshDatabase(engine: Engine, name: string): Promise<string> {
  if (engine === 'sqlite') return join(workDirectory, `${name}.sqlite`)
  const database = `shipments_size_${name}_${process.pid}`
  return emptyPostgresDatabase(database)
}

/** Removes a store once measured: its SQLite file (with its WAL), or its PostgreSQL database. */
export async function removeStore(engine: Engine, database: string) {
  if (engine === 'postgres') return adminQuery(`DROP DATABASE IF EXISTS "${new URL(database).pathname.slice(1)}" WITH (FORCE)`)
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${database}${suffix}`, { force: true })
}

/** Runs the seed's statements: on SQLite on the app's connection, on PostgreSQL in one session of its own. */
export async function withSeedSession(handle: DatabaseHandle, database: string, work: (sql: (text: string) => Promise<void>) => Promise<void>) {
  if (handle.engine === 'sqlite') return work(async (text) => void handle.db.$client.exec(text))
  const client = new pg.Client({ connectionString: database })
  await client.connect()
  try {
    await work(async (text) => void (await client.query(text)))
  } finally {
    await client.end()
  }
}

/**
 * A seeded store at rest, as one that grew over months is: statistics, the visibility map (PostgreSQL),
 * and every page in the database file (a checkpoint: otherwise the bulk insert's gigabytes of WAL are
 * written out during the first changes measured, by the server's checkpointer or SQLite's commits).
 */
export async function settle(engine: Engine, sql: (text: string) => Promise<void>) {
  if (engine === 'sqlite') {
    await sql('ANALYZE')
    await sql('PRAGMA wal_checkpoint(TRUNCATE)')
  } else {
    await sql('VACUUM ANALYZE')
    await sql('CHECKPOINT')
  }
}

export async function openStore(database: string, options: Pick<ShipmentsPluginOptions, 'outbox'> = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  await app.register(fastifyShipments, {
    database,
    resolveUser: (request) => (request.headers['x-bench-user'] === 'admin' ? { id: 'bench' } : null),
    hasPermission: () => true,
    admin: {},
    ...options,
  })
  await app.ready()
  return app
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

export const loadAverage = () => loadavg().map((value) => value.toFixed(2)).join(', ')
