// SQLite only: a file the package opened is checkpointed by a worker thread of its own, every so many
// commits, while commits checkpoint only as a fallback; a failing worker gives checkpoints back to the
// commits; a host's own connection and a database in memory keep SQLite's settings.
import { spawn } from 'node:child_process'
import { copyFileSync, renameSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { Worker } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { COMMITS_PER_CHECKPOINT, FALLBACK_CHECKPOINT_PAGES, createCheckpointer } from '../../src/db/sqlite/checkpointer.js'
import { COMMIT_CHECKPOINT_PAGES, onWriteCommit, openSqliteFile, writeTransaction, type SqliteDatabase } from '../../src/db/sqlite/dialect.js'
import { buildTestApp, insertOrder, postUpdate } from '../fixtures/app.js'
import { tables, testDatabase } from '../fixtures/database.js'
import { exited } from '../fixtures/processes.js'

const closeWorkerPath = fileURLToPath(new URL('../fixtures/checkpoint-close-worker.ts', import.meta.url))

const autocheckpoint = (db: SqliteDatabase) => db.$client.pragma('wal_autocheckpoint', { simple: true })

function scratch(t: { testdir(): string; teardown(fn: () => unknown): void }) {
  const file = join(t.testdir(), 'checkpoints.sqlite')
  const db = openSqliteFile(file)
  db.$client.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)')
  t.teardown(() => db.$client.open && db.$client.close())
  const insert = db.$client.prepare('INSERT INTO notes (text) VALUES (?)')
  // Each commit a few pages: a WAL with something to copy.
  const writeNotes = (count: number) => {
    for (let index = 0; index < count; index++) writeTransaction(db, () => insert.run('x'.repeat(3000)))
  }
  return { file, db, writeNotes }
}

t.test('every so many commits, the worker copies the whole WAL into the database file', async (t) => {
  const { file, db, writeNotes } = scratch(t)
  const checkpointer = createCheckpointer(db, { commitsPerCheckpoint: 5 })!
  t.teardown(() => checkpointer.close())
  onWriteCommit(db, checkpointer.committed)

  writeNotes(4)
  t.equal(await checkpointer.settled(), null, 'no checkpoint before the fifth commit')
  t.equal(autocheckpoint(db), COMMIT_CHECKPOINT_PAGES, 'and no worker: commits checkpoint as SQLite does')

  writeNotes(1)
  const result = await checkpointer.settled()
  t.ok(result, 'the fifth commit asked for a checkpoint')
  t.equal(result!.busy, 0)
  t.ok(result!.log > 0, 'the WAL had pages')
  t.equal(result!.checkpointed, result!.log, 'every page of it was copied')
  t.equal(autocheckpoint(db), FALLBACK_CHECKPOINT_PAGES, 'commits checkpoint only as a fallback now')

  // What the worker copied is in the database file: a copy of the file alone (no WAL) holds every note.
  const copy = `${file}-copy`
  copyFileSync(file, copy)
  const reader = new Database(copy, { readonly: true })
  t.teardown(() => reader.close())
  t.equal((reader.prepare('SELECT count(*) AS n FROM notes').get() as { n: number }).n, 5)
})

t.test('a checkpoint is asked for again only after as many more commits', async (t) => {
  const { db, writeNotes } = scratch(t)
  const checkpointer = createCheckpointer(db, { commitsPerCheckpoint: 3 })!
  t.teardown(() => checkpointer.close())
  onWriteCommit(db, checkpointer.committed)
  writeNotes(3)
  const first = await checkpointer.settled()
  writeNotes(2)
  t.equal(await checkpointer.settled(), first, 'two commits later: still the first checkpoint')
  writeNotes(1)
  const second = await checkpointer.settled()
  t.not(second, first, 'the third commit asked for another')
  t.equal(second!.checkpointed, second!.log)
})

t.test('a worker that fails gives checkpoints back to the commits, and says why', async (t) => {
  const { file, db, writeNotes } = scratch(t)
  const errors: Error[] = []
  const checkpointer = createCheckpointer(db, { commitsPerCheckpoint: 1, onError: (error) => errors.push(error) })!
  t.teardown(() => checkpointer.close())
  onWriteCommit(db, checkpointer.committed)
  // The worker opens the file by name when it starts: moved away, there is nothing to open.
  renameSync(file, `${file}-moved`)
  writeNotes(1)
  t.equal(await checkpointer.settled(), null, 'no checkpoint came')
  t.equal(errors.length, 1)
  t.match(errors[0], { code: 'SQLITE_CANTOPEN' })
  t.equal(autocheckpoint(db), COMMIT_CHECKPOINT_PAGES, 'commits checkpoint again')
  writeNotes(3)
  t.equal(await checkpointer.settled(), null, 'and no new worker is started')
  t.equal(errors.length, 1)
})

