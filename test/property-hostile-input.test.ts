import t from 'tap'
import fc from 'fast-check'
import { signWebhook } from '../src/index.js'
import { buildTestApp, orderWithShipments } from './fixtures/app.js'
import { contentTypes, hostileString, snapshotDatabase, STACK_TRACE } from './fixtures/hostile.js'
import { testDatabase } from './fixtures/database.js'

const RUNS = Number(process.env.PROPERTY_RUNS ?? 150)
const SPEC_KEYS = ['trackingNumber', 'trackingUrl', 'carrier', 'service', 'dateScheduledShip', 'fulfillmentNotes', 'shippingNotes', 'status', 'statusMessage', 'fields', 'integrationHandle', 'externalCode']

const jsonValue = fc.oneof(hostileString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(hostileString, { maxLength: 3 }), fc.dictionary(hostileString, hostileString, { maxKeys: 3 }))
const updateBody = fc.oneof(
  fc.dictionary(fc.constantFrom(...SPEC_KEYS, 'unknown', '__proto__', 'constructor'), jsonValue, { maxKeys: 6 }).map((body) => JSON.stringify(body)),
  jsonValue.map((value) => JSON.stringify(value)),
  hostileString,
)

t.test('the shipment API: random bodies, ids, users and content types never give a 500, and rejections change nothing', async (t) => {
  const app = await buildTestApp(t, { shipmentFields: [{ handle: 'count', type: 'number' }, { handle: 'note', type: 'text', maxLength: 10 }] })
  const { shipmentIds } = await orderWithShipments(app, 2)
  await fc.assert(
    fc.asyncProperty(
      updateBody,
      contentTypes,
      fc.constantFrom(String(shipmentIds[0]), String(shipmentIds[1]), '999', 'abc', '-1', '%00', '1.5'),
      fc.constantFrom('admin', 'editor', 'viewer', 'nobody', undefined, 'ghost'),
      async (payload, contentType, id, user) => {
        const before = await snapshotDatabase(app)
        const headers: Record<string, string> = {}
        if (contentType) headers['content-type'] = contentType
        if (user) headers['x-test-user'] = user
        const response = await app.inject({ method: 'POST', url: `/shipments/api/shipments/${id}`, headers, payload })
        if (response.statusCode >= 500) return false
        if (STACK_TRACE.test(response.body)) return false
        if (response.statusCode !== 200 && (await snapshotDatabase(app)) !== before) return false
        return true
      },
    ),
    { numRuns: RUNS },
  )
  t.pass(`${RUNS} random requests`)
})

t.test('the gateway: random methods, queries, headers and bodies never give a 500, and rejections change nothing', async (t) => {
  const app = await buildTestApp(t, {}, await testDatabase(t, 'gw'))
  await app.shipments.integrations.create({
    name: 'Hooks',
    handle: 'hooks',
    providerId: 'signed-webhook',
    settings: { secret: 'whsec_' + Buffer.from('property-test-signing-secret-32b').toString('base64') },
    statusMap: { in_transit: 'shipped' },
  })
  await orderWithShipments(app, 1)
  const headerValue = fc.string({ unit: 'grapheme-ascii', maxLength: 30 }).map((value) => value.replace(/[\r\n]/g, ''))
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH'),
      fc.oneof(
        fc.constant('integration=hooks'),
        fc.constant(''),
        fc.constantFrom('integration=%', 'integration=%zz', 'integration[]=hooks&integration=x', 'integration=hooks&integration=hooks'),
        fc.string({ unit: 'grapheme', maxLength: 30 }).map((value) => `integration=${encodeURIComponent(value)}`),
      ),
      contentTypes,
      fc.record({ 'webhook-id': headerValue, 'webhook-timestamp': fc.oneof(headerValue, fc.constant(String(Math.floor(Date.now() / 1000)))), 'webhook-signature': headerValue }, { requiredKeys: [] }),
      updateBody,
      async (method, query, contentType, signedHeaders, payload) => {
        const before = await snapshotDatabase(app)
        const headers: Record<string, string> = { ...signedHeaders }
        if (contentType) headers['content-type'] = contentType
        const response = await app.inject({ method, url: `/actions/shipments/gateway/handle?${query}`, headers, payload: method === 'GET' ? undefined : payload })
        if (response.statusCode >= 500 || STACK_TRACE.test(response.body)) return false
        if (response.statusCode === 415) return false // the gateway takes every content type
        if (response.statusCode !== 200 && (await snapshotDatabase(app)) !== before) return false
        return response.statusCode !== 200 // nothing random is validly signed
      },
    ),
    { numRuns: RUNS },
  )
  t.pass(`${RUNS} random requests`)
  // The property generator cannot sign, so prove the happy path once with the same app.
  const body = JSON.stringify({ orderNumber: 'no-such-order', status: 'in_transit', occurredAt: new Date().toISOString() })
  const timestamp = Math.floor(Date.now() / 1000)
  const response = await app.inject({
    method: 'POST',
    url: '/actions/shipments/gateway/handle?integration=hooks',
    headers: { 'webhook-id': 'm1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook('whsec_' + Buffer.from('property-test-signing-secret-32b').toString('base64'), 'm1', timestamp, body) },
    payload: body,
  })
  t.equal(response.statusCode, 400)
  t.equal(response.json().message, 'Unknown order: no-such-order')
})
