import t, { type Test } from 'tap'
import { count, eq } from 'drizzle-orm'
import { signWebhook } from '../src/index.js'
import * as schema from '../src/db/sqlite/schema.js'
import { buildTestApp, gatewayRefusalCode, historyRows, insertOrder, shipmentRow } from './fixtures/app.js'
import { tables, testDatabase } from './fixtures/database.js'

const SECRET = 'whsec_' + Buffer.from('a-test-signing-secret-of-32-bytes').toString('base64')
const URL = '/actions/shipments/gateway/handle?integration=carrier'
let deliveries = 0
/** The app's clock: a fixed whole second, so tolerance edges are exact and never race the wall clock. */
const NOW_SECONDS = Math.floor(Date.UTC(2026, 10, 22, 12, 0, 0) / 1000)

interface Delivery {
  body: Record<string, unknown> | string
  id?: string
  timestamp?: number
  secret?: string
  signature?: string
}

async function setup(t: Test, logLines?: string[]) {
  const app = await buildTestApp(t, { clock: () => NOW_SECONDS * 1000 }, await testDatabase(t, 'hooks'), logLines)
  await app.shipments.integrations.create({
    name: 'Carrier',
    handle: 'carrier',
    providerId: 'signed-webhook',
    settings: { secret: SECRET },
    statusMap: { in_transit: 'shipped', exception: 'on_hold', cancelled: 'cancelled', picking: 'in_progress' },
  })
  const single = await insertOrder(app, { reference: 'A100' })
  const [singleShipment] = await app.shipments.shipments.create(single)
  const multi = await insertOrder(app, { reference: 'B200' })
  const multiShipments = await app.shipments.shipments.create(multi, { count: 3 })

  const send = (delivery: Delivery) => {
    const raw = typeof delivery.body === 'string' ? delivery.body : JSON.stringify(delivery.body)
    const id = delivery.id ?? `msg_${++deliveries}`
    const timestamp = delivery.timestamp ?? NOW_SECONDS
    return app.inject({
      method: 'POST',
      url: URL,
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': delivery.signature ?? signWebhook(delivery.secret ?? SECRET, id, timestamp, raw),
      },
      payload: raw,
    })
  }
  return { app, send, singleShipment, multiShipments }
}

const event = (overrides: Record<string, unknown> = {}) => ({
  orderNumber: 'A100',
  status: 'in_transit',
  occurredAt: new Date(NOW_SECONDS * 1000).toISOString(),
  trackingNumber: '1Z999',
  carrier: 'UPS',
  ...overrides,
})

const deliveryCount = async (app: Awaited<ReturnType<typeof setup>>['app']) =>
  (await tables(app).db.select({ total: count() }).from(tables(app).schema.webhookDeliveries))[0].total

t.test('a signed event is applied through the update path and recorded with integration and code', async (t) => {
  const { app, send, singleShipment } = await setup(t)
  const response = await send({ body: event({ trackingUrl: 'ups.com/t/1Z999', service: 'Ground' }), id: 'msg_first' })
  t.equal(response.statusCode, 200)
  t.same(response.json(), {
    success: true,
    applied: true,
    deliveryId: 'msg_first',
    shipment: { id: singleShipment.id, reference: 'A100-s001', status: 'shipped' },
  })
  t.match(await shipmentRow(app, singleShipment.id), { status: 'shipped', trackingNumber: '1Z999', trackingUrl: 'https://ups.com/t/1Z999', carrier: 'UPS', service: 'Ground' })
  t.match((await historyRows(app, singleShipment.id)).at(-1), { fromStatus: 'new', toStatus: 'shipped', sourceIntegration: 'carrier', sourceExternalCode: 'in_transit', userId: null })
  t.equal(await deliveryCount(app), 1)
})

