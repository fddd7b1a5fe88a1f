// ShipStation ship notifications (spec 4.4, 7.3): parameters from anywhere, every content type, the
// tracking entry, repeated notifications, split orders, the opt-in shipment moves, and each error.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { eq } from 'drizzle-orm'
import * as schema from '../src/db/sqlite/schema.js'
import { historyRows, orderRow, shipmentRow } from './fixtures/app.js'
import { basicAuth, buildExchangeApp, EXCHANGE_URL, insertExportOrder } from './fixtures/exchange.js'
import { tables } from './fixtures/database.js'

const notify = (app: FastifyInstance, query: Record<string, string>, body?: string | Buffer, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: `${EXCHANGE_URL}?${new URLSearchParams({ action: 'shipnotify', ...query })}`,
    headers: { ...basicAuth(), ...headers },
    ...(body !== undefined && { payload: body }),
  })

const shipNotice = (fields: Record<string, string>) =>
  `<?xml version="1.0" encoding="utf-8"?>\n<ShipNotice>${Object.entries(fields)
    .map(([name, value]) => `<${name}><![CDATA[${value}]]></${name}>`)
    .join('')}<Recipient><Name>Jane</Name></Recipient><Items><Item><SKU>A</SKU><Quantity>1</Quantity></Item></Items></ShipNotice>`

const stored = async (app: FastifyInstance, orderId: number) => {
  const row = await orderRow(app, orderId)
  return { status: row.statusHandle, tracking: (row.fields as Record<string, unknown>).shippingInfo ?? null, dateUpdated: row.dateUpdated.getTime() }
}

t.test('query parameters: the order moves to the Status Handle and gets one tracking entry', async (t) => {
  const app = await buildExchangeApp(t)
  const orderId = await insertExportOrder(app, { reference: 'SN-1' })
  const events: unknown[] = []
  app.shipments.events.on('shipNotificationRecorded', (event) => events.push(event))

  const response = await notify(app, { order_number: 'SN-1', carrier: 'UPS', service: 'Ground', tracking_number: '1Z999' })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { success: true })
  t.match(await stored(app, orderId), { status: 'shipped', tracking: [{ carrier: 'UPS', service: 'Ground', trackingNumber: '1Z999' }] })
  t.match(events, [{ orderId, orderReference: 'SN-1', status: 'shipped', tracking: { carrier: 'UPS', service: 'Ground', trackingNumber: '1Z999' }, shipmentIds: [] }])

  const second = await notify(app, { order_number: 'SN-1', carrier: 'FedEx', service: '', tracking_number: '7777' })
  t.equal(second.statusCode, 200)
  t.same((await stored(app, orderId)).tracking, [{ carrier: 'FedEx', service: '', trackingNumber: '7777' }], 'a later notification overwrites the one entry')
})

t.test('the same notification twice leaves the state of once: no second save, no second event', async (t) => {
  const app = await buildExchangeApp(t)
  const orderId = await insertExportOrder(app, { reference: 'SN-DUP' })
  let events = 0
  app.shipments.events.on('shipNotificationRecorded', () => events++)
  const query = { order_number: 'SN-DUP', carrier: 'USPS', service: 'Priority', tracking_number: '9400' }
  t.equal((await notify(app, query, shipNotice({ OrderNumber: 'SN-DUP' }), { 'content-type': 'text/xml' })).statusCode, 200)
  const once = await stored(app, orderId)
  await new Promise((resolve) => setTimeout(resolve, 5))
  t.equal((await notify(app, query, shipNotice({ OrderNumber: 'SN-DUP' }), { 'content-type': 'text/xml' })).statusCode, 200)
  t.same(await stored(app, orderId), once, 'status, tracking and dateUpdated unchanged')
  t.equal(events, 1)
})

