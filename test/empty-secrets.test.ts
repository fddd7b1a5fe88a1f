// A secret setting that reads an environment variable is checked when it is read, not only when it is
// saved: a process started with the variable empty (or unset) refuses every request of the integration,
// on every built-in provider, rather than verify signatures made with an empty key. The log names the
// integration, the setting and the variable, never a value.
import t, { type Test } from 'tap'
import { eq } from 'drizzle-orm'
import { signAfterShipWebhook, signEasyPostEvent, signWebhook } from '../src/index.js'
import { as, buildTestApp, historyRows, insertOrder, orderWithShipments, shipmentRow } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { easyPostImitation } from './fixtures/easypost-api.js'

const SIGNED_SECRET = 'whsec_' + Buffer.from('a-test-signing-secret-of-32-bytes').toString('base64')
const VARIABLE = 'SHIPMENTS_TEST_EMPTY_SECRET_30'
const EASYPOST_KEY = 'EZTK-empty-secret-test-key-0123456789'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }

/** For each provider: the settings saved (the secret from the variable) and a request signed with `key`. */
const providers = {
  'signed-webhook': {
    valid: SIGNED_SECRET,
    settings: { secret: `$${VARIABLE}` },
    request: (key: string, body: string) => {
      const timestamp = Math.floor(Date.now() / 1000)
      return { 'webhook-id': `msg_${Math.random()}`, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(key, 'unused', timestamp, body) }
    },
  },
  easypost: { valid: 'an-easypost-webhook-secret', settings: { webhookSecret: `$${VARIABLE}` }, request: (key: string, body: string) => ({ 'x-hmac-signature': signEasyPostEvent(key, Buffer.from(body)) }) },
  aftership: { valid: 'an-aftership-webhook-secret', settings: { webhookSecret: `$${VARIABLE}` }, request: (key: string, body: string) => ({ 'aftership-hmac-sha256': signAfterShipWebhook(key, Buffer.from(body)) }) },
} as const

for (const [providerId, provider] of Object.entries(providers)) {
  t.test(`${providerId}: a secret variable that is empty or unset when the process runs refuses every request`, async (t) => {
    process.env[VARIABLE] = provider.valid
    t.teardown(() => delete process.env[VARIABLE])
    const logLines: string[] = []
    const app = await buildTestApp(t, {}, undefined, logLines)
    await app.shipments.integrations.create({ name: 'Carrier', handle: 'carrier', providerId, settings: provider.settings })
    const { shipmentIds: [id] } = await orderWithShipments(app)
    const before = await shipmentRow(app, id)
    const historyBefore = await historyRows(app, id)

    for (const [what, value] of [['empty', ''], ['blank', '  '], ['unset', undefined]] as const) {
      if (value === undefined) delete process.env[VARIABLE]
      else process.env[VARIABLE] = value
      const body = JSON.stringify({ anything: 'signed with an empty key' })
      const headers = { 'content-type': 'application/json', ...provider.request(value ?? '', body) }
      const response = await app.inject({ method: 'POST', url: '/actions/shipments/gateway/handle?integration=carrier', headers, payload: body })
      t.equal(response.statusCode, 400, `${what}: refused`)
      t.same(response.json(), { name: 'Bad Request', message: 'Integration carrier is not configured: one of its secret settings is empty or not set.', code: 0, status: 400, errorCode: 'SHIPMENTS_INTEGRATION_ERROR' }, `${what}: the body says why, naming no variable`)
    }
    t.same(await shipmentRow(app, id), before, 'nothing changed')
    t.same(await historyRows(app, id), historyBefore, 'no history written')

    const warnings = logLines.map((line) => JSON.parse(line) as { level: number; msg: string; variable?: string }).filter((entry) => /refused a request: its secret setting/.test(entry.msg))
    t.equal(warnings.length, 3, 'one warning per refused request')
    t.match(warnings[0], { level: 40, variable: VARIABLE, msg: new RegExp(`^Integration carrier refused a request: its secret setting \\w+ reads the environment variable ${VARIABLE}, which is empty or not set$`) })
    t.notMatch(logLines.join('\n'), provider.valid, 'no secret value in the log')

    process.env[VARIABLE] = provider.valid
    const body = JSON.stringify({ anything: 'signed with the real key' })
    const response = await app.inject({ method: 'POST', url: '/actions/shipments/gateway/handle?integration=carrier', headers: { 'content-type': 'application/json', ...provider.request(provider.valid, body) }, payload: body })
    t.not(response.json<{ message?: string }>().message, 'Integration carrier is not configured: one of its secret settings is empty or not set.', 'with the variable set again, the provider itself answers')
  })
}

