// The EasyPost stand-in as a host uses it (`fastify-shipments/testing`, here from its source): the
// journey of docs/test-without-a-carrier.md end to end on a SQLite file (an order, a shipment with
// items, a parcel, rates, a label, a signed tracker event that ships it), a lost answer recovered
// exactly once, and the stand-in's own API: its key check, its form and ScanForm PDFs read back with
// pdftotext, and close(). Engine-independent where it matters (the stand-in), so it runs on SQLite only.
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import { fastifyShipments, ShipmentsPermissions, signEasyPostEvent } from '../../src/index.js'
import { DEFAULT_RATES, startEasyPostStandIn, type EasyPostStandIn } from '../../src/testing/index.js'

const API_KEY = 'EZTK-stand-in-test-key'
const WEBHOOK_SECRET = 'stand-in-webhook-secret'
const TOKEN = 'test-token'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const admin = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }

/** The journey's host: the plugin on a SQLite file, the stand-in, the integration, one order with one shipment and one parcel. */
async function journeyHost(t: Test) {
  const standIn = await startEasyPostStandIn({ apiKey: API_KEY })
  t.teardown(standIn.close)
  const app = Fastify()
  await app.register(fastifyShipments, {
    database: join(t.testdir(), 'shop.sqlite'),
    deliveries: { shipFrom: SHIP_FROM },
    resolveUser: (request) => (request.headers.authorization === `Bearer ${TOKEN}` ? { id: 1 } : null),
    hasPermission: (_user, permission) => Object.values(ShipmentsPermissions).includes(permission as never),
  })
  t.teardown(() => app.close())
  // The order statuses the package moves orders to (`shippedOrderStatus` is `shipped` unless told).
  await app.shipments.referenceOrders!.saveStatus({ handle: 'processing', name: 'Processing', isDefault: true })
  await app.shipments.referenceOrders!.saveStatus({ handle: 'shipped', name: 'Shipped' })
  await app.shipments.integrations.create({
    name: 'EasyPost (stand-in)',
    handle: 'easypost',
    providerId: 'easypost',
    settings: { webhookSecret: WEBHOOK_SECRET, apiKey: API_KEY, apiBaseUrl: standIn.baseUrl },
  })
  const orderId = await app.shipments.referenceOrders!.createOrder({
    reference: '1001',
    isCompleted: true,
    email: 'steve@example.com',
    shippingAddress: { name: 'Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', country: 'US' },
    items: [{ name: 'Mug', sku: 'MUG-1', quantity: 2, price: '14.50', weight: 350, weightUnit: 'g' }],
  })
  const lines = (await app.shipments.orders.orderLines!(orderId))!
  const [shipment] = await app.shipments.shipments.create(orderId, { items: lines.map((line) => ({ lineItemId: line.id, quantity: line.quantity })) })
  const parcel = await app.shipments.deliveries.addParcel(shipment!.id, { weight: { value: '0.9', unit: 'kg' }, dimensions: { length: '20', width: '15', height: '12', unit: 'cm' } })
  return { app, standIn, orderId, shipmentId: shipment!.id, parcelId: parcel.id }
}

