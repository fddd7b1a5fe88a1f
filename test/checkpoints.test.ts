// Carrier checkpoints and delivery estimates: EasyPost's tracking_details and est_delivery_date,
// AfterShip's checkpoints, expected_delivery and aftership_tracking_url, the signed webhook's documented
// checkpoints; kept once each, in carrier-time order whatever the arrival order; the carrier's time for
// dateShipped and the stale-event guard; test-mode events on a production integration; the API, the
// service and the admin shipment page.
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { signWebhook, type EstimateChangedEvent } from '../src/index.js'
import { as, buildTestApp, historyRows, insertOrder, orderWithShipments, shipmentRow } from './fixtures/app.js'
import { adminClient, buildAdminApp } from './fixtures/admin.js'
import { rawQuery, testDatabase } from './fixtures/database.js'
import { ledger } from './fixtures/tracking.js'

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const EASYPOST_SECRET = 'easypost-webhook-secret'
const AFTERSHIP_SECRET = 'aftership-webhook-secret'
const SIGNED_SECRET = 'whsec_' + Buffer.from('a-test-signing-secret-of-32-bytes').toString('base64')
const EASYPOST_EVENT = readFileSync(new globalThis.URL('./fixtures/tracking/easypost-tracker-updated.json', import.meta.url), 'utf8')
const AFTERSHIP_UPDATE = readFileSync(new globalThis.URL('./fixtures/tracking/aftership-tracking-update.json', import.meta.url), 'utf8')

async function setup(t: Test, easyPostSettings: Record<string, unknown> = {}) {
  const app = await buildTestApp(t, { clock: () => NOW }, await testDatabase(t, 'checkpoints'))
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: EASYPOST_SECRET, ...easyPostSettings } })
  await app.shipments.integrations.create({ name: 'AfterShip', handle: 'aftership', providerId: 'aftership', settings: { webhookSecret: AFTERSHIP_SECRET } })
  await app.shipments.integrations.create({
    name: 'Carrier',
    handle: 'carrier',
    providerId: 'signed-webhook',
    settings: { secret: SIGNED_SECRET },
    statusMap: { in_transit: 'shipped', out_for_delivery: 'shipped', picked_up: 'fulfilled' },
  })
  const post = (handle: string, headers: Record<string, string>, raw: string) =>
    app.inject({ method: 'POST', url: `/actions/shipments/gateway/handle?integration=${handle}`, headers: { 'content-type': 'application/json', ...headers }, payload: raw })
  const easyPost = (body: unknown) => {
    const raw = typeof body === 'string' ? body : JSON.stringify(body)
    return post('easypost', { 'x-hmac-signature': `hmac-sha256-hex=${createHmac('sha256', EASYPOST_SECRET).update(raw).digest('hex')}` }, raw)
  }
  const afterShip = (body: unknown) => {
    const raw = typeof body === 'string' ? body : JSON.stringify(body)
    return post('aftership', { 'aftership-hmac-sha256': createHmac('sha256', AFTERSHIP_SECRET).update(raw).digest('base64') }, raw)
  }
  let deliveries = 0
  const signed = (body: unknown) => {
    const raw = JSON.stringify(body)
    const id = `msg_${++deliveries}`
    const timestamp = Math.floor(NOW / 1000)
    return post('carrier', { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(SIGNED_SECRET, id, timestamp, raw) }, raw)
  }
  const estimates: EstimateChangedEvent[] = []
  app.shipments.events.on('estimateChanged', (event) => {
    estimates.push(event)
  })
  /** A shipment with this tracking number and no tracking page of its own. */
  const shipmentTracking = async (trackingNumber: string, carrier: string) => {
    const { shipmentIds: [id] } = await orderWithShipments(app)
    await app.shipments.shipments.update(id, { trackingNumber, carrier })
    // Carrier detection may have filled one in.
    await app.shipments.shipments.update(id, { trackingUrl: '' })
    return id
  }
  const checkpointsRead = async (id: number) => {
    const response = await app.inject({ url: `/shipments/api/shipments/${id}/checkpoints`, headers: as('viewer') })
    t.equal(response.statusCode, 200)
    return response.json().checkpoints as Array<Record<string, unknown>>
  }
  return { app, easyPost, afterShip, signed, estimates, shipmentTracking, checkpointsRead }
}

