// Several processes (instances) on one database: concurrent transitions, and a process killed with
// SIGKILL in the middle of its work, on each engine. The kill tests synchronize on what the worker
// reports and on state anyone can observe (the lock directory, the database, pg_locks), never on a sleep.
import { join } from 'node:path'
import { existsSync, readdirSync, statSync } from 'node:fs'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { createMutex } from '../src/db/mutex.js'
import { ADVISORY_LOCK_CLASS } from '../src/index.js'
import { buildTestApp, historyRows, orderWithShipments, postUpdate, shipmentRow } from './fixtures/app.js'
import { exited, firstLine, lineMatching, spawnWorker } from './fixtures/processes.js'
import { rawQuery, testDatabase, TEST_ENGINE } from './fixtures/database.js'

/** The shipment's history as `from>to` steps, creation included. */
const steps = async (app: FastifyInstance, id: number) => (await historyRows(app, id)).map((row) => `${row.fromStatus}>${row.toStatus}`)

/** The package's transition locks currently held on this PostgreSQL database (granted or awaited). */
const advisoryLocks = (app: FastifyInstance, shipmentId?: number) =>
  rawQuery(
    app,
    `SELECT objid::int AS shipment, granted FROM pg_locks WHERE locktype = 'advisory' AND classid = ? AND objsubid = 2
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())${shipmentId === undefined ? '' : ' AND objid = ?'}
     ORDER BY granted DESC`,
    shipmentId === undefined ? [ADVISORY_LOCK_CLASS.shipmentTransition] : [ADVISORY_LOCK_CLASS.shipmentTransition, shipmentId],
  )

t.test('four processes on one database: no lost update, history equals the real transitions', async (t) => {
  const databaseFile = await testDatabase(t, 'shared')
  const app = await buildTestApp(t, {}, databaseFile)
  const { shipmentIds } = await orderWithShipments(app, 4)
  const targets = ['in_progress', 'on_hold', 'fulfilled', 'shipped', 'cancelled', 'new']
  const workers = [0, 1, 2].map((index) => {
    const rotated = [...targets.slice(index * 2), ...targets.slice(0, index * 2)]
    const child = spawnWorker([databaseFile, 'transitions', shipmentIds.join(','), ...rotated, ...rotated])
    return firstLine(child)
  })
  const local = await Promise.all(
    shipmentIds.flatMap((id) =>
      [...targets].reverse().map((status) =>
        app.shipments.shipments.update(id, { status: status as never }).then((result) => (result.transition ? 'changed' : 'unchanged')),
      ),
    ),
  )
  const remote = (await Promise.all(workers)).flatMap((line) => JSON.parse(line) as string[])
  t.same(remote.filter((outcome) => outcome.startsWith('error')), [], 'no SQLITE_BUSY or lock error reached a caller')

  const changed = [...local, ...remote].filter((outcome) => outcome === 'changed').length
  let rows = 0
  for (const id of shipmentIds) {
    const history = await historyRows(app, id)
    rows += history.length - 1
    history.forEach((row, index) => {
      if (index > 0) t.equal(row.fromStatus, history[index - 1].toStatus, `shipment ${id} row ${index} continues the chain`)
    })
    t.equal((await shipmentRow(app, id)).status, history.at(-1)!.toStatus, `shipment ${id} ends where its history ends`)
  }
  t.equal(rows, changed, 'one history row per real transition, across all processes')
})

