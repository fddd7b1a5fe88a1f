// Returns as reverse shipments: requested against what shipped minus what came back (a 422 naming the
// line, under the order's lock, across processes), the states with history and events, a tracking
// number by hand, receiving line by line, a return label bought exactly once through EasyPost (a return
// shipment) and moved by its tracker through the same tracking webhook.
import t, { type Test } from 'tap'
import fc from 'fast-check'
import { eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp } from './fixtures/app.js'
import { tables, testDatabase } from './fixtures/database.js'
import { easyPostImitation } from './fixtures/easypost-api.js'
import { completedOrderWithLines } from './fixtures/orders.js'
import { exited, lineMatching, spawnWorker } from './fixtures/processes.js'
import { contentTypes, hostileString, snapshotDatabase, STACK_TRACE } from './fixtures/hostile.js'
import { signEasyPostEvent, type ShipmentsPluginOptions } from '../src/index.js'

const API_KEY = 'EZTK-return-test-key-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }

/** A completed order of Mug x2, Tea x3, Spoon x1; a shipment of Mug x2 and Tea x1 shipped, one of Tea x2 not. */
async function orderWithShipped(app: FastifyInstance, reference = 'R100') {
  const { orderId, lineIds } = await completedOrderWithLines(app, reference, [
    { name: 'Mug', sku: 'MUG', quantity: 2 },
    { name: 'Tea', sku: 'TEA', quantity: 3 },
    { name: 'Spoon', sku: 'SPN', quantity: 1 },
  ])
  const [mug, tea, spoon] = lineIds
  const [shipped] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: mug!, quantity: 2 }, { lineItemId: tea!, quantity: 1 }] })
  await app.shipments.shipments.update(shipped!.id, { status: 'shipped' })
  await app.shipments.shipments.create(orderId, { items: [{ lineItemId: tea!, quantity: 2 }] })
  return { orderId, mug: mug!, tea: tea!, spoon: spoon!, shippedId: shipped!.id }
}

async function setup(t: Test, options: Partial<ShipmentsPluginOptions> = {}, database?: string) {
  const app = await buildTestApp(t, options, database)
  return { app, ...(await orderWithShipped(app)) }
}

const post = (app: FastifyInstance, url: string, payload: unknown, user: Parameters<typeof as>[0] = 'admin') =>
  app.inject({ method: 'POST', url: `/shipments/api${url}`, headers: { ...as(user), 'content-type': 'application/json' }, payload: JSON.stringify(payload) })

async function storedReturns(app: FastifyInstance) {
  const { db, schema } = tables(app)
  return db.select().from(schema.returns).orderBy(schema.returns.id)
}

async function returnEvents(app: FastifyInstance) {
  return (await app.shipments.outbox.list({ kind: 'event' })).filter((message) => message.name.startsWith('return'))
}

