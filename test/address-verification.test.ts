// Verified addresses against the local EasyPost imitation (its Address endpoint learnt from EasyPost's
// recorded traffic): each verdict, the carrier's correction accepted as the shipment's own ship-to (the
// next rate request carries it; the order's address is untouched), "ship as is", a check gone stale when
// the order's address changes, block mode refusing before any provider call or write, warn mode letting
// everything through with a warning, a batch skipping an undeliverable parcel, the setting checked whole,
// and odd provider answers read as "unverified" rather than crashing.
import t, { type Test } from 'tap'
import { eq } from 'drizzle-orm'
import PDFDocument from 'pdfkit'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp, insertOrder } from './fixtures/app.js'
import { tables, testDatabase } from './fixtures/database.js'
import { easyPostImitation } from './fixtures/easypost-api.js'
import { adminClient, buildAdminApp } from './fixtures/admin.js'
import type { ShipmentsPluginOptions } from '../src/index.js'
import { verificationOf } from '../src/gateway/providers/easypost-addresses.js'

const API_KEY = 'EZTK-address-test-key-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const API = '/shipments/api'

/** Addresses the imitation answers as EasyPost's recorded traffic does. */
const ADDRESSES = {
  deliverable: { fullName: 'Dr. Steve Brule', address1: '179 N HARBOR DR', city: 'REDONDO BEACH', state: 'CA', postalCode: '90277', countryCode: 'US' },
  corrected: { fullName: 'Dr. Steve Brule', address1: '417 montgomery street', address2: 'FL 5', city: 'San Francisco', state: 'CA', postalCode: '94104', countryCode: 'US' },
  undeliverable: { fullName: 'Dr. Steve Brule', address1: '1 Undeliverable Street', city: 'Nowhere', state: 'CA', postalCode: '90277', countryCode: 'US' },
}

async function setup(t: Test, plugin: Partial<ShipmentsPluginOptions> = {}) {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const database = await testDatabase(t, 'addresses', 'migrated')
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM }, batches: { pollIntervalMs: 20, backoffMs: 20, maxBackoffMs: 200 }, ...plugin }, database)
  await app.shipments.integrations.create({
    name: 'EasyPost',
    handle: 'easypost',
    providerId: 'easypost',
    settings: { webhookSecret: 'webhook-secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 3000 },
  })
  return { app, imitation }
}

/** A shipment of a new order shipping to `address`, with one parcel. */
async function shipmentTo(app: FastifyInstance, address: (typeof ADDRESSES)[keyof typeof ADDRESSES]) {
  const orderId = await insertOrder(app)
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', ...address })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const parcel = await app.shipments.deliveries.addParcel(shipment!.id, { weight: { value: '1', unit: 'kg' } })
  return { orderId, shipmentId: shipment!.id, parcelId: parcel.id }
}

const get = (app: FastifyInstance, url: string, user: Parameters<typeof as>[0] = 'admin') => app.inject({ url: `${API}${url}`, headers: as(user) })
const send = (app: FastifyInstance, method: 'POST' | 'PUT', url: string, body: unknown = {}, user: Parameters<typeof as>[0] = 'admin') =>
  app.inject({ method, url: `${API}${url}`, headers: { ...as(user), 'content-type': 'application/json' }, payload: JSON.stringify(body) })
const setMode = (app: FastifyInstance, mode: 'off' | 'warn' | 'block') => send(app, 'PUT', '/address-verification', { mode, integration: 'easypost' })

async function storedCheck(app: FastifyInstance, shipmentId: number) {
  const { db, schema } = tables(app)
  const [row] = await db.select().from(schema.addressChecks).where(eq(schema.addressChecks.shipmentId, shipmentId))
  return row
}

/** A one-page PDF for the packing slip hook (its bytes are merged, so they must be a real PDF). */
async function blankPdf(): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'LETTER' })
  const chunks: Buffer[] = []
  doc.on('data', (chunk: Buffer) => chunks.push(chunk))
  const ended = new Promise((resolve) => doc.on('end', resolve))
  doc.text('slip')
  doc.end()
  await ended
  return Buffer.concat(chunks)
}

const creates = (imitation: Awaited<ReturnType<typeof easyPostImitation>>) => imitation.calls.filter((call) => call.step === 'create')

