// Signed-webhook deliveries in flight when the host is killed: the dedupe mark commits with its effect,
// so the sender's retry after the restart applies every event exactly once (issue 20, data loss on
// PostgreSQL: the mark used to commit first, and the retry was answered "duplicate" with nothing applied).
import t from 'tap'
import { count } from 'drizzle-orm'
import { signWebhook } from '../src/index.js'
import { buildTestApp, historyRows, insertOrder, shipmentRow } from './fixtures/app.js'
import { tables, testDatabase } from './fixtures/database.js'
import { exited, firstLine, spawnWorker } from './fixtures/processes.js'

const SECRET = 'whsec_' + Buffer.from('a-crash-test-signing-secret-32b').toString('base64')
const SHIPMENTS = 60

/** The signed-webhook integration both tests deliver to: `in_transit` moves a shipment to shipped. */
const createCarrier = (app: Awaited<ReturnType<typeof buildTestApp>>) =>
  app.shipments.integrations.create({ name: 'Carrier', handle: 'carrier', providerId: 'signed-webhook', settings: { secret: SECRET }, statusMap: { in_transit: 'shipped' } })

t.test('deliveries in flight when the host is SIGKILLed are applied once each after the sender retries', async (t) => {
  const database = await testDatabase(t, 'crash')
  let app = await buildTestApp(t, {}, database)
  await createCarrier(app)
  const orderId = await insertOrder(app, { reference: 'CRASH1' })
  const shipments = await app.shipments.shipments.create(orderId, { count: SHIPMENTS })
  await app.close()

  // One delivery per shipment, each moving it to shipped.
  const deliveries = shipments.map((shipment, index) => {
    const body = JSON.stringify({ orderNumber: 'CRASH1', shipmentNumber: index + 1, status: 'in_transit', occurredAt: new Date().toISOString() })
    return { id: `msg_crash_${index + 1}`, shipmentId: shipment.id, body }
  })
  const send = (origin: string, delivery: (typeof deliveries)[number]) => {
    const timestamp = Math.floor(Date.now() / 1000)
    return fetch(`${origin}/actions/shipments/gateway/handle?integration=carrier`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': delivery.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(SECRET, delivery.id, timestamp, delivery.body),
      },
      body: delivery.body,
    })
  }

  const worker = spawnWorker([database, 'serve', '200'])
  const port = /^listening (\d+)$/.exec(await firstLine(worker))?.[1]
  t.ok(port, 'the host in the other process serves HTTP')
  // The whole burst at once; the host is killed as soon as the first answers are back, with the rest
  // somewhere between the signature check and the commit, or committed with their answers held back.
  let answered = 0
  let killAfterFirst: () => void = () => undefined
  const firstAnswers = new Promise<void>((resolve) => (killAfterFirst = resolve))
  const outcomes = deliveries.map((delivery) =>
    send(`http://127.0.0.1:${port}`, delivery).then(
      async (response) => {
        if (++answered >= 3) killAfterFirst()
        return { status: response.status, body: (await response.json()) as Record<string, unknown> }
      },
      () => null,
    ),
  )
  await firstAnswers
  worker.kill('SIGKILL')
  t.same(await exited(worker), { code: null, signal: 'SIGKILL' })
  const burst = await Promise.all(outcomes)
  t.ok(burst.some((outcome) => outcome === null), 'some deliveries were cut off by the kill')

  // The sender retries every delivery it got no 2xx for, against the restarted host.
  app = await buildTestApp(t, {}, database)
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  const retried = await Promise.all(
    deliveries.map(async (delivery, index) => {
      if (burst[index]?.status === 200) return burst[index]
      const response = await send(origin, delivery)
      return { status: response.status, body: (await response.json()) as Record<string, unknown> }
    }),
  )
  t.same(
    retried.filter((outcome) => outcome!.status !== 200 || outcome!.body.applied !== true && outcome!.body.reason !== 'duplicate'),
    [],
    'every delivery ends answered 200, applied (or a duplicate of one applied before the kill)',
  )

  for (const delivery of deliveries) {
    t.equal((await shipmentRow(app, delivery.shipmentId)).status, 'shipped', `${delivery.id} moved its shipment`)
    const shippedRows = (await historyRows(app, delivery.shipmentId)).filter((row) => row.toStatus === 'shipped')
    t.equal(shippedRows.length, 1, `${delivery.id} wrote one history row`)
  }
  const { db, schema } = tables(app)
  const [{ total }] = await db.select({ total: count() }).from(schema.webhookDeliveries)
  t.equal(total, SHIPMENTS, 'the ledger holds each delivery once')
})

t.test('a delivery whose update fails leaves no mark: the retry applies it', async (t) => {
  const database = await testDatabase(t, 'refused')
  const app = await buildTestApp(t, { clock: () => Date.now() }, database)
  await createCarrier(app)
  const orderId = await insertOrder(app, { reference: 'REF1' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  const send = async (body: Record<string, unknown>) => {
    const raw = JSON.stringify(body)
    const timestamp = Math.floor(Date.now() / 1000)
    const response = await fetch(`${origin}/actions/shipments/gateway/handle?integration=carrier`, {
      method: 'POST',
      headers: { 'webhook-id': 'msg_same', 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(SECRET, 'msg_same', timestamp, raw) },
      body: raw,
    })
    return { status: response.status, body: await response.json() }
  }
  const event = { orderNumber: 'REF1', status: 'in_transit', occurredAt: new Date().toISOString() }

  const refused = await send({ ...event, trackingUrl: 'ftp://nowhere' })
  t.same(refused, { status: 400, body: { name: 'Bad Request', message: 'Invalid webhook payload: trackingUrl: Tracking Url is not a valid URL.', code: 0, status: 400, errorCode: 'SHIPMENTS_VALIDATION_FAILED' } })
  t.equal((await shipmentRow(app, shipment.id)).status, 'new', 'the refused delivery changed nothing')
  const { db, schema } = tables(app)
  t.equal((await db.select().from(schema.webhookDeliveries)).length, 0, 'and left no mark in the ledger')

  const retry = await send(event)
  t.match(retry, { status: 200, body: { success: true, applied: true, deliveryId: 'msg_same', shipment: { status: 'shipped' } } }, 'the corrected retry applies')
  t.equal((await shipmentRow(app, shipment.id)).status, 'shipped')
  t.equal((await db.select().from(schema.webhookDeliveries)).length, 1)
})
