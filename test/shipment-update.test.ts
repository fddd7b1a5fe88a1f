import t from 'tap'
import { rawQuery } from './fixtures/database.js'
import { buildTestApp, historyRows, orderRow, orderWithShipments, postUpdate, shipmentRow, as } from './fixtures/app.js'
import type { ShipmentStatusChangedEvent, OrderAdvancedEvent } from '../src/index.js'

const SPEC_SHIPMENT_KEYS = [
  'id',
  'reference',
  'orderId',
  'status',
  'dateShipped',
  'dateScheduledShip',
  'trackingNumber',
  'trackingUrl',
  'carrier',
  'service',
  'fulfillmentNotes',
  'shippingNotes',
  'enabled',
  'fields',
  // Beyond spec 2.1: the order lines the shipment holds (empty for an order-level shipment).
  'items',
].sort()

t.test('200: applies every field and returns the spec 2.1 shipment', async (t) => {
  const app = await buildTestApp(t, { shipmentFields: [{ handle: 'warehouse', type: 'text' }] })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const response = await postUpdate(app, id, {
    trackingNumber: ' 1Z999 ',
    trackingUrl: 'ups.com/track?n=1Z999',
    carrier: 'UPS',
    service: 'Ground',
    dateScheduledShip: '2026-04-28',
    fulfillmentNotes: 'Pick from aisle 4',
    shippingNotes: 'Fragile',
    fields: { warehouse: 'Leeds' },
    somethingUnknown: 'ignored',
  })
  t.equal(response.statusCode, 200)
  const body = response.json()
  t.equal(body.success, true)
  t.same(Object.keys(body.shipment).sort(), SPEC_SHIPMENT_KEYS, 'exactly the fields of spec 2.1, and items')
  t.match(body.shipment, {
    id,
    status: 'new',
    trackingNumber: '1Z999',
    trackingUrl: 'https://ups.com/track?n=1Z999',
    carrier: 'UPS',
    service: 'Ground',
    dateScheduledShip: '2026-04-28T00:00:00+00:00',
    fulfillmentNotes: 'Pick from aisle 4',
    shippingNotes: 'Fragile',
    enabled: true,
    fields: { warehouse: 'Leeds' },
  })
  const row = await shipmentRow(app, id)
  t.equal(row.trackingUrl, 'https://ups.com/track?n=1Z999')
  t.equal(row.dateScheduledShip?.toISOString(), '2026-04-28T00:00:00.000Z')
  t.same(row.fields, { warehouse: 'Leeds' })
  t.equal((await historyRows(app, id)).length, 1, 'no status change, no history row beyond creation')
})

t.test('null or absent leaves a value unchanged; an empty string clears it', async (t) => {
  const app = await buildTestApp(t, { shipmentFields: [{ handle: 'warehouse', type: 'text' }] })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  await postUpdate(app, id, { carrier: 'DHL', service: 'Express', trackingUrl: 'dhl.com', dateScheduledShip: 0, fields: { warehouse: 'A' } })

  let response = await postUpdate(app, id, { carrier: null, service: null, fields: { warehouse: null } })
  t.equal(response.statusCode, 200)
  t.match(response.json().shipment, { carrier: 'DHL', service: 'Express', fields: { warehouse: 'A' } })

  response = await postUpdate(app, id, { carrier: '', trackingUrl: '', dateScheduledShip: '', fields: { warehouse: '' } })
  t.equal(response.statusCode, 200)
  t.match(response.json().shipment, { carrier: null, service: 'Express', trackingUrl: null, dateScheduledShip: null, fields: {} })
  const row = await shipmentRow(app, id)
  t.equal(row.carrier, null)
  t.equal(row.trackingUrl, null)
  t.equal(row.dateScheduledShip, null)
  t.same(row.fields, {})
})

t.test('a POST without a body changes nothing and answers 200', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const before = await shipmentRow(app, id)
  const response = await app.inject({ method: 'POST', url: `/shipments/api/shipments/${id}`, headers: as('admin') })
  t.equal(response.statusCode, 200)
  t.equal(response.json().shipment.status, 'new')
  t.equal((await shipmentRow(app, id)).status, before.status)
})

