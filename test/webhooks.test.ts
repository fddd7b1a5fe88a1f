// Outbound webhooks: deliveries a receiver verifies with the official standardwebhooks package, retries
// after failures with an attempt log, private receivers refused by default, timeouts, disabling after a
// run of failures, manual redelivery, and the subscription rules.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { WebhookSubscriptionError } from '../src/index.js'
import { eq } from 'drizzle-orm'
import { buildTestApp, orderWithShipments, postUpdate } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { eventually } from './fixtures/outbox.js'

interface Received {
  headers: Record<string, string>
  body: string
  /** When the request arrived and when it was answered (performance.now()). */
  arrivedAt: number
  answeredAt?: number
}

/** A local receiver; `answer` decides each status code (or null: never answer), given after `delayMs`. */
async function startReceiver(t: { teardown(fn: () => unknown): void }, answer: (index: number, body: string) => number | null, delayMs = 0) {
  const received: Received[] = []
  const hanging: ServerResponse[] = []
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString()
      const status = answer(received.length, body)
      const entry: Received = { headers: request.headers as Record<string, string>, body, arrivedAt: performance.now() }
      received.push(entry)
      if (status === null) return void hanging.push(response)
      setTimeout(() => {
        entry.answeredAt = performance.now()
        response.writeHead(status).end('ok')
      }, delayMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const response of hanging) response.destroy()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received }
}

const fastRetries = { outbox: { pollIntervalMs: 20, retryDelaysMs: [30, 30, 30] }, webhooks: { allowPrivateAddresses: true } }

t.test('a receiver that fails and then recovers gets every event, signed per Standard Webhooks, with each attempt logged', async (t) => {
  // The first two requests fail (503), then every one succeeds.
  const receiver = await startReceiver(t, (index) => (index < 2 ? 503 : 204))
  const app = await buildTestApp(t, fastRetries)
  const subscription = await app.shipments.webhooks.create({ url: receiver.url, events: ['shipmentStatusChanged'], description: 'ERP' })
  t.match(subscription.secret, /^whsec_[A-Za-z0-9+/]+=*$/, 'a new secret is made and returned once')
  t.notOk('secret' in (await app.shipments.webhooks.get(subscription.id))!, 'and never returned again')

  const { shipmentIds: [id] } = await orderWithShipments(app)
  t.equal((await postUpdate(app, id, { status: 'in_progress' })).statusCode, 200)
  t.equal((await postUpdate(app, id, { status: 'fulfilled' })).statusCode, 200)
  await eventually(app, async () => (await app.shipments.webhooks.deliveries(subscription.id)).filter((delivery) => delivery.state === 'done').length === 2)

  const verifier = new Webhook(subscription.secret)
  const bodies = receiver.received.map((request) => verifier.verify(request.body, request.headers) as { id: string; type: string; data: { to: string; shipment: { id: number }; eventId: string } })
  t.equal(bodies.length, 4, 'two failed attempts, then the two events')
  const delivered = new Map(bodies.map((body) => [body.id, body]))
  t.equal(delivered.size, 2, 'every event delivered, retries under the same webhook-id')
  t.same([...delivered.values()].map((body) => [body.type, body.data.to, body.data.shipment.id]).sort(), [
    ['shipmentStatusChanged', 'fulfilled', id],
    ['shipmentStatusChanged', 'in_progress', id],
  ])
  for (const request of receiver.received) t.equal(request.headers['webhook-id'], (JSON.parse(request.body) as { id: string }).id)

  const deliveries = await app.shipments.webhooks.deliveries(subscription.id)
  const attempts = deliveries.flatMap((delivery) => delivery.attemptLog)
  t.equal(attempts.length, 4, 'every attempt logged')
  t.same(attempts.map((attempt) => attempt.statusCode).sort(), [204, 204, 503, 503])
  t.ok(attempts.filter((attempt) => attempt.statusCode === 503).every((attempt) => attempt.error === 'The receiver answered 503.'))
  t.ok(attempts.every((attempt) => attempt.durationMs >= 0 && typeof attempt.date === 'string'))
  t.match(await app.shipments.webhooks.get(subscription.id), { enabled: true, failureCount: 0, disabledReason: null }, 'a success clears the failure count')
})