/** An EasyPost tracker event as EasyPost sends one. */
function trackerEvent(id: string, tracker: Record<string, unknown>, mode = 'test') {
  return {
    id,
    object: 'Event',
    created_at: new Date(NOW - 60_000).toISOString(),
    description: 'tracker.updated',
    mode,
    result: { id: 'trk_2', object: 'Tracker', mode, tracking_code: '9400100000000000000001', carrier: 'USPS', status: 'in_transit', public_url: 'https://track.easypost.com/trk_2', ...tracker },
  }
}

const detail = (datetime: string, status: string, message: string, city: string | null = 'MEMPHIS', statusDetail = 'arrived_at_facility') => ({
  object: 'TrackingDetail',
  message,
  description: null,
  status,
  status_detail: statusDetail,
  datetime,
  source: 'USPS',
  carrier_code: '',
  tracking_location: { object: 'TrackingLocation', city, state: city ? 'TN' : null, country: city ? 'US' : null, zip: city ? '38118' : null },
})

t.test("EasyPost's documented event: its tracking details are kept once each, its estimate with its source, dateShipped at the carrier's scan", async (t) => {
  const { app, easyPost, estimates, shipmentTracking, checkpointsRead } = await setup(t)
  const id = await shipmentTracking('EZ4000000004', 'UPS')

  const response = await easyPost(EASYPOST_EVENT)
  t.equal(response.statusCode, 200)
  t.match(response.json(), { success: true, applied: true, deliveryId: 'evt_qatAiJDM', shipment: { id, status: 'shipped' } })
  const checkpoints = await checkpointsRead(id)
  t.same(
    checkpoints.map(({ id: _id, dateCreated: _created, ...rest }) => rest),
    [
      { shipmentId: id, parcelId: null, trackingNumber: 'EZ4000000004', source: 'easypost', occurredAt: '2014-08-21T14:24:00Z', occurredAtUtc: '2014-08-21T14:24:00.000Z', message: 'BILLING INFORMATION RECEIVED', location: null, status: 'pre_transit', subStatus: null, signedBy: null },
      { shipmentId: id, parcelId: null, trackingNumber: 'EZ4000000004', source: 'easypost', occurredAt: '2014-08-21T14:48:00Z', occurredAtUtc: '2014-08-21T14:48:00.000Z', message: 'ORIGIN SCAN', location: 'SAN FRANCISCO, CA, US', status: 'in_transit', subStatus: null, signedBy: null },
      { shipmentId: id, parcelId: null, trackingNumber: 'EZ4000000004', source: 'easypost', occurredAt: '2014-08-24T17:13:00Z', occurredAtUtc: '2014-08-24T17:13:00.000Z', message: 'DELIVERED', location: 'SAN FRANCISCO, CA, US', status: 'delivered', subStatus: null, signedBy: 'John Tester' },
    ],
    'the three scans, in the carrier’s order, the signature on the delivery',
  )
  t.same(await app.shipments.shipments.checkpoints(id), checkpoints, 'the service reads the same')
  const row = await shipmentRow(app, id)
  t.equal(row.dateShipped?.toISOString(), '2014-08-21T14:48:00.000Z', 'dateShipped is the first scan that means shipped (in_transit), not the arrival')
  t.equal(row.estimatedDelivery, '2014-08-27T00:00:00Z')
  t.equal(row.estimatedDeliverySource, 'easypost')
  t.equal(row.trackingUrl, 'https://track.easypost.com/djE7...', "EasyPost's public page fills the shipment's empty tracking URL")
  const read = await app.inject({ url: `/shipments/api/shipments/${id}`, headers: as('viewer') })
  t.match(read.json().shipment, { estimatedDelivery: '2014-08-27T00:00:00Z', estimatedDeliverySource: 'easypost', trackingUrl: 'https://track.easypost.com/djE7...' })
  t.equal(estimates.length, 1, 'the new estimate is an event')
  t.match(estimates[0], { shipment: { id, estimatedDelivery: '2014-08-27T00:00:00Z' }, from: null, to: '2014-08-27T00:00:00Z', source: 'easypost', movedLater: false })

  // The same tracker again, a later event: one new scan, a later estimate; nothing kept twice.
  const again = JSON.parse(EASYPOST_EVENT)
  again.id = 'evt_again'
  again.created_at = '2014-11-20T10:51:54Z'
  again.result.est_delivery_date = '2014-08-29T00:00:00Z'
  again.result.tracking_details.push({ object: 'TrackingDetail', message: 'RETURNED TO SENDER', status: 'return_to_sender', status_detail: 'return', datetime: '2014-08-26T09:00:00Z', tracking_location: { city: 'OAKLAND', state: 'CA', country: 'US', zip: '94607' } })
  again.result.status = 'return_to_sender'
  const second = await easyPost(again)
  t.match(second.json(), { applied: true, shipment: { id, status: 'on_hold' } })
  t.equal((await checkpointsRead(id)).length, 4, 'one new scan; the three repeated ones are not kept again')
  t.match((await checkpointsRead(id)).at(-1), { message: 'RETURNED TO SENDER', location: 'OAKLAND, CA, 94607, US', status: 'return_to_sender', subStatus: 'return' })
  t.equal((await shipmentRow(app, id)).estimatedDelivery, '2014-08-29T00:00:00Z')
  t.equal(estimates.length, 2)
  t.match(estimates[1], { from: '2014-08-27T00:00:00Z', to: '2014-08-29T00:00:00Z', movedLater: true }, 'a later estimate says so')
  t.equal((await shipmentRow(app, id)).dateShipped?.toISOString(), '2014-08-21T14:48:00.000Z', 'dateShipped stays')

  // A repeat delivery adds nothing and fires nothing.
  const repeat = await easyPost(again)
  t.match(repeat.json(), { applied: false, reason: 'duplicate' })
  t.equal((await checkpointsRead(id)).length, 4)
  t.equal(estimates.length, 2)

  const missing = await app.inject({ url: '/shipments/api/shipments/999999/checkpoints', headers: as('viewer') })
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), { name: 'Not Found', message: 'Shipment 999999 not found.', code: 0, status: 404, errorCode: 'SHIPMENTS_SHIPMENT_NOT_FOUND' })
  const anonymous = await app.inject({ url: `/shipments/api/shipments/${id}/checkpoints` })
  t.equal(anonymous.statusCode, 401, 'the read needs a user who may view shipments')
})