t.test('422 per-field validation envelope, with the messages of the original system', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const before = await shipmentRow(app, id)
  const long = 'x'.repeat(256)
  const response = await postUpdate(app, id, {
    status: 'lost',
    trackingUrl: 'ftp://example.com/file',
    trackingNumber: long,
    carrier: long,
    service: long,
    fulfillmentNotes: 42,
    dateScheduledShip: 'next thursday-ish',
  })
  t.equal(response.statusCode, 422)
  t.same(response.json(), {
    success: false,
    errors: {
      trackingNumber: ['Tracking Number should contain at most 255 characters.'],
      carrier: ['Carrier should contain at most 255 characters.'],
      service: ['Service should contain at most 255 characters.'],
      fulfillmentNotes: ['Fulfillment Notes must be a string.'],
      trackingUrl: ['Tracking Url is not a valid URL.'],
      dateScheduledShip: ['Date Scheduled Ship is not a valid date.'],
      targetStatusCode: ['Target Status Code is invalid.'],
    },
    errorCode: 'SHIPMENTS_VALIDATION_FAILED',
  })
  t.same(await shipmentRow(app, id), before, 'a rejected update changes nothing')
  t.equal((await historyRows(app, id)).length, 1)
})

t.test('a scheme-relative tracking URL is stored with https; a leading path or extra slashes name no host and are the 422', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  let response = await postUpdate(app, id, { trackingUrl: '//carrier.example/track?n=1' })
  t.equal(response.statusCode, 200)
  t.equal(response.json().shipment.trackingUrl, 'https://carrier.example/track?n=1')
  t.equal((await shipmentRow(app, id)).trackingUrl, 'https://carrier.example/track?n=1', 'stored once with its scheme, never https:////')
  for (const trackingUrl of ['///evil.example/x', '/track?n=1', '\\evil.example', 'https:///evil.example', 'http://\\evil.example/x']) {
    response = await postUpdate(app, id, { trackingUrl })
    t.equal(response.statusCode, 422, trackingUrl)
    t.same(response.json(), { success: false, errors: { trackingUrl: ['Tracking Url is not a valid URL.'] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' }, trackingUrl)
  }
  t.equal((await shipmentRow(app, id)).trackingUrl, 'https://carrier.example/track?n=1', 'refusals changed nothing')
})

t.test('max lengths count characters, not bytes, and apply to the URL as stored', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const emoji255 = '📦'.repeat(255)
  let response = await postUpdate(app, id, { trackingNumber: emoji255, carrier: 'x'.repeat(255) })
  t.equal(response.statusCode, 200)
  t.equal((await shipmentRow(app, id)).trackingNumber, emoji255)

  // 247 characters plus "https://" is 255; 248 plus the scheme is 256.
  const host = (length: number) => `${'a'.repeat(length - 4)}.com`
  response = await postUpdate(app, id, { trackingUrl: host(247) })
  t.equal(response.statusCode, 200)
  t.equal((await shipmentRow(app, id)).trackingUrl, `https://${host(247)}`)
  response = await postUpdate(app, id, { trackingUrl: host(248) })
  t.equal(response.statusCode, 422)
  t.same(response.json().errors, { trackingUrl: ['Tracking Url should contain at most 255 characters.'] })
  t.equal((await shipmentRow(app, id)).trackingUrl, `https://${host(247)}`)
})

t.test('trackingUrl: https by default, http(s) only, a dotted host', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const cases: Array<[string, string | null]> = [
    ['http://tracking.example.com/1', 'http://tracking.example.com/1'],
    ['HTTPS://Tracking.Example.com/1?a=b#c', 'HTTPS://Tracking.Example.com/1?a=b#c'],
    ['example.com/track/1', 'https://example.com/track/1'],
    ['localhost/track', null],
    ['javascript:alert(1)', null],
    ['ftp://example.com', null],
    ['https://exa mple.com', null],
    ['https://.com', null],
    ['mailto:ops@example.com', null],
  ]
  for (const [input, stored] of cases) {
    const response = await postUpdate(app, id, { trackingUrl: input })
    if (stored === null) {
      t.equal(response.statusCode, 422, `${input} is rejected`)
      t.same(response.json(), { success: false, errors: { trackingUrl: ['Tracking Url is not a valid URL.'] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' })
    } else {
      t.equal(response.statusCode, 200, `${input} is accepted`)
      t.equal(response.json().shipment.trackingUrl, stored)
      t.equal((await shipmentRow(app, id)).trackingUrl, stored)
    }
  }
})

t.test('now, today, tomorrow and yesterday are read from the app clock, in the site timezone', async (t) => {
  // Half a second before midnight UTC, which is already the next morning in Tokyo: a date computed
  // from the wall clock, or in the wrong zone, lands on the wrong day.
  const instant = Date.UTC(2026, 10, 22, 23, 59, 59, 500)
  const expectations: Record<string, Record<string, string>> = {
    UTC: {
      now: '2026-11-22T23:59:59+00:00',
      today: '2026-11-22T00:00:00+00:00',
      tomorrow: '2026-11-23T00:00:00+00:00',
      yesterday: '2026-11-21T00:00:00+00:00',
    },
    'Asia/Tokyo': {
      now: '2026-11-23T08:59:59+09:00',
      today: '2026-11-23T00:00:00+09:00',
      tomorrow: '2026-11-24T00:00:00+09:00',
      yesterday: '2026-11-22T00:00:00+09:00',
    },
  }
  for (const [timezone, expected] of Object.entries(expectations)) {
    const app = await buildTestApp(t, { timezone, clock: () => instant })
    const { shipmentIds: [id] } = await orderWithShipments(app)
    for (const [input, output] of Object.entries(expected)) {
      const response = await postUpdate(app, id, { dateScheduledShip: input })
      t.equal(response.statusCode, 200, `${timezone}: ${input}`)
      t.equal(response.json().shipment.dateScheduledShip, output, `${timezone}: ${input} -> ${output}`)
      t.equal((await shipmentRow(app, id)).dateScheduledShip?.getTime(), Date.parse(output), `${timezone}: ${input} stored`)
    }
    t.equal((await shipmentRow(app, id)).updatedAt.getTime(), instant, 'the update time comes from the same clock')
  }
})

t.test('dateScheduledShip in every accepted form', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const cases: Array<[unknown, string]> = [
    ['2026-04-28', '2026-04-28T00:00:00+00:00'],
    ['2026-04-28T10:15', '2026-04-28T10:15:00+00:00'],
    ['2026-04-28T10:15:30Z', '2026-04-28T10:15:30+00:00'],
    ['2026-04-28T10:15:30+02:00', '2026-04-28T08:15:30+00:00'],
    ['2026-04-28 10:15:30-0530', '2026-04-28T15:45:30+00:00'],
    ['2026-04-28T10:15:30.123456Z', '2026-04-28T10:15:30+00:00'],
    [1777334400, '2026-04-28T00:00:00+00:00'],
    ['1777334400', '2026-04-28T00:00:00+00:00'],
    [{ date: '2026-04-28', time: '09:30', timezone: 'Europe/Paris' }, '2026-04-28T07:30:00+00:00'],
    [{ date: '2026-04-28' }, '2026-04-28T00:00:00+00:00'],
  ]
  for (const [input, expected] of cases) {
    const response = await postUpdate(app, id, { dateScheduledShip: input })
    t.equal(response.statusCode, 200, `${JSON.stringify(input)} is accepted`)
    const output = response.json().shipment.dateScheduledShip
    t.equal(output, expected, `${JSON.stringify(input)} -> ${expected}`)
    t.equal((await shipmentRow(app, id)).dateScheduledShip?.getTime(), Date.parse(output))
  }
  for (const invalid of ['2026-02-30', '2026-13-01', '28/04/2026', 'soon', 1.5, true, [], { date: 'x' }, { date: '2026-04-28', timezone: 'Mars/Base' }]) {
    const response = await postUpdate(app, id, { dateScheduledShip: invalid })
    t.equal(response.statusCode, 422, `${JSON.stringify(invalid)} is rejected`)
    t.same(response.json().errors, { dateScheduledShip: ['Date Scheduled Ship is not a valid date.'] })
  }
})

t.test('dates are written with the site timezone offset', async (t) => {
  const app = await buildTestApp(t, { timezone: 'America/New_York' })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  let response = await postUpdate(app, id, { dateScheduledShip: '2026-07-01T16:00:00Z' })
  t.equal(response.json().shipment.dateScheduledShip, '2026-07-01T12:00:00-04:00')
  response = await postUpdate(app, id, { dateScheduledShip: '2026-01-15' })
  t.equal(response.json().shipment.dateScheduledShip, '2026-01-14T19:00:00-05:00', 'no offset means UTC')
  t.equal((await shipmentRow(app, id)).dateScheduledShip?.toISOString(), '2026-01-15T00:00:00.000Z')
})

t.test('fields go through the declared layout; an unknown handle is a 422 on that field', async (t) => {
  const app = await buildTestApp(t, {
    shipmentFields: [
      { handle: 'packageCount', type: 'number' },
      { handle: 'giftWrapped', type: 'boolean' },
      { handle: 'warehouse', type: 'text', maxLength: 5 },
      { handle: 'pickedOn', type: 'date' },
      { handle: 'meta', type: 'json' },
    ],
  })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  let response = await postUpdate(app, id, {
    fields: { packageCount: 2, giftWrapped: true, warehouse: 'LDS', pickedOn: '2026-05-01', meta: { bins: [1, 2] } },
  })
  t.equal(response.statusCode, 200)
  const expected = { packageCount: 2, giftWrapped: true, warehouse: 'LDS', pickedOn: '2026-05-01T00:00:00.000Z', meta: { bins: [1, 2] } }
  t.same(response.json().shipment.fields, expected)
  t.same((await shipmentRow(app, id)).fields, expected)

  response = await postUpdate(app, id, { carrier: 'UPS', fields: { nope: 1, packageCount: 'two', giftWrapped: 'yes', warehouse: 'Leeds-2' } })
  t.equal(response.statusCode, 422)
  t.same(response.json(), {
    success: false,
    errors: {
      'fields.nope': ['Unknown field "nope".'],
      'fields.packageCount': ['Package Count must be a number.'],
      'fields.giftWrapped': ['Gift Wrapped must be a boolean.'],
      'fields.warehouse': ['Warehouse should contain at most 5 characters.'],
    },
    errorCode: 'SHIPMENTS_VALIDATION_FAILED',
  })
  t.same((await shipmentRow(app, id)).fields, expected, 'nothing stored')
  t.equal((await shipmentRow(app, id)).carrier, null, 'not even the valid fields of the request')

  response = await postUpdate(app, id, { fields: ['x'] })
  t.equal(response.statusCode, 422)
  t.same(response.json().errors, { fields: ['Fields must be an object of field handles and values.'] })
})

t.test('a status change writes one history row with message, user, integration and external code', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app, 2)
  const seen: ShipmentStatusChangedEvent[] = []
  app.shipments.events.on('shipmentStatusChanged', (event) => seen.push(event))
  const response = await postUpdate(app, id, {
    status: 'in_progress',
    statusMessage: 'Picked up by the 3PL',
    integrationHandle: 'acme-3pl',
    externalCode: 'PICKING',
  })
  t.equal(response.statusCode, 200)
  t.equal(response.json().shipment.status, 'in_progress')
  const rows = await historyRows(app, id)
  t.equal(rows.length, 2)
  t.match(rows[1], {
    fromStatus: 'new',
    toStatus: 'in_progress',
    message: 'Picked up by the 3PL',
    userId: 'admin',
    sourceIntegration: 'acme-3pl',
    sourceExternalCode: 'PICKING',
  })
  t.equal(seen.length, 1)
  t.match(seen[0], {
    from: 'new',
    to: 'in_progress',
    message: 'Picked up by the 3PL',
    userId: 'admin',
    sourceIntegration: 'acme-3pl',
    externalCode: 'PICKING',
    historyId: rows[1].id,
    shipment: { id, status: 'in_progress' },
  })
})