t.test('the journey: rates and a label from the stand-in, then a signed tracker event ships the shipment', async (t) => {
  const { app, standIn, orderId, shipmentId, parcelId } = await journeyHost(t)
  const parcelUrl = `/shipments/api/shipments/${shipmentId}/parcels/${parcelId}`

  const rates = await app.inject({ method: 'POST', url: `${parcelUrl}/rates`, headers: admin, payload: { integration: 'easypost' } })
  t.equal(rates.statusCode, 200, rates.body)
  const quotes = rates.json().quotes as Array<{ id: number; carrier: string; service: string; amount: string }>
  t.same(
    quotes.map((quote) => `${quote.carrier} ${quote.service} ${quote.amount}`),
    ['USPS GroundAdvantage 5.25', 'USPS Priority 7.90', 'UPS Ground 11.03'],
    "the stand-in's default rates, cheapest first",
  )
  t.same(standIn.calls.map((call) => call.step), ['create'], 'the rates came with one EasyPost shipment')

  const label = await app.inject({ method: 'POST', url: `${parcelUrl}/label`, headers: admin, payload: { integration: 'easypost', quoteId: quotes[0]!.id } })
  t.equal(label.statusCode, 200, label.body)
  const bought = label.json()
  t.match(bought, { success: true, recovered: false, parcel: { id: parcelId, status: 'labelled', carrier: 'USPS', service: 'GroundAdvantage', trackingNumber: /^9400\d{18}$/, label: { cost: { amount: '5.25', currency: 'USD' } } } })
  t.equal(standIn.stats.buys, 1, 'bought once at the stand-in')
  t.same(standIn.calls.map((call) => call.step), ['create', 'create', 'buy', 'convert'], "the label's own EasyPost shipment, bought, its label converted")
  t.same(standIn.boughtReferences, [bought.operationId], "the stand-in's shipment carries the operation id")
  t.ok(standIn.calls.every((call) => call.authorized), 'every call carried the key')
  t.match(await app.shipments.shipments.get(shipmentId), { status: 'new', trackingNumber: bought.parcel.trackingNumber }, 'the label filled the shipment, which is not shipped yet')

  const event = JSON.stringify({
    id: 'evt_stand_in_1',
    object: 'Event',
    description: 'tracker.updated',
    mode: 'test',
    created_at: new Date().toISOString(),
    result: { id: 'trk_stand_in_1', object: 'Tracker', tracking_code: bought.parcel.trackingNumber, carrier: 'USPS', status: 'in_transit' },
  })
  const wrong = await app.inject({ method: 'POST', url: '/actions/shipments/gateway/handle?integration=easypost', headers: { 'content-type': 'application/json', 'x-hmac-signature': signEasyPostEvent('another-secret', event) }, payload: event })
  t.equal(wrong.statusCode, 400, 'an event signed with another secret is refused')
  t.match(wrong.json(), { message: /signature/i })
  t.equal((await app.shipments.shipments.get(shipmentId))!.status, 'new', 'and moves nothing')

  const tracked = await app.inject({ method: 'POST', url: '/actions/shipments/gateway/handle?integration=easypost', headers: { 'content-type': 'application/json', 'x-hmac-signature': signEasyPostEvent(WEBHOOK_SECRET, event) }, payload: event })
  t.equal(tracked.statusCode, 200, tracked.body)
  t.match(tracked.json(), { applied: true, shipment: { id: shipmentId, status: 'shipped' } })
  t.equal((await app.shipments.shipments.get(shipmentId))!.status, 'shipped', 'stored as shipped')
  t.equal((await app.shipments.orders.findOrder(orderId))!.statusHandle, 'shipped', 'and the order with it')
  t.match(await app.shipments.deliveries.listParcels(shipmentId), [{ id: parcelId, status: 'shipped' }], 'the parcel followed its tracker')
})

t.test('a lost answer to the buy is recovered by retrieving the shipment: one label, never bought twice', async (t) => {
  const { app, standIn, shipmentId, parcelId } = await journeyHost(t)
  standIn.fault({ step: 'buy', kind: 'lose-answer' })
  const label = await app.inject({ method: 'POST', url: `/shipments/api/shipments/${shipmentId}/parcels/${parcelId}/label`, headers: admin, payload: { integration: 'easypost', carrier: 'USPS', service: 'Priority' } })
  t.equal(label.statusCode, 200, label.body)
  t.match(label.json(), { recovered: true, parcel: { status: 'labelled', carrier: 'USPS', service: 'Priority' } })
  t.same(standIn.calls.map((call) => call.step), ['create', 'buy', 'retrieve'], 'created, bought (its answer lost), retrieved')
  t.equal(standIn.stats.buys, 1)
  t.match(await app.shipments.deliveries.listParcels(shipmentId), [{ id: parcelId, status: 'labelled', trackingNumber: /^9400/ }])
})

/** A call to the stand-in's API with its key. */
const call = (standIn: EasyPostStandIn, method: string, path: string, body?: unknown, key = API_KEY) =>
  fetch(`${standIn.baseUrl}${path}`, {
    method,
    headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })

const pdfText = (t: Test, bytes: ArrayBuffer) => {
  const path = join(t.testdir(), 'file.pdf')
  writeFileSync(path, Buffer.from(bytes))
  return execFileSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' })
}

