// SQLite only: writes submitted in one turn of the event loop share one IMMEDIATE transaction and commit
// together, each in a savepoint (a failing one rolls back alone); another process's write lock is
// waited for until each write's own deadline; the files the package opens checkpoint every 4,000 pages.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import t from 'tap'
import Database from 'better-sqlite3'
import { openSqliteFile } from '../../src/db/sqlite/dialect.js'
import { createGroupCommit } from '../../src/db/sqlite/group-commit.js'
import { buildTestApp, historyRows, insertOrder, postUpdate, shipmentRow } from '../fixtures/app.js'
import { rawQuery, tables } from '../fixtures/database.js'

function scratch(t: { testdir(): string; teardown(fn: () => unknown): void }) {
  const file = join(t.testdir(), 'group.sqlite')
  const db = openSqliteFile(file)
  db.$client.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)')
  t.teardown(() => db.$client.close())
  const insert = db.$client.prepare('INSERT INTO notes (text) VALUES (?)')
  const texts = () => (db.$client.prepare('SELECT text FROM notes ORDER BY id').all() as Array<{ text: string }>).map((row) => row.text)
  return { file, db, insert, texts }
}

t.test('writes submitted together run in order in one transaction and commit together', async (t) => {
  const { file, db, insert, texts } = scratch(t)
  const group = createGroupCommit(db, 10_000)
  const reader = new Database(file)
  t.teardown(() => reader.close())
  const seen: unknown[] = []
  const results = await Promise.all([
    group.run(() => insert.run('first').changes),
    group.run(() => {
      // Inside the shared transaction: the first write is here, and not yet committed for anyone else.
      seen.push(db.$client.inTransaction, texts(), (reader.prepare('SELECT count(*) AS n FROM notes').get() as { n: number }).n)
      return insert.run('second').changes
    }),
  ])
  t.same(results, [1, 1])
  t.same(seen, [true, ['first'], 0])
  t.same(texts(), ['first', 'second'])
  t.equal((reader.prepare('SELECT count(*) AS n FROM notes').get() as { n: number }).n, 2, 'both committed')
})

t.test('a write that throws is rolled back alone: the others commit', async (t) => {
  const { db, insert, texts } = scratch(t)
  const group = createGroupCommit(db, 10_000)
  const outcomes = await Promise.allSettled([
    group.run(() => insert.run('kept')),
    group.run(() => {
      insert.run('rolled back')
      throw new Error('refused')
    }),
    group.run(() => insert.run('kept too')),
  ])
  t.same(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.match((outcomes[1] as PromiseRejectedResult).reason, { message: 'refused' })
  t.same(texts(), ['kept', 'kept too'])
})

t.test("a write SQLite refuses (a unique key taken) is rejected with SQLite's code, alone: the others commit", async (t) => {
  // A label purchase's intent is refused this way when another process holds the parcel's purchase:
  // the parcel store answers 'busy' on the code, whichever group the intent shared.
  const { db, texts } = scratch(t)
  db.$client.exec('CREATE UNIQUE INDEX notes_text ON notes (text)')
  const insert = db.$client.prepare('INSERT INTO notes (text) VALUES (?)')
  const group = createGroupCommit(db, 10_000)
  const outcomes = await Promise.allSettled([group.run(() => insert.run('intent')), group.run(() => insert.run('intent')), group.run(() => insert.run('other write'))])
  t.same(
    outcomes.map((outcome) => outcome.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  )
  t.match((outcomes[1] as PromiseRejectedResult).reason, { code: 'SQLITE_CONSTRAINT_UNIQUE' })
  t.same(texts(), ['intent', 'other write'])
})

t.test('a write that ends the whole transaction fails every write of its group, and nothing is kept', async (t) => {
  const { db, insert, texts } = scratch(t)
  const group = createGroupCommit(db, 10_000)
  const outcomes = await Promise.allSettled([
    group.run(() => insert.run('lost')),
    group.run(() => {
      db.$client.exec('ROLLBACK')
      throw new Error('the transaction is gone')
    }),
  ])
  t.same(outcomes.map((outcome) => outcome.status), ['rejected', 'rejected'])
  t.same(texts(), [])
  t.same(await group.run(() => insert.run('next').changes), 1, 'the next group starts afresh')
})

t.test("another process's write lock: each write waits until its own deadline", async (t) => {
  const { file, db, insert, texts } = scratch(t)
  const group = createGroupCommit(db, 10_000)
  // A process holding the file's write lock for 400 ms (the test's own thread sleeps while it waits).
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const holder = spawn(
    process.execPath,
    ['-e', `const db = new (require(process.argv[1]))(process.argv[2]); db.exec('BEGIN IMMEDIATE'); console.log('held'); setTimeout(() => { db.exec('ROLLBACK'); db.close() }, 400)`, driver, file],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()))
  const started = Date.now()
  const [hurried, patient] = await Promise.allSettled([
    group.run(() => insert.run('hurried'), started + 50),
    group.run(() => insert.run('patient'), started + 10_000),
  ])
  t.equal(hurried.status, 'rejected')
  t.match((hurried as PromiseRejectedResult).reason, { code: /^SQLITE_BUSY/ })
  t.equal(patient.status, 'fulfilled', 'the later deadline waited for the lock')
  t.same(texts(), ['patient'])
})

t.test('flush runs what is waiting at once (the data layer flushes before it closes)', async (t) => {
  const { db, insert, texts } = scratch(t)
  const group = createGroupCommit(db, 10_000)
  const written = group.run(() => insert.run('before close').changes)
  group.flush()
  t.same(texts(), ['before close'])
  t.equal(await written, 1)
  group.flush()
})

t.test('a transition beside an over-allocating change: one applied, one refused with nothing of it written', async (t) => {
  const app = await buildTestApp(t)
  const orderId = await insertOrder(app)
  const { db, schema } = tables(app)
  const [line] = await db.insert(schema.orderLineItems).values({ orderId, name: 'Mug', sku: 'MUG', quantity: 1, price: '5.00' }).returning()
  const [held] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: line.id, quantity: 1 }] })
  const [other] = await app.shipments.shipments.create(orderId, { count: 1 })
  const [moved, refused] = await Promise.all([
    postUpdate(app, held.id, { status: 'in_progress' }),
    postUpdate(app, other.id, { status: 'on_hold', items: [{ lineItemId: line.id, quantity: 1 }] }),
  ])
  t.equal(moved.statusCode, 200)
  t.equal(moved.json().shipment.status, 'in_progress')
  t.equal(refused.statusCode, 422)
  t.match(refused.json(), { success: false, errors: { [`items.${line.id}`]: [/1 requested, 0 of 1 left/] } })
  t.equal((await shipmentRow(app, other.id)).status, 'new', 'the refused change wrote nothing')
  t.same((await historyRows(app, other.id)).map((row) => row.toStatus), ['new'])
  const events = await rawQuery(app, "SELECT ordering_key FROM shipments_outbox WHERE name = 'shipmentStatusChanged'")
  t.same(events, [{ ordering_key: `shipment:${held.id}` }], "one event: the applied transition's")
})

t.test('the file the package opens checkpoints every 4,000 WAL pages', async (t) => {
  const app = await buildTestApp(t)
  t.equal(tables(app).db.$client.pragma('wal_autocheckpoint', { simple: true }), 4000)
})