t.test('a transition to the current status writes no history row and fires no event (spec 3.2)', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  let events = 0
  app.shipments.events.on('shipmentStatusChanged', () => events++)
  const response = await postUpdate(app, id, { status: 'new', statusMessage: 'no-op', carrier: 'UPS' })
  t.equal(response.statusCode, 200)
  t.equal(response.json().shipment.carrier, 'UPS')
  t.equal((await historyRows(app, id)).length, 1)
  t.equal(events, 0)
})

t.test('any status may follow any other, and none requires a field', async (t) => {
  const app = await buildTestApp(t, { shippedOrderStatus: null })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const path = ['cancelled', 'new', 'shipped', 'on_hold', 'fulfilled', 'in_progress', 'cancelled', 'shipped', 'new']
  for (const status of path) {
    const response = await postUpdate(app, id, { status })
    t.equal(response.statusCode, 200, `-> ${status}`)
    t.equal((await shipmentRow(app, id)).status, status)
  }
  t.same(
    (await historyRows(app, id)).map((row) => [row.fromStatus, row.toStatus]),
    [[null, 'new'], ...path.map((status, index) => [index === 0 ? 'new' : path[index - 1], status])],
  )
})

t.test('reaching shipped sets dateShipped once, at the first transition', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  t.equal((await shipmentRow(app, id)).dateShipped, null)
  let response = await postUpdate(app, id, { status: 'shipped' })
  const firstShipped = response.json().shipment.dateShipped
  t.match(firstShipped, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/)
  await postUpdate(app, id, { status: 'new' })
  await new Promise((resolve) => setTimeout(resolve, 1100))
  response = await postUpdate(app, id, { status: 'shipped' })
  t.equal(response.json().shipment.dateShipped, firstShipped)
  t.equal(Math.floor((await shipmentRow(app, id)).dateShipped!.getTime() / 1000) * 1000, Date.parse(firstShipped))
})

