// Paths the feature tests do not take, each with its promised answer: odd date forms, bodies of odd
// shapes, a provider answering without a body, and failures of the host's own order store.
import t from 'tap'
import { migrate, type OrderStore } from '../src/index.js'
import { buildTestApp, insertOrder, orderWithShipments, postUpdate, shipmentRow } from './fixtures/app.js'
import { basicAuth, buildExchangeApp, EXCHANGE_URL, exportRequest, insertExportOrder } from './fixtures/exchange.js'

t.test('date forms at their edges: offsets beyond 18 hours, AM/PM hours beyond 12, impossible days', async (t) => {
  const app = await buildTestApp(t, { shipmentFields: [{ handle: 'note', type: 'text' }] })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  for (const value of ['2026-04-28T10:00+19:00', '2026-04-28T10:00-18:01', { date: 20260428 }, { date: '2026-02-30' }, { date: '2026-04-28', time: '24:00' }]) {
    const response = await postUpdate(app, id, { dateScheduledShip: value })
    t.equal(response.statusCode, 422, JSON.stringify(value))
    t.same(response.json().errors, { dateScheduledShip: ['Date Scheduled Ship is not a valid date.'] })
  }
  const edge = await postUpdate(app, id, { dateScheduledShip: '2026-04-28T10:00+18:00' })
  t.equal(edge.json().shipment.dateScheduledShip, '2026-04-27T16:00:00+00:00', 'an offset of exactly 18 hours is read')
  const notText = await postUpdate(app, id, { fields: { note: 42 }, shippingNotes: 7 })
  t.same(notText.json().errors, { shippingNotes: ['Shipping Notes must be a string.'], 'fields.note': ['Note must be a string.'] })

  const exchange = await buildExchangeApp(t)
  for (const value of ['01/23/2026 13:00 PM', '01/23/2026 00:30 AM']) {
    const response = await exportRequest(exchange, { start_date: value, end_date: '01/24/2026 09:15' }, { accept: 'application/json' })
    t.equal(response.statusCode, 400, value)
    t.same(response.json(), { name: 'Bad Request', message: 'start_date is not a date.', code: 0, status: 400, errorCode: 'SHIPMENTS_EXCHANGE_INVALID_DATE' })
  }
})

t.test('the service reads an absent update body as an empty one', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const before = await shipmentRow(app, id)
  const result = await app.shipments.shipments.update(id, undefined as never) // a JavaScript caller's missing input
  t.equal(result.transition, null)
  t.match(await shipmentRow(app, id), { status: before.status, carrier: before.carrier })
})

t.test('ship notification bodies of odd shapes: UTF-16 big-endian XML, a JSON array', async (t) => {
  const app = await buildExchangeApp(t)
  const orderId = await insertExportOrder(app, { reference: 'RP-BE' })
  const bigEndian = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('<ShipNotice><OrderNumber>RP-BE</OrderNumber><Carrier>Royal Mail</Carrier></ShipNotice>', 'utf16le').swap16()])
  const notify = (payload: Buffer | string, contentType: string) =>
    app.inject({ method: 'POST', url: `${EXCHANGE_URL}?action=shipnotify`, headers: { ...basicAuth(), 'content-type': contentType, accept: 'application/json' }, payload })
  const response = await notify(bigEndian, 'application/xml')
  t.equal(response.statusCode, 200)
  const { db, schema } = (await import('./fixtures/database.js')).tables(app)
  const { eq } = await import('drizzle-orm')
  const [row] = await db.select().from(schema.orders).where(eq(schema.orders.id, orderId))
  t.match(row, { statusHandle: 'shipped', fields: { shippingInfo: [{ carrier: 'Royal Mail' }] } })

  const array = await notify('["order_number", "RP-BE"]', 'application/json')
  t.equal(array.statusCode, 406, 'a JSON body that is not an object carries no parameters')
  t.same(array.json(), { name: 'Not Acceptable', message: 'order_number is required.', code: 0, status: 406, errorCode: 'SHIPMENTS_EXCHANGE_MISSING_ORDER_NUMBER' })
})