t.test('events out of order: every scan is kept in carrier-time order, the older event is stale and moves nothing', async (t) => {
  const { app, easyPost, checkpointsRead, shipmentTracking } = await setup(t)
  const id = await shipmentTracking('9400 1000 0000 0000 0000 01', 'USPS')
  const pickedUp = detail('2026-11-20T08:00:00Z', 'in_transit', 'Picked up')
  const atFacility = detail('2026-11-21T06:30:00Z', 'in_transit', 'Arrived at USPS regional facility')
  const outForDelivery = detail('2026-11-22T07:10:00Z', 'out_for_delivery', 'Out for delivery', 'MEMPHIS', 'out_for_delivery')

  // The newer event arrives first (EasyPost retries, delays): it holds the newest scan only.
  const newer = await easyPost(trackerEvent('evt_newer', { status: 'out_for_delivery', tracking_details: [outForDelivery] }))
  t.match(newer.json(), { applied: true, shipment: { id, status: 'shipped' } })
  const older = await easyPost(trackerEvent('evt_older', { status: 'pre_transit', tracking_details: [pickedUp, atFacility] }))
  t.match(older.json(), { success: true, applied: false, reason: 'stale-event', shipment: { id, status: 'shipped' } }, "the older event's newest scan is before the last one applied")
  t.equal((await shipmentRow(app, id)).status, 'shipped', 'nothing moved back')
  t.same(
    (await checkpointsRead(id)).map((checkpoint) => checkpoint.message),
    ['Picked up', 'Arrived at USPS regional facility', 'Out for delivery'],
    'its scans are kept all the same, in the carrier’s order',
  )
  t.same(await ledger(app, 'easypost'), [
    { deliveryId: 'evt_newer', outcome: {} },
    { deliveryId: 'evt_older', outcome: { outcome: 'stale' } },
  ])
  t.equal((await shipmentRow(app, id)).dateShipped?.toISOString(), '2026-11-22T07:10:00.000Z', 'the scan that shipped it')
  t.same(await historyRows(app, id).then((rows) => rows.map((row) => row.toStatus)), ['new', 'shipped'])
})

