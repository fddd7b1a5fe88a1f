// A provider's rate offers are untrusted: each is checked on its own, the good ones are quoted and the
// odd ones dropped with their reason in the attempt log, through the API and the admin's "Get rates".
import t, { type Test } from 'tap'
import { as, buildTestApp, insertOrder } from './fixtures/app.js'
import { adminClient, buildAdminApp } from './fixtures/admin.js'
import { tables, testDatabase } from './fixtures/database.js'
import { DEFAULT_RATES, easyPostImitation, type ImitationRate } from './fixtures/easypost-api.js'
import type { FastifyInstance } from 'fastify'

const API_KEY = 'EZTK-rate-offers-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }

/** The default offers and one odd offer of each kind a provider has been seen (or could be) to send. */
const ODD_RATES: ImitationRate[] = [
  ...DEFAULT_RATES,
  { carrier: 'FedEx', service: 'Express', rate: '30.00', delivery_days: 'soon' },
  { carrier: 'FedEx', service: 'Ground', rate: '9.99', delivery_days: -1 },
  { carrier: 'FedEx', service: 'Saver', rate: '12.50', delivery_days: 1.5 },
  { carrier: 'DHL', service: 'Express', rate: 14.2, delivery_days: 2 },
  { carrier: 'DHL', service: 'Economy', rate: '8.0.1', delivery_days: 6 },
  { carrier: 'DHL', service: 'Parcel', rate: '-4.00', delivery_days: 6 },
  { carrier: 'DHL', service: 'Saver', rate: '9.00', currency: 'dollars', delivery_days: 6 },
  { carrier: '', service: 'Nameless', rate: '3.00', delivery_days: 1 },
  { carrier: 'Acme\u202e', service: 'Flipped', rate: '3.00', delivery_days: 1 },
  { carrier: 'Acme', service: 12, rate: '3.00', delivery_days: 1 },
]

async function prepare(t: Test, app: FastifyInstance) {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY, rates: ODD_RATES })
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 2000 } })
  const orderId = await insertOrder(app)
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Ada', address1: '1 Main St', city: 'Springfield', state: 'IL', postalCode: '62701', countryCode: 'US' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const parcel = await app.shipments.deliveries.addParcel(shipment.id, { weight: { value: '1.5', unit: 'kg' } })
  return { shipmentId: shipment.id, parcelId: parcel.id }
}

/** The stored quotes and the attempt log of the rates calls of a parcel. */
async function stored(t: Test, app: FastifyInstance, parcelId: number) {
  const { db, schema } = tables(app)
  const quotes = await db.select().from(schema.rateQuotes)
  t.same(quotes.map((quote) => `${quote.carrier} ${quote.service} ${quote.amount} ${quote.deliveryDays}`).sort(), ['UPS Ground 11.03 3', 'USPS GroundAdvantage 5.25 5', 'USPS Priority 7.90 2'], 'the good offers are stored, the odd ones are not')
  const attempts = await db.select().from(schema.labelAttempts)
  t.equal(attempts.length, 1, 'the rates call is in the attempt log')
  t.match(attempts[0], { operationId: `rates:${parcelId}`, step: 'rates', error: null })
  const dropped = (attempts[0].response as { dropped: Array<{ carrier: unknown; service: unknown; reason: string }> }).dropped
  t.same(
    dropped.map((each) => each.reason),
    [
      'deliveryDays: must be a whole number of days, 0 or more, or absent',
      'deliveryDays: must be a whole number of days, 0 or more, or absent',
      'deliveryDays: must be a whole number of days, 0 or more, or absent',
      'amount: must be a decimal string such as "7.90", 0 or more',
      'amount: must be a decimal string such as "7.90", 0 or more',
      'amount: must be a decimal string such as "7.90", 0 or more',
      'currency: must be a three-letter ISO 4217 code',
      'carrier: must not be empty',
      'carrier: contains characters that are not allowed (control characters, bidirectional overrides or unpaired surrogates).',
      'service: must be a string',
    ],
    'each dropped offer with its reason',
  )
  t.match(dropped[0], { carrier: 'FedEx', service: 'Express', amount: '30.00', deliveryDays: 'soon' })
  t.match(attempts[0].response, { offered: 13, kept: 3 })
}

t.test('one odd offer hides no good one: the rates route quotes the good offers and logs the dropped ones with their reason', async (t) => {
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM } }, await testDatabase(t, 'rate_offers'))
  const s = await prepare(t, app)
  const response = await app.inject({
    method: 'POST',
    url: `/shipments/api/shipments/${s.shipmentId}/parcels/${s.parcelId}/rates`,
    headers: { ...as('editor'), 'content-type': 'application/json' },
    payload: JSON.stringify({ integration: 'easypost' }),
  })
  t.equal(response.statusCode, 200, response.body)
  const { success, quotes } = response.json()
  t.equal(success, true)
  t.same(quotes.map((quote: { carrier: string; service: string; amount: string; deliveryDays: number }) => [quote.carrier, quote.service, quote.amount, quote.deliveryDays]), [
    ['USPS', 'GroundAdvantage', '5.25', 5],
    ['USPS', 'Priority', '7.90', 2],
    ['UPS', 'Ground', '11.03', 3],
  ])
  await stored(t, app, s.parcelId)
})

t.test("one odd offer hides no good one: the admin's Get rates shows the good offers", async (t) => {
  const app = await buildAdminApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  const s = await prepare(t, app)
  const admin = adminClient(app, 'admin')
  const page = `/shipments/${s.shipmentId}`
  await admin.get(page)
  const rates = await admin.post(`${page}/parcels/${s.parcelId}/rates`, { integration: 'easypost' })
  t.equal(rates.statusCode, 200, rates.body.slice(0, 500))
  t.equal([...rates.body.matchAll(/data-quote="(\d+)"/g)].length, 3, 'a table of the three good rates')
  t.match(rates.body, /5\.25 USD[\s\S]*7\.90 USD[\s\S]*11\.03 USD/)
  t.notMatch(rates.body, /FedEx|DHL/, 'no odd offer shown')
  await stored(t, app, s.parcelId)
})