t.test('one shipment\'s deliveries reach a subscription one at a time in commit order, with their sequence (a batch went out at once, newest first)', async (t) => {
  // Shipment A's first delivery fails once, C's fails for good; each answer takes 40 ms, so deliveries
  // sent together would overlap at the receiver.
  const shipmentOf = (body: string) => (JSON.parse(body) as { data: { shipment: { id: number } } }).data.shipment.id
  const statusOf = (body: string) => (JSON.parse(body) as { data: { to: string } }).data.to
  let a = 0
  let c = 0
  let failedA = false
  const receiver = await startReceiver(
    t,
    (_, body) => {
      if (shipmentOf(body) === a && !failedA) return (failedA = true), 503
      return shipmentOf(body) === c && statusOf(body) === 'in_progress' ? 500 : 204
    },
    40,
  )
  const app = await buildTestApp(t, fastRetries)
  const subscription = await app.shipments.webhooks.create({ url: receiver.url, events: ['shipmentStatusChanged'] })
  const { shipmentIds } = await orderWithShipments(app, 3)
  ;[a, , c] = shipmentIds
  const statuses = ['in_progress', 'fulfilled', 'shipped'] as const
  // Quick succession: one shipment's events are delivered in one batch, and so are their deliveries.
  for (const id of shipmentIds) {
    for (const status of statuses) {
      const response = await postUpdate(app, id, { status })
      t.equal(response.statusCode, 200)
      t.equal(response.json().shipment.status, status)
    }
  }
  const settled = async () => (await app.shipments.webhooks.deliveries(subscription.id)).filter((delivery) => delivery.state !== 'pending').length === 9
  await eventually(app, settled, 20_000)
  t.ok(await settled(), 'every delivery is done or failed')

  const sequences = new Map((await app.shipments.outbox.list({ kind: 'event', name: 'shipmentStatusChanged' })).map((event) => [event.id, event.sequence]))
  const bodies = receiver.received.map((request) => ({ ...request, json: new Webhook(subscription.secret).verify(request.body, request.headers) as { id: string; sequence: number; data: { to: string; shipment: { id: number } } } }))
  t.ok(bodies.every((body) => body.json.sequence === sequences.get(body.json.id)), 'each carries its event\'s outbox sequence')
  for (const id of shipmentIds) {
    const ofShipment = bodies.filter((body) => body.json.data.shipment.id === id)
    const expected = id === a ? ['in_progress', ...statuses] : id === c ? ['in_progress', 'in_progress', 'in_progress', 'in_progress', 'fulfilled', 'shipped'] : [...statuses]
    t.same(ofShipment.map((body) => body.json.data.to), expected, `shipment ${id}: in commit order, a retry before the next`)
    t.ok(ofShipment.every((body, index) => index === 0 || body.json.sequence >= ofShipment[index - 1].json.sequence), `shipment ${id}: sequences never go back`)
    t.ok(ofShipment.every((body, index) => index === 0 || body.arrivedAt >= ofShipment[index - 1].answeredAt!), `shipment ${id}: one at a time`)
    t.equal(ofShipment.at(-1)!.json.data.to, (await app.shipments.shipments.get(id))!.status, `shipment ${id}: the receiver ends on the stored status`)
  }
  const deliveries = await app.shipments.webhooks.deliveries(subscription.id)
  const stateOf = (id: number) => deliveries.filter((delivery) => bodies.some((body) => body.json.id === delivery.eventId && body.json.data.shipment.id === id)).map((delivery) => [delivery.state, delivery.attempts])
  t.same(stateOf(a), [['done', 2], ['done', 1], ['done', 1]], 'A: the first after a retry')
  t.same(stateOf(c), [['failed', 4], ['done', 1], ['done', 1]], 'C: the next went once the first failed for good')
  t.same(stateOf(shipmentIds[1]), [['done', 1], ['done', 1], ['done', 1]])
})

