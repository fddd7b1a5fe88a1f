// Labels bought exactly once through the built-in EasyPost provider and its official client, pointed at
// a local imitation of EasyPost's API: the intent and the shp_ id committed before the buy, a lost
// answer, a timeout or an unknown outcome reconciled by retrieving the shipment, EasyPost's error codes,
// two instances buying the same parcel at once, voids, label conversion, and rate quotes that expire or
// go stale when their inputs change.
import t, { type Test } from 'tap'
import { eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp, insertOrder, orderRow } from './fixtures/app.js'
import { basicAuth, EXCHANGE_PASSWORD, EXCHANGE_URL, EXCHANGE_USER, ORDER_FIELDS } from './fixtures/exchange.js'
import { tables, testDatabase } from './fixtures/database.js'
import { easyPostImitation } from './fixtures/easypost-api.js'
import { Type, defineProvider, signEasyPostEvent, type ShipmentsPluginOptions } from '../src/index.js'

const API_KEY = 'EZTK-label-test-key-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }

interface Setup {
  app: FastifyInstance
  imitation: Awaited<ReturnType<typeof easyPostImitation>>
  shipmentId: number
  parcelId: number
  clock: { now: number }
  database: string
}

async function setup(t: Test, options: { mode?: 'test' | 'production'; timeoutMs?: number; plugin?: Partial<ShipmentsPluginOptions> } = {}): Promise<Setup> {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY, mode: options.mode })
  const clock = { now: Date.UTC(2026, 10, 26, 12, 0, 0) }
  const database = await testDatabase(t, 'labels')
  const app = await buildTestApp(t, { clock: () => clock.now, deliveries: { shipFrom: SHIP_FROM }, ...options.plugin }, database)
  await app.shipments.integrations.create({
    name: 'EasyPost',
    handle: 'easypost',
    providerId: 'easypost',
    settings: { webhookSecret: 'webhook-secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: options.timeoutMs ?? 1000 },
  })
  const orderId = await insertOrder(app)
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Dr. Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', countryCode: 'US' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const parcel = await app.shipments.deliveries.addParcel(shipment.id, { weight: { value: '1.5', unit: 'kg' }, dimensions: { length: '30', width: '20', height: '10', unit: 'cm' } })
  return { app, imitation, shipmentId: shipment.id, parcelId: parcel.id, clock, database }
}

const labelUrl = (s: Pick<Setup, 'shipmentId' | 'parcelId'>) => `/shipments/api/shipments/${s.shipmentId}/parcels/${s.parcelId}/label`

function buy(app: FastifyInstance, s: Pick<Setup, 'shipmentId' | 'parcelId'>, body: Record<string, unknown> = { integration: 'easypost', carrier: 'USPS', service: 'Priority' }, user: Parameters<typeof as>[0] = 'admin') {
  return app.inject({ method: 'POST', url: labelUrl(s), headers: { ...as(user), 'content-type': 'application/json' }, payload: JSON.stringify(body) })
}

async function operations(app: FastifyInstance) {
  const { db, schema } = tables(app)
  return db.select().from(schema.labelOperations).orderBy(schema.labelOperations.id)
}

async function storedParcel(app: FastifyInstance, id: number) {
  const { db, schema } = tables(app)
  const [row] = await db.select().from(schema.parcels).where(eq(schema.parcels.id, id))
  return row
}

async function labelEvents(app: FastifyInstance) {
  return (await app.shipments.outbox.list({ kind: 'event' })).filter((message) => message.name.startsWith('label'))
}

t.test('a label is bought once: intent and shp_ committed first, the label, tracking and cost on the parcel with history and a labelPurchased event', async (t) => {
  const s = await setup(t)
  const response = await buy(s.app, s, { integration: 'easypost', carrier: 'USPS', service: 'Priority', labelFormat: 'PDF' })
  t.equal(response.statusCode, 200, response.body)
  const body = response.json()
  t.match(body, {
    success: true,
    recovered: false,
    parcel: { id: s.parcelId, status: 'labelled', carrier: 'USPS', service: 'Priority', trackingNumber: /^9400\d{18}$/, label: { format: 'PDF', cost: { amount: '7.90', currency: 'USD' }, url: /\.pdf$/ } },
  })
  t.equal(s.imitation.stats.buys, 1)
  const [created] = [...s.imitation.shipments.values()]
  t.equal(created.reference, body.operationId, 'the EasyPost shipment carries our operation id as its reference')
  t.match(created.parcel, { weight: 53, length: 11.9, width: 7.9, height: 4 }, 'ounces and inches, rounded up to one decimal')

  const [operation] = await operations(s.app)
  t.match(operation, { operationId: body.operationId, parcelId: s.parcelId, state: 'purchased', externalId: created.id, carrier: 'USPS', service: 'Priority' })
  t.match(await storedParcel(s.app, s.parcelId), { status: 'labelled', labelCost: '7.90', labelCurrency: 'USD', labelOperationId: body.operationId, trackingNumber: body.parcel.trackingNumber })
  const { db, schema } = tables(s.app)
  t.same((await db.select().from(schema.parcelHistory)).map((row) => row.action), ['added', 'labelPurchased'])
  const events = await labelEvents(s.app)
  t.same(events.map((event) => event.name), ['labelPurchased'])
  t.match(events[0].payload, { shipmentId: s.shipmentId, operationId: body.operationId, externalId: created.id, integration: 'easypost', parcel: { trackingNumber: body.parcel.trackingNumber } })

  const log = await s.app.shipments.deliveries.labelOperations(s.shipmentId, s.parcelId)
  t.same(log[0].attempts.map((attempt) => attempt.step), ['create', 'buy', 'convert'])
  t.notOk(JSON.stringify(log).includes(API_KEY), 'the attempt log holds no API key')
  t.notOk(JSON.stringify(log).includes('Brule'), 'nor the addresses')
  t.ok(s.imitation.calls.every((call) => call.authorized), 'every call carried the key as HTTP Basic')

  const again = await buy(s.app, s)
  t.equal(again.statusCode, 409)
  t.match(again.json(), { name: 'Conflict', status: 409, message: /has a label already/ })
  t.equal(s.imitation.stats.buys, 1, 'never bought twice')
})