t.test("the stand-in's API: the key checked, customs forms and ScanForms served as PDFs that read back, closed on close()", async (t) => {
  const standIn = await startEasyPostStandIn({ apiKey: API_KEY, rates: DEFAULT_RATES.slice(0, 1) })
  const refused = await call(standIn, 'GET', '/carrier_accounts', undefined, 'another-key')
  t.equal(refused.status, 401)
  t.match(await refused.json(), { error: { code: 'APIKEY.INACTIVE' } })
  t.match(standIn.calls, [{ step: 'carrier-accounts', authorized: false }])

  const to = { name: 'Jean Tremblay', street1: '1200 Rue Sainte-Catherine O', city: 'Montreal', state: 'QC', zip: 'H3G 1P1', country: 'CA' }
  const from = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', zip: '94104', country: 'US' }
  const parcel = { weight: 32, length: 8, width: 6, height: 4 }
  const uncustomed = await call(standIn, 'POST', '/shipments', { shipment: { to_address: to, from_address: from, parcel } })
  t.equal(uncustomed.status, 422, 'abroad without customs info: refused as EasyPost refuses it')
  t.match(await uncustomed.json(), { error: { code: 'PARAMETER.REQUIRED', errors: [{ field: 'customs_info' }] } })
  t.equal(standIn.stats.creates, 0)

  const customs_info = { contents_type: 'merchandise', customs_items: [{ description: 'Mug', quantity: 2, value: '29.00', weight: 24, hs_tariff_number: '6912.00', origin_country: 'PT' }] }
  const created = await call(standIn, 'POST', '/shipments', { shipment: { reference: 'op-1', to_address: to, from_address: from, parcel, customs_info } })
  t.equal(created.status, 201)
  const shipment = (await created.json()) as { id: string; rates: Array<{ id: string }>; customs_info: { customs_items: Array<{ value: unknown }> } }
  t.equal(shipment.customs_info.customs_items[0]!.value, '29.00', "an item's value answered as a string")
  const bought = await call(standIn, 'POST', `/shipments/${shipment.id}/buy`, { rate: { id: shipment.rates[0]!.id } })
  t.equal(bought.status, 200)
  const { forms, tracking_code } = (await bought.json()) as { forms: Array<{ form_type: string; form_url: string }>; tracking_code: string }
  t.same(forms.map((form) => form.form_type), ['commercial_invoice', 'cn22'], 'a commercial invoice and a CN22 (29.00 is under its limit)')
  const invoice = await fetch(forms[0]!.form_url)
  t.equal(invoice.headers.get('content-type'), 'application/pdf')
  const invoiceText = pdfText(t, await invoice.arrayBuffer())
  t.match(invoiceText, new RegExp(`COMMERCIAL INVOICE ${shipment.id}`))
  t.match(invoiceText, `Tracking ${tracking_code}`)
  t.equal(standIn.stats.formFetches, 1)

  const again = await call(standIn, 'POST', `/shipments/${shipment.id}/buy`, { rate: { id: shipment.rates[0]!.id } })
  t.equal(again.status, 422)
  t.match(await again.json(), { error: { code: 'SHIPMENT.POSTAGE.EXISTS' } })
  t.equal(standIn.stats.buys, 1, 'a second buy buys nothing')

  const scanForm = await call(standIn, 'POST', '/scan_forms', { scan_form: { shipments: [{ id: shipment.id }] } })
  t.equal(scanForm.status, 200)
  const form = (await scanForm.json()) as { id: string; form_url: string; tracking_codes: string[] }
  t.same(form.tracking_codes, [tracking_code])
  const scanText = pdfText(t, await (await fetch(form.form_url)).arrayBuffer())
  t.match(scanText, `USPS SCAN FORM ${form.id}`)
  t.match(scanText, tracking_code)
  t.equal((await fetch(form.form_url.replace(/sf_[0-9a-f]+/, `sf_${'0'.repeat(32)}`))).status, 404, 'an unknown form is not found')

  await standIn.close()
  await t.rejects(call(standIn, 'GET', '/carrier_accounts'), 'closed: nothing answers')
})