t.test('manual redelivery sends a delivered event again under the same webhook-id', async (t) => {
  const receiver = await startReceiver(t, () => 200)
  const app = await buildTestApp(t, fastRetries)
  const subscription = await app.shipments.webhooks.create({ url: receiver.url, events: ['*'] })
  await orderWithShipments(app)
  await eventually(app, async () => (await app.shipments.webhooks.deliveries(subscription.id)).some((delivery) => delivery.state === 'done'))
  const [delivery] = await app.shipments.webhooks.deliveries(subscription.id)
  t.match(delivery, { eventName: 'shipmentCreated', state: 'done', attempts: 1 })
  t.equal(await app.shipments.webhooks.redeliver(delivery.deliveryId), true)
  await eventually(app, () => receiver.received.length === 2)
  t.equal(receiver.received[1].headers['webhook-id'], receiver.received[0].headers['webhook-id'])
  t.doesNotThrow(() => new Webhook(subscription.secret).verify(receiver.received[1].body, receiver.received[1].headers))
  await eventually(app, async () => (await app.shipments.webhooks.deliveries(subscription.id))[0].state === 'done')
  t.match((await app.shipments.webhooks.deliveries(subscription.id))[0], { state: 'done', attempts: 1, attemptLog: [{ statusCode: 200 }] }, 'attempts counted afresh')
  await t.rejects(app.shipments.webhooks.redeliver('no-such-delivery'), WebhookSubscriptionError)
})

t.test('receivers on loopback, private and documentation addresses are refused at create and update unless allowed; nothing is stored', async (t) => {
  const app = await buildTestApp(t, { outbox: { pollIntervalMs: 20 } })
  const refused = [
    'http://127.0.0.1:9/hooks',
    'http://localhost:9/hooks',
    'https://hooks.localhost/x',
    'http://[::1]:9/',
    'http://10.1.2.3/',
    'http://[::ffff:127.0.0.1]:9/',
    'http://169.254.169.254/latest/meta-data',
    'http://[fd00::1]/',
    'http://0.0.0.0:9/',
    'https://192.0.2.10/',
    'https://198.51.100.7/',
    'https://203.0.113.99/',
    'https://[2001:db8::1]/',
  ]
  for (const url of refused) {
    await t.rejects(app.shipments.webhooks.create({ url, events: ['*'] }), { name: 'WebhookSubscriptionError', message: /^url: The receiver .+ is a (private address|loopback name)\. \(webhooks\.allowPrivateAddresses allows it\)$/ }, url)
  }
  t.same(await app.shipments.webhooks.list(), [], 'nothing stored')
  const kept = await app.shipments.webhooks.create({ url: 'https://93.184.216.34/hooks', events: ['*'] })
  await t.rejects(app.shipments.webhooks.update(kept.id, { url: 'http://192.168.1.1/' }), /^url: The receiver 192\.168\.1\.1 is a private address/)
  t.equal((await app.shipments.webhooks.get(kept.id))!.url, 'https://93.184.216.34/hooks', 'the update changed nothing')

  const allowing = await buildTestApp(t, { webhooks: { allowPrivateAddresses: true } })
  t.match(await allowing.shipments.webhooks.create({ url: 'http://127.0.0.1:9/hooks', events: ['*'] }), { url: 'http://127.0.0.1:9/hooks' }, 'allowPrivateAddresses lets them in')
})

t.test('a stored receiver on a private address (a name that resolves to one, a row from before) fails its delivery at once, unreached', async (t) => {
  const receiver = await startReceiver(t, () => 200)
  const app = await buildTestApp(t, { outbox: { pollIntervalMs: 20 } })
  const { db, schema } = tables(app)
  const urls = [receiver.url, receiver.url.replace('127.0.0.1', 'localhost'), 'https://203.0.113.5/']
  const subscriptions = []
  for (const url of urls) {
    const subscription = await app.shipments.webhooks.create({ url: 'https://93.184.216.34/hooks', events: ['shipmentCreated'] })
    await db.update(schema.webhookSubscriptions).set({ url }).where(eq(schema.webhookSubscriptions.id, subscription.id))
    subscriptions.push(subscription)
  }
  await orderWithShipments(app)
  for (const [index, subscription] of subscriptions.entries()) {
    await eventually(app, async () => (await app.shipments.webhooks.deliveries(subscription.id)).some((delivery) => delivery.state === 'failed'))
    t.match(await app.shipments.webhooks.deliveries(subscription.id), [{ state: 'failed', attempts: 1, lastError: /is a (private address|loopback name)/ }], `${urls[index]}: failed at once, retrying cannot help`)
  }
  t.equal(receiver.received.length, 0, 'nothing reached the receiver')
})