t.test('a lost answer after the purchase is reconciled by retrieving the shp_: one label, recovered', async (t) => {
  const s = await setup(t)
  s.imitation.fault({ step: 'buy', kind: 'lose-answer' })
  const response = await buy(s.app, s)
  t.equal(response.statusCode, 200, response.body)
  t.match(response.json(), { recovered: true, parcel: { status: 'labelled', carrier: 'USPS' } })
  t.equal(s.imitation.stats.buys, 1)
  t.equal(s.imitation.stats.creates, 1)
  const steps = s.imitation.calls.map((call) => call.step)
  t.same(steps, ['create', 'buy', 'retrieve'], 'created, bought (answer lost), retrieved: no second buy')
})

t.test('a lost answer and a failed lookup leave the operation pending (503); the next buy recovers it without buying', async (t) => {
  const s = await setup(t)
  s.imitation.fault({ step: 'buy', kind: 'lose-answer' })
  s.imitation.fault({ step: 'retrieve', kind: 'error', status: 503, code: 'SERVICE_UNAVAILABLE', message: 'Try again later.' })
  const first = await buy(s.app, s)
  t.equal(first.statusCode, 503, first.body)
  t.match(first.json(), { status: 503, message: `The label purchase for parcel ${s.parcelId} has no known outcome: EasyPost did not answer the buy (socket hang up); the lookup: EasyPost answered the retrieve with 503: Try again later. (SERVICE_UNAVAILABLE). Buying again looks the purchase up first and never buys twice.` })
  const [pending] = await operations(s.app)
  t.match(pending, { state: 'pending', externalId: /^shp_/ })
  t.match(await storedParcel(s.app, s.parcelId), { labelOperationId: null, trackingNumber: null }, 'no label written while the outcome is unknown')
  t.same(await labelEvents(s.app), [])
  // Every call of the failed purchase is logged, the failed lookup with the service's answer.
  const [unknown] = await s.app.shipments.deliveries.labelOperations(s.shipmentId, s.parcelId)
  t.same(unknown.attempts.map((attempt) => attempt.step), ['create', 'buy', 'retrieve'], 'every call of the failed purchase is in its log')
  t.match(unknown.attempts[2], { statusCode: 503, error: /Try again later/ })

  // Another carrier asked for: the pending purchase is finished as it was asked, never a second one beside it.
  const second = await buy(s.app, s, { integration: 'easypost', carrier: 'UPS', service: 'Ground' })
  t.equal(second.statusCode, 200, second.body)
  t.match(second.json(), { recovered: true, operationId: pending.operationId, parcel: { carrier: 'USPS', service: 'Priority' } })
  t.equal(s.imitation.stats.buys, 1)
  t.equal(s.imitation.stats.creates, 1)
  t.same((await operations(s.app)).map((row) => row.state), ['purchased'])
})

t.test('a timeout of the buy is reconciled; a timeout of the create buys on a new shipment, once', async (t) => {
  const s = await setup(t, { timeoutMs: 300 })
  s.imitation.fault({ step: 'buy', kind: 'delay', ms: 1200 })
  const response = await buy(s.app, s)
  t.equal(response.statusCode, 200, response.body)
  t.equal(response.json().recovered, true)
  t.equal(s.imitation.stats.buys, 1)

  const other = await s.app.shipments.deliveries.addParcel(s.shipmentId, { weight: { value: '2', unit: 'lb' } })
  const target = { shipmentId: s.shipmentId, parcelId: other.id }
  s.imitation.fault({ step: 'create', kind: 'delay', ms: 1200 })
  const timedOut = await buy(s.app, target)
  t.equal(timedOut.statusCode, 503, 'the create timed out: outcome unknown')
  const pending = (await operations(s.app)).find((row) => row.parcelId === other.id)!
  t.match(pending, { state: 'pending', externalId: null }, 'no shp_ was committed, so nothing can have been bought')
  const retried = await buy(s.app, target)
  t.equal(retried.statusCode, 200, retried.body)
  t.equal(retried.json().operationId, pending.operationId)
  t.equal(s.imitation.stats.creates, 3, 'a new EasyPost shipment for the unbought one')
  t.equal(s.imitation.stats.buys, 2, 'one label per parcel')
})

