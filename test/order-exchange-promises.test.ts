// README promises of the order exchange (interface B) that no other test pins down: the ship
// notification's body limit, the export's other date formats, the service called without HTTP, and
// a repeated form parameter keeping its first value.
import { Readable } from 'node:stream'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import type { ShipNotificationRecordedEvent } from '../src/index.js'
import { orderRow } from './fixtures/app.js'
import { basicAuth, buildExchangeApp, child, EXCHANGE_URL, exportedOrders, exportRequest, insertExportOrder, parseXml, textOf } from './fixtures/exchange.js'
import { snapshotDatabase } from './fixtures/hostile.js'

/** Records the shipNotificationRecorded events of an app. */
function recordedNotifications(app: FastifyInstance) {
  const events: ShipNotificationRecordedEvent[] = []
  app.shipments.events.on('shipNotificationRecorded', (event) => events.push(event))
  return events
}

const tracking = async (app: FastifyInstance, orderId: number) => ((await orderRow(app, orderId)).fields as Record<string, unknown>).shippingInfo

/**
 * A ShipNotice of exactly `bytes` bytes of UTF-8, padded with two-byte characters: its length in
 * characters is well under its length in bytes, so a limit counted in characters would let it through.
 */
function shipNoticeOfBytes(bytes: number, orderNumber: string, trackingNumber: string): string {
  const head = `<ShipNotice><OrderNumber>${orderNumber}</OrderNumber><TrackingNumber>${trackingNumber}</TrackingNumber><Note>`
  const tail = '</Note></ShipNotice>'
  const padding = bytes - Buffer.byteLength(head + tail)
  const body = head + 'é'.repeat(Math.floor(padding / 2)) + 'x'.repeat(padding % 2) + tail
  if (Buffer.byteLength(body) !== bytes) throw new Error('padding went wrong')
  return body
}

const postNotice = (app: FastifyInstance, query: string, body: string, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: `${EXCHANGE_URL}?action=shipnotify${query}`,
    headers: { ...basicAuth(), 'content-type': 'application/xml', ...headers },
    payload: body,
  })

t.test('bodyLimit: one byte over is a 413 that changes nothing; exactly at the limit is applied', async (t) => {
  const LIMIT = 600
  const app = await buildExchangeApp(t, { bodyLimit: LIMIT })
  const orderId = await insertExportOrder(app, { reference: 'BL-1', dateUpdated: new Date('2020-02-01T10:00:00Z') })
  const events = recordedNotifications(app)
  const before = await snapshotDatabase(app)
  const orderBefore = await orderRow(app, orderId)

  // The query alone would ship the order: only the body's size can stop it.
  const tooLarge = shipNoticeOfBytes(LIMIT + 1, 'BL-1', 'BODY-1')
  t.ok(tooLarge.length < LIMIT, 'fewer characters than the limit: the limit counts bytes')
  const html = await postNotice(app, '&order_number=BL-1&tracking_number=QUERY-1', tooLarge)
  t.equal(html.statusCode, 413)
  t.equal(html.headers['content-type'], 'text/html; charset=utf-8')
  t.match(html.body, '<title>413 Payload Too Large</title>')
  t.match(html.body, '<h1>Payload Too Large</h1><p>Request body is too large</p>')
  const json = await postNotice(app, '&order_number=BL-1&tracking_number=QUERY-1', tooLarge, { accept: 'application/json' })
  t.equal(json.statusCode, 413)
  t.match(json.headers['content-type'], /^application\/json/)
  t.same(json.json(), { name: 'Payload Too Large', message: 'Request body is too large', code: 0, status: 413, errorCode: 'SHIPMENTS_BODY_TOO_LARGE' })
  // Without a Content-Length the limit still holds, counted while the body streams in.
  const chunked = await app.inject({
    method: 'POST',
    url: `${EXCHANGE_URL}?action=shipnotify&order_number=BL-1&tracking_number=QUERY-2`,
    headers: { ...basicAuth(), 'content-type': 'application/xml', 'transfer-encoding': 'chunked' },
    payload: Readable.from([Buffer.from(tooLarge)]),
  })
  t.equal(chunked.statusCode, 413)
  t.match(chunked.body, '<h1>Payload Too Large</h1>')
  t.same(await orderRow(app, orderId), orderBefore, 'status, fields and dateUpdated unchanged')
  t.equal(await snapshotDatabase(app), before, 'nothing else changed either')
  t.same(events, [])

  const atLimit = await postNotice(app, '', shipNoticeOfBytes(LIMIT, 'BL-1', 'BODY-2'))
  t.equal(atLimit.statusCode, 200)
  t.same(atLimit.json(), { success: true })
  const after = await orderRow(app, orderId)
  t.equal(after.statusHandle, 'shipped')
  t.same(await tracking(app, orderId), [{ carrier: '', service: '', trackingNumber: 'BODY-2' }], 'read from the body at the limit')
  t.ok(after.dateUpdated.getTime() > orderBefore.dateUpdated.getTime())
  t.equal(events.length, 1)
})