t.test('a test-mode event on a production integration changes nothing, and the answer says so', async (t) => {
  const { app, easyPost, shipmentTracking, checkpointsRead } = await setup(t, { mode: 'production' })
  const id = await shipmentTracking('EZ4000000004', 'UPS')
  const before = await shipmentRow(app, id)
  const response = await easyPost(EASYPOST_EVENT)
  t.equal(response.statusCode, 200)
  t.same(response.json(), { success: true, applied: false, reason: 'test-mode', mode: 'test', deliveryId: 'evt_qatAiJDM' })
  t.same(await shipmentRow(app, id), before, 'nothing changed')
  t.same(await checkpointsRead(id), [], 'no scan kept')
  t.same(await ledger(app, 'easypost'), [{ deliveryId: 'evt_qatAiJDM', outcome: { outcome: 'test-mode', reason: 'A test-mode event reached an integration set to production' } }])

  const live = await easyPost(trackerEvent('evt_live', { tracking_code: 'EZ4000000004', carrier: 'UPS', tracking_details: [detail('2026-11-21T10:00:00Z', 'in_transit', 'Departed')] }, 'production'))
  t.match(live.json(), { applied: true, shipment: { id, status: 'shipped' } }, 'a production event applies')
  t.equal((await checkpointsRead(id)).length, 1)
})