t.test('a failed purchase says what EasyPost answered (503, 500, an HTML 502); only a timeout is "no answer"', async (t) => {
  const pendingWith = async (t: Test, s: Setup, message: string) => {
    const response = await buy(s.app, s)
    t.equal(response.statusCode, 503, response.body)
    const expected = `The label purchase for parcel ${s.parcelId} has no known outcome: ${message}. Buying again looks the purchase up first and never buys twice.`
    t.match(response.json(), { status: 503, message: expected })
    t.notMatch(response.body, /in time|EZTK/, 'no "no answer" for an answer, and never the key')
    t.match(await operations(s.app), [{ state: 'pending', error: message }], 'the operation keeps the reason')
    t.match(await storedParcel(s.app, s.parcelId), { labelOperationId: null, trackingNumber: null })
    t.equal(s.imitation.stats.buys, 0)
    return response
  }

  await t.test('an immediate 503 of the buy and of the lookup', async (t) => {
    const s = await setup(t)
    s.imitation.fault({ step: 'buy', kind: 'error', status: 503, code: 'SERVICE_UNAVAILABLE', message: 'EasyPost is down for maintenance.' })
    s.imitation.fault({ step: 'retrieve', kind: 'error', status: 503, code: 'SERVICE_UNAVAILABLE', message: 'EasyPost is down for maintenance.' })
    await pendingWith(t, s, 'EasyPost answered the buy with 503: EasyPost is down for maintenance. (SERVICE_UNAVAILABLE); the lookup: EasyPost answered the retrieve with 503: EasyPost is down for maintenance. (SERVICE_UNAVAILABLE)')
    const [operation] = await s.app.shipments.deliveries.labelOperations(s.shipmentId, s.parcelId)
    t.match(operation.attempts.map((attempt) => [attempt.step, attempt.statusCode]), [['create', 200], ['buy', 503], ['retrieve', 503]])
  })

  await t.test('a 500 of the buy, the lookup finding nothing bought', async (t) => {
    const s = await setup(t)
    s.imitation.fault({ step: 'buy', kind: 'error', status: 500, code: 'INTERNAL_SERVER_ERROR', message: 'Something went wrong.' })
    await pendingWith(t, s, 'EasyPost answered the buy with 500: Something went wrong. (INTERNAL_SERVER_ERROR)')
  })

  await t.test("an HTML 502 of a proxy: its status and a short excerpt of its text, the key masked", async (t) => {
    const s = await setup(t)
    const page = `<html><head><title>502 Bad Gateway</title><style>body { color: red }</style><script>var k = "${API_KEY}"</script></head><body><h1>Bad Gateway</h1>\n<p>upstream \u0000 closed; key ${API_KEY}</p>${'<p>padding</p>'.repeat(100)}</body></html>`
    s.imitation.fault({ step: 'buy', kind: 'not-json', status: 502, body: page })
    const response = await pendingWith(t, s, `EasyPost answered the buy with 502: text/html "502 Bad Gateway Bad Gateway upstream closed; key ******** padding padding padding padding padding padding padding padding padding padding padding padding…"`)
    t.notMatch(response.body, /<|script|color: red/, 'no markup, script or style')
  })

  await t.test('a timeout of the buy and of the lookup is the one "did not answer"', async (t) => {
    const s = await setup(t, { timeoutMs: 300 })
    s.imitation.fault({ step: 'buy', kind: 'delay', ms: 1200 })
    s.imitation.fault({ step: 'retrieve', kind: 'delay', ms: 1200 })
    const response = await buy(s.app, s)
    t.equal(response.statusCode, 503, response.body)
    t.match(response.json(), { message: /has no known outcome: EasyPost did not answer the buy within 300 ms; the lookup: EasyPost did not answer the retrieve within 300 ms\./ })
  })

  await t.test("the rates route names an HTML 502 of the create the same way", async (t) => {
    const s = await setup(t)
    s.imitation.fault({ step: 'create', kind: 'not-json' })
    const response = await s.app.inject({ method: 'POST', url: `/shipments/api/shipments/${s.shipmentId}/parcels/${s.parcelId}/rates`, headers: { ...as('editor'), 'content-type': 'application/json' }, payload: JSON.stringify({ integration: 'easypost' }) })
    t.equal(response.statusCode, 422, response.body)
    t.match(response.json(), { success: false, error: 'No usable answer from the carrier: EasyPost answered the create with 502: text/html "Bad gateway".' })
  })
})

