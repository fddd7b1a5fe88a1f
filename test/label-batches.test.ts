// Label batches against the local EasyPost imitation, on both engines: refused creations write nothing;
// 200 parcels end with exactly 200 purchases through 429s (Retry-After honoured), lost answers and an
// instance SIGKILLed while it holds the batch (another takes over when the lease runs out); the failed
// retried without a second purchase; cancel; the routes' statuses and bodies; the batchCompleted event.
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp, insertOrder } from './fixtures/app.js'
import { tables, testDatabase } from './fixtures/database.js'
import { easyPostImitation } from './fixtures/easypost-api.js'
import { exited, lineMatching } from './fixtures/processes.js'
import { adminClient } from './fixtures/admin.js'
import type { ShipmentsPluginOptions } from '../src/index.js'

const API_KEY = 'EZTK-batch-test-key-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const PRIORITY = { rules: [], fallback: { integration: 'easypost', choice: { kind: 'service', carrier: 'USPS', service: 'Priority' } } }
/** Short leases and back-offs, so the file runs in seconds. */
const FAST = { pollIntervalMs: 20, leaseMs: 1500, backoffMs: 20, maxBackoffMs: 300, rateLimitCooldownMs: 100 }
const JSON_HEADERS = { ...as('admin'), 'content-type': 'application/json' }

type Imitation = Awaited<ReturnType<typeof easyPostImitation>>

async function setup(t: Test, batches: NonNullable<ShipmentsPluginOptions['batches']> = {}, reuse?: { database: string; imitation: Imitation }, plugin: Partial<ShipmentsPluginOptions> = {}) {
  const imitation = reuse?.imitation ?? (await easyPostImitation(t, { apiKey: API_KEY }))
  const database = reuse?.database ?? (await testDatabase(t, 'batches', 'migrated'))
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM }, lockTimeoutMs: 30_000, batches: { ...FAST, ...batches }, outbox: { pollIntervalMs: 50 }, ...plugin }, database)
  if (!reuse) {
    await app.shipments.integrations.create({
      name: 'EasyPost',
      handle: 'easypost',
      providerId: 'easypost',
      settings: { webhookSecret: 'webhook-secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 3000 },
    })
    await setRules(app, PRIORITY)
  }
  return { app, imitation, database }
}

async function setRules(app: FastifyInstance, rules: unknown) {
  const { db, schema } = tables(app)
  const value = JSON.stringify(rules)
  await db.insert(schema.packageState).values({ key: 'rules.shippingRules', value }).onConflictDoUpdate({ target: schema.packageState.key, set: { value } })
}

/** `count` shipments (two to an order, each order with a US address), each with `parcelsEach` parcels. */
async function shipmentsWithParcels(app: FastifyInstance, count: number, parcelsEach: number): Promise<number[]> {
  const { db, schema } = tables(app)
  const ids: number[] = []
  while (ids.length < count) {
    const orderId = await insertOrder(app)
    await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Dr. Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', countryCode: 'US' })
    for (const shipment of await app.shipments.shipments.create(orderId, { count: Math.min(2, count - ids.length) })) {
      ids.push(shipment.id)
      for (let parcel = 0; parcel < parcelsEach; parcel++) {
        await app.shipments.deliveries.addParcel(shipment.id, { weight: { value: String(1 + parcel), unit: 'kg' }, dimensions: { length: '30', width: '20', height: '10', unit: 'cm' } })
      }
    }
  }
  return ids
}

