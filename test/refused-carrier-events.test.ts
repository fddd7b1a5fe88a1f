// A carrier event the gateway refuses (400) writes nothing and sends nothing, whichever provider sent it
// and wherever it is refused: no checkpoint, no outbox row (so no carrierMilestone, no mail, no webhook),
// no ledger mark, no change to the shipment or its parcels (issue 45, item 6). And the scans of a
// signed-webhook event whose status the map leaves out are kept, as docs/tracking.md says (item 7).
import { createHmac } from 'node:crypto'
import { eq } from 'drizzle-orm'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { signWebhook, type MailMessage, type ShipmentsPluginOptions } from '../src/index.js'
import { storedParcels, type ParcelRow } from '../src/db/parcels.js'
import { buildTestApp, insertOrder, shipmentRow } from './fixtures/app.js'
import { rawQuery, tables, testDatabase } from './fixtures/database.js'
import { ledger } from './fixtures/tracking.js'

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const TEN_MINUTES_AHEAD = NOW + 10 * 60_000
const EASYPOST_SECRET = 'easypost-webhook-secret'
const AFTERSHIP_SECRET = 'aftership-webhook-secret'
const SIGNED_SECRET = 'whsec_' + Buffer.from('a-test-signing-secret-of-32-bytes').toString('base64')
const NUMBER = '1Z999AA10123456784'
const FUTURE_REFUSAL = 'Invalid webhook payload: occurredAt: Occurred At must be a date at most 5 minutes in the future.'