t.test('signed webhooks: a shipmentNumber that is neither a string nor a number is refused', async (t) => {
  const secret = 'whsec_' + Buffer.from('a-test-signing-secret-of-32-bytes').toString('base64')
  const now = 1_790_000_000
  const app = await buildTestApp(t, { clock: () => now * 1000 })
  await app.shipments.integrations.create({ name: 'C', handle: 'c', providerId: 'signed-webhook', settings: { secret }, statusMap: { x: 'shipped' } })
  const { signWebhook } = await import('../src/index.js')
  const body = JSON.stringify({ orderNumber: 'A', status: 'x', occurredAt: '2026-11-22T12:00:00Z', shipmentNumber: { n: 1 } })
  const response = await app.inject({
    method: 'POST',
    url: '/actions/shipments/gateway/handle?integration=c',
    headers: { 'webhook-id': 'm1', 'webhook-timestamp': String(now), 'webhook-signature': signWebhook(secret, 'm1', now, body) },
    payload: body,
  })
  t.equal(response.statusCode, 400)
  t.same(response.json(), { name: 'Bad Request', message: 'Invalid webhook payload: shipmentNumber must be a string or a number.', code: 0, status: 400, errorCode: 'SHIPMENTS_INTEGRATION_ERROR' })
})

t.test('a provider that answers without a body or status sends an empty 200', async (t) => {
  const { defineProvider } = await import('../src/index.js')
  const { Type } = await import('@sinclair/typebox')
  const quiet = defineProvider({ id: 'quiet', settingsSchema: Type.Object({}), async handleGatewayRequest() {
    return {}
  } })
  const app = await buildTestApp(t, { providers: [quiet] })
  await app.shipments.integrations.create({ name: 'Q', handle: 'q', providerId: 'quiet' })
  const response = await app.inject({ url: '/actions/shipments/gateway/handle?integration=q' })
  t.equal(response.statusCode, 200)
  t.equal(response.body, '')
})

/** A host order store over one in-memory order, whose methods fail on demand. */
function failingOrderStore(fail: { setOrderStatus?: boolean; exportOrders?: boolean }): OrderStore & { statuses: string[] } {
  const order = { id: 1, reference: 'H-1', statusHandle: 'processing', isCompleted: true }
  const statuses: string[] = []
  return {
    statuses,
    async findOrder(id) {
      return id === 1 ? { ...order } : null
    },
    async findOrderByReference(reference) {
      return reference === 'H-1' ? { ...order } : null
    },
    async setOrderStatus(_id, status) {
      if (fail.setOrderStatus) throw new Error('the host order table is locked')
      statuses.push(status)
    },
    async exportOrders() {
      if (fail.exportOrders) throw new Error('the host order database is down')
      return { orders: [], total: 0 }
    },
    async recordShipNotification() {
      return { changed: false, trackingSkipped: null }
    },
  } satisfies OrderStore & { statuses: string[] }
}

t.test('a host store that fails the order advance: the shipment is shipped, the failure logged and left to retry', async (t) => {
  const logLines: string[] = []
  const store = failingOrderStore({ setOrderStatus: true })
  const app = await buildTestApp(t, { orderStore: store }, undefined, logLines)
  const [shipment] = await app.shipments.shipments.create(1)
  const response = await postUpdate(app, shipment.id, { status: 'shipped' })
  t.equal(response.statusCode, 200)
  t.equal(response.json().shipment.status, 'shipped')
  t.equal((await shipmentRow(app, shipment.id)).status, 'shipped')
  const failures = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'Could not advance the order of a shipped shipment; it will be retried')
  t.match(failures, [{ level: 50, orderId: 1, status: 'shipped', err: { message: 'the host order table is locked' } }])
  t.match((await app.shipments.outbox.list({ kind: 'job' })).filter((job) => job.name === 'orderAdvance'), [{ name: 'orderAdvance', state: 'pending', attempts: 1, lastError: 'the host order table is locked' }])
})

t.test('a host store that fails the export: a 500 with the generic message, the cause in the log', async (t) => {
  const logLines: string[] = []
  const app = await buildExchangeApp(t, {}, { orderStore: failingOrderStore({ exportOrders: true }) }, logLines)
  const response = await exportRequest(app, {}, { accept: 'application/json' })
  t.equal(response.statusCode, 500)
  t.same(response.json(), { name: 'Internal Server Error', message: 'An internal error occurred.', code: 0, status: 500, errorCode: 'SHIPMENTS_INTERNAL_ERROR' })
  t.ok(logLines.some((line) => line.includes('the host order database is down') && line.includes('"level":50')))
})

t.test('migrate() refuses what is not a supported database, with a TypeError naming it', async (t) => {
  await t.rejects(migrate({} as never), { name: 'TypeError', message: /^migrate\(\): the database / })
  await t.rejects(migrate('shop.sqlite' as never), { name: 'TypeError' })
})

t.test('orders inserted for the tests are found by the reference store', async (t) => {
  const app = await buildTestApp(t)
  const orderId = await insertOrder(app, { reference: 'RP-REF' })
  t.match(await app.shipments.orders.findOrderByReference('RP-REF'), { id: orderId, reference: 'RP-REF' })
})