t.test('a process killed with SIGKILL mid-transition leaves no partial history, and every shipment moves on', async (t) => {
  const databaseFile = await testDatabase(t, 'killed')
  let app = await buildTestApp(t, {}, databaseFile)
  const { shipmentIds } = await orderWithShipments(app, 3)
  await app.close()

  const worker = spawnWorker([databaseFile, 'loop', shipmentIds.join(',')])
  t.equal(await firstLine(worker), 'looping')
  // The worker reports each completed round and starts the next at once: kill it once it has
  // completed a few, while the next round's transitions are under way.
  await lineMatching(worker, (line) => /^round (\d+)$/.test(line) && Number(line.slice(6)) >= 3)
  worker.kill('SIGKILL')
  t.same(await exited(worker), { code: null, signal: 'SIGKILL' })

  app = await buildTestApp(t, { lockTimeoutMs: 15_000 }, databaseFile)
  for (const id of shipmentIds) {
    const row = await shipmentRow(app, id)
    const history = await historyRows(app, id)
    t.ok(history.length >= 5, `shipment ${id} moved in every reported round before the kill`)
    history.forEach((entry, index) => {
      if (index > 0) t.equal(entry.fromStatus, history[index - 1].toStatus, `shipment ${id}: unbroken chain`)
    })
    t.equal(row.status, history.at(-1)!.toStatus, `shipment ${id}: status and history agree (no partial transaction)`)
    const response = await app.inject({ url: `/shipments/api/shipments/${id}`, headers: { 'x-test-user': 'viewer' } })
    t.equal(response.statusCode, 200, `shipment ${id} is readable`)
    t.equal(response.json().shipment.status, row.status, `shipment ${id} reads as stored`)
  }
  // Whatever the killed process held is given up (taken over once stale on SQLite, released by the
  // server on PostgreSQL): every shipment transitions again, with one more history row each.
  for (const id of shipmentIds) {
    const before = await historyRows(app, id)
    const target = before.at(-1)!.toStatus === 'cancelled' ? 'on_hold' : 'cancelled'
    const result = await app.shipments.shipments.update(id, { status: target })
    t.same(result.transition && [result.transition.from, result.transition.to], [before.at(-1)!.toStatus, target], `shipment ${id} transitions after the kill`)
    t.equal((await historyRows(app, id)).length, before.length + 1, `shipment ${id}: one history row for it`)
  }
  if (TEST_ENGINE === 'sqlite') {
    t.same(readdirSync(`${databaseFile}-locks`).filter((name) => name.endsWith('.lock')), [], 'no transition lock left behind')
  } else {
    t.same(await advisoryLocks(app), [], 'no transition lock left behind')
  }
})

