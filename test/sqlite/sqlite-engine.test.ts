// SQLite only: a host's own better-sqlite3 database, the pragmas of the embedded default, the statements
// of an export page, and a host transaction around the export.
import { join } from 'node:path'
import { readFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import Fastify from 'fastify'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import Database from 'better-sqlite3'
import { fastifyShipments, migrate, MIGRATIONS_TABLE, type SqliteDatabase } from '../../src/index.js'
import { buildTestApp } from '../fixtures/app.js'
import { migrationCount, tables } from '../fixtures/database.js'
import { buildExchangeApp, exportedOrders, insertExportOrder } from '../fixtures/exchange.js'

const at = (iso: string) => new Date(iso)

t.test("a host's own Drizzle database: migrated into the package's table, left open on close", async (t) => {
  const client = new Database(join(t.testdir(), 'host.sqlite'))
  const db = drizzle({ client })
  await migrate(db)
  await migrate(db)
  const tables = client.prepare("select name from sqlite_master where type = 'table' order by name").all() as Array<{ name: string }>
  t.ok(tables.some((table) => table.name === MIGRATIONS_TABLE))
  t.notOk(tables.some((table) => table.name === '__drizzle_migrations'), "the host's migrations table is untouched")
  t.equal((client.prepare(`select count(*) as n from ${MIGRATIONS_TABLE}`).get() as { n: number }).n, migrationCount('sqlite'), 'each migration applied once')

  const app = Fastify({ logger: false })
  await app.register(fastifyShipments, { database: db, migrate: false })
  await app.ready()
  t.equal(app.shipments.database.db, db)
  t.equal(app.shipments.database.engine, 'sqlite')
  await app.close()
  t.ok(client.open, 'the host database is still open')
  client.close()
})

t.test('the embedded default runs SQLite in WAL mode with a busy timeout, synchronous NORMAL and foreign keys', async (t) => {
  const app = await buildTestApp(t)
  const client = tables(app).db.$client
  t.equal(client.pragma('journal_mode', { simple: true }), 'wal')
  t.equal(client.pragma('busy_timeout', { simple: true }), 10000)
  t.equal(client.pragma('synchronous', { simple: true }), 1, 'synchronous = NORMAL')
  t.equal(client.pragma('foreign_keys', { simple: true }), 1, 'foreign keys enforced')
  await app.close()
  t.notOk(client.open, 'the database the package opened is closed with the app')
})

t.test('a page takes the same number of SQL statements whatever its size', async (t) => {
  const file = join(t.testdir(), 'counted.sqlite')
  const statements: string[] = []
  const client = new Database(file, { verbose: (sql) => void statements.push(String(sql)) })
  client.pragma('journal_mode = WAL')
  t.teardown(() => client.close())
  const database = drizzle({ client }) as unknown as SqliteDatabase
  const counted = await buildTestApp(t, { database, orderExchange: { username: 'u', password: 'p', pageSize: 200 } })
  const headers = { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` }
  const url = '/actions/shippingplatformconnect/orders/process?action=export&start_date=01/01/2020 00:00&end_date=01/01/2030 00:00'

  const countFor = async (orders: number) => {
    await tables(counted).db.delete(tables(counted).schema.orders)
    for (let index = 0; index < orders; index++) {
      await insertExportOrder(counted, {}, { items: [{ name: 'a', quantity: 1, price: '1' }, { name: 'b', quantity: 1, price: '1' }, { name: 'c', quantity: 1, price: '1' }] })
    }
    statements.length = 0
    const response = await counted.inject({ url, headers })
    t.equal(exportedOrders(response.body).orders.length, orders)
    return statements.length
  }
  const forThree = await countFor(3)
  const forHundred = await countFor(150)
  t.equal(forHundred, forThree, `${forThree} statements for 3 orders and for 150`)
  t.ok(forThree <= 6, 'the count, the page start, the page, its items, the data-version check and the activity log row')

  // The same request again: the activity log row the first one wrote does not empty the caches, so
  // only the page's rows are read again (no count, no page start).
  statements.length = 0
  const again = await counted.inject({ url, headers })
  t.equal(exportedOrders(again.body).orders.length, 150)
  t.ok(statements.length < forHundred, `${statements.length} statements when nothing but the activity log changed`)
  t.notOk(statements.some((statement) => /count\(/i.test(statement)), 'no count')
})

t.test('boundaries computed inside a host transaction that rolls back are not kept', async (t) => {
  const app = await buildExchangeApp(t)
  await insertExportOrder(app, { reference: 'KEPT', dateUpdated: at('2026-01-01T00:00:00Z') })
  const query = { window: null, store: null, page: 1, pageSize: 25, includeInvalid: false }
  let inside: Promise<{ total: number }> | undefined
  t.throws(() =>
    tables(app).db.$client.transaction(() => {
      const { db, schema } = tables(app)
      const { id: orderId } = db.insert(schema.orders).values({ number: 'rb', reference: 'ROLLED-BACK', isCompleted: true, dateUpdated: at('2026-01-02T00:00:00Z') }).returning().get()
      db.insert(schema.orderLineItems).values({ orderId, name: 'Thing', quantity: 1, price: '1' }).run()
      db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'A', address1: 'B', city: 'C', postalCode: 'D', countryCode: 'US' }).run()
      inside = app.shipments.orders.exportOrders!(query) // runs its statements synchronously, inside the transaction
      throw new Error('roll back')
    })(),
  )
  t.equal((await inside!).total, 2, 'the transaction saw its own order')
  const after = await app.shipments.orders.exportOrders!(query)
  t.same([after.total, after.orders.map((order) => order.reference)], [1, ['KEPT']])
})

t.test('a migration that fails at registration fails ready() and closes the file the package opened', async (t) => {
  const file = join(t.testdir(), 'conflict.sqlite')
  const raw = new Database(file)
  raw.exec('CREATE TABLE shipments_shipments (unrelated TEXT)')
  raw.close()
  await t.rejects(buildTestApp(t, {}, file), /Failed to run the query '\s*CREATE TABLE `shipments_shipments`/)
  // The package's connection is closed: the file can be opened exclusively and removed of its WAL.
  const again = new Database(file)
  t.equal(again.pragma('journal_mode', { simple: true }), 'wal')
  again.close()
})

t.test('a fresh file another process is writing when the plugin opens it: the switch to WAL waits for it instead of failing', async (t) => {
  // Two instances starting on one fresh file at once: SQLite refuses the switch to WAL at once, without
  // its busy wait, while another connection holds a write transaction (seen in CI as one instance's
  // "database is locked" at start). A child process holds one for 300 ms.
  const file = join(t.testdir(), 'fresh.sqlite')
  const holder = spawn(process.execPath, ['-e', `
    const Database = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))})
    const db = new Database(${JSON.stringify(file)})
    db.exec('CREATE TABLE host_table (a); BEGIN IMMEDIATE; INSERT INTO host_table VALUES (1)')
    process.stdout.write('held\\n')
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300)
    db.exec('COMMIT')
    db.close()`], { stdio: ['ignore', 'pipe', 'inherit'] })
  const holderExited = new Promise<number | null>((resolve) => holder.on('exit', resolve))
  await new Promise((resolve, reject) => {
    holder.stdout!.once('data', resolve)
    holder.once('exit', (code) => reject(new Error(`the holding process ended first (exit ${code})`)))
  })
  const app = await buildTestApp(t, {}, file)
  t.equal(await holderExited, 0, 'the other process committed')
  const client = (app.shipments.database.db as SqliteDatabase).$client
  t.equal(client.pragma('journal_mode', { simple: true }), 'wal', 'the file is in WAL mode')
  t.equal(client.prepare('SELECT count(*) FROM host_table').pluck().get(), 1, "the other process's write is kept")
  t.equal((await app.shipments.shipments.list({})).total, 0, 'the package reads its migrated tables')
})

t.test('the data layer reuses prepared statements, each starting in object mode, and leaves the host its connection', async (t) => {
  const { withStatementCache } = await import('../../src/db/sqlite/dialect.js')
  const { sql } = await import('drizzle-orm')
  const client = new Database(':memory:')
  client.exec('CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT)')
  client.exec("INSERT INTO things (name) VALUES ('a'), ('b')")
  const db = withStatementCache(drizzle({ client }) as SqliteDatabase)
  t.equal(db.$client, client, '$client is the connection itself')
  let prepared = 0
  const prepare = client.prepare.bind(client)
  client.prepare = ((source: string) => (prepared++, prepare(source))) as typeof client.prepare
  const text = 'SELECT id, name FROM things ORDER BY id'
  // Drizzle reads rows as arrays (raw mode) when it maps them itself...
  t.same(db.values(sql.raw(text)), [[1, 'a'], [2, 'b']])
  // ...and as objects for plain SQL: the cached statement must not stay raw.
  t.same(db.all(sql.raw(text)), [{ id: 1, name: 'a' }, { id: 2, name: 'b' }])
  t.same(db.get(sql.raw(text)), { id: 1, name: 'a' })
  t.same(db.values(sql.raw(text)), [[1, 'a'], [2, 'b']])
  t.equal(prepared, 1, 'one statement prepared for four runs of one text')
  // A statement that returns no rows has no raw mode to reset.
  db.run(sql.raw("UPDATE things SET name = 'c' WHERE id = 2"))
  db.run(sql.raw("UPDATE things SET name = 'c' WHERE id = 2"))
  t.equal(prepared, 2)
  t.same(db.all(sql.raw(text)), [{ id: 1, name: 'a' }, { id: 2, name: 'c' }])
  client.close()
})


t.test('a cached paged read binds its limit as cast(? as integer), not as a bare parameter SQLite plans with', async (t) => {
  const { withStatementCache } = await import('../../src/db/sqlite/dialect.js')
  const { sqliteTable, integer, text } = await import('drizzle-orm/sqlite-core')
  const { asc, sql } = await import('drizzle-orm')
  const client = new Database(':memory:')
  client.exec("CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO things (name) VALUES ('a'), ('b'), ('c')")
  const things = sqliteTable('things', { id: integer('id').primaryKey(), name: text('name') })
  const db = withStatementCache(drizzle({ client }) as SqliteDatabase)
  const sources: string[] = []
  const prepare = client.prepare.bind(client)
  client.prepare = ((source: string) => (sources.push(source), prepare(source))) as typeof client.prepare
  const page = (limit: number, offset: number) => db.select().from(things).orderBy(asc(things.id)).limit(limit).offset(offset).all()
  t.same(page(1, 1), [{ id: 2, name: 'b' }])
  t.same(page(2, 1), [{ id: 2, name: 'b' }, { id: 3, name: 'c' }])
  t.same(page(5, 1), [{ id: 2, name: 'b' }, { id: 3, name: 'c' }], 'a limit past the end')
  t.same(page(0, 1), [], 'a limit of none')
  t.same(db.select().from(things).limit(1).all(), [{ id: 1, name: 'a' }], 'a first page (Drizzle writes no offset)')
  t.same(db.all(sql`SELECT name FROM things ORDER BY id LIMIT ${2}`), [{ name: 'a' }, { name: 'b' }], 'plain SQL, in capitals')
  // A bare `limit ?` is a value SQLite plans with: binding it expires the statement, so every run
  // prepared it again. Neither better-sqlite3 nor this build of SQLite (no sqlite_stmt table) shows a
  // re-prepare, so the test checks the text prepared; the cost is in CONTRIBUTING (3.7 against 1.2 µs).
  t.equal(sources.length, 3, 'one statement for the pages, one for the first page, one for the plain SQL')
  t.match(sources[0], / limit cast\(\? as integer\) offset \?$/)
  t.match(sources[1], / limit cast\(\? as integer\)$/)
  t.match(sources[2], / limit cast\(\? as integer\)$/)
  client.close()
})
t.test('inserts and updates prepared per shape write what Drizzle would: defaults, JSON, times and nulls', async (t) => {
  const { shapedInsert, shapedUpdate } = await import('../../src/db/sqlite/shaped-statements.js')
  const { sqliteTable, integer, text } = await import('drizzle-orm/sqlite-core')
  const { sql } = await import('drizzle-orm')
  const things = sqliteTable('things', {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull().default('unnamed'),
    data: text('data', { mode: 'json' }).$type<Record<string, unknown>>(),
    at: integer('at', { mode: 'timestamp_ms' }),
  })
  const client = new Database(':memory:')
  client.exec("CREATE TABLE things (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL DEFAULT 'unnamed', data TEXT, at INTEGER)")
  const db = drizzle({ client }) as SqliteDatabase
  const insert = shapedInsert(db, things)
  const update = shapedUpdate(db, things, things.id)
  const at = new Date('2026-11-26T12:00:00Z')
  t.same(insert.insertReturning({ data: { a: 1 }, at }), { id: 1, name: 'unnamed', data: { a: 1 }, at }, 'a column left out gets its default')
  t.same(insert.insertReturning({ name: 'b', data: null, at: null }), { id: 2, name: 'b', data: null, at: null }, 'nulls are NULL, not the text "null"')
  t.equal(insert.insert({ name: 'c', data: undefined }), 1)
  t.same(client.prepare('SELECT id, name, data, at FROM things ORDER BY id').raw().all(), [
    [1, 'unnamed', '{"a":1}', at.getTime()],
    [2, 'b', null, null],
    [3, 'c', null, null],
  ])
  t.same(update.updateReturning(1, { data: null, name: 'a' }), { id: 1, name: 'a', data: null, at })
  t.equal(update.update(2, { data: { b: [2] }, at }), 1)
  t.equal(update.update(99, { name: 'none' }), 0, 'no row with that key')
  t.same(db.all(sql`SELECT data, at FROM things WHERE id = 2`), [{ data: '{"b":[2]}', at: at.getTime() }])
  client.close()
})
