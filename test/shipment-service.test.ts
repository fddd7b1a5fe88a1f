import t from 'tap'
import { buildTestApp, historyRows, insertOrder, shipmentRow } from './fixtures/app.js'
import { ShipmentValidationError, type ShipmentCreatedEvent } from '../src/index.js'

t.test('create: references {order reference}-sNNN, a creation history row, an event each', async (t) => {
  const app = await buildTestApp(t)
  const orderId = await insertOrder(app, { reference: 'ORD-77' })
  const created: ShipmentCreatedEvent[] = []
  app.shipments.events.on('shipmentCreated', (event) => created.push(event))
  const firstBatch = await app.shipments.shipments.create(orderId, { count: 2, userId: '9' })
  const secondBatch = await app.shipments.shipments.create(orderId)
  t.same([...firstBatch, ...secondBatch].map((shipment) => shipment.reference), ['ORD-77-s001', 'ORD-77-s002', 'ORD-77-s003'])
  t.match(await historyRows(app, firstBatch[0].id), [{ fromStatus: null, toStatus: 'new', userId: '9' }])
  t.equal(created.length, 3)
  t.equal(created[0].userId, '9')
  await t.rejects(app.shipments.shipments.create(999_999), { code: 'SHIPMENTS_ORDER_NOT_FOUND', statusCode: 404 })
  await t.rejects(app.shipments.shipments.create(orderId, { count: 0 }), RangeError)
})

t.test('soft delete and restore keep the shipment readable and report it', async (t) => {
  const app = await buildTestApp(t)
  const orderId = await insertOrder(app)
  const [shipment] = await app.shipments.shipments.create(orderId)
  const events: string[] = []
  app.shipments.events.on('shipmentDeleted', () => events.push('deleted'))
  app.shipments.events.on('shipmentRestored', () => events.push('restored'))
  const deleted = await app.shipments.shipments.softDelete(shipment.id)
  t.ok(deleted.dateDeleted)
  const again = await app.shipments.shipments.softDelete(shipment.id)
  t.equal(again.dateDeleted, deleted.dateDeleted, 'deleting twice keeps the first time')
  t.ok((await app.shipments.shipments.get(shipment.id))?.dateDeleted)
  const restored = await app.shipments.shipments.restore(shipment.id)
  t.equal(restored.dateDeleted, null)
  t.equal((await shipmentRow(app, shipment.id)).dateDeleted, null)
  t.same(events, ['deleted', 'deleted', 'restored'])
  await t.rejects(app.shipments.shipments.softDelete(424242), { code: 'SHIPMENTS_SHIPMENT_NOT_FOUND' })
})

t.test('the service validates like the API: hosts and providers share one update path', async (t) => {
  const app = await buildTestApp(t)
  const orderId = await insertOrder(app)
  const [shipment] = await app.shipments.shipments.create(orderId)
  await t.rejects(app.shipments.shipments.update(shipment.id, { status: 'lost' as never }), ShipmentValidationError)
  const result = await app.shipments.shipments.update(shipment.id, { status: 'fulfilled', externalCode: 'F1', integrationHandle: 'erp' }, { userId: '5' })
  t.same(result.transition && { from: result.transition.from, to: result.transition.to }, { from: 'new', to: 'fulfilled' })
  t.match((await historyRows(app, shipment.id))[1], { userId: '5', sourceIntegration: 'erp', sourceExternalCode: 'F1' })
})

t.test('a listener that throws or rejects is logged with the event name and starves no other listener', async (t) => {
  const logLines: string[] = []
  const app = await buildTestApp(t, {}, undefined, logLines)
  const orderId = await insertOrder(app)
  const [shipment] = await app.shipments.shipments.create(orderId)
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)
  process.on('unhandledRejection', onUnhandled)
  t.teardown(() => process.off('unhandledRejection', onUnhandled))

  const reached: string[] = []
  app.shipments.events.on('shipmentStatusChanged', () => {
    reached.push('throwing')
    throw new Error('sync listener failure')
  })
  app.shipments.events.on('shipmentStatusChanged', async () => {
    reached.push('rejecting')
    await Promise.resolve()
    throw new Error('async listener failure')
  })
  app.shipments.events.once('shipmentStatusChanged', () => void reached.push('once'))
  app.shipments.events.on('shipmentStatusChanged', ({ to }) => void reached.push(`last:${to}`))

  const first = await app.shipments.shipments.update(shipment.id, { status: 'in_progress' })
  t.equal(first.shipment.status, 'in_progress', 'the caller gets its result')
  await app.shipments.shipments.update(shipment.id, { status: 'on_hold' })
  await new Promise((resolve) => setImmediate(resolve))

  t.same(reached, ['throwing', 'rejecting', 'once', 'last:in_progress', 'throwing', 'rejecting', 'last:on_hold'])
  t.equal((await shipmentRow(app, shipment.id)).status, 'on_hold', 'the committed changes stand')
  t.equal((await historyRows(app, shipment.id)).length, 3)
  t.same(unhandled, [], 'no rejection escapes to the process')
  const failures = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.event === 'shipmentStatusChanged' && entry.level === 50)
  t.same(
    failures.map((entry) => entry.err.message),
    ['sync listener failure', 'async listener failure', 'sync listener failure', 'async listener failure'],
  )
  t.ok(failures.every((entry) => entry.msg === 'A shipments event listener failed (shipmentStatusChanged)'))
})