/**
 * Kills each checkpoint worker as soon as it is asked for a checkpoint (terminate() stops it in the
 * middle of the checkpoint, or just before it), as a crash of the thread would; counts the workers.
 */
function killWorkersMidCheckpoint(t: { teardown(fn: () => unknown): void }) {
  const workers = new Set<Worker>()
  const postMessage = Worker.prototype.postMessage
  Worker.prototype.postMessage = function (this: Worker, message: unknown, ...rest: unknown[]) {
    const result = (postMessage as (...args: unknown[]) => void).call(this, message, ...rest)
    if (message === 'checkpoint') {
      workers.add(this)
      void this.terminate()
    }
    return result
  } as typeof postMessage
  t.teardown(() => (Worker.prototype.postMessage = postMessage))
  return workers
}

t.test('a worker killed in the middle of a checkpoint: reported once, commits checkpoint again, no new worker started, nothing lost', async (t) => {
  const { file, db, writeNotes } = scratch(t)
  const errors: Error[] = []
  const workers = killWorkersMidCheckpoint(t)
  const checkpointer = createCheckpointer(db, { commitsPerCheckpoint: 5, onError: (error) => errors.push(error) })!
  t.teardown(() => checkpointer.close())
  onWriteCommit(db, checkpointer.committed)

  writeNotes(5)
  t.equal(await checkpointer.settled(), null, 'the checkpoint never answered, and nothing waits for it')
  t.equal(workers.size, 1)
  t.match(errors, [{ message: /^The checkpoint worker stopped \(exit code \d+\)$/ }], 'the failure is reported')
  t.equal(autocheckpoint(db), COMMIT_CHECKPOINT_PAGES, 'commits checkpoint as SQLite does')

  // Many more commits than a checkpoint's worth: no worker is started again (no spin of start and
  // fail), no further report; and the commits keep the WAL near SQLite's own threshold.
  const pageSize = db.$client.pragma('page_size', { simple: true }) as number
  writeNotes(2 * COMMIT_CHECKPOINT_PAGES + 500)
  t.equal(await checkpointer.settled(), null)
  t.equal(workers.size, 1, 'no new worker')
  t.equal(errors.length, 1, 'reported once')
  const walPages = statSync(`${file}-wal`).size / pageSize
  t.ok(walPages < 1.5 * COMMIT_CHECKPOINT_PAGES, `the commits checkpointed: a WAL of ${Math.round(walPages)} pages, not one of every note`)

  await checkpointer.close()
  db.$client.close()
  const reopened = new Database(file, { readonly: true })
  t.teardown(() => reopened.close())
  t.equal((reopened.prepare('SELECT count(*) AS n FROM notes').get() as { n: number }).n, 5 + 2 * COMMIT_CHECKPOINT_PAGES + 500, 'every note is in the file, reopened')
  t.equal(reopened.pragma('integrity_check', { simple: true }), 'ok')
})

t.test("the package's worker killed mid-checkpoint: a warning in the host's log, updates go on, every change is in the file after a restart", async (t) => {
  const workers = killWorkersMidCheckpoint(t)
  const database = await testDatabase(t)
  const logLines: string[] = []
  const app = await buildTestApp(t, {}, database, logLines)
  const orderId = await insertOrder(app)
  const [shipment] = await app.shipments.shipments.create(orderId)
  const updates = COMMITS_PER_CHECKPOINT * 2
  const statuses = new Set<number>()
  for (let index = 0; index < updates; index++) statuses.add((await postUpdate(app, shipment.id, { fulfillmentNotes: `note ${index}` })).statusCode)
  t.same([...statuses], [200], 'every update answered 200, before and after the worker died')
  t.equal(workers.size, 1, 'one worker started, none after it died')
  const warnings = logLines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((entry) => /checkpoint worker failed/.test(entry.msg))
  t.match(warnings, [{ level: 40, msg: 'The SQLite checkpoint worker failed; checkpoints run inside commits again' }], 'reported once, as a warning')
  t.equal(autocheckpoint(tables(app).db as unknown as SqliteDatabase), COMMIT_CHECKPOINT_PAGES)
  await app.close()

  const reopened = new Database(database, { readonly: true })
  t.teardown(() => reopened.close())
  t.equal((reopened.prepare('SELECT fulfillment_notes AS notes FROM shipments_shipments WHERE id = ?').get(shipment.id) as { notes: string }).notes, `note ${updates - 1}`, 'the last update is in the file')
  t.equal(reopened.pragma('integrity_check', { simple: true }), 'ok')
})