t.test('a return is requested for shipped lines: stored with its lines, numbered, with history and a returnRequested event', async (t) => {
  const { app, orderId, mug } = await setup(t)
  const response = await post(app, `/orders/${orderId}/returns`, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged', note: 'Chipped handle' }], message: 'Customer called' })
  t.equal(response.statusCode, 201, response.body)
  const body = response.json()
  t.match(body, {
    success: true,
    return: { orderId, reference: 'R100-r001', state: 'requested', lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged', note: 'Chipped handle', received: null }], label: null, labelPending: false, dateReceived: null },
  })
  const [row] = await storedReturns(app)
  t.match(row, { id: body.return.id, state: 'requested', lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged', note: 'Chipped handle', received: null }] })
  const history = await app.inject({ url: `/shipments/api/returns/${row!.id}/history`, headers: as('viewer') })
  t.equal(history.statusCode, 200)
  t.match(history.json().history, [{ fromState: null, toState: 'requested', message: 'Customer called', userId: 'admin', source: 'api' }])
  const events = await returnEvents(app)
  t.same(events.map((event) => event.name), ['returnRequested'])
  t.match(events[0]!.payload, { return: { id: row!.id, state: 'requested' }, from: null, to: 'requested', userId: 'admin', source: 'api' })
  const read = await app.inject({ url: `/shipments/api/returns/${row!.id}`, headers: as('viewer') })
  t.same(read.json(), { success: true, return: body.return })
  const second = await post(app, `/orders/${orderId}/returns`, { lines: [{ lineItemId: mug, quantity: 1, reason: 'other' }] })
  t.equal(second.json().return.reference, 'R100-r002')
})

t.test('over what shipped minus what returns hold: a 422 naming the line, and nothing stored', async (t) => {
  const { app, orderId, mug, tea, spoon } = await setup(t)
  t.equal((await post(app, `/orders/${orderId}/returns`, { lines: [{ lineItemId: mug, quantity: 2, reason: 'damaged' }] })).statusCode, 201)
  const over = await post(app, `/orders/${orderId}/returns`, { lines: [{ lineItemId: tea, quantity: 1, reason: 'other' }, { lineItemId: mug, quantity: 1, reason: 'damaged' }] })
  t.equal(over.statusCode, 422)
  t.same(over.json(), { success: false, errors: { 'lines.1': [`Line ${mug}: 1 to return, 0 of 2 shipped left to return.`] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' })
  const unshipped = await post(app, `/orders/${orderId}/returns`, { lines: [{ lineItemId: tea, quantity: 2, reason: 'other' }, { lineItemId: spoon, quantity: 1, reason: 'other' }] })
  t.equal(unshipped.statusCode, 422, 'a tea unit on the unshipped shipment is not returnable, nor the spoon')
  t.same(unshipped.json(), {
    success: false,
    errors: { 'lines.0': [`Line ${tea}: 2 to return, 1 of 1 shipped left to return.`], 'lines.1': [`Line ${spoon}: 1 to return, none of it shipped.`] },
    errorCode: 'SHIPMENTS_VALIDATION_FAILED',
  })
  t.equal((await storedReturns(app)).length, 1, 'only the first return was stored')
  t.same((await returnEvents(app)).length, 1)

  const readable = await app.inject({ url: `/shipments/api/orders/${orderId}/returnable`, headers: as('viewer') })
  t.equal(readable.statusCode, 200)
  t.same(readable.json().lines, [
    { lineItemId: mug, sku: 'MUG', name: 'Mug', shipped: 2, returned: 2, returnable: 0 },
    { lineItemId: tea, sku: 'TEA', name: 'Tea', shipped: 1, returned: 0, returnable: 1 },
    { lineItemId: spoon, sku: 'SPN', name: 'Spoon', shipped: 0, returned: 0, returnable: 0 },
  ])

  // A rejected return holds nothing: its units may be returned again.
  const [first] = await storedReturns(app)
  const rejected = await post(app, `/returns/${first!.id}`, { state: 'rejected', message: 'Outside the return window' })
  t.equal(rejected.statusCode, 200, rejected.body)
  t.match(rejected.json().return, { state: 'rejected', stateMessage: 'Outside the return window' })
  t.equal((await post(app, `/orders/${orderId}/returns`, { lines: [{ lineItemId: mug, quantity: 2, reason: 'damaged' }] })).statusCode, 201)
})

t.test('bad input is a 4xx naming the field, and changes nothing', async (t) => {
  const { app, orderId, mug } = await setup(t, { returns: { reasons: ['damaged', 'too_small'] } })
  const cases: Array<[unknown, string]> = [
    [{ lines: [{ lineItemId: mug, quantity: 1, reason: 'bored' }] }, 'lines.0'],
    [{ lines: [{ lineItemId: mug, quantity: 0, reason: 'damaged' }] }, 'lines.0.quantity'],
    [{ lines: [] }, 'lines'],
    [{ lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }, { lineItemId: mug, quantity: 1, reason: 'damaged' }] }, 'lines.1'],
  ]
  for (const [payload, field] of cases) {
    const response = await post(app, `/orders/${orderId}/returns`, payload)
    t.equal(response.statusCode, 422, JSON.stringify(payload))
    t.ok(Object.keys(response.json().errors).includes(field), `${field} named: ${response.body}`)
  }
  t.same((await post(app, `/orders/${orderId}/returns`, { lines: [{ lineItemId: mug, quantity: 1, reason: 'bored' }] })).json().errors, { 'lines.0': ['reason must be one of damaged, too_small'] })
  t.equal((await post(app, '/orders/424242/returns', { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }] })).statusCode, 404)
  t.equal((await post(app, `/orders/${orderId}/returns`, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }] }, 'editor')).statusCode, 403, 'manageReturns is needed')
  t.equal((await app.inject({ method: 'POST', url: `/shipments/api/orders/${orderId}/returns`, payload: {} })).statusCode, 401)
  t.equal((await app.inject({ url: '/shipments/api/returns/99999', headers: as('viewer') })).statusCode, 404)
  t.equal((await app.inject({ url: '/shipments/api/returns/abc', headers: as('viewer') })).statusCode, 404)
  t.equal((await storedReturns(app)).length, 0)
  t.equal((await returnEvents(app)).length, 0)
  await t.rejects(app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 1, reason: 'bored' }] }), { name: 'ShipmentValidationError' }, 'the service checks as the route does')
  const extra = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }], extra: true } as never).catch((error: { errors?: unknown }) => error.errors)
  t.same(extra, { extra: ['is not a field of a return'] }, 'a field the service does not know')
  t.equal((await storedReturns(app)).length, 0)
})