t.test('each verdict from the imitation, stored with the fingerprint of the address checked', async (t) => {
  const { app, imitation } = await setup(t)
  const deliverable = await shipmentTo(app, ADDRESSES.deliverable)
  const corrected = await shipmentTo(app, ADDRESSES.corrected)
  const undeliverable = await shipmentTo(app, ADDRESSES.undeliverable)

  const unchecked = await get(app, `/shipments/${deliverable.shipmentId}/address-check`)
  t.equal(unchecked.statusCode, 200)
  t.match(unchecked.json(), { success: true, status: 'unchecked', verdict: null, mode: 'off', ownShipTo: false, warning: null })

  const one = await send(app, 'POST', `/shipments/${deliverable.shipmentId}/address-check`, { integration: 'easypost' })
  t.equal(one.statusCode, 200, one.body)
  t.match(one.json(), { status: 'current', verdict: 'deliverable', changes: [], problems: [] })
  t.match(await storedCheck(app, deliverable.shipmentId), { verdict: 'deliverable', decision: null, shipTo: null, fingerprint: /^[0-9a-f]{64}$/ })

  const two = (await send(app, 'POST', `/shipments/${corrected.shipmentId}/address-check`, { integration: 'easypost' })).json()
  t.equal(two.verdict, 'corrected')
  t.same(
    two.changes.map((change: { field: string }) => change.field),
    ['street1', 'street2', 'city', 'postalCode'],
    'the corrections field by field: the second line folded into the first, upper case, ZIP+4',
  )
  t.match(two.suggestion, { street1: '417 MONTGOMERY ST FL 5', street2: null, city: 'SAN FRANCISCO', postalCode: /^94104-\d{4}$/, name: 'Dr. Steve Brule' })
  t.match(two.problems, [{ code: 'E.SECONDARY_INFORMATION.INVALID', field: 'street2' }], "the carrier's errors of a successful verification are kept")

  const three = (await send(app, 'POST', `/shipments/${undeliverable.shipmentId}/address-check`, { integration: 'easypost' })).json()
  t.match(three, { verdict: 'undeliverable', suggestion: null, problems: [{ code: 'E.ADDRESS.NOT_FOUND', field: 'address', message: 'Address not found' }] })

  // The provider cannot say: an odd answer, then an outage.
  imitation.addresses.answerNext({ id: 'adr_odd', object: 'Address', mode: 'test', verifications: { delivery: { success: 'yes', errors: 'none' } } })
  const odd = (await send(app, 'POST', `/shipments/${deliverable.shipmentId}/address-check`, { integration: 'easypost' })).json()
  t.match(odd, { verdict: 'unverified', problems: [{ code: 'VERIFICATION.UNREADABLE' }] })
  imitation.fault({ step: 'address', kind: 'error', status: 503, code: 'SERVICE.UNAVAILABLE', message: 'Down for maintenance' })
  const down = (await send(app, 'POST', `/shipments/${deliverable.shipmentId}/address-check`, { integration: 'easypost' })).json()
  t.match(down, { verdict: 'unverified', problems: [{ message: /Down for maintenance/ }] })
  t.match(await storedCheck(app, deliverable.shipmentId), { verdict: 'unverified' })
  t.same(
    imitation.calls.filter((call) => call.step === 'address').map((call) => (call.body as { verify: unknown }).verify),
    [['delivery'], ['delivery'], ['delivery'], ['delivery'], ['delivery']],
    'every call asks for the delivery verification',
  )

  const missing = await send(app, 'POST', `/shipments/${deliverable.shipmentId}/address-check`, {})
  t.equal(missing.statusCode, 422, 'no integration given and none set')
  t.match(missing.json(), { errors: { integration: [/no integration is set/] } })
  const hostile = await send(app, 'POST', `/shipments/${deliverable.shipmentId}/address-check`, { integration: 7 })
  t.equal(hostile.statusCode, 422, 'an integration that is not text')
  t.equal((await send(app, 'PUT', '/address-verification', [])).statusCode, 422, 'a setting that is not an object')
  t.equal((await get(app, '/shipments/99999/address-check')).statusCode, 404)
  t.equal((await send(app, 'POST', `/shipments/${deliverable.shipmentId}/address-check`, { integration: 'easypost' }, 'viewer')).statusCode, 403)
})