t.test('bodyLimit defaults to 1 MiB', async (t) => {
  const app = await buildExchangeApp(t)
  const orderId = await insertExportOrder(app, { reference: 'BL-DEFAULT' })
  const orderBefore = await orderRow(app, orderId)
  const over = await postNotice(app, '&order_number=BL-DEFAULT', shipNoticeOfBytes(1_048_577, 'BL-DEFAULT', 'BIG'), { accept: 'application/json' })
  t.equal(over.statusCode, 413)
  t.same(over.json(), { name: 'Payload Too Large', message: 'Request body is too large', code: 0, status: 413, errorCode: 'SHIPMENTS_BODY_TOO_LARGE' })
  t.same(await orderRow(app, orderId), orderBefore)

  const at = await postNotice(app, '', shipNoticeOfBytes(1_048_576, 'BL-DEFAULT', 'BIG'))
  t.equal(at.statusCode, 200)
  t.same(at.json(), { success: true })
  t.equal((await orderRow(app, orderId)).statusHandle, 'shipped')
  t.same(await tracking(app, orderId), [{ carrier: '', service: '', trackingNumber: 'BIG' }])
})

// The README's window: exclusive at both ends, at whole seconds; `17:28` starts at 17:28:01 and
// `09:15` ends before 09:15:59. Every format names the same window, so the same orders come out.
const START = Date.UTC(2026, 0, 23, 17, 28) // 01/23/2026 17:28 UTC
const END = Date.UTC(2026, 0, 24, 9, 15) // 01/24/2026 09:15 UTC
const EDGES: Record<string, number> = {
  'before-start': START - 1000,
  'start-minute': START, // the start itself: out
  'start-999ms': START + 999, // still second :00: out
  'start-1s': START + 1000, // first second in
  'end-58.999s': END + 58_999, // last instant in
  'end-59s': END + 59_000, // the end itself: out
  'end-59.5s': END + 59_500, // still second :59: out
  'after-end': END + 60_000,
}
const INSIDE = ['start-1s', 'end-58.999s']

async function appWithEdges(t: Test, timezone?: string) {
  const app = await buildExchangeApp(t, {}, timezone ? { timezone } : {})
  for (const [reference, instant] of Object.entries(EDGES)) await insertExportOrder(app, { reference, dateUpdated: new Date(instant) })
  return app
}
async function windowOf(t: Test, app: FastifyInstance, start_date: string, end_date: string) {
  const response = await exportRequest(app, { start_date, end_date })
  t.equal(response.statusCode, 200, `${start_date} .. ${end_date}`)
  t.equal(response.headers['content-type'], 'text/xml; charset=utf-8')
  return exportedOrders(response.body).numbers
}

t.test('export dates as yyyy/MM/dd HH:mm and Unix seconds filter like MM/dd/yyyy HH:mm', async (t) => {
  const app = await appWithEdges(t)
  const unix = (instant: number) => String(instant / 1000)
  t.same(await windowOf(t, app, '01/23/2026 17:28', '01/24/2026 09:15'), INSIDE, 'the reference window')
  t.same(await windowOf(t, app, '2026/01/23 17:28', '2026/01/24 09:15'), INSIDE, 'yyyy/MM/dd HH:mm')
  t.same(await windowOf(t, app, unix(START), unix(END)), INSIDE, 'Unix seconds on the minute')
  // Seconds inside a minute are floored away like those of MM/dd/yyyy HH:mm:ss.
  t.same(await windowOf(t, app, unix(START + 45_000), unix(END + 10_000)), INSIDE, 'Unix seconds inside the minute')
  t.same(await windowOf(t, app, '01/23/2026 17:28:45', '01/24/2026 09:15:10'), INSIDE, 'MM/dd/yyyy with seconds, for comparison')
})

t.test('on a non-UTC site yyyy/MM/dd is wall time there, like MM/dd/yyyy; Unix seconds are an instant', async (t) => {
  // 17:28 UTC on 2026-01-23 is 12:28 in New York (EST, UTC-5).
  const app = await appWithEdges(t, 'America/New_York')
  t.same(await windowOf(t, app, '01/23/2026 12:28', '01/24/2026 04:15'), INSIDE, 'MM/dd/yyyy in New York')
  t.same(await windowOf(t, app, '2026/01/23 12:28', '2026/01/24 04:15'), INSIDE, 'yyyy/MM/dd in New York')
  t.same(await windowOf(t, app, String(START / 1000), String(END / 1000)), INSIDE, 'Unix seconds name the same instants anywhere')
})

