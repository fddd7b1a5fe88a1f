// The `lockDirectory` option (SQLite only): where the cross-process lock files live (the migration lock;
// transitions need none), the `<database file>-locks` default, and `null`, which keeps every lock
// inside the process. A file lock is proven by another holder of it (the package's own mutex, as a
// second process would hold it) making the registration wait; the transition mutex across processes
// by another connection holding the database's write lock making the transition time out.
import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import type { FastifyInstance } from 'fastify'
import { createMutex } from '../../src/db/mutex.js'
import { LockTimeoutError } from '../../src/db/data-layer.js'
import { openSqliteFile } from '../../src/db/sqlite/dialect.js'
import { createSqliteNamedLocks } from '../../src/db/sqlite/named-locks.js'
import { createGroupCommit } from '../../src/db/sqlite/group-commit.js'
import { transitionLockName, type ShipmentStatus } from '../../src/index.js'
import { buildTestApp, historyRows, orderWithShipments, postUpdate, shipmentRow } from '../fixtures/app.js'

/** The `.lock` entries of a directory (proper-lockfile's lock is a directory named `<name>.lock`). */
const locksIn = (directory: string) => (existsSync(directory) ? readdirSync(directory).filter((name) => name.endsWith('.lock')) : [])

/** Every `.lock` entry anywhere under `root`, as paths relative to it. */
function locksUnder(root: string, prefix = ''): string[] {
  return readdirSync(root, { withFileTypes: true }).flatMap((entry) => {
    const path = join(prefix, entry.name)
    if (entry.name.endsWith('.lock')) return [path]
    return entry.isDirectory() ? locksUnder(join(root, entry.name), path) : []
  })
}

/**
 * Starts a transition of `id` to `to` and holds it open inside the shipment's mutex (the
 * authorization runs under it); `release` lets it commit.
 */
async function holdTransition(app: FastifyInstance, id: number, to: ShipmentStatus) {
  let reached!: () => void
  const inside = new Promise<void>((resolve) => (reached = resolve))
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  const done = app.shipments.shipments.update(id, { status: to }, {
    authorizeTransition: async () => {
      reached()
      await gate
    },
  })
  await inside
  return { release, done }
}

/** Holds the named file lock in `directory` the way another process would (a mutex of its own), runs `work`, then lets go. */
async function whileLockedElsewhere<T>(directory: string, name: string, work: () => Promise<T>): Promise<T> {
  let result!: T
  await createMutex({ directory }).withLock(name, 2_000, async () => {
    result = await work()
  })
  return result
}

/**
 * Registers a second app on `databaseFile` (it migrates at registration) while the migration lock is
 * held in `directory`: whether the registration was still waiting 300 ms in, and the app once it is done.
 */
async function registerWhileMigrationLocked(t: Test, directory: string, databaseFile: string, options: Parameters<typeof buildTestApp>[1]) {
  let registered = false
  const registration = whileLockedElsewhere(directory, 'shipments:migrate', async () => {
    const app = buildTestApp(t, options, databaseFile).finally(() => (registered = true))
    await sleep(300)
    return { waited: !registered, app }
  })
  const { waited, app } = await registration
  return { waited, app: await app }
}

const LOCK_TIMEOUT_BODY = (id: number) => ({
  success: false,
  error: `Couldn't update shipment ${id} right now because another update is in progress. Please try again.`,
  errorCode: 'SHIPMENTS_UPDATE_REJECTED',
})

/** The shipment's history as `from>to` steps, creation included. */
const steps = async (app: FastifyInstance, id: number) => (await historyRows(app, id)).map((row) => `${row.fromStatus}>${row.toStatus}`)

t.test('a custom lockDirectory is where the migration lock is taken, not beside the database', async (t: Test) => {
  const dir = t.testdir()
  const databaseFile = join(dir, 'shop.sqlite')
  const lockDirectory = join(dir, 'elsewhere', 'shipment-locks')
  const app = await buildTestApp(t, { lockDirectory }, databaseFile)
  t.ok(existsSync(lockDirectory), 'the directory (and its parent) is created at registration')
  t.notOk(existsSync(`${databaseFile}-locks`), 'the migration locked there too, not beside the file')
  t.same(locksIn(lockDirectory), [], 'released after the migration')

  // Another process holding the migration lock in the custom directory makes a registration wait...
  const blocked = await registerWhileMigrationLocked(t, lockDirectory, databaseFile, { lockDirectory })
  t.ok(blocked.waited, 'the registration waited for the lock held in the custom directory')
  // ...one holding it in the default directory does not: the package does not look there.
  const free = await registerWhileMigrationLocked(t, `${databaseFile}-locks`, databaseFile, { lockDirectory })
  t.notOk(free.waited, 'a lock beside the database file did not hold the registration up')

  // All three instances work on the file.
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const response = await postUpdate(free.app, id, { status: 'on_hold' })
  t.equal(response.statusCode, 200)
  t.equal(response.json().shipment.status, 'on_hold')
  t.equal((await shipmentRow(blocked.app, id)).status, 'on_hold')
  t.same(await steps(app, id), ['null>new', 'new>on_hold'])
})