t.test('a receiver that never answers times out; a run of failures disables the subscription', async (t) => {
  const receiver = await startReceiver(t, () => null)
  const app = await buildTestApp(t, { outbox: { pollIntervalMs: 20, retryDelaysMs: [10, 10, 10, 10] }, webhooks: { allowPrivateAddresses: true, timeoutMs: 150, disableAfterFailures: 3 } })
  const subscription = await app.shipments.webhooks.create({ url: receiver.url, events: ['shipmentCreated'] })
  // Six shipments: six deliveries in flight at once, so some fail after the third disabled the subscription.
  await orderWithShipments(app, 6)
  await eventually(app, async () => !(await app.shipments.webhooks.get(subscription.id))!.enabled)
  await eventually(app, async () => (await app.shipments.webhooks.deliveries(subscription.id)).every((delivery) => delivery.state === 'failed'))
  const after = await app.shipments.webhooks.get(subscription.id)
  t.match(after, { enabled: false, failureCount: 3, disabledReason: 'Disabled after 3 failed attempts in a row; the last: No answer within 150 ms.' }, 'failures after the disabling are not counted')
  const deliveries = await app.shipments.webhooks.deliveries(subscription.id)
  t.equal(deliveries.length, 6)
  t.ok(deliveries.some((delivery) => delivery.lastError === 'The subscription is disabled.'), 'pending deliveries stop')
  t.ok(deliveries.every((delivery) => delivery.attemptLog.some((attempt) => attempt.error === 'No answer within 150 ms.')), 'every delivery was tried before')

  const enabled = await app.shipments.webhooks.update(subscription.id, { enabled: true })
  t.match(enabled, { enabled: true, failureCount: 0, disabledReason: null }, 'enabling again starts afresh')
})

t.test('subscriptions: every field checked, with a message naming it; nothing stored on refusal', async (t) => {
  const app = await buildTestApp(t)
  const refusals: Array<[unknown, RegExp]> = [
    [{ url: 'ftp://example.com', events: ['*'] }, /^url: must be an absolute http or https URL$/],
    [{ url: 'not a url', events: ['*'] }, /^url: must be an absolute http or https URL$/],
    [{ url: 'https://user:pw@example.com/', events: ['*'] }, /^url: must not carry credentials$/],
    [{ url: `https://example.com/${'a'.repeat(2048)}`, events: ['*'] }, /^url: should contain at most 2048 characters\.?$/],
    [{ url: 'https://example.com/', events: [] }, /^events: name at least one event, or "\*"$/],
    [{ url: 'https://example.com/', events: ['shipmentShipped'] }, /^events: "shipmentShipped" is not an event/],
    [{ url: 'https://example.com/', events: ['*'], secret: 'short' }, /^secret: must be "whsec_"/],
    [{ url: 'https://example.com/', events: ['*'], description: 'x\u0000' }, /^description: contains characters that are not allowed/],
    [{ events: ['*'] }, /^url and events are required$/],
  ]
  for (const [input, message] of refusals) {
    await t.rejects(app.shipments.webhooks.create(input as never), { name: 'WebhookSubscriptionError', message })
  }
  t.same(await app.shipments.webhooks.list(), [])
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
  const created = await app.shipments.webhooks.create({ url: 'https://example.com/hooks', events: ['orderAdvanced', 'shipmentDeleted'], secret })
  t.equal(created.secret, secret, 'a given secret is kept')
  t.match(await app.shipments.webhooks.list(), [{ id: created.id, url: 'https://example.com/hooks', events: ['orderAdvanced', 'shipmentDeleted'], enabled: true }])
  await t.rejects(app.shipments.webhooks.update(created.id, { events: ['nope' as never] }), /events: "nope"/)
  const rotated = await app.shipments.webhooks.rotateSecret(created.id)
  t.not(rotated, secret)
  await app.shipments.webhooks.remove(created.id)
  t.same(await app.shipments.webhooks.list(), [])
  await t.rejects(app.shipments.webhooks.remove(created.id), /id: no webhook subscription/)
})