t.test("accepting the correction: the next rate request ships to it, the order's address stays", async (t) => {
  const slips: unknown[] = []
  const blank = await blankPdf()
  const renderPackingSlip = (slip: { shipTo: unknown }) => {
    slips.push(slip.shipTo)
    return new Uint8Array(blank)
  }
  const { app, imitation } = await setup(t, { documents: { renderPackingSlip } })
  const { orderId, shipmentId, parcelId } = await shipmentTo(app, ADDRESSES.corrected)
  const noCheck = await send(app, 'POST', `/shipments/${shipmentId}/address-check/accept`)
  t.equal(noCheck.statusCode, 409)
  t.equal(noCheck.json().errorCode, 'SHIPMENTS_ADDRESS_NOT_CHECKED')
  await send(app, 'POST', `/shipments/${shipmentId}/address-check`, { integration: 'easypost' })
  const accepted = await send(app, 'POST', `/shipments/${shipmentId}/address-check/accept`)
  t.equal(accepted.statusCode, 200, accepted.body)
  t.match(accepted.json(), { decision: 'accepted', ownShipTo: true, shipTo: { street1: '417 MONTGOMERY ST FL 5', city: 'SAN FRANCISCO' } })
  t.match(await storedCheck(app, shipmentId), { decision: 'accepted', shipTo: { street1: '417 MONTGOMERY ST FL 5' } })

  const rates = await send(app, 'POST', `/shipments/${shipmentId}/parcels/${parcelId}/rates`, { integration: 'easypost' })
  t.equal(rates.statusCode, 200, rates.body)
  const sent = (creates(imitation).at(-1)!.body as { shipment: { to_address: Record<string, unknown> } }).shipment.to_address
  t.match(sent, { street1: '417 MONTGOMERY ST FL 5', street2: null, city: 'SAN FRANCISCO', zip: /^94104-\d{4}$/, name: 'Dr. Steve Brule' }, 'the imitation received the accepted address')

  const { db, schema } = tables(app)
  const [order] = await db.select().from(schema.orderAddresses).where(eq(schema.orderAddresses.orderId, orderId))
  t.match(order, { address1: '417 montgomery street', address2: 'FL 5', city: 'San Francisco', postalCode: '94104' }, "the order's address in the order store is unchanged")
  t.match((await app.shipments.deliveries.shipTo({ id: shipmentId, orderId })).address, { street1: '417 MONTGOMERY ST FL 5' }, 'documents read the same ship-to')
  await app.shipments.documents.packingSlip(shipmentId)
  t.match(slips, [{ street1: '417 MONTGOMERY ST FL 5', city: 'SAN FRANCISCO' }], "the packing slip shows the shipment's own ship-to")

  // A deliverable verdict has nothing to accept.
  const plain = await shipmentTo(app, ADDRESSES.deliverable)
  await send(app, 'POST', `/shipments/${plain.shipmentId}/address-check`, { integration: 'easypost' })
  const nothing = await send(app, 'POST', `/shipments/${plain.shipmentId}/address-check/accept`)
  t.equal(nothing.statusCode, 409)
  t.equal(nothing.json().errorCode, 'SHIPMENTS_ADDRESS_NO_CORRECTION')
  t.match(await storedCheck(app, plain.shipmentId), { decision: null, shipTo: null }, 'nothing written')
})

t.test("a check goes stale when the order's address changes: the accepted correction is no longer used", async (t) => {
  const { app, imitation } = await setup(t)
  const { orderId, shipmentId, parcelId } = await shipmentTo(app, ADDRESSES.corrected)
  await send(app, 'POST', `/shipments/${shipmentId}/address-check`, { integration: 'easypost' })
  await send(app, 'POST', `/shipments/${shipmentId}/address-check/accept`)
  const { db, schema } = tables(app)
  await db.update(schema.orderAddresses).set({ address1: '500 Market Street', address2: null }).where(eq(schema.orderAddresses.orderId, orderId))
  const stale = (await get(app, `/shipments/${shipmentId}/address-check`)).json()
  t.match(stale, { status: 'stale', decision: null, ownShipTo: false, changes: [], shipTo: { street1: '500 Market Street' } })
  await send(app, 'POST', `/shipments/${shipmentId}/parcels/${parcelId}/rates`, { integration: 'easypost' })
  t.match((creates(imitation).at(-1)!.body as { shipment: { to_address: unknown } }).shipment.to_address, { street1: '500 Market Street', zip: '94104' }, "rated to the order's new address")
  const asIs = await send(app, 'POST', `/shipments/${shipmentId}/address-check/as-is`)
  t.equal(asIs.statusCode, 409, 'a decision needs a check of the address as it is now')
})

