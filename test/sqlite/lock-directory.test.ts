// The `lockDirectory` option (SQLite only): where the cross-process transition locks live, the
// `<database file>-locks` default, and `null`, which keeps the transition mutex inside the process.
// A lock is proven by looking at the directory while a transition is held open under its mutex, and
// by another holder of the same file lock (the package's own mutex, as a second process would hold
// it) making the transition time out.
import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { createMutex } from '../../src/db/mutex.js'
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

/**
 * Holds shipment `id`'s transition file lock in `directory` the way another process would (a
 * mutex of its own, so only the file lock is shared), runs `work`, then lets go.
 */
async function whileLockedElsewhere<T>(directory: string, id: number, work: () => Promise<T>): Promise<T> {
  let result!: T
  await createMutex({ directory }).withLock(transitionLockName(id), 2_000, async () => {
    result = await work()
  })
  return result
}

const LOCK_TIMEOUT_BODY = (id: number) => ({
  success: false,
  error: `Couldn't update shipment ${id} right now because another update is in progress. Please try again.`,
})

/** The shipment's history as `from>to` steps, creation included. */
const steps = async (app: FastifyInstance, id: number) => (await historyRows(app, id)).map((row) => `${row.fromStatus}>${row.toStatus}`)

t.test('a custom lockDirectory is where the transition lock is taken, not beside the database', async (t: Test) => {
  const dir = t.testdir()
  const databaseFile = join(dir, 'shop.sqlite')
  const lockDirectory = join(dir, 'elsewhere', 'shipment-locks')
  const app = await buildTestApp(t, { lockDirectory, lockTimeoutMs: 300 }, databaseFile)
  t.ok(existsSync(lockDirectory), 'the directory (and its parent) is created at registration')
  t.notOk(existsSync(`${databaseFile}-locks`), 'the migration locked there too, not beside the file')
  const { shipmentIds: [id] } = await orderWithShipments(app)

  const held = await holdTransition(app, id, 'in_progress')
  const duringCustom = locksIn(lockDirectory)
  const duringDefault = locksIn(`${databaseFile}-locks`)
  held.release()
  await held.done
  t.equal(duringCustom.length, 1, 'one lock held in the custom directory during the transition')
  t.match(duringCustom[0], new RegExp(`shipment_${id}_transition`), 'the lock names the shipment')
  t.same(duringDefault, [], 'nothing locked beside the database file')
  t.same(locksIn(lockDirectory), [], 'released after the commit')

  // Another process holding the lock in the custom directory blocks the transition...
  const blocked = await whileLockedElsewhere(lockDirectory, id, () => postUpdate(app, id, { status: 'on_hold' }))
  t.equal(blocked.statusCode, 422)
  t.same(blocked.json(), LOCK_TIMEOUT_BODY(id))
  t.equal((await shipmentRow(app, id)).status, 'in_progress', 'the blocked transition changed nothing')

  // ...one holding it in the default directory does not: the package no longer looks there.
  const free = await whileLockedElsewhere(`${databaseFile}-locks`, id, () => postUpdate(app, id, { status: 'on_hold' }))
  t.equal(free.statusCode, 200)
  t.equal(free.json().shipment.status, 'on_hold')
  t.same(await steps(app, id), ['null>new', 'new>in_progress', 'in_progress>on_hold'])
})

t.test('by default the transition lock lives in <database file>-locks', async (t: Test) => {
  const dir = t.testdir()
  const databaseFile = join(dir, 'default.sqlite')
  const app = await buildTestApp(t, { lockTimeoutMs: 300 }, databaseFile)
  const { shipmentIds: [id] } = await orderWithShipments(app)

  const held = await holdTransition(app, id, 'fulfilled')
  const during = locksUnder(dir)
  held.release()
  await held.done
  t.same(during, [join('default.sqlite-locks', `shipments_shipment_${id}_transition.lock`)], 'the only lock anywhere, beside the file')
  t.same(locksIn(`${databaseFile}-locks`), [], 'released after the commit')

  const blocked = await whileLockedElsewhere(`${databaseFile}-locks`, id, () => postUpdate(app, id, { status: 'shipped' }))
  t.equal(blocked.statusCode, 422)
  t.same(blocked.json(), LOCK_TIMEOUT_BODY(id))
  t.equal((await shipmentRow(app, id)).status, 'fulfilled')
  t.same(await steps(app, id), ['null>new', 'new>fulfilled'], 'no history row for the refused transition')
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

  // A file lock where the default would be (the other holder creates the directory) does not block
  // it either: nothing looks there.
  const free = await whileLockedElsewhere(`${databaseFile}-locks`, id, () => postUpdate(app, id, { status: 'on_hold' }))
  t.equal(free.statusCode, 200)
  t.equal(free.json().shipment.status, 'on_hold')

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