t.test('no tracking value: the status changes, no entry is created, an existing entry stays', async (t) => {
  const app = await buildExchangeApp(t)
  const bare = await insertExportOrder(app, { reference: 'SN-BARE' })
  t.equal((await notify(app, { order_number: 'SN-BARE', carrier: '', service: '', tracking_number: '' })).statusCode, 200)
  t.same((await stored(app, bare)).status, 'shipped')
  t.equal((await stored(app, bare)).tracking, null)

  const kept = await insertExportOrder(app, { reference: 'SN-KEPT', statusHandle: 'processing', fields: { shippingInfo: [{ carrier: 'DHL', service: 'Paket', trackingNumber: 'JD1' }] } })
  t.equal((await notify(app, { order_number: 'SN-KEPT' })).statusCode, 200)
  t.same((await stored(app, kept)).tracking, [{ carrier: 'DHL', service: 'Paket', trackingNumber: 'JD1' }])
  t.equal((await stored(app, kept)).status, 'shipped')
})

t.test('parameters from the body: ShipNotice XML under any content type (never 415), form and JSON bodies', async (t) => {
  const app = await buildExchangeApp(t)
  const contentTypes = [
    'text/xml',
    'application/xml',
    'application/xml; charset=utf-8',
    'text/xml; charset=UTF-8',
    'application/x-www-form-urlencoded',
    'application/octet-stream',
    'text/plain',
    'application/json',
    'vendor/unknown',
    'xml',
    'text/xml, application/xml',
    'a/b/c',
    '',
    null,
  ]
  for (const [index, contentType] of contentTypes.entries()) {
    const reference = `SN-CT-${index}`
    const orderId = await insertExportOrder(app, { reference })
    const body = shipNotice({ OrderNumber: reference, Carrier: 'UPS', Service: 'Next Day', TrackingNumber: `T${index}` })
    const response = await app.inject({
      method: 'POST',
      url: `${EXCHANGE_URL}?action=shipnotify`,
      headers: { ...basicAuth(), ...(contentType !== null && { 'content-type': contentType }) },
      payload: body,
    })
    t.equal(response.statusCode, 200, `content type ${JSON.stringify(contentType)}`)
    t.same((await stored(app, orderId)).tracking, [{ carrier: 'UPS', service: 'Next Day', trackingNumber: `T${index}` }])
  }

  const formOrder = await insertExportOrder(app, { reference: 'SN-FORM' })
  const form = await app.inject({
    method: 'POST',
    url: `${EXCHANGE_URL}?action=shipnotify`,
    headers: { ...basicAuth(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'order_number=SN-FORM&carrier=USPS&service=Priority+Mail&tracking_number=9400%2011',
  })
  t.equal(form.statusCode, 200)
  t.same((await stored(app, formOrder)).tracking, [{ carrier: 'USPS', service: 'Priority Mail', trackingNumber: '9400 11' }])

  const jsonOrder = await insertExportOrder(app, { reference: 'SN-JSON' })
  const json = await app.inject({
    method: 'POST',
    url: `${EXCHANGE_URL}?action=shipnotify&carrier=FedEx`,
    headers: { ...basicAuth(), 'content-type': 'application/json' },
    payload: JSON.stringify({ order_number: 'SN-JSON', carrier: 'ignored: the query wins', tracking_number: 12345 }),
  })
  t.equal(json.statusCode, 200)
  t.same((await stored(app, jsonOrder)).tracking, [{ carrier: 'FedEx', service: '', trackingNumber: '12345' }])
})

t.test('a split order: an unknown order_number falls back to the order ShipNotice/OrderID names', async (t) => {
  const app = await buildExchangeApp(t)
  const orderId = await insertExportOrder(app, { reference: 'SN-SPLIT' })
  const response = await notify(app, { order_number: 'SN-SPLIT-1', carrier: 'UPS', tracking_number: 'Z1' }, shipNotice({ OrderID: String(orderId), OrderNumber: 'SN-SPLIT-1' }))
  t.equal(response.statusCode, 200)
  t.match(await stored(app, orderId), { status: 'shipped', tracking: [{ carrier: 'UPS', trackingNumber: 'Z1' }] })

  const unknown = await notify(app, { order_number: 'SN-SPLIT-2' }, shipNotice({ OrderID: '999999' }), { accept: 'application/json' })
  t.equal(unknown.statusCode, 404)
  t.same(unknown.json(), { name: 'Not Found', message: 'No order matches order_number SN-SPLIT-2.', code: 0, status: 404, errorCode: 'SHIPMENTS_EXCHANGE_ORDER_NOT_FOUND' })
})

t.test('a missing matrix field or sub-field is logged and skipped; the status still changes', async (t) => {
  const logLines: string[] = []
  const app = await buildExchangeApp(t, { trackingField: { matrix: 'noSuchField' } }, {}, logLines)
  const orderId = await insertExportOrder(app, { reference: 'SN-NOFIELD' })
  t.equal((await notify(app, { order_number: 'SN-NOFIELD', carrier: 'UPS' })).statusCode, 200)
  t.match(await stored(app, orderId), { status: 'shipped', tracking: null })
  t.same((await orderRow(app, orderId)).fields, {})
  t.ok(logLines.some((line) => line.includes('"level":40') && line.includes('noSuchField')), 'a warning names the field')

  const partial = await buildExchangeApp(t, { trackingField: { service: 'serviceLevel' } }, {}, logLines)
  const partialOrder = await insertExportOrder(partial, { reference: 'SN-SUB' })
  t.equal((await notify(partial, { order_number: 'SN-SUB', carrier: 'UPS', service: 'Ground', tracking_number: 'Z9' })).statusCode, 200)
  t.same((await stored(partial, partialOrder)).tracking, [{ carrier: 'UPS', trackingNumber: 'Z9' }], 'the missing sub-field alone is skipped')
  t.ok(logLines.some((line) => line.includes('serviceLevel')))
})

t.test('errors per spec 7.3, HTML by default and JSON on request; a refused notification changes nothing', async (t) => {
  const logLines: string[] = []
  const app = await buildExchangeApp(t, {}, {}, logLines)
  const orderId = await insertExportOrder(app, { reference: 'SN-ERR' })
  const before = await stored(app, orderId)

  const missing = await notify(app, {})
  t.equal(missing.statusCode, 406)
  t.match(missing.headers['content-type'], /^text\/html; charset=utf-8/)
  t.match(missing.body, /<h1>Not Acceptable<\/h1><p>order_number is required\.<\/p>/)
  const empty = await notify(app, { order_number: '  ' }, undefined, { accept: 'application/json' })
  t.equal(empty.statusCode, 406)
  t.same(empty.json(), { name: 'Not Acceptable', message: 'order_number is required.', code: 0, status: 406, errorCode: 'SHIPMENTS_EXCHANGE_MISSING_ORDER_NUMBER' })
  const unknown = await notify(app, { order_number: 'nope <b>' })
  t.equal(unknown.statusCode, 404)
  t.match(unknown.body, /No order matches order_number nope &#60;b&#62;\./, 'the HTML page escapes what the client sent')

  for (const [url, message] of [
    [`${EXCHANGE_URL}`, 'The action parameter is required (export or shipnotify).'],
    [`${EXCHANGE_URL}?action=refund&order_number=SN-ERR`, 'Unknown action: use export or shipnotify.'],
  ]) {
    const response = await app.inject({ method: 'POST', url, headers: { ...basicAuth(), accept: 'application/json' } })
    t.equal(response.statusCode, 400)
    t.same(response.json(), { name: 'Bad Request', message, code: 0, status: 400, errorCode: url === EXCHANGE_URL ? 'SHIPMENTS_EXCHANGE_MISSING_ACTION' : 'SHIPMENTS_EXCHANGE_UNKNOWN_ACTION' })
  }
  t.same(await stored(app, orderId), before)

  const noStatus = await buildExchangeApp(t, { shippedStatus: 'dispatched' }, {}, logLines)
  const noStatusOrder = await insertExportOrder(noStatus, { reference: 'SN-NOSTATUS' })
  const beforeNoStatus = await stored(noStatus, noStatusOrder)
  const failed = await notify(noStatus, { order_number: 'SN-NOSTATUS', carrier: 'UPS' }, undefined, { accept: 'application/json' })
  t.equal(failed.statusCode, 500)
  t.same(failed.json(), { name: 'Internal Server Error', message: 'The shipping notification could not be applied.', code: 0, status: 500, errorCode: 'SHIPMENTS_EXCHANGE_SHIPNOTIFY_FAILED' })
  t.same(await stored(noStatus, noStatusOrder), beforeNoStatus, 'neither the status nor the tracking entry was saved')
  t.ok(logLines.some((line) => line.includes('the Status Handle names no order status') && line.includes('dispatched')))

  const blank = await buildExchangeApp(t, { shippedStatus: '', trackingField: { carrier: '' } }, {}, logLines)
  const blankOrder = await insertExportOrder(blank, { reference: 'SN-BLANK' })
  const blankResponse = await notify(blank, { order_number: 'SN-BLANK' })
  t.equal(blankResponse.statusCode, 500)
  t.notMatch(blankResponse.body, /shippedStatus|trackingField|\.ts:\d+/, 'the reason stays in the log')
  t.equal((await stored(blank, blankOrder)).status, 'processing')
  t.ok(logLines.some((line) => line.includes('"shippedStatus"') && line.includes('"trackingField.carrier"')))
})

t.test('an XML body that is not a readable ShipNotice is refused with a 400 naming why, and changes nothing', async (t) => {
  const logLines: string[] = []
  const app = await buildExchangeApp(t, {}, {}, logLines)
  const orderId = await insertExportOrder(app, { reference: 'SN-DTD' })
  const before = await stored(app, orderId)
  const laughs =
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">' +
    '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><ShipNotice><OrderNumber>&lol3;</OrderNumber><OrderID>1</OrderID></ShipNotice>'
  const attributes = Array.from({ length: 33 }, (_, index) => `a${index}="1"`).join(' ')
  const cases: Array<[string, string | Buffer, string]> = [
    ['a DTD', laughs, 'a DTD is not allowed'],
    ['an external entity', '<!DOCTYPE a [<!ENTITY b SYSTEM "file:///etc/passwd">]><ShipNotice><OrderNumber>&b;</OrderNumber></ShipNotice>', 'a DTD is not allowed'],
    ['truncated', '<ShipNotice><OrderNumber>', 'it is not well-formed XML'],
    ['mismatched tags', '<ShipNotice><OrderNumber>SN-DTD</Carrier></ShipNotice>', 'it is not well-formed XML'],
    ['an undefined entity', '<ShipNotice><OrderNumber>&nope;</OrderNumber></ShipNotice>', 'it is not well-formed XML'],
    ['trailing content', '<ShipNotice></ShipNotice><ShipNotice></ShipNotice>', 'it is not well-formed XML'],
    ['another document', '<Order><OrderNumber>SN-DTD</OrderNumber></Order>', 'the root element is Order, not ShipNotice'],
    ['nesting 17 deep', '<ShipNotice>' + '<a>'.repeat(16) + '</a>'.repeat(16) + '</ShipNotice>', 'elements nest deeper than 16 levels'],
    ['5,000 deep (slow in DOM parsers)', '<ShipNotice>' + '<a>'.repeat(5000) + '</a>'.repeat(5000) + '</ShipNotice>', 'elements nest deeper than 16 levels'],
    ['10,001 elements', '<ShipNotice>' + '<a/>'.repeat(10_000) + '</ShipNotice>', 'it has more than 10000 elements'],
    ['33 attributes', `<ShipNotice><Items ${attributes}/></ShipNotice>`, 'an element has more than 32 attributes'],
    ['an unknown encoding', '<?xml version="1.0" encoding="x-klingon"?><ShipNotice/>', 'the declared encoding "x-klingon" is not supported'],
    ['bytes that are not UTF-8', Buffer.concat([Buffer.from('<ShipNotice><Carrier>'), Buffer.from([0xff, 0xfe, 0x80]), Buffer.from('</Carrier></ShipNotice>')]), 'it is not valid utf-8'],
  ]
  for (const [name, body, reason] of cases) {
    const response = await notify(app, { order_number: 'SN-DTD', tracking_number: 'T-DTD' }, body, { 'content-type': 'application/xml', accept: 'application/json' })
    t.equal(response.statusCode, 400, name)
    t.match(response.json(), { name: 'Bad Request', code: 0, status: 400 }, name)
    t.ok(response.json().message.startsWith(`The ShipNotice XML body cannot be read: ${reason}`), `${name}: ${response.json().message}`)
  }
  t.same(await stored(app, orderId), before, 'no refused notification changed the order')
  t.notOk(logLines.some((line) => line.includes('"level":50')), 'refusals are not errors of the package')

  const notXml = await notify(app, {}, '\u0000\u0001binary', { 'content-type': 'application/octet-stream' })
  t.equal(notXml.statusCode, 406, 'a body that is not XML is read as parameters, and has none')
})

t.test('a ShipNotice in the encoding it declares, or its byte order mark says, is read in that encoding', async (t) => {
  const app = await buildExchangeApp(t)
  const latin = await insertExportOrder(app, { reference: 'SN-LATIN' })
  const utf16 = await insertExportOrder(app, { reference: 'SN-UTF16' })
  const latinBody = Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><ShipNotice><OrderNumber>SN-LATIN</OrderNumber><Carrier>Deutsche Post</Carrier><Service>Bücherpost</Service><TrackingNumber>LAT1</TrackingNumber></ShipNotice>', 'latin1')
  let response = await notify(app, {}, latinBody, { 'content-type': 'text/xml' })
  t.equal(response.statusCode, 200)
  t.match(await stored(app, latin), { status: 'shipped', tracking: [{ carrier: 'Deutsche Post', service: 'Bücherpost', trackingNumber: 'LAT1' }] })

  const utf16Body = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<?xml version="1.0" encoding="UTF-16"?><ShipNotice><OrderNumber>SN-UTF16</OrderNumber><Service>Écopli</Service></ShipNotice>', 'utf16le')])
  response = await notify(app, {}, utf16Body, { 'content-type': 'application/xml' })
  t.equal(response.statusCode, 200)
  t.match(await stored(app, utf16), { status: 'shipped', tracking: [{ service: 'Écopli' }] })
})

t.test('updateShipments: open shipments move to shipped through the update path, tagged shipnotify', async (t) => {
  const app = await buildExchangeApp(t, { updateShipments: true, integrationHandle: 'shipstation-main' })
  const orderId = await insertExportOrder(app, { reference: 'SN-SHIP' })
  const [open, alreadyShipped, cancelled, onHold] = await app.shipments.shipments.create(orderId, { count: 4 })
  await app.shipments.shipments.update(alreadyShipped.id, { status: 'shipped', carrier: 'Old' })
  await app.shipments.shipments.update(cancelled.id, { status: 'cancelled' })
  await app.shipments.shipments.update(onHold.id, { status: 'on_hold' })
  const events: Array<{ shipmentIds: number[] }> = []
  app.shipments.events.on('shipNotificationRecorded', (event) => events.push(event))

  const query = { order_number: 'SN-SHIP', carrier: 'UPS', service: '', tracking_number: '1Z1' }
  t.equal((await notify(app, query)).statusCode, 200)
  for (const shipment of [open, onHold]) {
    t.match(await shipmentRow(app, shipment.id), { status: 'shipped', carrier: 'UPS', service: null, trackingNumber: '1Z1' })
    t.match((await historyRows(app, shipment.id)).at(-1), { toStatus: 'shipped', sourceIntegration: 'shipstation-main', sourceExternalCode: 'shipnotify' })
  }
  t.match(await shipmentRow(app, alreadyShipped.id), { status: 'shipped', carrier: 'Old' })
  t.equal((await shipmentRow(app, cancelled.id)).status, 'cancelled')
  t.same(events.map((event) => event.shipmentIds.sort()), [[open.id, onHold.id].sort()])
  t.equal((await orderRow(app, orderId)).statusHandle, 'shipped')

  const rowsBefore = (await tables(app).db.select().from(tables(app).schema.shipmentStatusHistory).where(eq(tables(app).schema.shipmentStatusHistory.shipmentId, open.id))).length
  t.equal((await notify(app, query)).statusCode, 200)
  t.equal((await historyRows(app, open.id)).length, rowsBefore, 'a repeated notification moves nothing again')
  t.equal(events.length, 1)
})

t.test('without updateShipments, shipments are left alone', async (t) => {
  const app = await buildExchangeApp(t)
  const orderId = await insertExportOrder(app, { reference: 'SN-NOSHIP' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  t.equal((await notify(app, { order_number: 'SN-NOSHIP', carrier: 'UPS' })).statusCode, 200)
  t.equal((await shipmentRow(app, shipment.id)).status, 'new')
  t.equal((await historyRows(app, shipment.id)).length, 1)
})

t.test('the same notification arriving several times at once: one change, one history row per shipment', async (t) => {
  const app = await buildExchangeApp(t, { updateShipments: true })
  const orderId = await insertExportOrder(app, { reference: 'SN-RACE' })
  const shipments = await app.shipments.shipments.create(orderId, { count: 2 })
  const moved: number[] = []
  app.shipments.events.on('shipNotificationRecorded', (event) => moved.push(...event.shipmentIds))
  const query = { order_number: 'SN-RACE', carrier: 'UPS', service: 'Ground', tracking_number: '1ZRACE' }
  const responses = await Promise.all(Array.from({ length: 6 }, () => notify(app, query, shipNotice({ OrderNumber: 'SN-RACE' }))))
  t.same(responses.map((response) => response.statusCode), [200, 200, 200, 200, 200, 200])
  t.match(await stored(app, orderId), { status: 'shipped', tracking: [{ carrier: 'UPS', service: 'Ground', trackingNumber: '1ZRACE' }] })
  for (const shipment of shipments) {
    t.same((await historyRows(app, shipment.id)).map((row) => row.toStatus), ['new', 'shipped'], `shipment ${shipment.id} moved once`)
  }
  t.same(moved.sort(), shipments.map((shipment) => shipment.id).sort(), 'the events report each shipment moved exactly once')
  t.equal((await tables(app).db.select().from(tables(app).schema.orders).where(eq(tables(app).schema.orders.id, orderId))).length, 1)
})

t.test('updateShipments with a Status Handle that names no status: a 500 and no shipment moved', async (t) => {
  const app = await buildExchangeApp(t, { updateShipments: true, shippedStatus: 'dispatched' })
  const orderId = await insertExportOrder(app, { reference: 'SN-NOSTATUS-SHIP' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const response = await notify(app, { order_number: 'SN-NOSTATUS-SHIP', carrier: 'UPS' })
  t.equal(response.statusCode, 500)
  t.equal((await shipmentRow(app, shipment.id)).status, 'new')
  t.equal((await historyRows(app, shipment.id)).length, 1)
  t.equal((await orderRow(app, orderId)).statusHandle, 'processing')
})

t.test('updateShipments: the Status Handle wins over the shipments\' own order advance', async (t) => {
  const app = await buildExchangeApp(t, { updateShipments: true, shippedStatus: 'shipped' }, { shippedOrderStatus: 'processing' })
  const orderId = await insertExportOrder(app, { reference: 'SN-ADVANCE', statusHandle: 'processing' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const advanced: string[] = []
  app.shipments.events.on('orderAdvanced', (event) => advanced.push(event.status))
  t.equal((await notify(app, { order_number: 'SN-ADVANCE', tracking_number: 'T1' })).statusCode, 200)
  t.equal((await shipmentRow(app, shipment.id)).status, 'shipped')
  t.same(advanced, ['processing'], 'the advance happened')
  t.match(await stored(app, orderId), { status: 'shipped', tracking: [{ trackingNumber: 'T1' }] })
})

t.test('repeated parameters count once with their first value; action and parameters may come from a form body', async (t) => {
  const app = await buildExchangeApp(t)
  const orderId = await insertExportOrder(app, { reference: 'SN-REPEAT' })
  const repeated = await app.inject({
    method: 'POST',
    url: `${EXCHANGE_URL}?action=shipnotify&action=export&order_number=SN-REPEAT&order_number=other&carrier=UPS&carrier=DHL`,
    headers: basicAuth(),
  })
  t.equal(repeated.statusCode, 200)
  t.match(await stored(app, orderId), { status: 'shipped', tracking: [{ carrier: 'UPS' }] })

  const formOrder = await insertExportOrder(app, { reference: 'SN-FORM-ACTION' })
  const form = await app.inject({
    method: 'POST',
    url: EXCHANGE_URL,
    headers: { ...basicAuth(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'action=shipnotify&order_number=SN-FORM-ACTION&tracking_number=F1',
  })
  t.equal(form.statusCode, 200)
  t.match(await stored(app, formOrder), { status: 'shipped', tracking: [{ trackingNumber: 'F1' }] })
})