async function setup(t: Test, options: Partial<ShipmentsPluginOptions> = {}) {
  const sent: MailMessage[] = []
  const app = await buildTestApp(
    t,
    {
      clock: () => NOW,
      notifications: { sendMail: async (message) => void sent.push(message) },
      trackingPage: { secret: 'a-tracking-page-secret-of-at-least-32-chars', baseUrl: 'https://shop.example' },
      outbox: { pollIntervalMs: 20 },
      ...options,
    },
    await testDatabase(t, 'refusedevents'),
  )
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: EASYPOST_SECRET } })
  await app.shipments.integrations.create({ name: 'AfterShip', handle: 'aftership', providerId: 'aftership', settings: { webhookSecret: AFTERSHIP_SECRET } })
  await app.shipments.integrations.create({
    name: 'Carrier',
    handle: 'carrier',
    providerId: 'signed-webhook',
    settings: { secret: SIGNED_SECRET },
    statusMap: { in_transit: 'shipped', out_for_delivery: 'shipped' },
  })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await insertOrder(app, { reference: 'R100', email: 'zoe@example.com' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  await app.shipments.shipments.update(shipment.id, { trackingNumber: NUMBER, carrier: 'UPS' })
  const outForDelivery = await app.shipments.notifications.createFromTemplate('outForDelivery')
  await app.shipments.notifications.update(outForDelivery.id, { enabled: true })
  await app.shipments.outbox.sweep()

  const post = (handle: string, headers: Record<string, string>, raw: string) =>
    app.inject({ method: 'POST', url: `/actions/shipments/gateway/handle?integration=${handle}`, headers: { 'content-type': 'application/json', ...headers }, payload: raw })
  const easyPost = (body: unknown) => {
    const raw = JSON.stringify(body)
    return post('easypost', { 'x-hmac-signature': `hmac-sha256-hex=${createHmac('sha256', EASYPOST_SECRET).update(raw).digest('hex')}` }, raw)
  }
  const afterShip = (body: unknown) => {
    const raw = JSON.stringify(body)
    return post('aftership', { 'aftership-hmac-sha256': createHmac('sha256', AFTERSHIP_SECRET).update(raw).digest('base64') }, raw)
  }
  let deliveries = 0
  const signed = (body: unknown) => {
    const raw = JSON.stringify(body)
    const id = `msg_${++deliveries}`
    const timestamp = Math.floor(NOW / 1000)
    return post('carrier', { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(SIGNED_SECRET, id, timestamp, raw) }, raw)
  }
  return { app, sent, shipmentId: shipment.id, easyPost, afterShip, signed }
}

/**
 * An EasyPost tracker.updated sent at `sentAt` whose newest scan, half a minute before, is out for delivery
 * (the scan's time is the event's time: a sender whose clock runs ahead dates both ahead).
 */
const easyPostOutForDelivery = (id: string, sentAt: number, trackingCode = NUMBER) => ({
  id,
  object: 'Event',
  created_at: new Date(sentAt).toISOString(),
  description: 'tracker.updated',
  mode: 'test',
  result: {
    id: 'trk_1',
    object: 'Tracker',
    tracking_code: trackingCode,
    carrier: 'UPS',
    status: 'out_for_delivery',
    est_delivery_date: '2026-11-22T18:00:00Z',
    tracking_details: [
      { object: 'TrackingDetail', message: 'Departed', status: 'in_transit', status_detail: 'departed_facility', datetime: new Date(sentAt - 3_600_000).toISOString(), tracking_location: { city: 'BONN' } },
      { object: 'TrackingDetail', message: 'Out for delivery', status: 'out_for_delivery', status_detail: 'out_for_delivery', datetime: new Date(sentAt - 30_000).toISOString(), tracking_location: { city: 'BONN' } },
    ],
  },
})

const afterShipOutForDelivery = (id: string, sentAt: number) => ({
  event_id: id,
  event: 'tracking_update',
  ts: Math.floor(sentAt / 1000),
  msg: {
    id: 'as_1',
    tracking_number: NUMBER,
    slug: 'ups',
    tag: 'OutForDelivery',
    expected_delivery: '2026-11-22',
    checkpoints: [{ slug: 'ups', tag: 'OutForDelivery', subtag: 'OutForDelivery_001', message: 'Out for delivery', checkpoint_time: new Date(sentAt - 30_000).toISOString(), city: 'Bonn' }],
  },
})

const signedOutForDelivery = (occurredAt: number, overrides: Record<string, unknown> = {}) => ({
  orderNumber: 'R100',
  status: 'out_for_delivery',
  occurredAt: new Date(occurredAt).toISOString(),
  trackingNumber: NUMBER,
  estimatedDelivery: '2026-11-22',
  checkpoints: [{ occurredAt: new Date(occurredAt - 30_000).toISOString(), message: 'With the courier', location: 'Bonn, DE', status: 'out_for_delivery' }],
  ...overrides,
})

/** What a refused event must leave as it was: counted before the event, compared after it. */
async function snapshot(app: FastifyInstance, shipmentId: number) {
  const [checkpoints] = await rawQuery(app, 'SELECT count(*) AS n FROM shipments_checkpoints')
  const [outbox] = await rawQuery(app, 'SELECT count(*) AS n FROM shipments_outbox')
  const parcels = await rawQuery(app, 'SELECT id, status FROM shipments_parcels ORDER BY id')
  return {
    checkpoints: Number(checkpoints.n),
    outbox: Number(outbox.n),
    parcels,
    shipment: await shipmentRow(app, shipmentId),
    ledger: [...(await ledger(app, 'easypost')), ...(await ledger(app, 'aftership')), ...(await ledger(app, 'carrier'))],
  }
}

async function assertRefused(t: Test, context: Awaited<ReturnType<typeof setup>>, name: string, send: () => Promise<{ statusCode: number; json(): unknown }>, message: string, errorCode = 'SHIPMENTS_VALIDATION_FAILED') {
  const { app, sent, shipmentId } = context
  const before = await snapshot(app, shipmentId)
  const response = await send()
  t.equal(response.statusCode, 400, `${name}: refused`)
  t.same(response.json(), { name: 'Bad Request', message, code: 0, status: 400, errorCode }, `${name}: the refusal says why`)
  // Twice: a mail is the job of an event the first sweep delivers.
  await app.shipments.outbox.sweep()
  await app.shipments.outbox.sweep()
  t.same(await snapshot(app, shipmentId), before, `${name}: no checkpoint, no outbox row, no ledger mark, no change`)
  t.same(sent, [], `${name}: no mail`)
}

t.test('a carrier event dated beyond the clock skew is refused before it writes anything, from every provider', async (t) => {
  const context = await setup(t)
  const { app, sent, easyPost, afterShip, signed } = context
  await assertRefused(t, context, 'EasyPost', () => easyPost(easyPostOutForDelivery('evt_future', TEN_MINUTES_AHEAD)), FUTURE_REFUSAL)
  await assertRefused(t, context, 'AfterShip', () => afterShip(afterShipOutForDelivery('as_future', TEN_MINUTES_AHEAD)), FUTURE_REFUSAL)
  await assertRefused(t, context, 'signed webhook', () => signed(signedOutForDelivery(TEN_MINUTES_AHEAD)), FUTURE_REFUSAL)

  // The same event dated now applies: its scans kept, the milestone sent once.
  const applied = await easyPost(easyPostOutForDelivery('evt_now', NOW))
  t.equal(applied.statusCode, 200)
  t.match(applied.json(), { applied: true, shipment: { status: 'shipped' } })
  t.equal((await rawQuery(app, 'SELECT count(*) AS n FROM shipments_checkpoints')).map((row) => Number(row.n))[0], 2)
  for (let tries = 0; tries < 100 && !sent.some((mail) => mail.subject.includes('out for delivery')); tries++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    await app.shipments.outbox.sweep()
  }
  t.ok(sent.some((mail) => mail.subject.includes('out for delivery')), 'the accepted event sends its mail')
})

t.test("a future-dated event for a parcel's tracking number moves no parcel and keeps no scan", async (t) => {
  const context = await setup(t)
  const { app, shipmentId, easyPost } = context
  const parcel = await app.shipments.deliveries.addParcel(shipmentId, { weight: { value: '1', unit: 'kg' } })
  const { db, schema } = tables(app)
  // As a label purchase leaves it: the parcel holds the tracking number.
  await (db as typeof db).update(schema.parcels).set({ status: 'labelled', labelOperationId: `op-${parcel.id}`, trackingNumber: '9400111', carrier: 'USPS' }).where(eq(schema.parcels.id, parcel.id))
  const rows = (await (db as typeof db).select().from(schema.parcels).where(eq(schema.parcels.shipmentId, shipmentId))) as ParcelRow[]
  await (db as typeof db).update(schema.shipments).set({ parcels: storedParcels(rows) }).where(eq(schema.shipments.id, shipmentId))
  await app.shipments.outbox.sweep()
  await assertRefused(t, context, 'EasyPost for a parcel', () => easyPost(easyPostOutForDelivery('evt_parcel_future', TEN_MINUTES_AHEAD, '9400111')), FUTURE_REFUSAL)
})

t.test('an event the update refuses (the order status to ship to is missing, a bad tracking URL) keeps none of its scans', async (t) => {
  const context = await setup(t, { shippedOrderStatus: 'handed-over' })
  const { easyPost, afterShip, signed } = context
  const missingStatus = (id: number) => `Couldn't update shipment ${id}: the order status "handed-over" (shippedOrderStatus) does not exist. Create it first.`
  await assertRefused(t, context, 'EasyPost', () => easyPost(easyPostOutForDelivery('evt_nostatus', NOW)), missingStatus(context.shipmentId), 'SHIPMENTS_UPDATE_REJECTED')
  await assertRefused(t, context, 'AfterShip', () => afterShip(afterShipOutForDelivery('as_nostatus', NOW)), missingStatus(context.shipmentId), 'SHIPMENTS_UPDATE_REJECTED')
  await assertRefused(t, context, 'signed webhook', () => signed(signedOutForDelivery(NOW)), missingStatus(context.shipmentId), 'SHIPMENTS_UPDATE_REJECTED')
  await assertRefused(
    t,
    context,
    'signed webhook with a tracking URL the update refuses',
    () => signed(signedOutForDelivery(NOW, { status: 'in_transit', trackingUrl: 'javascript:alert(1)' })),
    'Invalid webhook payload: trackingUrl: Tracking Url is not a valid URL.',
  )
})

t.test("the signed webhook keeps the scans of an event whose status the map leaves out, as the docs say", async (t) => {
  const { app, shipmentId, signed } = await setup(t)
  const before = await shipmentRow(app, shipmentId)
  const response = await signed(
    signedOutForDelivery(NOW - 60_000, {
      status: 'customs_hold',
      checkpoints: [{ occurredAt: '2026-11-22T09:30:00+01:00', message: 'Held at customs', location: 'Köln, DE', status: 'customs_hold', subStatus: 'documents' }],
    }),
  )
  t.equal(response.statusCode, 200)
  t.same(response.json(), { success: true, applied: false, reason: 'unmapped-status', externalCode: 'customs_hold', deliveryId: 'msg_1' })
  t.match(await app.shipments.shipments.checkpoints(shipmentId), [
    { shipmentId, parcelId: null, trackingNumber: NUMBER, source: 'carrier', occurredAt: '2026-11-22T09:30:00+01:00', message: 'Held at customs', location: 'Köln, DE', status: 'customs_hold', subStatus: 'documents' },
  ])
  t.same(await shipmentRow(app, shipmentId), before, 'the status and estimate stay as they were')
  t.same(await ledger(app, 'carrier'), [{ deliveryId: 'msg_1', outcome: { outcome: 'unmapped-status', reason: 'Unmapped status customs_hold' } }])
})
