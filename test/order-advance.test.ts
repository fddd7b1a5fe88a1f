// The order advance when the last shipment is shipped: refused while its order status is missing,
// and never recorded as done when it failed.
import t from 'tap'
import { eq } from 'drizzle-orm'
import type { OrderStore } from '../src/index.js'
import { buildTestApp, historyRows, orderRow, orderWithShipments, postUpdate, shipmentRow } from './fixtures/app.js'
import { tables } from './fixtures/database.js'

t.test('shippedOrderStatus naming no status: the move to shipped is a 422 naming it, and changes nothing', async (t) => {
  const logLines: string[] = []
  const app = await buildTestApp(t, { shippedOrderStatus: 'delivered' }, undefined, logLines)
  const { orderId, shipmentIds: [id] } = await orderWithShipments(app)
  const refused = await postUpdate(app, id, { status: 'shipped', carrier: 'UPS' })
  t.equal(refused.statusCode, 422)
  t.same(refused.json(), { success: false, error: `Couldn't update shipment ${id}: the order status "delivered" (shippedOrderStatus) does not exist. Create it first.`, errorCode: 'SHIPMENTS_UPDATE_REJECTED' })
  t.match(await shipmentRow(app, id), { status: 'new', carrier: null })
  t.equal((await historyRows(app, id)).length, 1)
  t.ok(logLines.some((line) => line.includes('"level":50') && line.includes('"shippedOrderStatus":"delivered"')), 'the misconfiguration is logged as an error')

  const editor = await postUpdate(app, id, { status: 'shipped' }, 'editor')
  t.equal(editor.statusCode, 403, 'a user who may not ship gets the 403 and learns nothing of the configuration')
  t.equal((await postUpdate(app, id, { status: 'in_progress' })).statusCode, 200, 'other moves are not affected')

  const { db, schema } = tables(app)
  await db.insert(schema.orderStatuses).values({ handle: 'delivered', name: 'Delivered' })
  const shipped = await postUpdate(app, id, { status: 'shipped' })
  t.equal(shipped.statusCode, 200)
  t.equal((await orderRow(app, orderId)).statusHandle, 'delivered', 'once the status exists, the order advances')
})

t.test('an advance that fails is retried by the outbox until the order store takes it, and advances once', async (t) => {
  let failing = true
  const statuses: string[] = []
  const order = { id: 7, reference: 'ADV-7', statusHandle: 'processing', isCompleted: true }
  const store: OrderStore = {
    findOrder: async (id) => (id === 7 ? { ...order } : null),
    findOrderByReference: async (reference) => (reference === 'ADV-7' ? { ...order } : null),
    async setOrderStatus(_id, status) {
      if (failing) throw new Error('the order service is down')
      statuses.push(status)
    },
  }
  const app = await buildTestApp(t, { orderStore: store })
  const [shipment] = await app.shipments.shipments.create(7)
  const advanced: unknown[] = []
  app.shipments.events.on('orderAdvanced', (event) => advanced.push(event))

  t.equal((await postUpdate(app, shipment.id, { status: 'shipped' })).statusCode, 200, 'the shipment is shipped')
  t.same(statuses, [])
  t.same(advanced, [])
  const [job] = await app.shipments.outbox.list({ kind: 'job', name: 'orderAdvance' })
  t.match(job, { state: 'pending', attempts: 1, lastError: 'the order service is down', payload: { orderId: 7, status: 'shipped', shipmentId: shipment.id } })
  const { attemptLog } = (await app.shipments.outbox.get(job.id))!
  t.match(attemptLog, [{ statusCode: null, error: 'the order service is down' }], 'the attempt is logged')

  failing = false
  // The first retry comes due after about a second (1 s ± 20 %).
  for (let waited = 0; statuses.length === 0 && waited < 5000; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    await app.shipments.outbox.sweep()
  }
  t.same(statuses, ['shipped'], 'the retry advanced the order')
  t.match(advanced, [{ orderId: 7, status: 'shipped', shipmentId: shipment.id, eventId: `${job.id}:advanced` }])
  t.match(await app.shipments.outbox.get(job.id), { state: 'done', attempts: 2 })
  const { db, schema } = tables(app)
  t.equal((await db.select().from(schema.orderAdvances).where(eq(schema.orderAdvances.orderId, 7))).length, 1, 'the claim is recorded once')

  await postUpdate(app, shipment.id, { status: 'fulfilled' })
  t.equal((await postUpdate(app, shipment.id, { status: 'shipped' })).statusCode, 200)
  await app.shipments.outbox.sweep()
  t.same(statuses, ['shipped'], 'shipped again, the order is not advanced twice')
  t.equal(advanced.length, 1)
})