t.test('forged, wrongly keyed, unsigned, expired and future deliveries are rejected and change nothing', async (t) => {
  const { app, send, singleShipment } = await setup(t)
  const before = await shipmentRow(app, singleShipment.id)
  const now = NOW_SECONDS
  const cases: Array<[string, Delivery, string]> = [
    ['forged signature', { body: event(), signature: 'v1,' + Buffer.alloc(32, 7).toString('base64') }, 'Webhook signature mismatch.'],
    ['short signature', { body: event(), signature: 'v1,AAAA' }, 'Webhook signature mismatch.'],
    ['other version', { body: event(), signature: 'v2,' + Buffer.alloc(32).toString('base64') }, 'Webhook signature mismatch.'],
    ['wrong secret', { body: event(), secret: 'whsec_' + Buffer.from('another-secret').toString('base64') }, 'Webhook signature mismatch.'],
    ['empty signature header', { body: event(), signature: '' }, 'Missing webhook-id, webhook-timestamp or webhook-signature header.'],
    ['expired', { body: event(), timestamp: now - 301 }, 'Webhook timestamp is outside the allowed tolerance.'],
    ['from the future', { body: event(), timestamp: now + 301 }, 'Webhook timestamp is outside the allowed tolerance.'],
    ['from the far future', { body: event(), timestamp: now + 86_400 }, 'Webhook timestamp is outside the allowed tolerance.'],
    ['unparseable body', { body: '{"orderNumber": "A100",' }, 'Invalid webhook payload: the body is not JSON.'],
    ['not an object', { body: '[1,2]' }, 'Invalid webhook payload: the body must be a JSON object.'],
    ['no order number', { body: event({ orderNumber: undefined }) }, 'Invalid webhook payload: orderNumber is required.'],
    ['bad date', { body: event({ occurredAt: 'yesterday-ish' }) }, 'Invalid webhook payload: occurredAt is not an ISO-8601 date-time.'],
    ['unknown order', { body: event({ orderNumber: 'ZZZ' }) }, 'Unknown order: ZZZ'],
    ['invalid tracking URL', { body: event({ trackingUrl: 'ftp://x.example' }) }, 'Invalid webhook payload: trackingUrl: Tracking Url is not a valid URL.'],
  ]
  for (const [name, delivery, message] of cases) {
    const response = await send(delivery)
    t.equal(response.statusCode, 400, name)
    t.same(response.json(), { name: 'Bad Request', message, code: 0, status: 400, errorCode: gatewayRefusalCode(message) }, name)
  }
  const tampered = await app.inject({
    method: 'POST',
    url: URL,
    headers: { 'webhook-id': 'msg_t', 'webhook-timestamp': String(now), 'webhook-signature': signWebhook(SECRET, 'msg_t', now, JSON.stringify(event())) },
    payload: JSON.stringify(event({ status: 'cancelled' })),
  })
  t.equal(tampered.statusCode, 400, 'a body changed after signing')
  const withoutHeaders = await app.inject({ method: 'POST', url: URL, payload: JSON.stringify(event()) })
  t.equal(withoutHeaders.statusCode, 400)

  t.same(await shipmentRow(app, singleShipment.id), before, 'nothing changed')
  t.equal((await historyRows(app, singleShipment.id)).length, 1)
  t.equal(await deliveryCount(app), 0, 'no rejected delivery is remembered, so a fixed retry can apply')
})

t.test('the tolerance is read against the app clock: 300 s either side applies, 301 does not', async (t) => {
  const { app, send, singleShipment } = await setup(t)
  const edges: Array<[number, number]> = [
    [NOW_SECONDS - 301, 400],
    [NOW_SECONDS + 301, 400],
    [NOW_SECONDS - 300, 200],
    [NOW_SECONDS + 300, 200],
  ]
  for (const [timestamp, status] of edges) {
    const response = await send({ body: event({ status: 'picking', occurredAt: new Date(timestamp * 1000).toISOString() }), timestamp })
    t.equal(response.statusCode, status, `timestamp now${timestamp - NOW_SECONDS >= 0 ? '+' : ''}${timestamp - NOW_SECONDS}`)
  }
  t.equal(await deliveryCount(app), 2, 'only the two deliveries inside the tolerance were recorded')
  t.equal((await shipmentRow(app, singleShipment.id)).status, 'in_progress')
})

t.test('any of several signatures may match (secret rotation)', async (t) => {
  const { app, send, singleShipment } = await setup(t)
  const body = JSON.stringify(event())
  const timestamp = NOW_SECONDS
  const old = signWebhook('whsec_' + Buffer.from('retired-secret').toString('base64'), 'msg_rot', timestamp, body)
  const current = signWebhook(SECRET, 'msg_rot', timestamp, body)
  const response = await send({ body, id: 'msg_rot', timestamp, signature: `${old} ${current}` })
  t.equal(response.statusCode, 200)
  t.equal((await shipmentRow(app, singleShipment.id)).status, 'shipped')
})

t.test('a replayed delivery answers 200 without a second effect', async (t) => {
  const { app, send, singleShipment } = await setup(t)
  const delivery = { body: event({ status: 'picking' }), id: 'msg_replay' }
  t.equal((await send(delivery)).json().applied, true)
  await app.shipments.shipments.update(singleShipment.id, { status: 'on_hold' })
  const replay = await send(delivery)
  t.equal(replay.statusCode, 200)
  t.same(replay.json(), { success: true, applied: false, reason: 'duplicate', deliveryId: 'msg_replay' })
  t.equal((await shipmentRow(app, singleShipment.id)).status, 'on_hold', 'the replay did not move the shipment again')
  t.equal((await historyRows(app, singleShipment.id)).length, 3)
})