t.test("AfterShip's documented update: checkpoints with their offsets as sent, sub-statuses and places; aftership_tracking_url and expected_delivery", async (t) => {
  const { app, afterShip, estimates, shipmentTracking, checkpointsRead } = await setup(t)
  const id = await shipmentTracking('9361289676091361892011', 'USPS')
  const response = await afterShip(AFTERSHIP_UPDATE)
  t.equal(response.statusCode, 200)
  t.match(response.json(), { applied: true, shipment: { id, status: 'shipped' } })
  t.match(await checkpointsRead(id), [
    { source: 'aftership', occurredAt: '2021-01-02T00:43:00-08:00', occurredAtUtc: '2021-01-02T08:43:00.000Z', message: 'Shipping Label Created, USPS Awaiting Item', location: 'LOS ANGELES, CA 90001', status: 'InfoReceived', subStatus: 'InfoReceived_001' },
    { source: 'aftership', occurredAt: '2021-01-05T09:12:00-08:00', occurredAtUtc: '2021-01-05T17:12:00.000Z', message: 'Delivered, In/At Mailbox', location: 'SAN DIEGO, CA 92101', status: 'Delivered', subStatus: 'Delivered_001' },
  ])
  t.equal((await checkpointsRead(id)).length, 2)
  const row = await shipmentRow(app, id)
  t.equal(row.dateShipped?.toISOString(), '2021-01-05T17:12:00.000Z', 'the delivery scan is the first that means shipped (InfoReceived is fulfilled)')
  t.equal(row.estimatedDelivery, null, 'the sample gives no estimate')
  t.equal(row.trackingUrl, 'https://tools.usps.com/go/TrackConfirmAction?tLabels=9361289676091361892011')
  t.equal(estimates.length, 0)

  // A courier without a tracking link: AfterShip's own page; the expected delivery date.
  const other = await shipmentTracking('1Z999AA10123456784', 'UPS')
  const update = {
    event_id: '0b3f7c2e-0000-4000-8000-000000000001',
    event: 'tracking_update',
    msg: {
      id: 'as_2',
      tracking_number: '1Z999AA10123456784',
      slug: 'ups',
      tag: 'OutForDelivery',
      subtag: 'OutForDelivery_001',
      courier_tracking_link: '',
      aftership_tracking_url: 'https://shop.aftership.com/ups/1Z999AA10123456784',
      expected_delivery: '2026-11-22',
      checkpoints: [
        { slug: 'ups', tag: 'InTransit', subtag: 'InTransit_002', message: 'Departed from facility', checkpoint_time: '2026-11-21T22:05:00+01:00', city: 'Köln', country_name: 'Germany', location: null },
        { slug: 'ups', tag: 'OutForDelivery', subtag: 'OutForDelivery_001', message: 'Out for delivery', checkpoint_time: '2026-11-22T07:40:00+01:00', city: 'Bonn', country_name: 'Germany', zip: '53111' },
        { slug: 'ups', tag: 'InTransit', message: 'A scan without a time is left out' },
      ],
    },
    ts: Math.floor(NOW / 1000) - 60,
  }
  t.match((await afterShip(update)).json(), { applied: true, shipment: { id: other, status: 'shipped' } })
  t.same(
    (await checkpointsRead(other)).map((checkpoint) => [checkpoint.occurredAt, checkpoint.location, checkpoint.subStatus]),
    [
      ['2026-11-21T22:05:00+01:00', 'Köln, Germany', 'InTransit_002'],
      ['2026-11-22T07:40:00+01:00', 'Bonn, 53111, Germany', 'OutForDelivery_001'],
    ],
  )
  const otherRow = await shipmentRow(app, other)
  t.equal(otherRow.trackingUrl, 'https://shop.aftership.com/ups/1Z999AA10123456784', "AfterShip's page, the courier having none")
  t.match(await app.shipments.integrations.externalReferences(other), [{ integrationHandle: 'aftership', externalUrl: 'https://shop.aftership.com/ups/1Z999AA10123456784' }])
  t.equal(otherRow.estimatedDelivery, '2026-11-22')
  t.equal(otherRow.estimatedDeliverySource, 'aftership')
  t.equal(otherRow.dateShipped?.toISOString(), '2026-11-21T21:05:00.000Z')
  t.match(estimates, [{ shipment: { id: other }, from: null, to: '2026-11-22', source: 'aftership' }])
})

