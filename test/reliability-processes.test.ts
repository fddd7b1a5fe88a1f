import { join } from 'node:path'
import { readdirSync } from 'node:fs'
import t from 'tap'
import { buildTestApp, historyRows, orderWithShipments, shipmentRow } from './fixtures/app.js'
import { firstLine, spawnWorker } from './fixtures/processes.js'
import { rawQuery, testDatabase, TEST_ENGINE } from './fixtures/database.js'

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

t.test('a process killed with SIGKILL mid-transition leaves no partial history and no stuck lock', async (t) => {
  const databaseFile = await testDatabase(t, 'killed')
  let app = await buildTestApp(t, {}, databaseFile)
  const { shipmentIds } = await orderWithShipments(app, 3)
  await app.close()

  const worker = spawnWorker([databaseFile, 'loop', shipmentIds.join(',')])
  t.equal(await firstLine(worker), 'looping')
  await new Promise((resolve) => setTimeout(resolve, 700))
  worker.kill('SIGKILL')
  await new Promise((resolve) => worker.on('exit', resolve))

  app = await buildTestApp(t, { lockTimeoutMs: 15_000 }, databaseFile)
  for (const id of shipmentIds) {
    const row = await shipmentRow(app, id)
    const history = await historyRows(app, id)
    t.ok(history.length > 1, `shipment ${id} moved before the kill`)
    history.forEach((entry, index) => {
      if (index > 0) t.equal(entry.fromStatus, history[index - 1].toStatus, `shipment ${id}: unbroken chain`)
    })
    t.equal(row.status, history.at(-1)!.toStatus, `shipment ${id}: status and history agree (no partial transaction)`)
    const response = await app.inject({ url: `/shipments/api/shipments/${id}`, headers: { 'x-test-user': 'viewer' } })
    t.equal(response.statusCode, 200, `shipment ${id} is readable`)
  }
  // Any lock the killed process held goes stale and is taken over; the update must not time out.
  const target = (await shipmentRow(app, shipmentIds[0])).status === 'cancelled' ? 'on_hold' : 'cancelled'
  const results = await Promise.all(shipmentIds.map((id) => app.shipments.shipments.update(id, { status: target })))
  t.ok(results.every((result) => result.shipment.status === target), 'every shipment transitions after the restart')
  if (TEST_ENGINE === 'sqlite') {
    t.same(readdirSync(`${databaseFile}-locks`).filter((name) => name.endsWith('.lock')), [], 'no lock file left behind')
  } else {
    const held = await rawQuery(app, "SELECT count(*)::int AS held FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")
    t.same(held, [{ held: 0 }], 'no advisory lock left behind: the server released the dead session\'s locks')
  }
})