t.test('exportPage called directly: the document as a string, window, store, page and origin applied', async (t) => {
  const app = await buildExchangeApp(t, { storeField: 'store', pageSize: 1 })
  const exchange = app.shipments.orderExchange
  if (!exchange) throw new Error('orderExchange is configured, so the service exists')
  const item = { sku: 'D', name: 'Direct', quantity: 1, price: '3.00', imageUrl: '/img/d.jpg' }
  await insertExportOrder(app, { reference: 'D-OUT', fields: { store: 'retail' }, dateUpdated: new Date('2026-03-01T09:00:00Z') }, { items: [item] })
  await insertExportOrder(app, { reference: 'D-1', fields: { store: 'retail' }, dateUpdated: new Date('2026-03-02T09:00:00Z') }, { items: [item] })
  await insertExportOrder(app, { reference: 'D-2', fields: { store: 'retail' }, dateUpdated: new Date('2026-03-02T10:00:00Z') }, { items: [item] })
  await insertExportOrder(app, { reference: 'D-OTHER', fields: { store: 'wholesale' }, dateUpdated: new Date('2026-03-02T09:30:00Z') }, { items: [item] })

  const request = { startDate: '03/01/2026 12:00', endDate: '03/03/2026 00:00', store: 'retail', origin: 'https://direct.example' }
  const first = await exchange.exportPage({ ...request, page: '1' })
  t.match(first, /^<\?xml version="1\.0" encoding="utf-8"\?>\n<Orders pages="2">/)
  const { pages, numbers, orders } = exportedOrders(first)
  t.same([pages, numbers], [2, ['D-1']])
  t.equal(textOf(orders[0], 'LastModified'), '3/2/2026 09:00')
  t.equal(textOf(child(orders[0], 'Items').children[0], 'ImageUrl'), 'https://direct.example/img/d.jpg', 'relative URLs resolve against the given origin')
  t.same(exportedOrders(await exchange.exportPage({ ...request, page: '2' })).numbers, ['D-2'])
  t.same(exportedOrders(await exchange.exportPage({ ...request, page: '3' })), { pages: 2, orders: [], numbers: [] })
  t.same(parseXml(await exchange.exportPage({ origin: 'https://direct.example', store: 'wholesale' })).children.map((order) => textOf(order, 'OrderNumber')), ['D-OTHER'])

  // The same coded error the route renders as a 400.
  await t.rejects(exchange.exportPage({ ...request, endDate: '02/30/2026 10:00' }), {
    statusCode: 400,
    code: 'SHIPMENTS_EXCHANGE_INVALID_DATE',
    message: 'end_date is not a date.',
  })
})

t.test('shipNotify called directly: status, one tracking entry and the event, once', async (t) => {
  const app = await buildExchangeApp(t)
  const exchange = app.shipments.orderExchange
  if (!exchange) throw new Error('orderExchange is configured, so the service exists')
  const orderId = await insertExportOrder(app, { reference: 'DN-1', dateUpdated: new Date('2020-03-01T00:00:00Z') })
  const bystander = await insertExportOrder(app, { reference: 'DN-2' })
  const bystanderBefore = await orderRow(app, bystander)
  const events = recordedNotifications(app)

  const parameters = { orderNumber: 'DN-1', carrier: 'UPS', service: 'Ground', trackingNumber: '1Z-DIRECT', orderId: null }
  t.equal(await exchange.shipNotify(parameters), undefined)
  const once = await orderRow(app, orderId)
  t.equal(once.statusHandle, 'shipped')
  t.same(await tracking(app, orderId), [{ carrier: 'UPS', service: 'Ground', trackingNumber: '1Z-DIRECT' }])
  t.ok(once.dateUpdated.getTime() > new Date('2020-03-01T00:00:00Z').getTime(), 'the order was saved')
  t.same(events, [
    {
      orderId,
      orderReference: 'DN-1',
      status: 'shipped',
      tracking: { carrier: 'UPS', service: 'Ground', trackingNumber: '1Z-DIRECT' },
      shipmentIds: [],
      eventId: (events[0] as { eventId: string }).eventId,
    },
  ])
  t.match(await app.shipments.outbox.get((events[0] as { eventId: string }).eventId), { name: 'shipNotificationRecorded', orderingKey: `order:${orderId}` }, 'the event is in the outbox')
  t.same(await orderRow(app, bystander), bystanderBefore, 'no other order touched')

  // The same notification again: the state of once, no save, no event.
  await exchange.shipNotify(parameters)
  t.same(await orderRow(app, orderId), once)
  t.equal(events.length, 1)

  // The split-order fallback works without HTTP too: the number is unknown, OrderID names the order.
  await exchange.shipNotify({ orderNumber: 'DN-2-1', carrier: null, service: null, trackingNumber: 'SPLIT', orderId: String(bystander) })
  t.equal((await orderRow(app, bystander)).statusHandle, 'shipped')
  t.same(await tracking(app, bystander), [{ carrier: '', service: '', trackingNumber: 'SPLIT' }])
  t.match(events[1], { orderId: bystander, orderReference: 'DN-2', tracking: { trackingNumber: 'SPLIT' } })

  const untouched = await snapshotDatabase(app)
  await t.rejects(exchange.shipNotify({ orderNumber: null, carrier: 'UPS', service: null, trackingNumber: null, orderId: null }), {
    statusCode: 406,
    code: 'SHIPMENTS_EXCHANGE_MISSING_ORDER_NUMBER',
  })
  await t.rejects(exchange.shipNotify({ orderNumber: 'NOPE', carrier: 'UPS', service: null, trackingNumber: null, orderId: null }), {
    statusCode: 404,
    message: 'No order matches order_number NOPE.',
  })
  t.equal(await snapshotDatabase(app), untouched, 'a refused notification changes nothing')
  t.equal(events.length, 2)
})