t.test("EasyPost's error codes: POSTAGE.EXISTS adopted, IN_PROGRESS and NO_RESPONSE reconciled on the same shp_, refusals change nothing", async (t) => {
  await t.test('SHIPMENT.POSTAGE.EXISTS: the label an earlier buy made is adopted', async (t) => {
    const s = await setup(t)
    s.imitation.fault({ step: 'buy', kind: 'error-after-work', status: 422, code: 'SHIPMENT.POSTAGE.EXISTS', message: 'Shipment already has postage.' })
    const response = await buy(s.app, s)
    t.equal(response.statusCode, 200, response.body)
    t.equal(response.json().recovered, true)
    t.equal(s.imitation.stats.buys, 1)
  })

  await t.test('SHIPMENT.PURCHASE.IN_PROGRESS: pending, then bought on the same EasyPost shipment', async (t) => {
    const s = await setup(t)
    s.imitation.fault({ step: 'buy', kind: 'error', status: 422, code: 'SHIPMENT.PURCHASE.IN_PROGRESS', message: 'A purchase is in progress.' })
    const first = await buy(s.app, s)
    t.equal(first.statusCode, 503, first.body)
    const second = await buy(s.app, s)
    t.equal(second.statusCode, 200, second.body)
    t.equal(s.imitation.stats.creates, 1, 'the committed shp_ is bought, no new EasyPost shipment is made')
    t.equal(s.imitation.stats.buys, 1)
  })

  await t.test('SHIPMENT.POSTAGE.NO_RESPONSE after the carrier accepted: recovered at once', async (t) => {
    const s = await setup(t)
    s.imitation.fault({ step: 'buy', kind: 'error-after-work', status: 500, code: 'SHIPMENT.POSTAGE.NO_RESPONSE', message: 'The carrier did not respond.' })
    const response = await buy(s.app, s)
    t.equal(response.statusCode, 200, response.body)
    t.equal(response.json().recovered, true)
  })

  await t.test('a 502 that is not EasyPost JSON is an unknown outcome, not a crash', async (t) => {
    const s = await setup(t)
    s.imitation.fault({ step: 'buy', kind: 'not-json' })
    const response = await buy(s.app, s)
    t.equal(response.statusCode, 503, response.body)
    t.equal(s.imitation.stats.buys, 0)
  })

  for (const [code, status, pattern] of [
    ['PAYMENT_REQUIRED', 402, /no funds/],
    ['SHIPMENT.POSTAGE.FAILURE', 422, /SHIPMENT\.POSTAGE\.FAILURE/],
    ['ADDRESS.VERIFY.FAILURE', 422, /ADDRESS\.VERIFY\.FAILURE/],
  ] as const) {
    await t.test(`${code} is refused in the admin's words; nothing is written and buying again works`, async (t) => {
      const s = await setup(t)
      s.imitation.fault({ step: code === 'ADDRESS.VERIFY.FAILURE' ? 'create' : 'buy', kind: 'error', status, code, message: 'Refused by the imitation.' })
      const response = await buy(s.app, s)
      t.equal(response.statusCode, 422, response.body)
      t.match(response.json(), { success: false, error: pattern })
      t.match(await storedParcel(s.app, s.parcelId), { labelOperationId: null, trackingNumber: null, status: 'pending' })
      t.match(await operations(s.app), [{ state: 'failed', error: pattern }])
      t.same(await labelEvents(s.app), [])
      const retried = await buy(s.app, s)
      t.equal(retried.statusCode, 200, retried.body)
      t.equal(s.imitation.stats.buys, 1)
    })
  }

  await t.test('a service EasyPost does not offer is refused before any buy', async (t) => {
    const s = await setup(t)
    const response = await buy(s.app, s, { integration: 'easypost', carrier: 'FedEx', service: 'Overnight' })
    t.equal(response.statusCode, 422)
    t.match(response.json(), { success: false, error: /offers no FedEx Overnight.*USPS Priority/ })
    t.equal(s.imitation.stats.buys, 0)
  })

  await t.test('an answer in production mode for a test-mode integration is refused before any buy', async (t) => {
    const s = await setup(t, { mode: 'production' })
    const response = await buy(s.app, s)
    t.equal(response.statusCode, 422)
    t.match(response.json(), { error: /production mode/ })
    t.equal(s.imitation.stats.buys, 0)
  })
})

t.test('two instances buying the same parcel at once buy one label', async (t) => {
  const s = await setup(t)
  const second = await buildTestApp(t, { clock: () => s.clock.now, deliveries: { shipFrom: SHIP_FROM } }, s.database)
  s.imitation.fault({ step: 'buy', kind: 'delay', ms: 300 })
  const answers = await Promise.all([buy(s.app, s), buy(second, s)])
  t.same(answers.map((answer) => answer.statusCode).sort(), [200, 409], answers.map((answer) => answer.body).join('\n'))
  t.equal(s.imitation.stats.buys, 1)
  t.equal(s.imitation.stats.creates, 1)
  t.same((await operations(s.app)).map((row) => row.state), ['purchased'])
  t.equal((await labelEvents(s.app)).length, 1)
})

