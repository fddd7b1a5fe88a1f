// SQLite only: several Node processes migrating one fresh database file at once take turns (the
// migration file lock). Every process succeeds, each migration is recorded once, and the tables work.
// The processes are started first and released together (a `go` line on stdin), so they migrate at
// the same time rather than one after another as they happen to finish starting.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { migrate, MIGRATIONS_TABLE } from '../../src/index.js'
import { buildTestApp, historyRows, orderWithShipments, postUpdate } from '../fixtures/app.js'
import { exited, firstLine, lineMatching, spawnWorker } from '../fixtures/processes.js'

const PROCESSES = 4
const journal = JSON.parse(readFileSync(fileURLToPath(new URL('../../drizzle/sqlite/meta/_journal.json', import.meta.url)), 'utf8')) as {
  entries: Array<{ tag: string; when: number }>
}

/** The schema of a database file: every table, index and trigger with its SQL. */
function schemaOf(file: string) {
  const client = new Database(file, { readonly: true })
  try {
    return client.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all()
  } finally {
    client.close()
  }
}

/** Starts `PROCESSES` workers running `command` on the file, releases them together, returns what each printed. */
async function race(t: Test, databaseFile: string, command: 'migrate' | 'register') {
  const workers = Array.from({ length: PROCESSES }, () => spawnWorker([databaseFile, command]))
  t.teardown(() => workers.forEach((worker) => worker.exitCode === null && worker.kill('SIGKILL')))
  t.same(await Promise.all(workers.map((worker) => firstLine(worker))), Array(PROCESSES).fill('ready'), 'every process is started and waits')
  const outcomes = Promise.all(workers.map((worker) => lineMatching(worker, (line) => line !== 'ready')))
  for (const worker of workers) worker.stdin!.write('go\n')
  const printed = await outcomes
  t.same(await Promise.all(workers.map(exited)), Array(PROCESSES).fill({ code: 0, signal: null }), 'every process exited cleanly')
  return printed
}

/** The migrations recorded in the package's table, oldest first. */
function appliedMigrations(client: Database.Database) {
  return client.prepare(`SELECT hash, created_at AS createdAt FROM ${MIGRATIONS_TABLE} ORDER BY created_at`).all() as Array<{ hash: string; createdAt: number }>
}

t.test(`${PROCESSES} processes migrating one fresh SQLite file at once take turns: all succeed, each migration applied once`, async (t) => {
  const dir = t.testdir()
  const databaseFile = join(dir, 'fresh.sqlite')
  t.same(await race(t, databaseFile, 'migrate'), Array(PROCESSES).fill('migrated'), 'every process migrated without an error')

  const client = new Database(databaseFile)
  t.teardown(() => client.close())
  const applied = appliedMigrations(client)
  t.same(
    applied.map((row) => Number(row.createdAt)),
    journal.entries.map((entry) => entry.when),
    `each of the ${journal.entries.length} migration(s) recorded exactly once`,
  )
  t.equal(new Set(applied.map((row) => row.hash)).size, applied.length, 'no migration recorded twice')
  t.equal(client.pragma('integrity_check', { simple: true }), 'ok')
  t.same(readdirSync(`${databaseFile}-locks`).filter((name) => name.endsWith('.lock')), [], 'the migration lock was released')

  // The same schema as a file migrated by one process alone.
  const alone = join(dir, 'alone.sqlite')
  const single = new Database(alone)
  await migrate(drizzle({ client: single }))
  single.close()
  const raced = schemaOf(databaseFile)
  t.ok(raced.some((entry) => (entry as { name: string }).name === 'shipments_shipments'), 'the tables exist')
  t.same(raced, schemaOf(alone), 'the same tables, indexes and triggers as a file migrated alone')

  // Another migrate() finds nothing to do.
  await migrate(drizzle({ client }))
  t.equal((client.prepare(`SELECT count(*) AS n FROM ${MIGRATIONS_TABLE}`).get() as { n: number }).n, journal.entries.length, 'migrating again adds nothing')

  // And the tables work: a host on the file (without migrating) creates, transitions and reads.
  const app = await buildTestApp(t, { migrate: false }, databaseFile)
  const { orderId, shipmentIds: [id] } = await orderWithShipments(app)
  const response = await postUpdate(app, id, { status: 'shipped', carrier: 'UPS' })
  t.equal(response.statusCode, 200)
  t.match(response.json(), { success: true, shipment: { id, orderId, status: 'shipped', carrier: 'UPS' } })
  t.same((await historyRows(app, id)).map((row) => `${row.fromStatus}>${row.toStatus}`), ['null>new', 'new>shipped'])
})

t.test(`${PROCESSES} instances starting at once on a fresh file the package opens: each registers, migrations applied once`, async (t) => {
  const dir = t.testdir()
  const databaseFile = join(dir, 'embedded.sqlite')
  t.same(await race(t, databaseFile, 'register'), Array(PROCESSES).fill('registered'), 'every instance registered (opened, migrated) without an error')

  const client = new Database(databaseFile, { readonly: true })
  t.teardown(() => client.close())
  t.same(appliedMigrations(client).map((row) => Number(row.createdAt)), journal.entries.map((entry) => entry.when), 'each migration recorded exactly once')
  t.equal(client.pragma('journal_mode', { simple: true }), 'wal', 'the embedded default left the file in WAL mode')
  t.equal(client.pragma('integrity_check', { simple: true }), 'ok')

  const app = await buildTestApp(t, {}, databaseFile)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  t.equal((await postUpdate(app, id, { status: 'in_progress' })).statusCode, 200)
  t.same((await historyRows(app, id)).map((row) => `${row.fromStatus}>${row.toStatus}`), ['null>new', 'new>in_progress'])
})
