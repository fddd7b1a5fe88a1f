import t, { type Test } from 'tap'
import { buildTestApp, historyRows, orderWithShipments, postUpdate, shipmentRow } from './fixtures/app.js'
import { firstLine, spawnWorker } from './fixtures/processes.js'
import { testDatabase } from './fixtures/database.js'
import type { ShipmentStatus } from '../src/index.js'

/** Each history row starts where the one before it ended. */
function assertUnbrokenChain(t: Test, rows: Array<{ fromStatus: string | null; toStatus: string }>) {
  rows.forEach((row, index) => {
    if (index > 0) t.equal(row.fromStatus, rows[index - 1].toStatus, `row ${index} continues the chain`)
  })
}


t.test('50 concurrent requests for the same target: one history row, one event', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  let events = 0
  app.shipments.events.on('shipmentStatusChanged', () => events++)
  const responses = await Promise.all(Array.from({ length: 50 }, () => postUpdate(app, id, { status: 'shipped' })))
  t.same([...new Set(responses.map((response) => response.statusCode))], [200])
  t.ok(responses.every((response) => response.json().shipment.status === 'shipped'))
  t.same((await historyRows(app, id)).map((row) => row.toStatus), ['new', 'shipped'])
  t.equal(events, 1)
})

t.test('concurrent requests for different targets serialize, one row each', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  let events = 0
  app.shipments.events.on('shipmentStatusChanged', () => events++)
  const targets = Array.from({ length: 40 }, (_, index) => (index % 2 === 0 ? 'in_progress' : 'on_hold'))
  const responses = await Promise.all(targets.map((status) => postUpdate(app, id, { status })))
  t.same([...new Set(responses.map((response) => response.statusCode))], [200])
  const rows = await historyRows(app, id)
  t.equal(rows.length, 41, 'every alternating request was a real transition')
  t.equal(events, 40)
  assertUnbrokenChain(t, rows)
  t.equal((await shipmentRow(app, id)).status, rows.at(-1)!.toStatus)
})

t.test('two Node processes on one database keep one unbroken history', async (t) => {
  const databaseFile = await testDatabase(t, 'shared')
  const app = await buildTestApp(t, {}, databaseFile)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const targets = Array.from({ length: 30 }, (_, index) => ['in_progress', 'on_hold', 'shipped'][index % 3])

  const child = spawnWorker([databaseFile, 'transitions', String(id), ...targets])
  const childOutcome = firstLine(child)
  const localOutcomes = await Promise.all(
    [...targets].reverse().map((status) => app.shipments.shipments.update(id, { status: status as ShipmentStatus }).then((result) => (result.transition ? 'changed' : 'unchanged'))),
  )
  const remoteOutcomes: string[] = JSON.parse(await childOutcome)
  t.notOk(remoteOutcomes.some((outcome) => outcome.startsWith('error')), 'no lock or SQLITE_BUSY error reached a caller')

  const changes = [...localOutcomes, ...remoteOutcomes].filter((outcome) => outcome === 'changed').length
  const rows = await historyRows(app, id)
  t.equal(rows.length, changes + 1, 'history rows equal the real transitions (plus creation)')
  assertUnbrokenChain(t, rows)
  t.equal((await shipmentRow(app, id)).status, rows.at(-1)!.toStatus)
})

t.test('the transition lock holds across processes: a lock held by another process times the request out', async (t) => {
  const databaseFile = await testDatabase(t, 'locked')
  const app = await buildTestApp(t, { lockTimeoutMs: 300 }, databaseFile)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const holder = spawnWorker([databaseFile, 'hold-lock', String(id)])
  t.teardown(() => holder.kill())
  t.equal(await firstLine(holder), 'locked')

  const response = await postUpdate(app, id, { status: 'shipped' })
  t.equal(response.statusCode, 422)
  t.same(response.json(), {
    success: false,
    error: `Couldn't update shipment ${id} right now because another update is in progress. Please try again.`,
    errorCode: 'SHIPMENTS_UPDATE_REJECTED',
  })
  t.equal((await shipmentRow(app, id)).status, 'new')

  holder.stdin!.end()
  await new Promise((resolve) => holder.on('exit', resolve))
  const retry = await postUpdate(app, id, { status: 'shipped' })
  t.equal(retry.statusCode, 200, 'the released lock is free again')
  t.equal((await shipmentRow(app, id)).status, 'shipped')
})