t.test('twelve parcels bought at once, more than the pool has connections: every label bought, none held up by the locks', async (t) => {
  const s = await setup(t)
  const parcels = [{ shipmentId: s.shipmentId, parcelId: s.parcelId }]
  for (let index = 1; index < 12; index++) {
    parcels.push({ shipmentId: s.shipmentId, parcelId: (await s.app.shipments.deliveries.addParcel(s.shipmentId, { weight: { value: '1', unit: 'kg' } })).id })
  }
  // Every buy waits at the provider at once: on PostgreSQL each parcel's lock used to hold one of the
  // pool's ten connections, and the purchases then waited for an eleventh until the pool gave up.
  for (const _ of parcels) s.imitation.fault({ step: 'buy', kind: 'delay', ms: 200 })
  // The locks share one connection on PostgreSQL: one query at a time on it, never node-postgres'
  // deprecated queueing of overlapping calls.
  const warnings: string[] = []
  const onWarning = (warning: Error) => void warnings.push(warning.message)
  process.on('warning', onWarning)
  const answers = await Promise.all(parcels.map((parcel) => buy(s.app, parcel)))
  await new Promise((resolve) => setImmediate(resolve))
  process.off('warning', onWarning)
  t.same(warnings.filter((message) => message.includes('client.query')), [], 'no overlapping queries on one connection')
  t.same(answers.map((answer) => answer.statusCode), Array(12).fill(200), answers.map((answer) => answer.body).join('\n'))
  t.equal(s.imitation.stats.buys, 12)
  t.same((await operations(s.app)).map((row) => row.state), Array(12).fill('purchased'))
  const stored = await Promise.all(parcels.map((parcel) => storedParcel(s.app, parcel.parcelId)))
  t.same(stored.map((row) => row?.status), Array(12).fill('labelled'))
  t.equal(new Set(stored.map((row) => row?.trackingNumber)).size, 12, 'twelve tracking numbers')
})

t.test('a buyer that cannot get the parcel lock in time gets a 409 to retry, and nothing is bought twice', async (t) => {
  const s = await setup(t)
  const impatient = await buildTestApp(t, { clock: () => s.clock.now, deliveries: { shipFrom: SHIP_FROM }, lockTimeoutMs: 200 }, s.database)
  s.imitation.fault({ step: 'buy', kind: 'delay', ms: 900 })
  const slow = buy(s.app, s)
  await new Promise((resolve) => setTimeout(resolve, 150))
  const busy = await buy(impatient, s)
  t.equal(busy.statusCode, 409, busy.body)
  t.match(busy.json(), { name: 'Conflict', message: /under way elsewhere/ })
  t.equal((await slow).statusCode, 200)
  t.equal(s.imitation.stats.buys, 1)
})

t.test('refusals of a void and of a conversion keep the label; a lookup that fails again stays pending', async (t) => {
  const s = await setup(t)
  s.imitation.fault({ step: 'buy', kind: 'lose-answer' })
  s.imitation.fault({ step: 'retrieve', kind: 'error', status: 503, code: 'SERVICE_UNAVAILABLE', message: 'Down.' })
  t.equal((await buy(s.app, s)).statusCode, 503)
  s.imitation.fault({ step: 'retrieve', kind: 'error', status: 503, code: 'SERVICE_UNAVAILABLE', message: 'Still down.' })
  t.equal((await buy(s.app, s)).statusCode, 503, 'the lookup of the pending purchase failed again: still unknown, nothing bought')
  t.equal((await buy(s.app, s)).statusCode, 200)
  t.equal(s.imitation.stats.buys, 1)

  s.imitation.fault({ step: 'refund', kind: 'error', status: 422, code: 'SHIPMENT.REFUND.NOT_ELIGIBLE', message: 'Not eligible for a refund.' })
  const refused = await s.app.inject({ method: 'POST', url: `${labelUrl(s)}/void`, headers: as('admin') })
  t.equal(refused.statusCode, 422)
  t.match(refused.json(), { success: false, error: /Not eligible for a refund/ })
  t.equal((await storedParcel(s.app, s.parcelId)).status, 'labelled', 'the label stays')

  s.imitation.fault({ step: 'convert', kind: 'error', status: 422, code: 'SHIPMENT.LABEL.FORMAT', message: 'Cannot convert.' })
  const conversion = await s.app.inject({ method: 'GET', url: `${labelUrl(s)}?format=ZPL`, headers: as('viewer') })
  t.equal(conversion.statusCode, 422)
  t.match(conversion.json(), { error: /Cannot convert/ })
})

t.test("a host provider's unexpected error leaves the purchase pending (503), never failed", async (t) => {
  let purchases = 0
  const broken = defineProvider({
    id: 'broken-labels',
    settingsSchema: Type.Object({}),
    async handleGatewayRequest() {
      return { status: 204 }
    },
    deliveries: {
      async purchaseLabel(_request, _context, journal) {
        purchases++
        await journal.externalIdKnown('ext-1')
        throw new TypeError('a bug after the money was spent')
      },
      async recoverLabel() {
        return { state: 'not-purchased' as const }
      },
      async voidLabel() {
        return { refundStatus: 'submitted' }
      },
    },
  })
  const database = await testDatabase(t, 'broken')
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM }, providers: [broken] }, database)
  await app.shipments.integrations.create({ name: 'Broken', handle: 'broken', providerId: 'broken-labels', settings: {} })
  const orderId = await insertOrder(app)
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'A', address1: '1 Main St', city: 'Springfield', postalCode: '62701', countryCode: 'US' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const parcel = await app.shipments.deliveries.addParcel(shipment.id, { weight: { value: '1', unit: 'kg' } })
  const response = await buy(app, { shipmentId: shipment.id, parcelId: parcel.id }, { integration: 'broken', carrier: 'X', service: 'Y' })
  t.equal(response.statusCode, 503)
  t.match(await operations(app), [{ state: 'pending', externalId: 'ext-1' }])
  t.equal(purchases, 1)
})