t.test('the same delivery arriving many times at once is applied once', async (t) => {
  const { app, send, singleShipment } = await setup(t)
  const body = JSON.stringify(event({ status: 'picking' }))
  const timestamp = NOW_SECONDS
  const responses = await Promise.all(Array.from({ length: 12 }, () => send({ body, id: 'msg_race', timestamp })))
  t.same([...new Set(responses.map((response) => response.statusCode))], [200])
  t.equal(responses.filter((response) => response.json().applied).length, 1)
  t.equal(responses.filter((response) => response.json().reason === 'duplicate').length, 11)
  t.same((await historyRows(app, singleShipment.id)).map((row) => row.toStatus), ['new', 'in_progress'])
  t.equal(await deliveryCount(app), 1)
})

t.test('an older event does not move the status back', async (t) => {
  const { app, send, singleShipment } = await setup(t)
  const later = await send({ body: event({ status: 'in_transit', occurredAt: '2026-05-02T10:00:00Z' }) })
  t.equal(later.json().applied, true)
  const earlier = await send({ body: event({ status: 'picking', occurredAt: '2026-05-02T09:00:00+00:00', trackingNumber: 'OLD' }) })
  t.equal(earlier.statusCode, 200)
  t.same(earlier.json().reason, 'stale-event')
  t.equal(earlier.json().applied, false)
  t.match(await shipmentRow(app, singleShipment.id), { status: 'shipped', trackingNumber: '1Z999' })
  const newer = await send({ body: event({ status: 'exception', occurredAt: '2026-05-02T11:00:00Z' }) })
  t.equal(newer.json().applied, true)
  t.equal((await shipmentRow(app, singleShipment.id)).status, 'on_hold')
  const reference = (await tables(app).db.select().from(tables(app).schema.shipmentExternalReferences).where(eq(tables(app).schema.shipmentExternalReferences.shipmentId, singleShipment.id)))[0]
  t.equal(reference?.lastEventAt?.toISOString(), '2026-05-02T11:00:00.000Z')
})

t.test('an unmapped external code changes nothing and is reported', async (t) => {
  const { app, send, singleShipment } = await setup(t)
  const response = await send({ body: event({ status: 'teleported', trackingNumber: 'NEW' }), id: 'msg_unmapped' })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { success: true, applied: false, reason: 'unmapped-status', externalCode: 'teleported', deliveryId: 'msg_unmapped' })
  t.match(await shipmentRow(app, singleShipment.id), { status: 'new', trackingNumber: null })
})

t.test('shipmentNumber is required when the order has several shipments', async (t) => {
  const { app, send, multiShipments } = await setup(t)
  let response = await send({ body: event({ orderNumber: 'B200' }) })
  t.equal(response.statusCode, 400)
  t.equal(response.json().message, 'Order B200 has 3 shipments: shipmentNumber is required.')
  for (const shipment of multiShipments) t.equal((await shipmentRow(app, shipment.id)).status, 'new')

  for (const [shipmentNumber, index] of [[2, 1], ['003', 2], ['s001', 0], ['B200-s002', 1]] as const) {
    response = await send({ body: event({ orderNumber: 'B200', shipmentNumber, status: 'picking' }) })
    t.equal(response.statusCode, 200, String(shipmentNumber))
    t.equal(response.json().shipment.id, multiShipments[index].id, `${shipmentNumber} names shipment ${index + 1}`)
  }
  response = await send({ body: event({ orderNumber: 'B200', shipmentNumber: 9 }) })
  t.equal(response.statusCode, 400)
  t.equal(response.json().message, 'Unknown shipment 9 of order B200.')
})