t.test('ShipStation: a password that reads blank fails at registration, naming the option', async (t) => {
  process.env[VARIABLE] = '   '
  t.teardown(() => delete process.env[VARIABLE])
  await t.rejects(buildTestApp(t, { orderExchange: { username: 'ss', password: `$${VARIABLE}` } }), /orderExchange\.password.*must not be empty/)
})

t.test('the tracking page: a secret that reads empty fails at registration, naming the option', async (t) => {
  process.env[VARIABLE] = ''
  t.teardown(() => delete process.env[VARIABLE])
  await t.rejects(buildTestApp(t, { trackingPage: { secret: `$${VARIABLE}`, baseUrl: 'https://shop.example' } }), /trackingPage\.secret.*must be at least 32 characters/)
})

/** An EasyPost integration whose apiKey reads VARIABLE, pointed at the imitation, and a shipment with a parcel. */
async function labelSetup(t: Test, logLines: string[]) {
  const imitation = await easyPostImitation(t, { apiKey: EASYPOST_KEY })
  process.env[VARIABLE] = EASYPOST_KEY
  t.teardown(() => delete process.env[VARIABLE])
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM } }, undefined, logLines)
  await app.shipments.integrations.create({
    name: 'EasyPost',
    handle: 'easypost',
    providerId: 'easypost',
    settings: { webhookSecret: 'webhook-secret', apiKey: `$${VARIABLE}`, apiBaseUrl: imitation.baseUrl, timeoutMs: 1000 },
  })
  const orderId = await insertOrder(app)
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Dr. Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', countryCode: 'US' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const parcel = await app.shipments.deliveries.addParcel(shipment.id, { weight: { value: '1.5', unit: 'kg' }, dimensions: { length: '30', width: '20', height: '10', unit: 'cm' } })
  return { app, imitation, shipmentId: shipment.id, parcelId: parcel.id }
}

const secretWarnings = (logLines: string[]) =>
  logLines.map((line) => JSON.parse(line) as { level: number; msg: string; variable?: string; integration?: string }).filter((entry) => /refused a request: its secret setting/.test(entry.msg))
const EXPECTED_WARNING = new RegExp(`^Integration easypost refused a request: its secret setting apiKey reads the environment variable ${VARIABLE}, which is empty or not set$`)

t.test('EasyPost: buying a label with an apiKey that reads empty is a 422 with a warning naming the integration and the variable; nothing bought or stored', async (t) => {
  const logLines: string[] = []
  const s = await labelSetup(t, logLines)
  for (const [what, value] of [['empty', ''], ['unset', undefined]] as const) {
    if (value === undefined) delete process.env[VARIABLE]
    else process.env[VARIABLE] = value
    const response = await s.app.inject({
      method: 'POST',
      url: `/shipments/api/shipments/${s.shipmentId}/parcels/${s.parcelId}/label`,
      headers: { ...as('admin'), 'content-type': 'application/json' },
      payload: JSON.stringify({ integration: 'easypost', carrier: 'USPS', service: 'Priority' }),
    })
    t.equal(response.statusCode, 422, `${what}: refused`)
    t.match(response.json(), { success: false, error: 'Integration easypost is not configured: one of its secret settings is empty or not set.' })
  }
  t.same(s.imitation.calls, [], 'EasyPost was never called')
  t.match(s.imitation.stats, { creates: 0, buys: 0, refunds: 0, scanForms: 0 }, 'nothing bought')
  const { db, schema } = tables(s.app)
  t.same(await db.select().from(schema.labelOperations), [], 'no label operation stored')
  const [parcel] = await db.select().from(schema.parcels).where(eq(schema.parcels.id, s.parcelId))
  t.match(parcel, { labelOperationId: null, trackingNumber: null }, 'the parcel has no label')
  t.same((await s.app.shipments.outbox.list({ kind: 'event' })).filter((message) => message.name.startsWith('label')), [], 'no label event')

  const warnings = secretWarnings(logLines)
  t.equal(warnings.length, 2, 'one warning per refused purchase')
  t.match(warnings[0], { level: 40, integration: 'easypost', variable: VARIABLE, msg: EXPECTED_WARNING })
  t.notMatch(logLines.join('\n'), EASYPOST_KEY, 'no key in the log')
})