t.test('a void refunds the label, frees the tracking number, emits labelVoided; a new label can be bought', async (t) => {
  const s = await setup(t)
  const bought = (await buy(s.app, s)).json()
  t.match(await s.app.shipments.shipments.get(s.shipmentId), { trackingNumber: bought.parcel.trackingNumber, carrier: 'USPS', service: 'Priority' }, "the label fills the shipment's own tracking number")
  const forbidden = await s.app.inject({ method: 'POST', url: `${labelUrl(s)}/void`, headers: as('editor') })
  t.equal(forbidden.statusCode, 403, 'voiding needs shipments-buyLabels')
  const changing = await s.app.inject({
    method: 'POST',
    url: `/shipments/api/shipments/${s.shipmentId}/parcels/${s.parcelId}`,
    headers: { ...as('admin'), 'content-type': 'application/json' },
    payload: JSON.stringify({ weight: { value: '9', unit: 'kg' } }),
  })
  t.equal(changing.statusCode, 409, 'a labelled parcel keeps its size')

  const voided = await s.app.inject({ method: 'POST', url: `${labelUrl(s)}/void`, headers: as('admin') })
  t.equal(voided.statusCode, 200, voided.body)
  t.match(voided.json(), { success: true, refundStatus: 'submitted', parcel: { status: 'pending', trackingNumber: null, label: null } })
  t.equal(s.imitation.stats.refunds, 1)
  t.match(await operations(s.app), [{ operationId: bought.operationId, state: 'voided' }])
  const events = await labelEvents(s.app)
  t.same(events.map((event) => event.name), ['labelPurchased', 'labelVoided'])
  t.match(events[1].payload, { refundStatus: 'submitted', operationId: bought.operationId })
  t.equal((await s.app.inject({ method: 'POST', url: `${labelUrl(s)}/void`, headers: as('admin') })).statusCode, 409, 'no label left to void')
  t.equal((await s.app.shipments.shipments.get(s.shipmentId))!.trackingNumber, null, "the void frees the shipment's tracking number too")

  const removal = await s.app.inject({ method: 'DELETE', url: `/shipments/api/shipments/${s.shipmentId}/parcels/${s.parcelId}`, headers: as('admin') })
  t.equal(removal.statusCode, 409, 'a parcel whose label was voided keeps its label history')
  t.match(removal.json(), { message: /kept with its label operations/ })

  const rebought = await buy(s.app, s)
  t.equal(rebought.statusCode, 200, rebought.body)
  t.not(rebought.json().operationId, bought.operationId)
  t.equal(s.imitation.stats.buys, 2)
})

t.test("the label's EasyPost tracker moves the shipment through the existing tracking webhook", async (t) => {
  const s = await setup(t)
  const bought = (await buy(s.app, s)).json()
  const event = JSON.stringify({
    id: 'evt_label_1',
    object: 'Event',
    description: 'tracker.updated',
    mode: 'test',
    created_at: new Date(s.clock.now - 1000).toISOString(),
    result: { id: 'trk_1', object: 'Tracker', tracking_code: bought.parcel.trackingNumber, carrier: 'USPS', status: 'in_transit' },
  })
  const response = await s.app.inject({
    method: 'POST',
    url: '/actions/shipments/gateway/handle?integration=easypost',
    headers: { 'content-type': 'application/json', 'x-hmac-signature': signEasyPostEvent('webhook-secret', event) },
    payload: event,
  })
  t.equal(response.statusCode, 200, response.body)
  t.match(response.json(), { applied: true, shipment: { id: s.shipmentId, status: 'shipped' } })
})