t.test('every shipment of an order is reachable by its number, the 101st and the 1,000th included (issue 20)', async (t) => {
  const { app, send } = await setup(t)
  const order = await app.shipments.referenceOrders!.createOrder({ reference: 'C300', isCompleted: true })
  for (let created = 0; created < 1000; created += 100) await app.shipments.shipments.create(order, { count: 100 })
  const [last] = await app.shipments.shipments.create(order, { count: 1 })
  t.equal(last.reference, 'C300-s1001', 'the reference format past s999')
  const byReference = async (reference: string) => (await app.shipments.shipments.list({ orderId: order, search: reference, perPage: 100 })).shipments.find((shipment) => shipment.reference === reference)!
  for (const [shipmentNumber, reference] of [[101, 'C300-s101'], ['s100', 'C300-s100'], ['1000', 'C300-s1000'], ['C300-s1001', 'C300-s1001'], [1, 'C300-s001']] as const) {
    const response = await send({ body: event({ orderNumber: 'C300', shipmentNumber, status: 'picking' }) })
    t.equal(response.statusCode, 200, String(shipmentNumber))
    const target = await byReference(reference)
    t.equal(response.json().shipment.id, target.id, `${shipmentNumber} names ${reference}`)
    t.equal((await shipmentRow(app, target.id)).status, 'in_progress')
  }
  const moved = (await app.shipments.shipments.list({ orderId: order, status: 'in_progress', perPage: 100 })).shipments.map((shipment) => shipment.reference)
  t.same(moved.sort(), ['C300-s001', 'C300-s100', 'C300-s1000', 'C300-s1001', 'C300-s101'], 'each event moved its shipment and no other')
  const unknown = await send({ body: event({ orderNumber: 'C300', shipmentNumber: 1002, status: 'picking' }) })
  t.equal(unknown.statusCode, 400)
  t.equal(unknown.json().message, 'Unknown shipment 1002 of order C300.')
  const several = await send({ body: event({ orderNumber: 'C300', status: 'picking' }) })
  t.equal(several.json().message, 'Order C300 has 1001 shipments: shipmentNumber is required.')

  // The order's reference changes later; its shipments keep theirs, and their numbers still name them.
  await app.shipments.referenceOrders!.updateOrder(order, { reference: 'C300-RENAMED' })
  const renamed = await send({ body: event({ orderNumber: 'C300-RENAMED', shipmentNumber: 2, status: 'picking' }) })
  t.equal(renamed.statusCode, 200, 'shipment 2 of a renamed order')
  t.equal(renamed.json().shipment.id, (await byReference('C300-s002')).id)
})

t.test('the webhook secret never reaches a log line', async (t) => {
  const logLines: string[] = []
  const { send } = await setup(t, logLines)
  await send({ body: event() })
  await send({ body: event(), secret: 'whsec_' + Buffer.from('wrong').toString('base64') })
  await send({ body: '{broken' })
  t.ok(logLines.length > 0)
  const secretBody = SECRET.slice('whsec_'.length)
  t.notOk(logLines.some((line) => line.includes(secretBody) || line.includes(Buffer.from(secretBody, 'base64').toString())))
})

t.test('an event dated beyond the clock skew into the future is refused and does not freeze the shipment (issue 20)', async (t) => {
  const { app, send, singleShipment } = await setup(t)
  const farFuture = await send({ body: event({ occurredAt: '9999-12-31T23:59:59Z' }), id: 'msg_future' })
  t.equal(farFuture.statusCode, 400)
  t.same(farFuture.json(), { name: 'Bad Request', message: 'Invalid webhook payload: occurredAt: Occurred At must be a date at most 5 minutes in the future.', code: 0, status: 400, errorCode: 'SHIPMENTS_VALIDATION_FAILED' })
  const tooEarly = await send({ body: event({ occurredAt: new Date(NOW_SECONDS * 1000 + 5 * 60_000 + 1000).toISOString() }) })
  t.equal(tooEarly.statusCode, 400, 'five minutes and a second ahead is refused')
  t.match(await shipmentRow(app, singleShipment.id), { status: 'new', trackingNumber: null })
  t.equal(await deliveryCount(app), 0, 'no ledger mark for a refused event')

  const withinSkew = await send({ body: event({ status: 'picking', occurredAt: new Date(NOW_SECONDS * 1000 + 4 * 60_000).toISOString() }) })
  t.equal(withinSkew.json().applied, true, 'four minutes ahead is clock skew, applied')
  const genuine = await send({ body: event({ status: 'in_transit', occurredAt: new Date(NOW_SECONDS * 1000 + 4 * 60_000 + 1000).toISOString() }) })
  t.equal(genuine.json().applied, true, 'a genuine later event still applies')
  t.equal((await shipmentRow(app, singleShipment.id)).status, 'shipped')
})

t.test('an unmapped delivery is recorded with its outcome; its replay is a duplicate', async (t) => {
  const { app, send } = await setup(t)
  const first = await send({ body: event({ status: 'teleported' }), id: 'msg_unmapped_twice' })
  t.equal(first.json().reason, 'unmapped-status')
  const again = await send({ body: event({ status: 'teleported' }), id: 'msg_unmapped_twice' })
  t.same(again.json(), { success: true, applied: false, reason: 'duplicate', deliveryId: 'msg_unmapped_twice' })
  const [record] = await app.shipments.integrations.recentDeliveries('carrier')
  t.match(record, { deliveryId: 'msg_unmapped_twice', outcome: 'unmapped-status', reason: 'Unmapped status teleported' })
})