const post = (app: FastifyInstance, url: string, body?: unknown, user: Parameters<typeof as>[0] = 'admin') =>
  app.inject({ method: 'POST', url: `/shipments/api${url}`, headers: { ...as(user), ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
const get = (app: FastifyInstance, url: string, user: Parameters<typeof as>[0] = 'admin') => app.inject({ method: 'GET', url: `/shipments/api${url}`, headers: as(user) })

/** Waits until the batch is finished or cancelled (every item final); its page of the first 500 items. */
async function settled(app: FastifyInstance, batchId: number, timeoutMs = 40_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const page = await app.shipments.batches.get(batchId, { perPage: 500 })
    if (page.batch.state === 'finished' || page.batch.state === 'cancelled' || Date.now() > deadline) return page
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Every parcel's purchased label operations: exactly one each, or the ids of those with another count. */
async function purchasesPerParcel(app: FastifyInstance) {
  const { db, schema } = tables(app)
  const operations = await db.select().from(schema.labelOperations)
  const purchased = new Map<number, number>()
  for (const operation of operations) if (operation.state === 'purchased') purchased.set(operation.parcelId, (purchased.get(operation.parcelId) ?? 0) + 1)
  return purchased
}

async function batchEvents(app: FastifyInstance) {
  return app.shipments.outbox.list({ kind: 'event', name: 'batchCompleted' })
}

async function batchRows(app: FastifyInstance) {
  const { db, schema } = tables(app)
  return { batches: await db.select().from(schema.labelBatches), items: await db.select().from(schema.labelBatchItems) }
}

t.test('refused creations answer 401, 403 or 422 naming the field, and write nothing', async (t) => {
  const { app, imitation } = await setup(t, { worker: false, maxShipments: 3 })
  const shipmentIds = await shipmentsWithParcels(app, 4, 1)
  const cases: Array<[string, unknown, number, Record<string, unknown>]> = [
    ['neither ids nor a filter', {}, 422, { errors: { shipmentIds: ['give either shipmentIds or filter (one of them)'] } }],
    ['both', { shipmentIds: [shipmentIds[0]], filter: {} }, 422, { errors: { shipmentIds: ['give either shipmentIds or filter (one of them)'] } }],
    ['an unknown shipment', { shipmentIds: [shipmentIds[0], 999_999] }, 422, { errors: { shipmentIds: ['no such shipment (or deleted): 999999'] } }],
    ['over batches.maxShipments', { shipmentIds }, 422, { errors: { shipmentIds: [/at most 3 shipments \(batches.maxShipments\); 4 were given/] } }],
    ['a filter over the bound', { filter: { status: 'new' } }, 422, { errors: { filter: [/matches more than 3 shipments/] } }],
    ['a filter matching nothing', { filter: { status: 'shipped' } }, 422, { errors: { filter: ['matches no shipment'] } }],
    ['an unknown label format', { shipmentIds: [shipmentIds[0]], labelFormat: 'GIF' }, 422, { errors: { labelFormat: [/must be/] } }],
    ['an id that is no id', { shipmentIds: [0] }, 422, { errors: { 'shipmentIds.0': [/>= 1/] } }],
  ]
  for (const [name, body, status, expected] of cases) {
    const response = await post(app, '/label-batches', body)
    t.equal(response.statusCode, status, `${name}: ${response.body}`)
    t.match(response.json(), { success: false, errorCode: 'SHIPMENTS_VALIDATION_FAILED', ...expected }, name)
  }
  const anonymous = await app.inject({ method: 'POST', url: '/shipments/api/label-batches', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ shipmentIds }) })
  t.equal(anonymous.statusCode, 401)
  const editor = await post(app, '/label-batches', { shipmentIds: [shipmentIds[0]] }, 'editor')
  t.equal(editor.statusCode, 403)
  t.match(editor.json(), { errorCode: 'SHIPMENTS_FORBIDDEN', message: /shipments-buyLabels/ })
  t.equal((await get(app, '/label-batches', 'editor')).statusCode, 403, 'reading batches takes the label permission too')

  const stored = await batchRows(app)
  t.same([stored.batches.length, stored.items.length], [0, 0], 'no batch and no item written')
  t.equal(imitation.calls.length, 0, 'nothing asked of the provider')
  const missing = await get(app, '/label-batches/12345')
  t.equal(missing.statusCode, 404)
  t.match(missing.json(), { errorCode: 'SHIPMENTS_LABEL_BATCH_NOT_FOUND' })
  t.equal((await get(app, '/label-batches/abc')).statusCode, 404)
})

t.test("a 429's Retry-After is honoured: the parcel is tried again no sooner, and bought once", async (t) => {
  const { app, imitation } = await setup(t)
  const [shipmentId] = await shipmentsWithParcels(app, 1, 1)
  imitation.fault({ step: 'buy', kind: 'rate-limit', retryAfter: '1' })
  const batch = await app.shipments.batches.create({ shipmentIds: [shipmentId!] })
  const page = await settled(app, batch.id)
  t.match(page.items, [{ state: 'bought', attempts: 2, reason: null }])
  const buys = imitation.calls.filter((call) => call.step === 'buy')
  t.equal(buys.length, 2)
  t.ok(buys[1]!.at - buys[0]!.at >= 950, `tried again ${buys[1]!.at - buys[0]!.at} ms later (Retry-After: 1)`)
  t.equal(imitation.stats.buys, 1)
})

t.test('200 parcels through 429s and lost answers, the instance holding the batch SIGKILLed in the middle: another takes over when the lease runs out; exactly 200 purchases, bounded concurrency, one batchCompleted', async (t) => {
  const { app, imitation, database } = await setup(t, { worker: false })
  const shipmentIds = await shipmentsWithParcels(app, 100, 2)
  // Answers that take a moment, so that purchases overlap at the provider (the bound shows) and the kill
  // lands with purchases under way.
  imitation.setLatency(5)
  imitation.faultEvery({ step: 'buy', kind: 'rate-limit', retryAfter: '0' }, 19)
  imitation.faultEvery({ step: 'create', kind: 'rate-limit' }, 29)
  imitation.faultEvery({ step: 'buy', kind: 'lose-answer' }, 17)
  const created = await post(app, '/label-batches', { shipmentIds, labelFormat: 'PDF' })
  t.equal(created.statusCode, 201, created.body)
  const batch = created.json().batch
  t.match(batch, { state: 'queued', total: 200, done: 0, counts: { queued: 200, bought: 0 }, settings: { suggestParcels: false, labelFormat: 'PDF' }, userId: 'admin' })
  // The other process has no deliveries.shipFrom option: the stored setting serves both.
  await app.shipments.deliveries.setShipFrom(SHIP_FROM)

  const started = Date.now()
  const script = fileURLToPath(new URL('./fixtures/batch-worker.ts', import.meta.url))
  const child = spawn(process.execPath, ['--import', 'tsx', script, database, '1500'], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => child.kill('SIGKILL'))
  let bought = 0
  await lineMatching(child, (line) => line.startsWith('bought') && ++bought >= 50)
  // The next purchase is made at the provider but answered only 4 s later: the kill lands while it is made and unanswered.
  const buysBefore = imitation.calls.filter((call) => call.step === 'buy').length
  imitation.fault({ step: 'buy', kind: 'delay', ms: 4000 })
  for (const deadline = Date.now() + 10_000; imitation.calls.filter((call) => call.step === 'buy').length === buysBefore && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  await new Promise((resolve) => setTimeout(resolve, 50))
  child.kill('SIGKILL')
  t.equal((await exited(child)).signal, 'SIGKILL', 'killed while it held the batch')
  const half = await app.shipments.batches.get(batch.id)
  t.equal(half.batch.state, 'running', 'the batch is still running, its lease held by the dead instance')
  // Labels bought whose item the dead instance had not written yet are found bought by the next one.
  t.ok(half.batch.counts.queued > 0 && half.batch.counts.bought > 0, `${half.batch.counts.bought} items written as bought before the kill, ${half.batch.counts.queued} queued`)
  const { db, schema } = tables(app)
  const open = (await db.select().from(schema.labelOperations)).filter((operation) => operation.state === 'pending').length
  t.ok(open >= 1, `${open} purchases under way when it died (${imitation.stats.buys} labels bought at the provider by then)`)

  const killedAt = Date.now()
  const other = await setup(t, {}, { database, imitation })
  // The takeover instance shares this process with the test and the imitation: its longest stall is noted
  // (the bench measures it alone), past the one-time load of the EasyPost client.
  await import('@easypost/api')
  const stalls = monitorEventLoopDelay({ resolution: 10 })
  stalls.enable()
  const page = await settled(other.app, batch.id, 60_000)
  stalls.disable()
  t.comment(`event-loop stalls while the batch was finished: the longest ${Math.round(stalls.max / 1e6)} ms, p99 ${Math.round(stalls.percentile(99) / 1e6)} ms, p99.9 ${Math.round(stalls.percentile(99.9) / 1e6)} ms`)
  t.comment(`taken over and finished ${Date.now() - killedAt} ms after the kill, ${Date.now() - started} ms in all`)
  t.match(page.batch, { state: 'finished', total: 200, done: 200, counts: { queued: 0, bought: 200, failed: 0, skipped: 0, cancelled: 0 } })
  t.equal(imitation.stats.buys, 200, 'exactly 200 purchases at the provider')
  t.equal(new Set(imitation.boughtReferences).size, 200, 'each for its own label operation')
  const purchases = await purchasesPerParcel(app)
  t.equal(purchases.size, 200)
  t.ok([...purchases.values()].every((count) => count === 1), 'no parcel bought twice')
  t.ok(imitation.stats.rateLimited >= 5, `the provider answered 429 ${imitation.stats.rateLimited} times`)
  t.ok(imitation.stats.maxInFlight <= 4 && imitation.stats.maxInFlight >= 2, `calls overlap, at most 4 at once (saw ${imitation.stats.maxInFlight})`)
  t.same(page.items.map((item) => item.position), [...page.items.map((item) => item.position)].sort((a, b) => a - b), 'items in pick order')
  t.ok(page.items.every((item) => item.operationId && item.carrier === 'USPS' && item.service === 'Priority'))
  t.ok(page.items.some((item) => item.attempts > 1), 'some parcels were tried again after a 429')

  const events = await batchEvents(app)
  t.equal(events.length, 1, 'one batchCompleted, from the instance that finished it')
  t.match(events[0]!.payload, { batchId: batch.id, counts: { bought: 200, failed: 0 }, failed: [], userId: 'admin', finishedAt: /^\d{4}-/ })
  const listed = await get(app, '/label-batches')
  t.equal(listed.statusCode, 200)
  t.match(listed.json(), { success: true, batches: [{ id: batch.id, state: 'finished', done: 200 }], nextBeforeId: null })
})

t.test('failures and skips are kept with their reasons; retry queues the failed again, and a lost purchase is recovered, never bought twice', async (t) => {
  // One purchase at a time: the faults meet the parcels in pick order.
  const { app, imitation } = await setup(t, { maxAttempts: 2, concurrency: 1 })
  const shipmentIds = await shipmentsWithParcels(app, 3, 1)
  const orderId = await insertOrder(app)
  const [bare] = await app.shipments.shipments.create(orderId)
  // In pick order: a refusal, a purchase whose outcome stays unknown, one bought, a shipment without parcels.
  imitation.fault({ step: 'buy', kind: 'error', status: 422, code: 'SHIPMENT.POSTAGE.FAILURE', message: 'The address is not deliverable.' })
  imitation.fault({ step: 'buy', kind: 'lose-answer' })
  imitation.fault({ step: 'retrieve', kind: 'error', status: 503, code: 'SERVICE_UNAVAILABLE', message: 'Try again later.' })
  imitation.fault({ step: 'retrieve', kind: 'error', status: 503, code: 'SERVICE_UNAVAILABLE', message: 'Try again later.' })
  const batch = await app.shipments.batches.create({ shipmentIds: [...shipmentIds, bare!.id] }, {}, { userId: 'admin' })
  const first = await settled(app, batch.id)
  t.match(first.batch, { state: 'finished', counts: { bought: 1, failed: 2, skipped: 1 } })
  t.match(first.items, [
    { shipmentId: shipmentIds[0], state: 'failed', reason: /The carrier refused: .*The address is not deliverable/ },
    { shipmentId: shipmentIds[1], state: 'failed', attempts: 2, reason: /^no outcome after 2 tries: / },
    { shipmentId: shipmentIds[2], state: 'bought' },
    { shipmentId: bare!.id, parcelId: null, state: 'skipped', reason: /the shipment has no parcels/ },
  ])
  t.equal(imitation.stats.buys, 2, 'the lost answer was a purchase')
  const [completed] = await batchEvents(app)
  t.match(completed!.payload, { counts: { bought: 1, failed: 2, skipped: 1 }, failed: [{ shipmentId: shipmentIds[0], reason: /not deliverable/ }, { shipmentId: shipmentIds[1] }] })

  const retried = await post(app, `/label-batches/${batch.id}/retry`)
  t.equal(retried.statusCode, 200, retried.body)
  t.match(retried.json(), { success: true, retried: 2, batch: { id: batch.id, state: 'queued', counts: { queued: 2, failed: 0 } } })
  const second = await settled(app, batch.id)
  t.match(second.batch, { state: 'finished', counts: { bought: 3, failed: 0, skipped: 1 } })
  t.equal(imitation.stats.buys, 3, 'the refused one bought now; the lost one found bought, not bought again')
  t.ok([...(await purchasesPerParcel(app)).values()].every((count) => count === 1))
  t.equal((await batchEvents(app)).length, 2, 'a batchCompleted for each finish')
  const empty = await post(app, `/label-batches/${batch.id}/retry`)
  t.match(empty.json(), { success: true, retried: 0, batch: { state: 'finished' } })
})

t.test('no matching rule skips with the reason; a label bought before counts as bought without a purchase; batchCompleted reaches a webhook', async (t) => {
  const bodies: string[] = []
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => {
      bodies.push(Buffer.concat(chunks).toString())
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
  const { app, imitation } = await setup(t, {}, undefined, { webhooks: { allowPrivateAddresses: true } })
  await app.shipments.webhooks.create({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, events: ['batchCompleted'] })
  const [labelled, unruled] = await shipmentsWithParcels(app, 2, 1)
  const [parcel] = await app.shipments.deliveries.listParcels(labelled!)
  await app.shipments.deliveries.buyLabel(labelled!, parcel!.id, { integration: 'easypost', carrier: 'USPS', service: 'Priority' })
  await setRules(app, { rules: [], fallback: null })
  const batch = await app.shipments.batches.create({ shipmentIds: [labelled!, unruled!] })
  const page = await settled(app, batch.id)
  t.match(page.items, [
    { shipmentId: labelled, state: 'bought', operationId: /\S/, carrier: 'USPS' },
    { shipmentId: unruled, state: 'skipped', reason: 'no shipping rule matches this parcel and there is no default' },
  ])
  t.equal(imitation.stats.buys, 1, 'only the label bought by hand')
  for (const deadline = Date.now() + 10_000; bodies.length === 0 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(bodies.length, 1, 'one webhook delivery')
  t.match(JSON.parse(bodies[0]!), { type: 'batchCompleted', data: { batchId: batch.id, counts: { bought: 1, skipped: 1, failed: 0 }, failed: [] } })
})

t.test('cancel: the items not started are cancelled; a closed batch refuses cancel and retry with 409', async (t) => {
  const { app, imitation } = await setup(t, { worker: false })
  const shipmentIds = await shipmentsWithParcels(app, 3, 1)
  const created = await post(app, '/label-batches', { shipmentIds })
  const { id } = created.json().batch
  const paged = await get(app, `/label-batches/${id}?perPage=2`)
  t.equal(paged.statusCode, 200)
  const firstPage = paged.json()
  t.match(firstPage, { success: true, batch: { id, state: 'queued', total: 3 }, items: [{ position: 0, state: 'queued' }, { position: 1 }], nextCursor: /^1\.\d+$/ })
  const rest = await get(app, `/label-batches/${id}?perPage=2&cursor=${firstPage.nextCursor}`)
  t.match(rest.json(), { items: [{ position: 2 }], nextCursor: null })
  t.equal((await get(app, `/label-batches/${id}?cursor=nope`)).statusCode, 422)

  const cancelled = await post(app, `/label-batches/${id}/cancel`)
  t.equal(cancelled.statusCode, 200, cancelled.body)
  t.match(cancelled.json(), { success: true, cancelled: 3, batch: { id, state: 'cancelled', counts: { cancelled: 3, queued: 0 }, dateFinished: /\S/ } })
  const again = await post(app, `/label-batches/${id}/cancel`)
  t.equal(again.statusCode, 409)
  t.match(again.json(), { name: 'Conflict', status: 409, errorCode: 'SHIPMENTS_LABEL_BATCH_CLOSED', message: `Label batch ${id} is cancelled: it cannot be cancelled.` })
  const retry = await post(app, `/label-batches/${id}/retry`)
  t.equal(retry.statusCode, 409)
  t.match(retry.json(), { errorCode: 'SHIPMENTS_LABEL_BATCH_CLOSED' })
  t.equal((await post(app, '/label-batches/99999/cancel')).statusCode, 404)
  t.equal(imitation.calls.length, 0, 'nothing bought')
  t.equal((await batchEvents(app)).length, 0, 'a cancelled batch sends no batchCompleted')
})

t.test('the admin pages: all that match the filter, the progress page, retry and cancel by form; the editor may not', async (t) => {
  const { app, imitation } = await setup(t, { concurrency: 1 }, undefined, { admin: {} })
  const shipmentIds = await shipmentsWithParcels(app, 2, 1)
  await app.shipments.shipments.update(shipmentIds[1]!, { status: 'on_hold' })
  imitation.fault({ step: 'buy', kind: 'error', status: 422, code: 'SHIPMENT.POSTAGE.FAILURE', message: 'The address is not deliverable.' })
  const admin = adminClient(app, 'admin')
  const list = await admin.get('/shipments?status=new')
  t.equal(list.statusCode, 200)
  t.match(list.body, /Buy labels for all that match this filter/)
  t.match(list.body, /name="filterStatus" value="new"/)
  const created = await admin.post('/shipments/bulk-status', {})
  t.equal(created.statusCode, 400, 'a form without the status refuses as before')
  const made = await admin.post('/label-batches', { scope: 'filter', filterStatus: 'new', filterOrder: '', filterQ: '', labelFormat: 'PDF' })
  t.equal(made.statusCode, 303, made.body)
  const location = String(made.headers.location)
  t.match(location, /^\/shipments\/admin\/label-batches\/\d+\?notice=created$/)
  const id = Number(/label-batches\/(\d+)/.exec(location)![1])
  const finished = await settled(app, id)
  t.match(finished.batch, { total: 1, counts: { failed: 1 } }, 'only the shipment the filter listed')
  const page = await admin.get(`/label-batches/${id}`)
  t.equal(page.statusCode, 200)
  t.match(page.body, /The carrier refused: .*The address is not deliverable/)
  t.match(page.body, /Retry the failed ones/)
  t.notMatch(page.body, /data-running/, 'a finished batch does not refresh itself')
  const retried = await admin.post(`/label-batches/${id}/retry`, {})
  t.equal(retried.statusCode, 303)
  t.match((await settled(app, id)).batch, { counts: { bought: 1, failed: 0 } })
  const cancel = await admin.post(`/label-batches/${id}/cancel`, {})
  t.equal(cancel.statusCode, 422, 'a finished batch cannot be cancelled')
  t.match(cancel.body, /cannot be cancelled/)
  const none = await admin.post('/label-batches', { scope: 'selected', labelFormat: 'PDF' })
  t.equal(none.statusCode, 400)
  const batches = await admin.get('/label-batches')
  t.match(batches.body, new RegExp(`Batch ${id}`))
  const editor = adminClient(app, 'editor')
  t.equal((await editor.get('/label-batches')).statusCode, 403)
  t.notMatch((await editor.get('/shipments')).body, /Buy labels for the selected/, 'no batch controls without the label permission')
})

t.test('a shipment without parcels gets parcels suggested from the boxes (suggestParcels), each then bought; without boxes that fit, skipped with the reason', async (t) => {
  const { app, imitation } = await setup(t, { concurrency: 2 })
  await app.shipments.boxes.createBox({ name: 'Mug box', innerDimensions: { length: '20', width: '15', height: '12', unit: 'cm' }, emptyWeight: { value: '100', unit: 'g' }, maxWeight: { value: '1000', unit: 'g' } })
  const order = (items: Array<{ name: string; quantity: number; weight: number; length: string }>) =>
    app.shipments.referenceOrders!.createOrder({
      reference: `B-${Math.random().toString(36).slice(2, 8)}`,
      isCompleted: true,
      shippingAddress: { name: 'Ada Lovelace', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', country: 'US' },
      items: items.map((item) => ({ ...item, sku: item.name.toUpperCase(), weightUnit: 'g', dimensions: { length: item.length, width: '9', height: '10', unit: 'cm' } })),
    })
  // Three mugs of 350 g: two boxes (1 kg each at most). A rug fits no box.
  const [mugs] = await app.shipments.shipments.create(await order([{ name: 'Mug', quantity: 3, weight: 350, length: '12' }]), { rule: 'remaining' })
  const [rug] = await app.shipments.shipments.create(await order([{ name: 'Rug', quantity: 1, weight: 500, length: '150' }]), { rule: 'remaining' })
  const batch = await app.shipments.batches.create({ shipmentIds: [mugs!.id, rug!.id] }, { suggestParcels: true })
  t.match(batch, { total: 2, settings: { suggestParcels: true } })
  const page = await settled(app, batch.id)
  t.match(page.batch, { state: 'finished', total: 3, counts: { bought: 2, skipped: 1 } })
  const parcels = await app.shipments.deliveries.listParcels(mugs!.id)
  t.equal(parcels.length, 2, 'two parcels suggested and added')
  t.same(
    page.items.map((item) => [item.position, item.shipmentId, item.state]),
    [
      [0, mugs!.id, 'bought'],
      [0, mugs!.id, 'bought'],
      [1, rug!.id, 'skipped'],
    ],
    "the shipment's parcels take its place in pick order",
  )
  t.same(page.items.slice(0, 2).map((item) => item.parcelId).sort(), parcels.map((parcel) => parcel.id).sort())
  t.match(page.items[2], { parcelId: null, reason: /no parcels could be suggested from the boxes \(line \d+ × 1: too large or too heavy for every box/ })
  t.equal(imitation.stats.buys, 2)
})

t.test("a batch's print job: its bought parcels in pick order handed to the print job; nothing bought, nothing to print", async (t) => {
  const { app } = await setup(t, {}, undefined, { admin: {} })
  const shipmentIds = await shipmentsWithParcels(app, 2, 1)
  const batch = await app.shipments.batches.create({ shipmentIds })
  const page = await settled(app, batch.id)
  t.match(page.items.map((item) => item.state), ['bought', 'bought'])
  const parcels = await app.shipments.batches.boughtParcels(batch.id, 1000)
  t.same(parcels, page.items.map((item) => ({ shipmentId: item.shipmentId, parcelId: item.parcelId })), 'in pick order')
  // The labels are PDF: a ZPL print job names them and fetches nothing.
  const zpl = await app.inject({ method: 'GET', url: `/shipments/api/label-batches/${batch.id}/print?format=zpl`, headers: as('admin') })
  t.equal(zpl.statusCode, 422)
  for (const { parcelId } of parcels) t.match(zpl.body, new RegExp(`\\b${parcelId}\\b`))
  t.equal((await app.inject({ method: 'GET', url: `/shipments/api/label-batches/${batch.id}/print`, headers: as('viewer') })).statusCode, 403)
  const admin = adminClient(app, 'admin')
  const progress = await admin.get(`/label-batches/${batch.id}`)
  t.match(progress.body, new RegExp(`<form method="get" action="/shipments/admin/label-batches/${batch.id}/print" target="_blank" aria-label="Print the labels"`))
  t.match(progress.body, /Print the 2 labels<\/button>/)
  const refusedPage = await admin.get(`/label-batches/${batch.id}/print?format=zpl`)
  t.equal(refusedPage.statusCode, 422)
  t.match(refusedPage.body, /<h1>Request refused<\/h1>/)

  await setRules(app, { rules: [], fallback: null })
  const [another] = await shipmentsWithParcels(app, 1, 1)
  const skipped = await app.shipments.batches.create({ shipmentIds: [another!] })
  t.match((await settled(app, skipped.id)).items, [{ state: 'skipped' }])
  const nothing = await app.inject({ method: 'GET', url: `/shipments/api/label-batches/${skipped.id}/print`, headers: as('admin') })
  t.equal(nothing.statusCode, 409)
  t.match(nothing.json(), { errorCode: 'SHIPMENTS_LABEL_BATCH_NOTHING_TO_PRINT' })
  t.equal((await app.inject({ method: 'GET', url: '/shipments/api/label-batches/999999/print', headers: as('admin') })).statusCode, 404)
})