t.test('the states: one update path with history, events, a tracking number by hand, receiving line by line, closing', async (t) => {
  const { app, orderId, mug, tea } = await setup(t)
  const created = (await post(app, `/orders/${orderId}/returns`, { lines: [{ lineItemId: mug, quantity: 2, reason: 'damaged' }, { lineItemId: tea, quantity: 1, reason: 'other' }] })).json().return
  const id = created.id as number
  const received: unknown[] = []
  app.shipments.events.on('returnReceived', (event) => void received.push(event.return.lines))

  t.equal((await post(app, `/returns/${id}`, { state: 'closed' })).statusCode, 409, 'requested cannot close')
  t.same((await post(app, `/returns/${id}`, { state: 'rejected' })).json(), { success: false, errors: { message: ['is required to reject a return'] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' })
  t.equal((await post(app, `/returns/${id}`, { state: 'authorised' }, 'editor')).statusCode, 403)
  const authorised = await Promise.all(Array.from({ length: 5 }, () => post(app, `/returns/${id}`, { state: 'authorised', message: 'OK to return' })))
  t.same([...new Set(authorised.map((response) => response.statusCode))], [200], 'repeats answer 200')
  t.equal(authorised[0]!.json().return.state, 'authorised')
  const manual = await post(app, `/returns/${id}`, { trackingNumber: '1Z999AA10123456784', carrier: 'UPS' })
  t.equal(manual.statusCode, 200, manual.body)
  t.match(manual.json().return, { state: 'in_transit', trackingNumber: '1Z999AA10123456784', carrier: 'UPS', label: null })
  t.equal((await post(app, `/returns/${id}`, { trackingNumber: 'OTHER123' })).statusCode, 409, 'one tracking number per return')

  const short = await post(app, `/returns/${id}/receive`, { lines: [{ lineItemId: mug, resellable: 1 }, { lineItemId: tea, resellable: 1 }] })
  t.equal(short.statusCode, 422)
  t.same(short.json().errors, { [`line ${mug}`]: ['resellable, damaged and missing must add up to 2 (the line\'s quantity), not 1'] })
  const receipt = await post(app, `/returns/${id}/receive`, { lines: [{ lineItemId: mug, resellable: 1, damaged: 1 }, { lineItemId: tea, missing: 1 }], message: 'Box dented' })
  t.equal(receipt.statusCode, 200, receipt.body)
  t.match(receipt.json().return, {
    state: 'received',
    dateReceived: /^\d{4}-/,
    lines: [
      { lineItemId: mug, received: { resellable: 1, damaged: 1, missing: 0 } },
      { lineItemId: tea, received: { resellable: 0, damaged: 0, missing: 1 } },
    ],
  })
  t.equal((await post(app, `/returns/${id}/receive`, { lines: [{ lineItemId: mug, resellable: 2 }, { lineItemId: tea, resellable: 1 }] })).statusCode, 409, 'recorded once')
  const closed = await post(app, `/returns/${id}`, { state: 'closed', message: 'Refunded in the shop' })
  t.equal(closed.statusCode, 200)
  t.equal(closed.json().return.state, 'closed')
  t.equal((await post(app, `/returns/${id}`, { state: 'authorised' })).statusCode, 409, 'closed is final')

  const history = (await app.shipments.returns.history(id)).reverse()
  t.same(
    history.map((row) => [row.fromState, row.toState, row.message, row.userId, row.source]),
    [
      [null, 'requested', null, 'admin', 'api'],
      ['requested', 'authorised', 'OK to return', 'admin', 'api'],
      ['authorised', 'in_transit', 'Tracking number 1Z999AA10123456784', 'admin', 'api'],
      ['in_transit', 'received', 'Box dented', 'admin', 'api'],
      ['received', 'closed', 'Refunded in the shop', 'admin', 'api'],
    ],
    'one row per change; five concurrent authorisations wrote one',
  )
  const events = await returnEvents(app)
  t.same(events.map((event) => event.name), ['returnRequested', 'returnAuthorised', 'returnReceived', 'returnClosed'])
  t.match(events[2]!.payload, { from: 'in_transit', to: 'received', message: 'Box dented', return: { lines: [{ received: { resellable: 1, damaged: 1 } }, { received: { missing: 1 } }] } })
  t.same(received, [events[2]!.payload.return && (events[2]!.payload.return as { lines: unknown }).lines], 'listeners get what arrived')

  const listed = await app.inject({ url: `/shipments/api/returns?state=closed&orderId=${orderId}`, headers: as('viewer') })
  t.equal(listed.statusCode, 200)
  t.same(listed.json().returns.map((each: { id: number }) => each.id), [id])
  t.same((await app.inject({ url: '/shipments/api/returns?state=requested', headers: as('viewer') })).json().returns, [])
  t.equal((await app.inject({ url: '/shipments/api/returns?state=bogus', headers: as('viewer') })).statusCode, 422)
})

t.test('competing return requests from several processes for a line of 2 that shipped 2: exactly 2 units returned', async (t) => {
  const database = await testDatabase(t, 'compete-returns')
  const { app, orderId, mug } = await setup(t, {}, database)
  const workers = [0, 1, 2].map(() => spawnWorker([database, 'return', String(orderId), String(mug), '1', '4']))
  await Promise.all(workers.map((worker) => lineMatching(worker, (line) => line === 'ready')))
  const remote = Promise.all(workers.map(async (worker) => JSON.parse(await lineMatching(worker, (line) => line.startsWith('['))) as string[]))
  for (const worker of workers) worker.stdin!.write('go\n')
  const local = Promise.all(
    Array.from({ length: 4 }, () => app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }] }).then(() => 'requested', (error: Error) => error.name)),
  )
  const outcomes = [...(await local), ...(await remote).flat()]
  await Promise.all(workers.map((worker) => exited(worker)))
  t.equal(outcomes.filter((outcome) => outcome === 'requested').length, 2, 'exactly the two units shipped')
  t.equal(outcomes.filter((outcome) => outcome === 'ShipmentValidationError').length, 14, 'every other request was refused as over the line')
  const rows = await storedReturns(app)
  t.equal(rows.length, 2)
  t.same(rows.map((row) => row.reference).sort(), ['R100-r001', 'R100-r002'], 'numbered once each')
  t.same((await app.shipments.returns.returnable(orderId)).find((line) => line.lineItemId === mug), { lineItemId: mug, sku: 'MUG', name: 'Mug', shipped: 2, returned: 2, returnable: 0 })
})