t.test('a form parameter sent twice counts once, with its first value', async (t) => {
  const app = await buildExchangeApp(t)
  const first = await insertExportOrder(app, { reference: 'FORM-A' })
  const second = await insertExportOrder(app, { reference: 'FORM-B' })
  const secondBefore = await orderRow(app, second)
  const events = recordedNotifications(app)
  const form = (payload: string, query = '?action=shipnotify') =>
    app.inject({
      method: 'POST',
      url: `${EXCHANGE_URL}${query}`,
      headers: { ...basicAuth(), 'content-type': 'application/x-www-form-urlencoded' },
      payload,
    })

  // The last value would ship FORM-B with DHL: both orders are checked so either mistake shows.
  const response = await form('order_number=FORM-A&order_number=FORM-B&carrier=UPS&carrier=DHL&tracking_number=F1')
  t.equal(response.statusCode, 200)
  t.same(response.json(), { success: true })
  t.equal((await orderRow(app, first)).statusHandle, 'shipped')
  t.same(await tracking(app, first), [{ carrier: 'UPS', service: '', trackingNumber: 'F1' }])
  t.same(await orderRow(app, second), secondBefore, 'FORM-B unchanged: status, fields, dateUpdated')
  t.same(events.map((event) => event.orderReference), ['FORM-A'])

  // `action` read from the body follows the same rule: the first, shipnotify, not export.
  const third = await insertExportOrder(app, { reference: 'FORM-C' })
  const actionTwice = await form('action=shipnotify&action=export&order_number=FORM-C&order_number=FORM-B', '')
  t.equal(actionTwice.statusCode, 200)
  t.same(actionTwice.json(), { success: true })
  t.equal((await orderRow(app, third)).statusHandle, 'shipped')
  t.same(await orderRow(app, second), secondBefore)
  t.same(events.map((event) => event.orderReference), ['FORM-A', 'FORM-C'])

  // A JSON object has one value per key: a repeated key keeps the last, as JSON.parse reads it.
  const json = await app.inject({
    method: 'POST',
    url: `${EXCHANGE_URL}?action=shipnotify`,
    headers: { ...basicAuth(), 'content-type': 'application/json' },
    payload: '{"order_number":"FORM-A","order_number":"FORM-B","carrier":"FedEx"}',
  })
  t.equal(json.statusCode, 200)
  t.same(json.json(), { success: true })
  t.equal((await orderRow(app, second)).statusHandle, 'shipped')
  t.same(await tracking(app, second), [{ carrier: 'FedEx', service: '', trackingNumber: '' }])
  t.same(await tracking(app, first), [{ carrier: 'UPS', service: '', trackingNumber: 'F1' }], 'FORM-A keeps its entry')
  t.same(events.map((event) => event.orderReference), ['FORM-A', 'FORM-C', 'FORM-B'])
})

t.test('a query parameter sent twice counts once, with its first value', async (t) => {
  const app = await buildExchangeApp(t)
  const first = await insertExportOrder(app, { reference: 'QUERY-A' })
  const second = await insertExportOrder(app, { reference: 'QUERY-B' })
  const secondBefore = await orderRow(app, second)
  const events = recordedNotifications(app)
  const response = await app.inject({
    method: 'POST',
    url: `${EXCHANGE_URL}?action=shipnotify&order_number=QUERY-A&order_number=QUERY-B&carrier=UPS&carrier=DHL`,
    headers: basicAuth(),
  })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { success: true })
  t.equal((await orderRow(app, first)).statusHandle, 'shipped')
  t.same(await tracking(app, first), [{ carrier: 'UPS', service: '', trackingNumber: '' }])
  t.same(await orderRow(app, second), secondBefore, 'QUERY-B unchanged: status, fields, dateUpdated')
  t.same(events.map((event) => event.orderReference), ['QUERY-A'])
})