t.test('transitions take no lock file: the write transaction is the cross-process half of the mutex', async (t: Test) => {
  const dir = t.testdir()
  const databaseFile = join(dir, 'default.sqlite')
  const app = await buildTestApp(t, { lockTimeoutMs: 300 }, databaseFile)
  t.ok(existsSync(`${databaseFile}-locks`), 'by default the lock directory is <database file>-locks (the migration locked there)')
  const { shipmentIds: [id] } = await orderWithShipments(app)

  const held = await holdTransition(app, id, 'fulfilled')
  const during = locksUnder(dir)
  held.release()
  const result = await held.done
  t.same(result.transition && [result.transition.from, result.transition.to], ['new', 'fulfilled'])
  t.same(during, [], 'no lock file anywhere while a transition holds the mutex')

  // A file lock on the transition's name (what earlier versions took) holds nothing up.
  const free = await whileLockedElsewhere(`${databaseFile}-locks`, transitionLockName(id), () => postUpdate(app, id, { status: 'on_hold' }))
  t.equal(free.statusCode, 200)
  t.equal(free.json().shipment.status, 'on_hold')

  // Another connection (another process) in a write transaction does, until lockTimeoutMs.
  const other = new Database(databaseFile)
  t.teardown(() => other.close())
  other.exec('BEGIN IMMEDIATE')
  const blocked = await postUpdate(app, id, { status: 'shipped' })
  other.exec('ROLLBACK')
  t.equal(blocked.statusCode, 422)
  t.same(blocked.json(), LOCK_TIMEOUT_BODY(id))
  t.equal((await shipmentRow(app, id)).status, 'on_hold', 'the blocked transition changed nothing')
  t.same(await steps(app, id), ['null>new', 'new>fulfilled', 'fulfilled>on_hold'], 'no history row for the refused transition')

  const retry = await postUpdate(app, id, { status: 'shipped' })
  t.equal(retry.statusCode, 200, 'the released write lock is free again')
  t.equal(retry.json().shipment.status, 'shipped')
  t.same(await steps(app, id), ['null>new', 'new>fulfilled', 'fulfilled>on_hold', 'on_hold>shipped'])
})

t.test('a status moved by another process between the authorization and the write is authorized again', async (t: Test) => {
  const dir = t.testdir()
  const databaseFile = join(dir, 'moved.sqlite')
  const app = await buildTestApp(t, {}, databaseFile)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const other = new Database(databaseFile)
  t.teardown(() => other.close())

  const asked: string[] = []
  const result = await app.shipments.shipments.update(id, { status: 'shipped' }, {
    authorizeTransition: (from, to) => {
      asked.push(`${from}>${to}`)
      // The first time, another process moves the shipment (a transition of its own) meanwhile.
      if (asked.length === 1) {
        other.prepare("UPDATE shipments_shipments SET status = 'on_hold' WHERE id = ?").run(id)
        other.prepare("INSERT INTO shipments_status_history (shipment_id, from_status, to_status) VALUES (?, 'new', 'on_hold')").run(id)
      }
    },
  })
  t.same(asked, ['new>shipped', 'on_hold>shipped'], 'authorized again for the status as it was under the write lock')
  t.same(result.transition && [result.transition.from, result.transition.to], ['on_hold', 'shipped'])
  t.same(await steps(app, id), ['null>new', 'new>on_hold', 'on_hold>shipped'], 'an unbroken history')
  t.equal((await shipmentRow(app, id)).status, 'shipped')
})