t.test('a worker that cannot even start leaves the commit standing and checkpoints to the commits', async (t) => {
  const { db, writeNotes } = scratch(t)
  const errors: Error[] = []
  const checkpointer = createCheckpointer(db, { commitsPerCheckpoint: 1, onError: (error) => errors.push(error) })!
  t.teardown(() => checkpointer.close())
  onWriteCommit(db, checkpointer.committed)
  // Starting the worker throws at once, as under Node's permission model without --allow-worker.
  const pragma = db.$client.pragma.bind(db.$client)
  db.$client.pragma = ((source: string, options?: Parameters<typeof pragma>[1]) => {
    if (source === `wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`) throw new Error('workers refused')
    return pragma(source, options)
  }) as typeof db.$client.pragma
  t.doesNotThrow(() => writeNotes(1), 'the commit that asked for the checkpoint stands')
  t.equal((db.$client.prepare('SELECT count(*) AS n FROM notes').get() as { n: number }).n, 1)
  t.match(errors, [{ message: 'workers refused' }])
  t.equal(autocheckpoint(db), COMMIT_CHECKPOINT_PAGES, 'commits checkpoint as SQLite does')
  t.equal(await checkpointer.settled(), null)
})

t.test('a process that closes the checkpointer while a checkpoint runs waits for the worker, and goes on', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', closeWorkerPath, join(t.testdir(), 'closing.sqlite')], { stdio: ['ignore', 'pipe', 'inherit'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  t.same(await exited(child), { code: 0, signal: null }, 'nothing left unsettled')
  t.equal(output.trim(), 'closed', 'the line after the close ran')
})

t.test('closing twice waits for the same exit', async (t) => {
  const { db, writeNotes } = scratch(t)
  const checkpointer = createCheckpointer(db, { commitsPerCheckpoint: 1 })!
  onWriteCommit(db, checkpointer.committed)
  writeNotes(1)
  const first = checkpointer.close()
  t.equal(checkpointer.close(), first)
  await first
})

t.test('after close, commits ask for nothing', async (t) => {
  const { db, writeNotes } = scratch(t)
  const checkpointer = createCheckpointer(db, { commitsPerCheckpoint: 1 })!
  onWriteCommit(db, checkpointer.committed)
  writeNotes(1)
  const result = await checkpointer.settled()
  await checkpointer.close()
  writeNotes(3)
  t.equal(await checkpointer.settled(), result, 'the last result stays the one before close')
})

t.test('a database in memory has no checkpointer', async (t) => {
  const client = new Database(':memory:')
  t.teardown(() => client.close())
  t.equal(createCheckpointer(drizzle({ client }) as SqliteDatabase), null)
})

t.test('the file the package opens starts its checkpointer after as many commits; a host\'s own connection keeps its settings', async (t) => {
  const app = await buildTestApp(t)
  const db = tables(app).db as unknown as SqliteDatabase
  const orderId = await insertOrder(app)
  const [shipment] = await app.shipments.shipments.create(orderId)
  t.equal(autocheckpoint(db), COMMIT_CHECKPOINT_PAGES)
  // One at a time: each update its own commit.
  const statuses = new Set<number>()
  for (let index = 0; index < COMMITS_PER_CHECKPOINT; index++) statuses.add((await postUpdate(app, shipment.id, { fulfillmentNotes: `note ${index}` })).statusCode)
  t.same([...statuses], [200])
  t.equal(autocheckpoint(db), FALLBACK_CHECKPOINT_PAGES, 'the worker runs')

  const hostDb = openSqliteFile(join(t.testdir(), 'host.sqlite'))
  t.teardown(() => hostDb.$client.close())
  const hosted = await buildTestApp(t, { database: hostDb })
  const hostedOrder = await insertOrder(hosted)
  const [hostedShipment] = await hosted.shipments.shipments.create(hostedOrder)
  for (let index = 0; index < COMMITS_PER_CHECKPOINT; index++) await postUpdate(hosted, hostedShipment.id, { fulfillmentNotes: `note ${index}` })
  t.equal(autocheckpoint(hostDb), COMMIT_CHECKPOINT_PAGES, "the host's connection checkpoints as the host set it")
})