t.test('the order advances once every enabled shipment is shipped, once and one-way', async (t) => {
  const app = await buildTestApp(t)
  const { orderId, shipmentIds: [first, second, third] } = await orderWithShipments(app, 3)
  const advanced: OrderAdvancedEvent[] = []
  app.shipments.events.on('orderAdvanced', (event) => advanced.push(event))
  await app.shipments.shipments.softDelete(third)

  await postUpdate(app, first, { status: 'shipped' })
  t.equal((await orderRow(app, orderId)).statusHandle, 'processing', 'one shipment still open')
  t.equal(advanced.length, 0)

  await postUpdate(app, second, { status: 'shipped' })
  t.equal((await orderRow(app, orderId)).statusHandle, 'shipped', 'a soft-deleted shipment does not hold the order back')
  t.same(advanced, [{ orderId, status: 'shipped', shipmentId: second, eventId: advanced[0]?.eventId }])

  await postUpdate(app, second, { status: 'in_progress' })
  t.equal((await orderRow(app, orderId)).statusHandle, 'shipped', 'moving a shipment back does not move the order back')
  await rawQuery(app, 'update shipments_orders set status_handle = ? where id = ?', ['processing', orderId])
  await postUpdate(app, second, { status: 'shipped' })
  t.equal((await orderRow(app, orderId)).statusHandle, 'processing', 'the advance happens once')
  t.equal(advanced.length, 1)
})