async function labelSetup(t: Test) {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const clock = { now: Date.UTC(2026, 10, 26, 12, 0, 0) }
  const s = await setup(t, { clock: () => clock.now, deliveries: { shipFrom: SHIP_FROM } })
  await s.app.shipments.integrations.create({
    name: 'EasyPost',
    handle: 'easypost',
    providerId: 'easypost',
    settings: { webhookSecret: 'webhook-secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 1000 },
  })
  const { db, schema } = tables(s.app)
  await db.insert(schema.orderAddresses).values({ orderId: s.orderId, kind: 'shipping', fullName: 'Dr. Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', countryCode: 'US' })
  const created = await s.app.shipments.returns.request(s.orderId, { lines: [{ lineItemId: s.mug, quantity: 1, reason: 'defective' }] })
  return { ...s, imitation, clock, returnId: created.id }
}

const LABEL = { integration: 'easypost', carrier: 'USPS', service: 'Priority', weight: { value: '1.5', unit: 'kg' }, labelFormat: 'PNG' }

t.test('a return label refuses a weight or size given as a JSON number, naming the field, buying and storing nothing', async (t) => {
  const s = await labelSetup(t)
  await s.app.shipments.returns.update(s.returnId, { state: 'authorised' })
  const before = await storedReturns(s.app)
  const required = 'must be a decimal string such as "1.25" (a number may already be rounded)'
  const cases: Array<[unknown, Record<string, string[]>]> = [
    [{ ...LABEL, weight: { value: 1.5, unit: 'kg' } }, { 'weight.value': [required] }],
    [{ ...LABEL, dimensions: { length: '30', width: 20, height: '10', unit: 'cm' } }, { 'dimensions.width': [required] }],
  ]
  for (const [body, errors] of cases) {
    const response = await post(s.app, `/returns/${s.returnId}/label`, body)
    t.equal(response.statusCode, 422, response.body)
    t.same(response.json(), { success: false, errors, errorCode: 'SHIPMENTS_VALIDATION_FAILED' })
  }
  t.same(await storedReturns(s.app), before, 'the return is as it was')
  t.equal(s.imitation.stats.creates, 0, 'the carrier was not asked')
  t.equal(s.imitation.stats.buys, 0)
})

t.test('a return label is bought once through EasyPost as a return shipment, and its tracker moves the return', async (t) => {
  const s = await labelSetup(t)
  t.equal((await post(s.app, `/returns/${s.returnId}/label`, LABEL)).statusCode, 409, 'only an authorised return gets a label')
  t.equal(s.imitation.stats.creates, 0)
  await s.app.shipments.returns.update(s.returnId, { state: 'authorised' })
  t.equal((await post(s.app, `/returns/${s.returnId}/label`, LABEL, 'editor')).statusCode, 403)

  const bought = await post(s.app, `/returns/${s.returnId}/label`, LABEL)
  t.equal(bought.statusCode, 200, bought.body)
  const body = bought.json().return
  t.match(body, { state: 'label_sent', carrier: 'USPS', service: 'Priority', trackingNumber: /^9400\d{18}$/, label: { format: 'PNG', cost: { amount: '7.90', currency: 'USD' }, url: /\.png$/ }, labelPending: false })
  t.equal(s.imitation.stats.buys, 1)
  const [shipment] = [...s.imitation.shipments.values()]
  t.equal(shipment!.is_return, true, 'EasyPost was asked for a return shipment')
  t.equal(shipment!.reference, body.label.operationId, 'our operation id is its reference')
  const [row] = await storedReturns(s.app)
  t.match(row, { labelState: 'purchased', labelExternalId: shipment!.id, labelOperationId: body.label.operationId })
  const { db, schema } = tables(s.app)
  const attempts = await db.select().from(schema.labelAttempts).where(eq(schema.labelAttempts.operationId, body.label.operationId))
  t.same(attempts.map((attempt) => attempt.step), ['create', 'buy'], 'the attempt log keeps each call')
  const labelSent = (await returnEvents(s.app)).filter((event) => event.name === 'returnLabelSent')
  t.equal(labelSent.length, 1, 'returnLabelSent, written with the purchase')
  t.match(labelSent[0]!.payload, { from: 'authorised', to: 'label_sent', return: { id: s.returnId, trackingNumber: body.trackingNumber, label: { url: body.label.url } } })

  const again = await post(s.app, `/returns/${s.returnId}/label`, LABEL)
  t.equal(again.statusCode, 409)
  t.equal(again.json().message, `Return ${s.returnId} has a label or a tracking number already.`)
  t.equal(s.imitation.stats.buys, 1, 'never bought twice')

  let events = 0
  const send = async (status: string) => {
    const event = JSON.stringify({
      id: `evt_return_${++events}`,
      object: 'Event',
      description: 'tracker.updated',
      mode: 'test',
      created_at: new Date(s.clock.now - 1000).toISOString(),
      result: { id: `trk_${body.trackingNumber}`, object: 'Tracker', tracking_code: body.trackingNumber, carrier: 'USPS', status },
    })
    const response = await s.app.inject({
      method: 'POST',
      url: '/actions/shipments/gateway/handle?integration=easypost',
      headers: { 'content-type': 'application/json', 'x-hmac-signature': signEasyPostEvent('webhook-secret', event) },
      payload: event,
    })
    t.equal(response.statusCode, 200, response.body)
    return response.json()
  }
  t.match(await send('in_transit'), { applied: true, return: { id: s.returnId, state: 'in_transit' } })
  t.match(await send('delivered'), { applied: true, return: { id: s.returnId, state: 'received' } })
  t.match(await send('in_transit'), { applied: true, return: { id: s.returnId, state: 'received' } }, 'never back')
  t.equal((await s.app.shipments.shipments.get(s.shippedId))!.status, 'shipped', 'the outbound shipment is untouched')
  const history = (await s.app.shipments.returns.history(s.returnId)).reverse()
  t.same(history.map((entry) => [entry.toState, entry.source]), [
    ['requested', 'api'],
    ['authorised', 'api'],
    ['label_sent', 'api'],
    ['in_transit', 'easypost'],
    ['received', 'easypost'],
  ])
  t.same((await returnEvents(s.app)).map((event) => event.name), ['returnRequested', 'returnAuthorised', 'returnLabelSent'], 'returnReceived waits for what arrived to be recorded')
  const receipt = await post(s.app, `/returns/${s.returnId}/receive`, { lines: [{ lineItemId: s.mug, resellable: 1 }] })
  t.equal(receipt.statusCode, 200, receipt.body)
  t.same((await returnEvents(s.app)).map((event) => event.name), ['returnRequested', 'returnAuthorised', 'returnLabelSent', 'returnReceived'])
})

t.test('a lost answer to the buy is looked up at EasyPost on the next try, never bought again; a refusal frees the return', async (t) => {
  const s = await labelSetup(t)
  await s.app.shipments.returns.update(s.returnId, { state: 'authorised' })
  s.imitation.fault({ step: 'buy', kind: 'lose-answer' })
  s.imitation.fault({ step: 'retrieve', kind: 'error', status: 503, code: 'SERVICE_UNAVAILABLE', message: 'Try again later.' })
  const lost = await post(s.app, `/returns/${s.returnId}/label`, LABEL)
  t.equal(lost.statusCode, 503, lost.body)
  t.match(lost.json(), {
    status: 503,
    message: `The label purchase for return ${s.returnId} has no known outcome: EasyPost did not answer the buy (socket hang up); the lookup: EasyPost answered the retrieve with 503: Try again later. (SERVICE_UNAVAILABLE). Buying again looks the purchase up first and never buys twice.`,
  }, 'what the carrier answered, and where no answer came')
  t.match((await storedReturns(s.app))[0], { labelState: 'pending', labelExternalId: /^shp_/, state: 'authorised' })
  t.equal((await s.app.inject({ url: `/shipments/api/returns/${s.returnId}`, headers: as('viewer') })).json().return.labelPending, true)
  t.same(await returnEvents(s.app).then((events) => events.length), 2, 'no event while the outcome is unknown')
  // Another service asked for: the pending purchase is finished as it was asked.
  const retried = await post(s.app, `/returns/${s.returnId}/label`, { ...LABEL, carrier: 'UPS', service: 'Ground' })
  t.equal(retried.statusCode, 200, retried.body)
  t.match(retried.json().return, { state: 'label_sent', carrier: 'USPS', service: 'Priority' })
  t.same(s.imitation.calls.map((call) => call.step), ['create', 'buy', 'retrieve', 'retrieve'], 'created, bought (answer lost), looked up twice: no second buy')
  t.equal(s.imitation.stats.buys, 1, 'bought once')
  t.equal(s.imitation.stats.creates, 1, 'on the one EasyPost shipment')

  const other = await s.app.shipments.returns.request(s.orderId, { lines: [{ lineItemId: s.tea, quantity: 1, reason: 'other' }] })
  await s.app.shipments.returns.update(other.id, { state: 'authorised' })
  const refused = await post(s.app, `/returns/${other.id}/label`, { ...LABEL, service: 'Teleport' })
  t.equal(refused.statusCode, 422)
  t.match(refused.json(), { success: false, error: /EasyPost offers no USPS Teleport/, errorCode: 'SHIPMENTS_UPDATE_REJECTED' })
  t.match((await storedReturns(s.app))[1], { labelState: null, labelOperationId: null, state: 'authorised' }, 'nothing bought: free for another try')
  t.equal((await post(s.app, `/returns/${other.id}/label`, LABEL)).statusCode, 200)
})

t.test('random bodies, ids and users on the return routes never give a 500, and refusals change nothing', async (t) => {
  const runs = Number(process.env.PROPERTY_RUNS ?? 150)
  const { app, orderId, mug } = await setup(t)
  const created = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }] })
  const keys = ['lines', 'message', 'state', 'trackingNumber', 'trackingUrl', 'carrier', 'integration', 'service', 'weight', 'lineItemId', 'quantity', 'reason', 'resellable', '__proto__', 'constructor']
  const value = fc.oneof(hostileString, fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.dictionary(fc.constantFrom(...keys), fc.oneof(hostileString, fc.integer({ min: -2, max: 3 }), fc.constant(mug)), { maxKeys: 4 }), { maxLength: 3 }))
  const body = fc.oneof(fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 4 }).map((each) => JSON.stringify(each)), hostileString)
  await fc.assert(
    fc.asyncProperty(
      body,
      contentTypes,
      fc.constantFrom(`/orders/${orderId}/returns`, `/returns/${created.id}`, `/returns/${created.id}/receive`, `/returns/${created.id}/label`, '/orders/abc/returns', '/returns/%00', '/returns/99999999999'),
      fc.constantFrom('admin', 'editor', 'viewer', undefined),
      async (payload, contentType, url, user) => {
        const before = await snapshotDatabase(app)
        const headers: Record<string, string> = {}
        if (contentType) headers['content-type'] = contentType
        if (user) headers['x-test-user'] = user
        const response = await app.inject({ method: 'POST', url: `/shipments/api${url}`, headers, payload })
        if (response.statusCode >= 500 || STACK_TRACE.test(response.body)) return false
        return response.statusCode < 300 || (await snapshotDatabase(app)) === before
      },
    ),
    { numRuns: runs },
  )
  t.pass(`${runs} random requests`)
})