t.test('block mode: an undeliverable address is refused before any provider call or write, until shipped as is', async (t) => {
  const { app, imitation } = await setup(t)
  t.equal((await setMode(app, 'block')).statusCode, 200)
  const { shipmentId, parcelId } = await shipmentTo(app, ADDRESSES.undeliverable)

  const rates = await send(app, 'POST', `/shipments/${shipmentId}/parcels/${parcelId}/rates`, { integration: 'easypost' })
  t.equal(rates.statusCode, 422)
  t.match(rates.json(), { errorCode: 'SHIPMENTS_ADDRESS_UNDELIVERABLE', message: /cannot deliver.*Address not found \(address\)/ })
  t.match(await storedCheck(app, shipmentId), { verdict: 'undeliverable' }, 'verified first, automatically, and the verdict stored')

  const bought = await send(app, 'POST', `/shipments/${shipmentId}/parcels/${parcelId}/label`, { integration: 'easypost', carrier: 'USPS', service: 'Priority' })
  t.equal(bought.statusCode, 422)
  t.equal(bought.json().errorCode, 'SHIPMENTS_ADDRESS_UNDELIVERABLE')
  t.equal(imitation.calls.filter((call) => call.step === 'address').length, 1, 'verified once: the stored verdict holds')
  t.equal(creates(imitation).length, 0, 'no rate or purchase call')
  const { db, schema } = tables(app)
  t.same([(await db.select().from(schema.rateQuotes)).length, (await db.select().from(schema.labelOperations)).length], [0, 0], 'no quote and no label operation written')

  const asIs = await send(app, 'POST', `/shipments/${shipmentId}/address-check/as-is`)
  t.equal(asIs.statusCode, 200)
  t.match(asIs.json(), { decision: 'asIs', warning: null })
  const after = await send(app, 'POST', `/shipments/${shipmentId}/parcels/${parcelId}/label`, { integration: 'easypost', carrier: 'USPS', service: 'Priority' })
  t.equal(after.statusCode, 200, after.body)
  t.equal(imitation.stats.buys, 1, 'bought once shipped as is')

  // A deliverable address passes block mode after its one automatic verification.
  const fine = await shipmentTo(app, ADDRESSES.deliverable)
  t.equal((await send(app, 'POST', `/shipments/${fine.shipmentId}/parcels/${fine.parcelId}/rates`, { integration: 'easypost' })).statusCode, 200)
  t.match(await storedCheck(app, fine.shipmentId), { verdict: 'deliverable' })
})

t.test('warn mode: rating and buying proceed, the check says why the address is in doubt', async (t) => {
  const { app, imitation } = await setup(t, { addresses: { verification: { mode: 'warn', integration: 'easypost' } } })
  t.match((await get(app, '/address-verification')).json(), { mode: 'warn', integration: 'easypost', savedAt: null }, "the option's value until saved")
  const { shipmentId, parcelId } = await shipmentTo(app, ADDRESSES.undeliverable)
  t.match((await get(app, `/shipments/${shipmentId}/address-check`)).json(), { status: 'unchecked', warning: 'The ship-to address has not been verified.' })
  const rated = await send(app, 'POST', `/shipments/${shipmentId}/parcels/${parcelId}/rates`, { integration: 'easypost' })
  t.equal(rated.statusCode, 200)
  t.match(rated.json(), { quotes: [{}, {}, {}], addressWarning: 'The ship-to address has not been verified.' }, 'the rates answer carries the warning')
  t.equal(imitation.calls.filter((call) => call.step === 'address').length, 0, 'warn mode verifies nothing by itself')
  await send(app, 'POST', `/shipments/${shipmentId}/address-check`)
  t.match((await get(app, `/shipments/${shipmentId}/address-check`)).json(), { verdict: 'undeliverable', warning: /cannot deliver.*Address not found/ })
  const bought = await send(app, 'POST', `/shipments/${shipmentId}/parcels/${parcelId}/label`, { integration: 'easypost', carrier: 'USPS', service: 'Priority' })
  t.equal(bought.statusCode, 200, bought.body)
  t.match(bought.json(), { parcel: { status: 'labelled' }, addressWarning: /cannot deliver/ }, 'bought, with the warning')
})