t.test('the order advance uses the configured status, and can be turned off', async (t) => {
  const custom = await buildTestApp(t, { shippedOrderStatus: 'processing' })
  const order = await orderWithShipments(custom)
  await rawQuery(custom, 'update shipments_orders set status_handle = ? where id = ?', ['shipped', order.orderId])
  await postUpdate(custom, order.shipmentIds[0], { status: 'shipped' })
  t.equal((await orderRow(custom, order.orderId)).statusHandle, 'processing')

  const off = await buildTestApp(t, { shippedOrderStatus: null })
  const other = await orderWithShipments(off)
  await postUpdate(off, other.shipmentIds[0], { status: 'shipped' })
  t.equal((await orderRow(off, other.orderId)).statusHandle, 'processing')
})

t.test('a soft-deleted shipment is found and updatable', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  await app.shipments.shipments.softDelete(id)
  const response = await postUpdate(app, id, { carrier: 'FedEx', status: 'on_hold' })
  t.equal(response.statusCode, 200)
  t.match(response.json().shipment, { carrier: 'FedEx', status: 'on_hold' })
  t.ok((await shipmentRow(app, id)).dateDeleted, 'still soft-deleted')
  t.equal((await historyRows(app, id)).length, 2)
})

t.test('401, 403, 404 use the framework envelope, in the order of the original system', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const invalid = { status: 'bogus' }

  let response = await app.inject({ method: 'POST', url: '/shipments/api/shipments/999999', payload: invalid })
  t.equal(response.statusCode, 401, 'no user comes before an unknown id')
  t.same(response.json(), { name: 'Unauthorized', message: 'Login required.', code: 0, status: 401, errorCode: 'SHIPMENTS_UNAUTHORIZED' })

  response = await postUpdate(app, 999999, invalid, 'viewer')
  t.equal(response.statusCode, 403, 'no edit permission comes before an unknown id')
  t.same(response.json(), {
    name: 'Forbidden',
    message: 'User is not permitted to perform this action (shipments-editShipments).',
    code: 0,
    status: 403,
    errorCode: 'SHIPMENTS_FORBIDDEN',
  })

  for (const valid of [{ carrier: 'UPS' }, { status: 'shipped' }, {}]) {
    response = await postUpdate(app, 999999, valid)
    t.equal(response.statusCode, 404, `an unknown id with a valid body ${JSON.stringify(valid)}`)
    t.same(response.json(), { name: 'Not Found', message: 'Shipment 999999 not found.', code: 0, status: 404, errorCode: 'SHIPMENTS_SHIPMENT_NOT_FOUND' })
  }
  response = await postUpdate(app, 999999, invalid)
  t.equal(response.statusCode, 404, 'an unknown id comes before validation')
  t.same(response.json(), { name: 'Not Found', message: 'Shipment 999999 not found.', code: 0, status: 404, errorCode: 'SHIPMENTS_SHIPMENT_NOT_FOUND' })
  // A body the framework refuses comes after the lookup too (REFERENCE 3's order), on either kind of id.
  const refusedBodies: Array<[string, string]> = [
    ['{"carrier": ', 'application/json'],
    ['[1, 2]', 'application/json'],
    ['', 'application/json'],
    ['carrier=UPS', 'text/plain'],
    ['carrier=UPS', 'application/x-www-form-urlencoded'],
  ]
  for (const [payload, contentType] of refusedBodies) {
    for (const unknownId of ['999999', 'abc']) {
      response = await app.inject({
        method: 'POST',
        url: `/shipments/api/shipments/${unknownId}`,
        headers: { ...as('admin'), 'content-type': contentType },
        payload,
      })
      t.equal(response.statusCode, 404, `unknown id ${unknownId} with ${contentType} ${JSON.stringify(payload)}`)
      t.same(response.json(), { name: 'Not Found', message: `Shipment ${unknownId} not found.`, code: 0, status: 404, errorCode: 'SHIPMENTS_SHIPMENT_NOT_FOUND' })
    }
  }
  response = await app.inject({ method: 'POST', url: '/shipments/api/shipments/999999', headers: { 'content-type': 'text/plain' }, payload: 'x' })
  t.equal(response.statusCode, 401, 'no user still comes first with a refused body')
  for (const badId of ['abc', '0', '-1', '1e3', '99999999999999999999']) {
    response = await postUpdate(app, badId, {})
    t.equal(response.statusCode, 404, `id ${badId}`)
    t.equal(response.json().name, 'Not Found')
  }

  response = await postUpdate(app, id, { status: 'bogus' }, 'editor')
  t.equal(response.statusCode, 422, 'validation comes before the transition permission')

  response = await postUpdate(app, id, { status: 'shipped', carrier: 'UPS' }, 'editor')
  t.equal(response.statusCode, 403, 'a real status change needs shipments-transitionShipments')
  t.same(response.json(), {
    name: 'Forbidden',
    message: 'User is not permitted to perform this action (shipments-transitionShipments).',
    code: 0,
    status: 403,
    errorCode: 'SHIPMENTS_FORBIDDEN',
  })
  t.equal((await shipmentRow(app, id)).status, 'new')
  t.equal((await shipmentRow(app, id)).carrier, null, 'the refused request changed nothing')
  t.equal((await historyRows(app, id)).length, 1)

  response = await postUpdate(app, id, { status: 'new', carrier: 'UPS' }, 'editor')
  t.equal(response.statusCode, 200, 'the current status needs no transition permission')
  t.equal((await shipmentRow(app, id)).carrier, 'UPS')
})