t.test('tracking events move parcels forward; a shipment with parcels is shipped once every parcel is out', async (t) => {
  const s = await setup(t)
  const second = await s.app.shipments.deliveries.addParcel(s.shipmentId, { weight: { value: '800', unit: 'g' } })
  const first = (await buy(s.app, s)).json().parcel
  const other = (await buy(s.app, { shipmentId: s.shipmentId, parcelId: second.id })).json().parcel
  t.equal((await s.app.shipments.shipments.get(s.shipmentId))!.trackingNumber, first.trackingNumber, 'the first label fills the shipment')
  let events = 0
  const send = async (trackingCode: string, status: string, ageMs = 1000) => {
    const event = JSON.stringify({
      id: `evt_parcel_${++events}`,
      object: 'Event',
      description: 'tracker.updated',
      mode: 'test',
      created_at: new Date(s.clock.now - ageMs).toISOString(),
      result: {
        id: `trk_${trackingCode}`,
        object: 'Tracker',
        tracking_code: trackingCode,
        carrier: 'USPS',
        status,
        tracking_details: [{ object: 'TrackingDetail', message: `Scan ${status}`, status, datetime: new Date(s.clock.now - ageMs - 60_000).toISOString(), tracking_location: { city: 'MEMPHIS', state: 'TN', country: 'US', zip: null } }],
      },
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
  const parcelStatus = async (id: number) => (await storedParcel(s.app, id)).status

  t.match(await send(other.trackingNumber, 'in_transit'), { applied: true, parcel: { id: second.id, status: 'shipped' } })
  t.equal((await s.app.shipments.shipments.get(s.shipmentId))!.status, 'new', 'one parcel out of two: the shipment waits')
  t.match(await s.app.shipments.shipments.checkpoints(s.shipmentId), [{ parcelId: second.id, trackingNumber: other.trackingNumber, message: 'Scan in_transit', location: 'MEMPHIS, TN, US', source: 'easypost' }], "the parcel's scan is kept on its shipment, with the parcel, before the shipment moves")
  t.match(await send(first.trackingNumber, 'in_transit'), { applied: true, shipment: { id: s.shipmentId, status: 'shipped' } })
  t.same((await s.app.shipments.shipments.checkpoints(s.shipmentId)).map((checkpoint) => checkpoint.parcelId).sort(), [s.parcelId, second.id].sort(), 'each parcel its scan')
  t.equal(await parcelStatus(s.parcelId), 'shipped')
  t.match(await send(other.trackingNumber, 'delivered'), { applied: true })
  t.equal(await parcelStatus(second.id), 'delivered')
  await send(other.trackingNumber, 'in_transit', 60_000)
  t.equal(await parcelStatus(second.id), 'delivered', 'a late event never moves a parcel back')
  const { db, schema } = tables(s.app)
  t.same(
    (await db.select().from(schema.parcelHistory).where(eq(schema.parcelHistory.parcelId, second.id))).map((row) => row.action),
    ['added', 'labelPurchased', 'shipped', 'delivered'],
  )
})

t.test("a ShipStation ship notification naming a label's tracking number ships that parcel too", async (t) => {
  const s = await setup(t, { plugin: { orderFields: ORDER_FIELDS, orderExchange: { username: EXCHANGE_USER, password: EXCHANGE_PASSWORD, updateShipments: true, integrationHandle: 'shipstation-main' } } })
  const second = await s.app.shipments.deliveries.addParcel(s.shipmentId, { weight: { value: '800', unit: 'g' } })
  const first = (await buy(s.app, s)).json().parcel
  const other = (await buy(s.app, { shipmentId: s.shipmentId, parcelId: second.id })).json().parcel
  const reference = (await orderRow(s.app, (await s.app.shipments.shipments.get(s.shipmentId))!.orderId)).reference
  const notify = () =>
    s.app.inject({
      method: 'POST',
      url: `${EXCHANGE_URL}?${new URLSearchParams({ action: 'shipnotify', order_number: reference, carrier: 'USPS', service: 'Priority', tracking_number: other.trackingNumber })}`,
      headers: basicAuth(),
    })
  const answer = await notify()
  t.equal(answer.statusCode, 200, answer.body)
  t.equal((await storedParcel(s.app, second.id)).status, 'shipped', 'the parcel the notice names')
  t.equal((await storedParcel(s.app, first.id)).status, 'labelled', 'the other parcel waits for its own')
  const shipment = (await s.app.shipments.shipments.get(s.shipmentId))!
  t.equal(shipment.status, 'shipped', 'the notice ships the shipment, as without parcels')
  t.same(shipment.parcels.map((parcel) => parcel.status), ['labelled', 'shipped'], 'the read carries the parcels as they are')
  const { db, schema } = tables(s.app)
  const history = async () => (await db.select().from(schema.parcelHistory).where(eq(schema.parcelHistory.parcelId, second.id))).map((row) => [row.action, row.message])
  t.same((await history()).at(-1), ['shipped', 'shipstation-main: shipnotify'])
  const before = await history()
  t.equal((await notify()).statusCode, 200)
  t.same(await history(), before, 'the same notice again moves nothing')
})

t.test('the label in another format is converted by EasyPost; buying needs shipments-buyLabels', async (t) => {
  const s = await setup(t)
  t.equal((await buy(s.app, s, undefined, 'editor')).statusCode, 403)
  const missing = await s.app.inject({ method: 'GET', url: `${labelUrl(s)}?format=ZPL`, headers: as('viewer') })
  t.equal(missing.statusCode, 409)
  await buy(s.app, s, { integration: 'easypost', carrier: 'USPS', service: 'Priority', labelFormat: 'PNG' })
  const zpl = await s.app.inject({ method: 'GET', url: `${labelUrl(s)}?format=ZPL`, headers: as('viewer') })
  t.equal(zpl.statusCode, 200, zpl.body)
  t.match(zpl.json(), { success: true, format: 'ZPL', url: /\.zpl$/ })
  const png = await s.app.inject({ method: 'GET', url: `${labelUrl(s)}?format=PNG`, headers: as('viewer') })
  t.match(png.json(), { format: 'PNG', url: /\.png$/ })
  const bad = await s.app.inject({ method: 'GET', url: `${labelUrl(s)}?format=GIF`, headers: as('viewer') })
  t.equal(bad.statusCode, 400)
})

t.test('rates: quotes stored cheapest first with an expiry; a stale or changed quote is refused with 409', async (t) => {
  const s = await setup(t)
  const ratesUrl = `/shipments/api/shipments/${s.shipmentId}/parcels/${s.parcelId}/rates`
  const rates = await s.app.inject({ method: 'POST', url: ratesUrl, headers: { ...as('editor'), 'content-type': 'application/json' }, payload: JSON.stringify({ integration: 'easypost' }) })
  t.equal(rates.statusCode, 200, rates.body)
  const { quotes } = rates.json()
  t.same(quotes.map((quote: { amount: string }) => quote.amount), ['5.25', '7.90', '11.03'])
  t.match(quotes[0], { carrier: 'USPS', service: 'GroundAdvantage', currency: 'USD', deliveryDays: 5, expiresAt: '2026-11-26T12:15:00+00:00' })
  const { db, schema } = tables(s.app)
  t.equal((await db.select().from(schema.rateQuotes)).length, 3)

  s.clock.now += 16 * 60 * 1000
  const expired = await buy(s.app, s, { integration: 'easypost', quoteId: quotes[0].id })
  t.equal(expired.statusCode, 409)
  t.match(expired.json(), { message: /has expired/ })
  s.clock.now -= 16 * 60 * 1000

  await s.app.shipments.deliveries.updateParcel(s.shipmentId, s.parcelId, { weight: { value: '2', unit: 'kg' } })
  const changed = await buy(s.app, s, { integration: 'easypost', quoteId: quotes[0].id })
  t.equal(changed.statusCode, 409)
  t.match(changed.json(), { message: /other parcel or address details/ })
  t.equal(s.imitation.stats.buys, 0)
  t.same(await operations(s.app), [], 'a refused quote begins no operation')

  const fresh = (await s.app.inject({ method: 'POST', url: ratesUrl, headers: { ...as('editor'), 'content-type': 'application/json' }, payload: JSON.stringify({ integration: 'easypost' }) })).json().quotes
  const bought = await buy(s.app, s, { integration: 'easypost', quoteId: fresh[0].id })
  t.equal(bought.statusCode, 200, bought.body)
  t.match(bought.json().parcel, { carrier: 'USPS', service: 'GroundAdvantage', label: { cost: { amount: '5.25' } } })
  t.match(await operations(s.app), [{ quoteId: fresh[0].id }])

  s.imitation.setRates([])
  const none = await s.app.inject({ method: 'POST', url: ratesUrl, headers: { ...as('editor'), 'content-type': 'application/json' }, payload: JSON.stringify({ integration: 'easypost' }) })
  t.equal(none.statusCode, 422)
  t.match(none.json(), { success: false, error: /No carrier offered a rate: USPS: Unable to retrieve/ })
})

t.test('buying without a ship-to address, a ship-from address or a label provider is refused clearly', async (t) => {
  const s = await setup(t)
  const orderId = await insertOrder(s.app)
  const [bare] = await s.app.shipments.shipments.create(orderId)
  const parcel = await s.app.shipments.deliveries.addParcel(bare.id, { weight: { value: '1', unit: 'kg' } })
  const noAddress = await buy(s.app, { shipmentId: bare.id, parcelId: parcel.id })
  t.equal(noAddress.statusCode, 422)
  t.match(noAddress.json(), { success: false, error: /has no shipping address/ })
  await s.app.shipments.integrations.create({ name: 'Hooks', handle: 'hooks', providerId: 'signed-webhook', settings: { secret: 'x'.repeat(32) } })
  const notLabels = await buy(s.app, s, { integration: 'hooks', carrier: 'USPS', service: 'Priority' })
  t.equal(notLabels.statusCode, 422)
  t.match(notLabels.json(), { errors: { integration: [/does not sell labels/] } })
  const badFormat = await buy(s.app, s, { integration: 'easypost', carrier: 'USPS', service: 'Priority', labelFormat: 'GIF' })
  t.equal(badFormat.statusCode, 422)
  t.match(badFormat.json(), { success: false, errors: { labelFormat: [String] } })
  t.equal(s.imitation.stats.creates, 0)
  t.same(await operations(s.app), [])

  const noFrom = await buildTestApp(t, {}, s.database)
  const refused = await buy(noFrom, s)
  t.equal(refused.statusCode, 422)
  t.match(refused.json(), { error: /No ship-from address/ })
})

t.test('a carrier or service with control characters or a bidi override: 422 naming it, nothing bought or stored', async (t) => {
  const s = await setup(t)
  for (const [field, value] of [['carrier', 'USPS\u0000'], ['service', 'Priority\u001b[2J'], ['carrier', 'US\u202EPS']] as const) {
    const response = await buy(s.app, s, { integration: 'easypost', carrier: 'USPS', service: 'Priority', [field]: value })
    t.equal(response.statusCode, 422, JSON.stringify(value))
    t.match(response.json(), { errors: { [field]: [/characters that are not allowed/] } })
  }
  t.same(await operations(s.app), [], 'no purchase started')
  t.match(await storedParcel(s.app, s.parcelId), { status: 'pending', carrier: null })
  t.same(s.imitation.calls, [], 'nothing sent to EasyPost')
})