t.test('a batch in block mode skips the parcel whose address is undeliverable, with the reason', async (t) => {
  const { app } = await setup(t)
  await setMode(app, 'block')
  await send(app, 'PUT', '/shipping-rules', { rules: [], fallback: { integration: 'easypost', choice: { kind: 'service', carrier: 'USPS', service: 'Priority' } } })
  const good = await shipmentTo(app, ADDRESSES.deliverable)
  const bad = await shipmentTo(app, ADDRESSES.undeliverable)
  const created = await send(app, 'POST', '/label-batches', { shipmentIds: [good.shipmentId, bad.shipmentId] })
  t.equal(created.statusCode, 201, created.body)
  const batchId = created.json().batch.id as number
  let page = await app.shipments.batches.get(batchId, { perPage: 50 })
  for (const deadline = Date.now() + 20_000; page.batch.state !== 'finished' && Date.now() < deadline; page = await app.shipments.batches.get(batchId, { perPage: 50 })) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.match(page.batch, { state: 'finished', counts: { bought: 1, skipped: 1, failed: 0 } })
  t.match(page.items.find((item) => item.shipmentId === bad.shipmentId), { state: 'skipped', reason: 'address undeliverable: Address not found (address)' })
  const api = (await get(app, `/label-batches/${batchId}`)).json()
  t.match(api.items.find((item: { shipmentId: number }) => item.shipmentId === bad.shipmentId), { state: 'skipped', reason: /^address undeliverable/ }, "the batch's API reports the skipped parcel")
})

t.test('the setting is checked whole before it is saved', async (t) => {
  const { app } = await setup(t)
  await app.shipments.integrations.create({ name: 'AfterShip', handle: 'aftership', providerId: 'aftership', settings: { apiKey: 'as-key', webhookSecret: 'secret' } })
  const badMode = await send(app, 'PUT', '/address-verification', { mode: 'sometimes' })
  t.equal(badMode.statusCode, 422)
  t.ok(badMode.json().errors.mode)
  const noIntegration = await send(app, 'PUT', '/address-verification', { mode: 'block' })
  t.match(noIntegration.json(), { errors: { integration: [/is required in block mode/] } })
  const notSeller = await send(app, 'PUT', '/address-verification', { mode: 'warn', integration: 'aftership' })
  t.match(notSeller.json(), { errors: { integration: [/does not sell labels/] } })
  const unknown = await send(app, 'PUT', '/address-verification', { mode: 'warn', integration: 'nope' })
  t.match(unknown.json(), { errors: { integration: [/no integration has the handle/] } })
  t.match((await get(app, '/address-verification')).json(), { mode: 'off', integration: null, savedAt: null }, 'nothing saved by a refusal')
  t.equal((await send(app, 'PUT', '/address-verification', { mode: 'warn', integration: 'easypost' }, 'viewer')).statusCode, 403)
  const saved = await send(app, 'PUT', '/address-verification', { mode: 'warn', integration: 'easypost' })
  t.equal(saved.statusCode, 200)
  t.match(saved.json(), { mode: 'warn', integration: 'easypost', savedAt: /^\d{4}-/, savedBy: 'admin' })
  t.match((await get(app, '/address-verification')).json(), { mode: 'warn', integration: 'easypost' })
})