if (TEST_ENGINE === 'sqlite') {
  t.test("SQLite: a process killed inside a transition's write transaction: its writes are rolled back, the write lock is released, the next transition applies", async (t) => {
    const databaseFile = await testDatabase(t, 'killed-writer')
    const app = await buildTestApp(t, { lockTimeoutMs: 300 }, databaseFile)
    const { shipmentIds: [id] } = await orderWithShipments(app)

    // The worker has written a transition (status and history row) and holds the write lock, uncommitted.
    const worker = spawnWorker([databaseFile, 'write-transition', String(id), 'shipped'])
    t.teardown(() => worker.exitCode === null && worker.kill('SIGKILL'))
    t.equal(await firstLine(worker), 'written')
    const blocked = await postUpdate(app, id, { status: 'on_hold' })
    t.equal(blocked.statusCode, 422, 'a live holder of the write lock times the transition out')
    t.same(blocked.json(), { success: false, error: `Couldn't update shipment ${id} right now because another update is in progress. Please try again.`, errorCode: 'SHIPMENTS_UPDATE_REJECTED' })
    t.equal((await shipmentRow(app, id)).status, 'new', "the holder's uncommitted write is not seen")

    worker.kill('SIGKILL')
    t.same(await exited(worker), { code: null, signal: 'SIGKILL' })
    t.same(await steps(app, id), ['null>new'], 'the killed transition wrote nothing')
    const result = await app.shipments.shipments.update(id, { status: 'on_hold' })
    t.same(result.transition && [result.transition.from, result.transition.to], ['new', 'on_hold'], 'the next transition applies at once: the lock died with the process')
    t.same(await steps(app, id), ['null>new', 'new>on_hold'], 'one history row, for the transition that applied')
    t.equal((await shipmentRow(app, id)).status, 'on_hold')
    t.same(readdirSync(`${databaseFile}-locks`).filter((name) => name.endsWith('.lock')), [], 'no lock file was involved')
  })

  t.test('SQLite: the migration lock of a process killed while holding it goes stale and is taken over by the next registration', async (t) => {
    const STALE_MS = 5_000 // the mutex's default staleMs
    const databaseFile = await testDatabase(t, 'stale-lock')
    const lockDirectory = `${databaseFile}-locks`
    // proper-lockfile's lock is a directory; the mutex names it after the lock, as in src/db/mutex.ts.
    const lockPath = join(lockDirectory, 'shipments_migrate.lock')
    let app = await buildTestApp(t, {}, databaseFile)
    const { shipmentIds: [id] } = await orderWithShipments(app)
    await app.close()
    t.notOk(existsSync(lockPath), 'no migration lock after the registration')

    const worker = spawnWorker([databaseFile, 'hold-migration-lock'])
    t.equal(await firstLine(worker), 'locked')
    t.ok(statSync(lockPath).isDirectory(), 'the worker holds the migration lock: its lock directory exists')
    // A live holder keeps it: another process's attempt times out.
    await t.rejects(
      createMutex({ directory: lockDirectory }).withLock('shipments:migrate', 200, () => 'acquired'),
      { name: 'LockTimeoutError' },
      'the lock is held while the worker lives',
    )

    worker.kill('SIGKILL')
    t.same(await exited(worker), { code: null, signal: 'SIGKILL' })
    // SIGKILL leaves no chance to clean up: the lock directory stays, and stops being refreshed.
    const stale = statSync(lockPath)
    t.ok(stale.isDirectory(), 'the killed holder left its lock directory behind')

    // A new process's registration migrates: it waits for the lock to go stale, takes it over and goes on.
    app = await buildTestApp(t, {}, databaseFile)
    const registeredAt = Date.now()
    t.ok(
      registeredAt - stale.mtime.getTime() > STALE_MS,
      `taken over only once the dead holder's lock had not been refreshed for the stale period (${registeredAt - stale.mtime.getTime()} ms > ${STALE_MS} ms)`,
    )
    t.notOk(existsSync(lockPath), 'released after the migration: nothing left behind')
    const result = await app.shipments.shipments.update(id, { status: 'on_hold' })
    t.same(result.transition && [result.transition.from, result.transition.to], ['new', 'on_hold'], 'the registered instance works')
    t.same(await steps(app, id), ['null>new', 'new>on_hold'])
    t.equal((await shipmentRow(app, id)).status, 'on_hold')
  })
} else {
  t.test("PostgreSQL: an instance killed while holding a shipment's advisory lock: the server releases it and the waiting transition goes on", async (t) => {
    const url = await testDatabase(t, 'killed-holder')
    const app = await buildTestApp(t, { lockTimeoutMs: 30_000 }, url)
    const { shipmentIds: [id, other] } = await orderWithShipments(app, 2)

    const worker = spawnWorker([url, 'hold-lock', String(id)])
    t.equal(await firstLine(worker), 'locked')
    t.same(await advisoryLocks(app), [{ shipment: id, granted: true }], 'the worker holds the transition lock of the shipment')

    let settled = false
    const pending = app.shipments.shipments.update(id, { status: 'shipped' }).finally(() => (settled = true))
    // Wait until the transition is seen waiting for the lock in pg_locks.
    while (!settled && (await advisoryLocks(app, id)).length < 2) await new Promise((resolve) => setTimeout(resolve, 20))
    t.same(await advisoryLocks(app, id), [{ shipment: id, granted: true }, { shipment: id, granted: false }], 'the transition waits for the held lock')
    // Other shipments are not held up by it.
    t.same((await app.shipments.shipments.update(other, { status: 'fulfilled' })).transition?.to, 'fulfilled', 'another shipment transitions meanwhile')
    t.notOk(settled, 'still waiting')
    t.equal((await shipmentRow(app, id)).status, 'new')

    worker.kill('SIGKILL')
    t.same(await exited(worker), { code: null, signal: 'SIGKILL' })
    const result = await pending
    t.same(result.transition && [result.transition.from, result.transition.to], ['new', 'shipped'], 'the waiting transition applied once the server released the lock')
    t.same(await steps(app, id), ['null>new', 'new>shipped'], 'one history row for it')
    t.same(await advisoryLocks(app), [], "no advisory lock left behind: the server released the dead session's lock")
  })
}