t.test('malformed requests get framework errors and change nothing', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const before = await shipmentRow(app, id)
  const send = (payload: string, contentType: string) =>
    app.inject({ method: 'POST', url: `/shipments/api/shipments/${id}`, headers: { ...as('admin'), 'content-type': contentType }, payload })

  let response = await send('{"carrier": ', 'application/json')
  t.equal(response.statusCode, 400)
  t.match(response.json(), { name: 'Bad Request', code: 0, status: 400 })
  t.notMatch(response.body, /at .*\.ts:\d+/, 'no stack trace')

  response = await send('[1, 2]', 'application/json')
  t.equal(response.statusCode, 400)
  t.same(response.json(), { name: 'Bad Request', message: 'body must be object', code: 0, status: 400, errorCode: 'SHIPMENTS_VALIDATION_FAILED' })

  response = await send('carrier=UPS', 'text/plain')
  t.equal(response.statusCode, 415)
  t.match(response.json(), { name: 'Unsupported Media Type', status: 415 })

  response = await send('carrier=UPS', 'application/x-www-form-urlencoded')
  t.equal(response.statusCode, 415)
  t.same(await shipmentRow(app, id), before)
})

t.test('a lock held too long turns into the service-level 422', async (t) => {
  const app = await buildTestApp(t, { lockTimeoutMs: 200 })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  let releaseHolder!: () => void
  const holderWaits = new Promise<void>((resolve) => (releaseHolder = resolve))
  const holder = app.shipments.shipments.update(id, { status: 'in_progress' }, { authorizeTransition: () => holderWaits })
  await new Promise((resolve) => setTimeout(resolve, 20))

  const response = await postUpdate(app, id, { status: 'on_hold' })
  t.equal(response.statusCode, 422)
  t.same(response.json(), {
    success: false,
    error: `Couldn't update shipment ${id} right now because another update is in progress. Please try again.`,
    errorCode: 'SHIPMENTS_UPDATE_REJECTED',
  })
  releaseHolder()
  await holder
  t.equal((await shipmentRow(app, id)).status, 'in_progress')
  t.same((await historyRows(app, id)).map((row) => row.toStatus), ['new', 'in_progress'])
})

t.test('a listener that throws does not fail the committed update', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  app.shipments.events.on('shipmentStatusChanged', () => {
    throw new Error('listener bug')
  })
  const response = await postUpdate(app, id, { status: 'fulfilled' })
  t.equal(response.statusCode, 200)
  t.equal((await shipmentRow(app, id)).status, 'fulfilled')
})