t.test('an unused return label is voided: refunded at EasyPost, the return authorised again with history and returnLabelVoided; a used one is not', async (t) => {
  const s = await labelSetup(t)
  t.equal((await post(s.app, `/returns/${s.returnId}/label/void`, {})).statusCode, 409, 'no label to void')
  await s.app.shipments.returns.update(s.returnId, { state: 'authorised' })
  const bought = (await post(s.app, `/returns/${s.returnId}/label`, LABEL)).json().return
  t.equal((await post(s.app, `/returns/${s.returnId}/label/void`, {}, 'editor')).statusCode, 403)

  // The carrier refuses the refund: a 422 with its message, and the label stays.
  s.imitation.fault({ step: 'refund', kind: 'error', status: 422, code: 'SHIPMENT.REFUND.NOT_ELIGIBLE', message: 'Not eligible for a refund.' })
  const refused = await post(s.app, `/returns/${s.returnId}/label/void`, {})
  t.equal(refused.statusCode, 422)
  t.match(refused.json(), { success: false, error: /Not eligible for a refund/, errorCode: 'SHIPMENTS_UPDATE_REJECTED' })
  t.match((await storedReturns(s.app))[0], { state: 'label_sent', labelState: 'purchased', trackingNumber: bought.trackingNumber })

  const voided = await post(s.app, `/returns/${s.returnId}/label/void`, {})
  t.equal(voided.statusCode, 200, voided.body)
  t.match(voided.json(), { success: true, refundStatus: 'submitted', return: { id: s.returnId, state: 'authorised', label: null, trackingNumber: null, carrier: null, labelPending: false } })
  t.equal(s.imitation.stats.refunds, 1, 'refunded once (the refused call did nothing)')
  const [row] = await storedReturns(s.app)
  t.match(row, { state: 'authorised', labelState: null, labelOperationId: null, labelExternalId: null, labelUrl: null, trackingNumber: null })
  const [latest] = await s.app.shipments.returns.history(s.returnId)
  t.match(latest, { fromState: 'label_sent', toState: 'label_voided', message: `Refund submitted (USPS ${bought.trackingNumber})`, userId: 'admin', source: 'api' })
  const events = (await returnEvents(s.app)).filter((event) => event.name === 'returnLabelVoided')
  t.equal(events.length, 1)
  t.match(events[0]!.payload, { from: 'label_sent', to: 'authorised', return: { id: s.returnId, label: null } })
  t.equal((await post(s.app, `/returns/${s.returnId}/label/void`, {})).statusCode, 409, 'voided once')

  // A new label for the same return; once the carrier has it, it is not voided.
  const again = await post(s.app, `/returns/${s.returnId}/label`, LABEL)
  t.equal(again.statusCode, 200, again.body)
  t.not(again.json().return.trackingNumber, bought.trackingNumber)
  await s.app.shipments.returns.update(s.returnId, { state: 'in_transit' })
  const used = await post(s.app, `/returns/${s.returnId}/label/void`, {})
  t.equal(used.statusCode, 409)
  t.equal(used.json().message, `Return ${s.returnId} has no unused label to void (it is in_transit).`)
  t.equal(s.imitation.stats.refunds, 1, 'EasyPost was not asked')
})