t.test('EasyPost: a push with an apiKey that reads empty is a failed attempt, retried, with the same warning; nothing sent', async (t) => {
  const logLines: string[] = []
  const s = await labelSetup(t, logLines)
  await s.app.shipments.shipments.update(s.shipmentId, { trackingNumber: '9400100000000000000001', carrier: 'USPS' })
  process.env[VARIABLE] = ''
  const outcome = await s.app.shipments.pushes.push('easypost', s.shipmentId)
  t.match(outcome, { state: 'pending', error: 'Integration easypost is not configured: one of its secret settings is empty or not set.', attempts: 1 }, 'retried: the host may set the variable')
  t.same(s.imitation.calls, [], 'nothing sent to EasyPost')
  t.match(await s.app.shipments.integrations.externalReferences(s.shipmentId), [{ integrationHandle: 'easypost', externalId: null, lastPushError: /is not configured/ }], 'the failed attempt is on record')
  const warnings = secretWarnings(logLines)
  t.equal(warnings.length, 1)
  t.match(warnings[0], { level: 40, integration: 'easypost', variable: VARIABLE, msg: EXPECTED_WARNING })
  t.notMatch(logLines.join('\n'), EASYPOST_KEY, 'no key in the log')
})

t.test('EasyPost: a return label with an apiKey that reads empty is a 422 with the same warning; the return keeps its state, nothing bought', async (t) => {
  const logLines: string[] = []
  const s = await labelSetup(t, logLines)
  const orders = s.app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'RET-1', isCompleted: true, items: [{ name: 'Mug', sku: 'MUG', quantity: 1 }] })
  const [line] = (await s.app.shipments.orders.orderLines!(orderId))!
  const [shipped] = await s.app.shipments.shipments.create(orderId, { items: [{ lineItemId: line.id, quantity: 1 }] })
  await s.app.shipments.shipments.update(shipped.id, { status: 'shipped' })
  const { db, schema } = tables(s.app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Dr. Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', countryCode: 'US' })
  const requested = await s.app.shipments.returns.request(orderId, { lines: [{ lineItemId: line.id, quantity: 1, reason: 'defective' }] })
  await s.app.shipments.returns.update(requested.id, { state: 'authorised' })

  process.env[VARIABLE] = ''
  const response = await s.app.inject({
    method: 'POST',
    url: `/shipments/api/returns/${requested.id}/label`,
    headers: { ...as('admin'), 'content-type': 'application/json' },
    payload: JSON.stringify({ integration: 'easypost', carrier: 'USPS', service: 'Priority', weight: { value: '1.5', unit: 'kg' }, labelFormat: 'PNG' }),
  })
  t.equal(response.statusCode, 422, response.body)
  t.match(response.json(), { success: false, error: 'Integration easypost is not configured: one of its secret settings is empty or not set.' })
  t.same(s.imitation.calls, [], 'EasyPost was never called')
  const [stored] = await db.select().from(schema.returns).where(eq(schema.returns.id, requested.id))
  t.match(stored, { state: 'authorised', labelState: null, labelOperationId: null, trackingNumber: null }, 'the return is as it was')
  t.same((await s.app.shipments.outbox.list({ kind: 'event' })).filter((message) => message.name === 'returnLabelSent'), [], 'no returnLabelSent')
  const warnings = secretWarnings(logLines)
  t.equal(warnings.length, 1)
  t.match(warnings[0], { level: 40, integration: 'easypost', variable: VARIABLE, msg: EXPECTED_WARNING })
})