t.test("the signed webhook's documented checkpoints and estimate; a malformed checkpoint refuses the delivery", async (t) => {
  const { app, signed, checkpointsRead } = await setup(t)
  const orderId = await insertOrder(app, { reference: 'A100' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const before = await shipmentRow(app, shipment.id)

  const bad = await signed({ orderNumber: 'A100', status: 'in_transit', occurredAt: new Date(NOW).toISOString(), checkpoints: [{ message: 'no time' }] })
  t.equal(bad.statusCode, 400)
  t.same(bad.json(), { name: 'Bad Request', message: 'Invalid webhook payload: checkpoints[0].occurredAt must be an ISO-8601 date-time.', code: 0, status: 400, errorCode: 'SHIPMENTS_INTEGRATION_ERROR' })
  const badEstimate = await signed({ orderNumber: 'A100', status: 'in_transit', occurredAt: new Date(NOW).toISOString(), estimatedDelivery: 'soon' })
  t.equal(badEstimate.statusCode, 400)
  t.equal(badEstimate.json().message, 'Invalid webhook payload: estimatedDelivery must be an ISO-8601 date or date-time.')
  t.same(await shipmentRow(app, shipment.id), before, 'nothing changed')
  t.same(await checkpointsRead(shipment.id), [])

  const response = await signed({
    orderNumber: 'A100',
    status: 'in_transit',
    occurredAt: new Date(NOW - 60_000).toISOString(),
    trackingNumber: 'JD014600003828',
    carrier: 'DHL',
    estimatedDelivery: '2026-11-24',
    checkpoints: [
      { occurredAt: '2026-11-21T14:00:00+01:00', message: 'Departed hub', location: 'Leipzig, DE', status: 'in_transit', subStatus: 'departed' },
      { occurredAt: '2026-11-21T09:30:00+01:00', message: 'Picked up', location: 'Berlin, DE', status: 'picked_up' },
    ],
  })
  t.equal(response.statusCode, 200)
  t.match(response.json(), { applied: true, shipment: { id: shipment.id, status: 'shipped' } })
  t.match(await checkpointsRead(shipment.id), [
    { trackingNumber: 'JD014600003828', source: 'carrier', occurredAt: '2026-11-21T09:30:00+01:00', message: 'Picked up', location: 'Berlin, DE', status: 'picked_up', subStatus: null },
    { occurredAt: '2026-11-21T14:00:00+01:00', message: 'Departed hub', status: 'in_transit', subStatus: 'departed' },
  ])
  const row = await shipmentRow(app, shipment.id)
  t.equal(row.dateShipped?.toISOString(), '2026-11-21T13:00:00.000Z', 'the first scan the status map sends to shipped')
  t.equal(row.estimatedDelivery, '2026-11-24')
  t.equal(row.estimatedDeliverySource, 'carrier')
})

t.test("the admin shipment page shows the estimate and the carrier's checkpoints, newest first", async (t) => {
  const app = await buildAdminApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  await app.shipments.shipments.recordCheckpoints(id, {
    trackingNumber: '1Z999AA10123456784',
    source: 'aftership',
    checkpoints: [
      { occurredAt: new Date('2026-11-21T21:05:00Z'), occurredAtText: '2026-11-21T22:05:00+01:00', message: 'Departed <facility>', location: 'Köln, Germany', status: 'InTransit', subStatus: 'InTransit_002' },
      { occurredAt: new Date('2026-11-22T06:40:00Z'), occurredAtText: '2026-11-22T07:40:00+01:00', message: 'Out for delivery', location: 'Bonn, Germany', status: 'OutForDelivery' },
    ],
  })
  await rawQuery(app, "UPDATE shipments_shipments SET estimated_delivery = '2026-11-24', estimated_delivery_source = 'aftership' WHERE id = ?", [id])
  const page = await adminClient(app, "admin").get(`/shipments/${id}`)
  t.equal(page.statusCode, 200)
  t.match(page.body, '<a href="#checkpoints">Carrier checkpoints</a>')
  const section = page.body.slice(page.body.indexOf('id="checkpoints"'), page.body.indexOf('id="history"'))
  t.ok(section.indexOf('Out for delivery') < section.indexOf('Departed &lt;facility&gt;'), 'newest first, the message escaped')
  t.match(section, '<time datetime="2026-11-22T07:40:00+01:00" title="2026-11-22T07:40:00+01:00">22 Nov 2026, 07:40</time> · <bdi>Bonn, Germany</bdi> · <bdi>OutForDelivery</bdi>', "in the admin's date format")
  t.match(section, '<bdi>InTransit</bdi> (<bdi>InTransit_002</bdi>)')
  t.match(page.body, /<tr><th>Estimated delivery<\/th><td data-estimate><time datetime="2026-11-24">24 Nov 2026<\/time> <span class="meta">\(aftership\)<\/span><\/td><\/tr>/, 'the estimate with its source')
  t.equal((await app.shipments.shipments.checkpoints(id)).length, 2)
})