t.test('lockDirectory null: no lock directory, no file lock, one history row per real transition', async (t: Test) => {
  const dir = t.testdir()
  mkdirSync(join(dir, 'host'))
  const databaseFile = join(dir, 'host', 'single.sqlite')
  // Migrating at registration locks in-process too: no lock directory appears at any point.
  const app = await buildTestApp(t, { lockDirectory: null, lockTimeoutMs: 3000 }, databaseFile)
  t.notOk(existsSync(`${databaseFile}-locks`), 'registration (with its migration) made no lock directory')
  const { shipmentIds: [id, other] } = await orderWithShipments(app, 2)

  const held = await holdTransition(app, id, 'in_progress')
  const during = locksUnder(dir)
  held.release()
  await held.done
  t.same(during, [], 'no lock file anywhere while a transition holds the mutex')
  t.notOk(existsSync(`${databaseFile}-locks`), 'no <database file>-locks directory')
  t.same(readdirSync(join(dir, 'host')).filter((name) => !/\.sqlite(-wal|-shm)?$/.test(name)), [], 'nothing at all beside the database file')

  // The in-process FIFO queue still serializes: concurrent requests apply in the order they came,
  // repeats of the current status write nothing, and every real change writes one history row.
  const targets: ShipmentStatus[] = ['shipped', 'shipped', 'shipped', 'cancelled', 'cancelled', 'shipped', 'new', 'new', 'shipped', 'shipped']
  const results = await Promise.all(targets.map((status) => app.shipments.shipments.update(other, { status })))
  t.same(
    results.map((result) => result.transition && `${result.transition.from}>${result.transition.to}`),
    ['new>shipped', null, null, 'shipped>cancelled', null, 'cancelled>shipped', 'shipped>new', null, 'new>shipped', null],
  )
  t.same(await steps(app, other), ['null>new', 'new>shipped', 'shipped>cancelled', 'cancelled>shipped', 'shipped>new', 'new>shipped'])
  t.equal((await shipmentRow(app, other)).status, 'shipped')
})

/** Two connections to one migrated file, as two processes have: each with its own group commit and named locks. */
async function twoProcessesLocks(t: Test, staleMs: number) {
  const databaseFile = join(t.testdir(), 'locks.sqlite')
  await buildTestApp(t, {}, databaseFile) // migrates the file
  const compromised: string[] = []
  const [first, second] = [0, 1].map(() => {
    const db = openSqliteFile(databaseFile)
    t.teardown(() => db.$client.close())
    return { db, locks: createSqliteNamedLocks(db, { staleMs, group: createGroupCommit(db, 10_000), onCompromised: (name, error) => void compromised.push(`${name}: ${error.message}`) }) }
  })
  const rows = () => first!.db.$client.prepare('SELECT name, holder, lease_until AS leaseUntil FROM shipments_named_locks').all() as Array<{ name: string; holder: string; leaseUntil: number }>
  return { first: first!, second: second!, rows, compromised }
}

t.test('named locks are rows of the file: another process waits for a live one until its timeout, and takes over one whose lease ran out', async (t: Test) => {
  const { first, second, rows, compromised } = await twoProcessesLocks(t, 300)
  let inside!: () => void
  const reached = new Promise<void>((resolve) => (inside = resolve))
  let finish!: () => void
  const held = first.locks.withLock('labelPurchase:7', 5_000, async () => {
    inside()
    await new Promise<void>((resolve) => (finish = resolve))
    return 'first'
  })
  await reached
  t.match(rows(), [{ name: 'labelPurchase:7' }], 'the held lock is a row')
  // Held past two of its leases: renewed at half the lease, it never looks dead to the other process.
  await sleep(700)
  await t.rejects(second.locks.withLock('labelPurchase:7', 150, async () => 'second'), LockTimeoutError, 'a live lock is waited for until the timeout')
  t.equal(await second.locks.withLock('labelPurchase:8', 1_000, async () => 'another'), 'another', 'another name is free')
  finish()
  t.equal(await held, 'first')
  t.same(rows(), [], 'a released lock leaves no row')
  t.equal(await second.locks.withLock('labelPurchase:7', 1_000, async () => 'second'), 'second', 'released, it is taken at once')

  // A holder that died left its row: once the lease ran out, the next taker replaces it.
  first.db.$client.prepare('INSERT INTO shipments_named_locks (name, holder, lease_until) VALUES (?, ?, ?)').run('shipmentPush:1', 'dead', Date.now() - 1)
  t.equal(await second.locks.withLock('shipmentPush:1', 1_000, async () => rows()[0]?.holder !== 'dead'), true, 'the dead holder is replaced')
  t.same(rows(), [])
  t.same(compromised, [])
})

t.test('a named lock taken over while held (an event-loop stall past its lease) is reported as compromised', async (t: Test) => {
  const { first, rows, compromised } = await twoProcessesLocks(t, 200)
  await first.locks.withLock('shipNotice:3', 2_000, async () => {
    // Another process took the row over (as after a stall): the next renewal finds it gone.
    first.db.$client.prepare("UPDATE shipments_named_locks SET holder = 'other' WHERE name = ?").run('shipNotice:3')
    await sleep(300)
  })
  t.same(compromised, ['shipNotice:3: The lock shipNotice:3 was taken over by another process.'])
  t.match(rows(), [{ name: 'shipNotice:3', holder: 'other' }], "the other holder's row is left to it")
})