t.test("EasyPost's answer is untrusted: odd fields make the verdict unverified, never a crash", async (t) => {
  const sent = { name: 'A', street1: '1 Main St', city: 'Springfield', state: 'IL', postalCode: '62701', country: 'US' }
  const ok = { street1: '1 MAIN ST', street2: '', city: 'SPRINGFIELD', state: 'IL', zip: '62701-1234', country: 'US' }
  t.match(verificationOf({ ...ok, verifications: { delivery: { success: true, errors: [] } } }, sent), { verdict: 'deliverable', corrected: { street1: '1 MAIN ST', name: 'A' } }, 'case and ZIP+4 are not worth naming')
  t.match(verificationOf(null, sent), { verdict: 'unverified', problems: [{ code: 'ANSWER.UNREADABLE' }] })
  t.match(verificationOf([], sent), { verdict: 'unverified' })
  t.match(verificationOf({ ...ok, verifications: null }, sent), { verdict: 'unverified', problems: [{ code: 'VERIFICATION.MISSING' }] })
  t.match(verificationOf({ ...ok, city: 42, verifications: { delivery: { success: true, errors: [] } } }, sent), { verdict: 'unverified', corrected: null, problems: [{ message: /usable city/ }] })
  t.match(verificationOf({ ...ok, street1: 'x'.repeat(300), verifications: { delivery: { success: true, errors: [] } } }, sent), { verdict: 'unverified' }, 'an overlong field')
  const mixed = verificationOf({ ...ok, verifications: { delivery: { success: false, errors: [{ code: 'E.ADDRESS.NOT_FOUND', message: 'Address not found', field: 'address', suggestion: null }, 7, { code: {} }] } } }, sent)
  t.match(mixed, { verdict: 'undeliverable', problems: [{ code: 'E.ADDRESS.NOT_FOUND' }, { code: 'ANSWER.UNREADABLE', message: /2 of EasyPost's verification errors/ }] }, 'each error read on its own')
  t.match(verificationOf({ ...ok, verifications: { delivery: { success: false } } }, sent), { verdict: 'undeliverable', problems: [{ code: 'ADDRESS.UNDELIVERABLE' }] })
})

t.test("the admin's buttons: a refusal shows beside the panel, a decision comes back to the shipment page", async (t) => {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const app = await buildAdminApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 3000 } })
  const { shipmentId } = await shipmentTo(app, ADDRESSES.undeliverable)
  const admin = adminClient(app, 'admin')
  const page = await admin.get(`/shipments/${shipmentId}`)
  t.match(page.body, /<section id="ship-to"[\s\S]*Not verified yet\.[\s\S]*Address verification is off/)
  const unset = await admin.post(`/shipments/${shipmentId}/address-check`, {})
  t.equal(unset.statusCode, 422)
  t.match(unset.body, /<p class="field-error" role="alert">is required: no integration is set to verify addresses/)
  const badSetting = await admin.post('/address-verification', { addressMode: 'block', addressIntegration: '' })
  t.equal(badSetting.statusCode, 422)
  t.match(badSetting.body, /is required in block mode/)
  t.match(await app.shipments.addresses.setting(), { mode: 'off', savedAt: null }, 'nothing saved')
  t.equal((await admin.post('/address-verification', { addressMode: 'block', addressIntegration: 'easypost' })).statusCode, 303)
  await admin.get(`/shipments/${shipmentId}`)
  const verified = await admin.post(`/shipments/${shipmentId}/address-check`, {})
  t.equal(verified.statusCode, 303)
  t.equal(verified.headers.location, `/shipments/admin/shipments/${shipmentId}?notice=saved#ship-to`)
  const after = await admin.get(`/shipments/${shipmentId}`)
  t.match(after.body, /Undeliverable[\s\S]*Address not found[\s\S]*Ship as is/)
  t.notMatch(after.body, /Accept the correction/, 'nothing to accept')
  const accept = await admin.post(`/shipments/${shipmentId}/address-check/accept`, {})
  t.equal(accept.statusCode, 409)
  t.match(accept.body, /suggested no correction/)
  t.equal((await admin.post(`/shipments/${shipmentId}/address-check/as-is`, {})).statusCode, 303)
  t.match((await admin.get(`/shipments/${shipmentId}`)).body, /Shipping to the address as it is \(chosen knowingly\)\./)
  t.equal((await adminClient(app, 'viewer').post(`/shipments/${shipmentId}/address-check`, {})).statusCode, 403)
})
