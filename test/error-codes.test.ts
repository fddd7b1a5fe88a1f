// Error codes that reach the client: every code docs/shipment-api.md lists is every code the package
// defines, and each one an HTTP answer can carry is provoked here and found on the wire, in `errorCode`,
// with the documented status; schema refusals name the field and what it takes; on both engines.
import t, { type Test } from 'tap'
import { readFile, readdir } from 'node:fs/promises'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { eq } from 'drizzle-orm'
import { buildTestApp, insertOrder, TEST_USERS } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { easyPostImitation } from './fixtures/easypost-api.js'
import { basicAuth, EXCHANGE_PASSWORD, EXCHANGE_URL, EXCHANGE_USER, insertExportOrder, ORDER_FIELDS } from './fixtures/exchange.js'
import { defineProvider, IntegrationError, Type } from '../src/index.js'

const API_KEY = 'EZTK-error-codes-key-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const JSON_BODY = { 'content-type': 'application/json' }

/** The codes of the two tables of docs/shipment-api.md#error-codes: on the wire, and raised by services only. */
async function documentedCodes(): Promise<{ wire: Map<string, string>; servicesOnly: Set<string> }> {
  const page = await readFile(new URL('../docs/shipment-api.md', import.meta.url), 'utf8')
  const section = page.slice(page.indexOf('## Error codes'), page.indexOf('\n## ', page.indexOf('## Error codes') + 1))
  const [wireTable, servicesTable] = section.split('Codes of errors the services raise')
  const wire = new Map([...wireTable!.matchAll(/^\| `(SHIPMENTS_[A-Z_]+)` \| ([^|]+) \|/gm)].map((row) => [row[1]!, row[2]!.trim()]))
  const firstColumns = [...servicesTable!.matchAll(/^\| ([^|]+) \|/gm)].map((row) => row[1]!)
  const servicesOnly = new Set(firstColumns.flatMap((cell) => [...cell.matchAll(/`(SHIPMENTS_[A-Z_]+)`/g)].map((code) => code[1]!)))
  return { wire, servicesOnly }
}

/** Every `SHIPMENTS_...` code written in src/ (error tables, error classes, the request codes). */
async function definedCodes(): Promise<Set<string>> {
  const root = new URL('../src/', import.meta.url)
  const files = (await readdir(root, { recursive: true })).filter((file) => file.endsWith('.ts'))
  const codes = new Set<string>()
  for (const file of files) {
    for (const match of (await readFile(new URL(file, root), 'utf8')).matchAll(/['`](SHIPMENTS_[A-Z_]*[A-Z])['`]/g)) codes.add(match[1]!)
  }
  return codes
}

t.test('the documented error codes are exactly the codes the package defines', async (t) => {
  const { wire, servicesOnly } = await documentedCodes()
  const defined = await definedCodes()
  t.ok(wire.size > 40, `the wire table lists ${wire.size} codes`)
  t.same([...wire.keys()].filter((code) => servicesOnly.has(code)), [], 'no code in both tables')
  t.same([...defined].filter((code) => !wire.has(code) && !servicesOnly.has(code)).sort(), [], 'every defined code is documented')
  t.same([...wire.keys(), ...servicesOnly].filter((code) => !defined.has(code)).sort(), [], 'every documented code exists')
})

/** Codes no request of this test provokes, and why (each is answered by the same handlers as the rest). */
const NOT_PROVOKED: Record<string, string> = {
  SHIPMENTS_ADDRESS_UNDELIVERABLE: 'block mode and an undeliverable address (address-verification.test.ts checks its errorCode and status)',
  SHIPMENTS_ADDRESS_NOT_CHECKED: 'address-verification.test.ts checks its errorCode and status',
  SHIPMENTS_ADDRESS_NO_CORRECTION: 'address-verification.test.ts checks its errorCode and status',
  SHIPMENTS_LABEL_PURCHASE_BUSY: 'two instances buying one parcel at the same moment (labels.test.ts races them)',
  SHIPMENTS_RETURN_LABEL_BUSY: 'two instances buying one return label at the same moment',
  SHIPMENTS_PACKING_TOO_LARGE: 'a catalogue of 41 boxes or an order of 501 units (boxes-and-packing.test.ts checks its errorCode)',
  SHIPMENTS_PACKING_TIMEOUT: 'a packing time budget of 1 ms (boxes-and-packing.test.ts checks its errorCode)',
  SHIPMENTS_SUGGESTION_CHANGED: 'a suggestion accepted after the boxes or the items changed (parcel-suggestion-accept.test.ts checks its errorCode and status)',
  SHIPMENTS_DOCUMENT_PACKAGES_MISSING: 'a host without the PDF packages, which the repository has as devDependencies (sqlite/optional-peers.test.ts checks its errorCode and status in a packed install without them)',
  SHIPMENTS_DOCUMENT_LABEL_REFUSED: 'a label URL on a loopback address, with no fetchLabel hook (documents.test.ts checks its errorCode)',
  SHIPMENTS_DOCUMENT_FORM_UNAVAILABLE: "an international parcel's form whose file host fails in a print job (customs-forms.test.ts checks its errorCode)",
  SHIPMENTS_PACK_UNKNOWN_SLIP: 'pack-station.test.ts checks its errorCode and status',
  SHIPMENTS_PACK_UNKNOWN_SHIPMENT: 'pack-station.test.ts checks its errorCode and status',
  SHIPMENTS_PACK_NOT_PACKABLE: 'pack-station.test.ts checks its errorCode and status',
  SHIPMENTS_PACK_WRONG_ITEM: 'pack-station.test.ts checks its errorCode and status',
  SHIPMENTS_PACK_TOO_MANY: 'pack-station.test.ts checks its errorCode and status',
  SHIPMENTS_PACK_NOT_COUNTED: 'pack-station.test.ts checks its errorCode and status',
  SHIPMENTS_PACK_NO_RULE: 'pack-station.test.ts checks its errorCode and status',
  SHIPMENTS_PACK_BUSY: "a shipment's finish waiting past lockTimeoutMs for another one of it (pack-station.test.ts checks its errorCode and status)",
  SHIPMENTS_RULES_SERVICES_UNAVAILABLE: 'an EasyPost imitation failing the carrier accounts while rules are saved (shipping-rules.test.ts checks its errorCode)',
  SHIPMENTS_MANIFEST_NOT_FOUND: 'manifests.test.ts checks its errorCode and status on the routes',
  SHIPMENTS_MANIFEST_NOT_NEEDED: 'a carrier or provider without manifests (manifests.test.ts checks its errorCode)',
  SHIPMENTS_MANIFEST_LABELS_TAKEN: 'two instances making one manifest at once (manifests.test.ts races them)',
  SHIPMENTS_MANIFEST_REFUSED: "EasyPost's refusal of a ScanForm (manifests.test.ts checks its errorCode)",
  SHIPMENTS_MANIFEST_FORM_NOT_READY: 'the form of a failed manifest (manifests.test.ts checks its errorCode)',
  SHIPMENTS_MANIFEST_FORM_UNAVAILABLE: "a form whose file host fails (manifests.test.ts checks its errorCode)",
  SHIPMENTS_LABEL_BATCH_NOT_FOUND: 'an unknown label batch (label-batches.test.ts checks its errorCode)',
  SHIPMENTS_LABEL_BATCH_NOTHING_TO_PRINT: "a skipped batch's print job (label-batches.test.ts checks its errorCode and status)",
  SHIPMENTS_LABEL_BATCH_CLOSED: 'a finished or cancelled label batch cancelled again (label-batches.test.ts checks its errorCode)',
  SHIPMENTS_CUSTOMS_INCOMPLETE: 'rates and a label for an international parcel with an incomplete declaration (customs.test.ts checks its errorCode, errors and status)',
  SHIPMENTS_CUSTOMS_NOT_REQUIRED: "a domestic parcel's declaration edited (customs.test.ts checks its errorCode and status)",
}

interface Walk {
  t: Test
  seen: Map<string, number>
}

/** The answer is a JSON error with `code`; records it, and checks its envelope carries the integer code too. */
function expectCode(walk: Walk, response: LightMyRequestResponse, code: string, status: number, what: string) {
  const { t } = walk
  t.equal(response.statusCode, status, `${what}: ${status}`)
  t.match(response.headers['content-type'], /^application\/json/, `${what}: JSON`)
  const body = response.json() as Record<string, unknown>
  t.equal(body.errorCode, code, `${what}: ${code}`)
  if ('success' in body) t.equal(body.success, false, `${what}: the 422 envelope`)
  else t.match(body, { code: 0, status, message: String }, `${what}: the framework envelope`)
  walk.seen.set(code, status)
  return body
}

const echoProvider = defineProvider({
  id: 'echo',
  settingsSchema: Type.Object({ mode: Type.Optional(Type.String()) }),
  async handleGatewayRequest(_request, context) {
    if (context.settings.mode === 'refuse') throw new IntegrationError('Signature mismatch for echo.')
    throw new Error('the provider broke')
  },
})

async function walkApp(t: Test) {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const clock = { now: Date.UTC(2026, 10, 26, 12, 0, 0) }
  const app = await buildTestApp(t, {
    clock: () => clock.now,
    providers: [echoProvider],
    deliveries: { shipFrom: SHIP_FROM },
    orderFields: ORDER_FIELDS,
    orderExchange: { username: EXCHANGE_USER, password: EXCHANGE_PASSWORD },
    documents: {
      renderPackingSlip: (slip) => {
        if (slip.shipment.reference.startsWith('BROKEN')) throw new Error('renderer down')
        return new Uint8Array(Buffer.from('%PDF-1.4\n%%EOF\n'))
      },
      fetchLabel: async () => {
        throw new Error('label host down')
      },
    },
    resolveUser: (request) => {
      const id = request.headers['x-test-user']
      if (id === 'broken') throw new Error('the session store is down')
      return typeof id === 'string' && Object.hasOwn(TEST_USERS, id) ? { id } : null
    },
  })
  await app.shipments.integrations.create({
    name: 'EasyPost',
    handle: 'easypost',
    providerId: 'easypost',
    settings: { webhookSecret: 'webhook-secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 1000 },
  })
  return { app, imitation, clock }
}

const as = (user: string) => ({ 'x-test-user': user })
const post = (app: FastifyInstance, url: string, body: unknown, user = 'admin') => app.inject({ method: 'POST', url, headers: { ...as(user), ...JSON_BODY }, payload: JSON.stringify(body) })

/** A shipped order of two lines (Mug x2, Tea x1) with a shipping address, in a parcel of 1.5 kg. */
async function shippedOrder(app: FastifyInstance, reference: string) {
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'processing', name: 'Processing', isDefault: true })
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference, isCompleted: true, statusHandle: 'processing', items: [{ name: 'Mug', sku: 'MUG', quantity: 2 }, { name: 'Tea', sku: 'TEA', quantity: 1 }] })
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Dr. Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', countryCode: 'US' })
  const lines = (await app.shipments.orders.orderLines!(orderId))!.map((line) => line.id)
  const [shipment] = await app.shipments.shipments.create(orderId, { items: lines.map((lineItemId, index) => ({ lineItemId, quantity: index === 0 ? 2 : 1 })) })
  await app.shipments.shipments.update(shipment!.id, { status: 'shipped' })
  return { orderId, shipmentId: shipment!.id, lines }
}

t.test('every documented code an HTTP answer can carry is on the wire, in errorCode, with its status', async (t) => {
  const { app, imitation, clock } = await walkApp(t)
  const walk: Walk = { t, seen: new Map() }
  const api = '/shipments/api'
  const { orderId, shipmentId, lines } = await shippedOrder(app, 'EC-1')

  // --- the shipment API ---
  expectCode(walk, await app.inject({ url: `${api}/shipments/${shipmentId}` }), 'SHIPMENTS_UNAUTHORIZED', 401, 'no user')
  expectCode(walk, await post(app, `${api}/shipments/${shipmentId}`, { carrier: 'UPS' }, 'viewer'), 'SHIPMENTS_FORBIDDEN', 403, 'no edit permission')
  expectCode(walk, await app.inject({ url: `${api}/shipments/999999`, headers: as('admin') }), 'SHIPMENTS_SHIPMENT_NOT_FOUND', 404, 'an unknown shipment')
  expectCode(walk, await app.inject({ url: `${api}/orders/999999/allocation`, headers: as('admin') }), 'SHIPMENTS_ORDER_NOT_FOUND', 404, 'an unknown order')
  const listed = expectCode(walk, await app.inject({ url: `${api}/shipments?status=bogus`, headers: as('admin') }), 'SHIPMENTS_VALIDATION_FAILED', 400, 'a query its schema refuses')
  t.equal(listed.message, 'querystring/status must be one of: new, in_progress, on_hold, fulfilled, shipped, cancelled', 'one message naming the field and the values it takes')
  const invalid = expectCode(walk, await post(app, `${api}/shipments/${shipmentId}`, { trackingUrl: 'ftp://x' }), 'SHIPMENTS_VALIDATION_FAILED', 422, 'a field the update refuses')
  t.same(invalid.errors, { trackingUrl: ['Tracking Url is not a valid URL.'] })
  expectCode(walk, await app.inject({ method: 'POST', url: `${api}/shipments/${shipmentId}`, headers: { ...as('admin'), ...JSON_BODY }, payload: '{"carrier":' }), 'SHIPMENTS_BAD_REQUEST', 400, 'malformed JSON')
  expectCode(walk, await app.inject({ method: 'POST', url: `${api}/shipments/${shipmentId}`, headers: { ...as('admin'), ...JSON_BODY }, payload: `${'['.repeat(40)}${']'.repeat(40)}` }), 'SHIPMENTS_JSON_TOO_DEEP', 400, 'JSON nested too deep')
  expectCode(walk, await app.inject({ method: 'POST', url: `${api}/shipments/${shipmentId}`, headers: { ...as('admin'), ...JSON_BODY }, payload: JSON.stringify({ shippingNotes: 'x'.repeat(1_100_000) }) }), 'SHIPMENTS_BODY_TOO_LARGE', 413, 'a body over the limit')
  expectCode(walk, await app.inject({ method: 'POST', url: `${api}/shipments/${shipmentId}`, headers: { ...as('admin'), 'content-type': 'text/plain' }, payload: 'carrier=UPS' }), 'SHIPMENTS_UNSUPPORTED_MEDIA_TYPE', 415, 'a text body')
  const internal = expectCode(walk, await app.inject({ url: `${api}/shipments/${shipmentId}`, headers: as('broken') }), 'SHIPMENTS_INTERNAL_ERROR', 500, 'a host hook that throws')
  t.equal(internal.message, 'An internal error occurred.')

  // --- parcels, rates, labels, boxes ---
  const parcels = `${api}/shipments/${shipmentId}/parcels`
  const parcelBody = { weight: { value: '1.5', unit: 'kg' }, dimensions: { length: '30', width: '20', height: '10', unit: 'cm' } }
  const addParcel = async () => ((await post(app, parcels, parcelBody)).json() as { parcel: { id: number } }).parcel.id
  const [first, second, third] = [await addParcel(), await addParcel(), await addParcel()]
  const buyBody = { integration: 'easypost', carrier: 'USPS', service: 'Priority' }
  expectCode(walk, await app.inject({ method: 'DELETE', url: `${parcels}/999999`, headers: as('admin') }), 'SHIPMENTS_PARCEL_NOT_FOUND', 404, 'an unknown parcel')
  expectCode(walk, await post(app, `${parcels}/${first}/label`, { integration: 'easypost', quoteId: 999999 }), 'SHIPMENTS_QUOTE_NOT_FOUND', 404, 'an unknown quote')
  expectCode(walk, await app.inject({ method: 'DELETE', url: `${api}/boxes/999999`, headers: as('admin') }), 'SHIPMENTS_BOX_NOT_FOUND', 404, 'an unknown box')
  expectCode(walk, await post(app, `${parcels}/${first}/label/void`, {}), 'SHIPMENTS_LABEL_MISSING', 409, 'a void without a label')
  const quotes = ((await post(app, `${parcels}/${second}/rates`, { integration: 'easypost' })).json() as { quotes: { id: number }[] }).quotes
  clock.now += 16 * 60 * 1000
  expectCode(walk, await post(app, `${parcels}/${second}/label`, { integration: 'easypost', quoteId: quotes[0]!.id }), 'SHIPMENTS_QUOTE_EXPIRED', 409, 'an expired quote')
  clock.now -= 16 * 60 * 1000
  await post(app, `${parcels}/${second}`, { weight: { value: '2', unit: 'kg' } })
  expectCode(walk, await post(app, `${parcels}/${second}/label`, { integration: 'easypost', quoteId: quotes[0]!.id }), 'SHIPMENTS_QUOTE_CHANGED', 409, 'a quote for other details')
  t.equal((await post(app, `${parcels}/${first}/label`, buyBody)).statusCode, 200, 'a label bought')
  expectCode(walk, await post(app, `${parcels}/${first}/label`, buyBody), 'SHIPMENTS_LABEL_EXISTS', 409, 'a second label')
  expectCode(walk, await app.inject({ method: 'DELETE', url: `${parcels}/${first}`, headers: as('admin') }), 'SHIPMENTS_PARCEL_LABELLED', 409, 'removing a labelled parcel')
  t.equal((await post(app, `${parcels}/${first}/label/void`, {})).statusCode, 200, 'the label voided')
  expectCode(walk, await app.inject({ method: 'DELETE', url: `${parcels}/${first}`, headers: as('admin') }), 'SHIPMENTS_PARCEL_LABEL_HISTORY', 409, 'removing a parcel that had a label')
  imitation.fault({ step: 'buy', kind: 'error', status: 422, code: 'SHIPMENT.POSTAGE.FAILURE', message: 'The carrier refused the label.' })
  expectCode(walk, await post(app, `${parcels}/${third}/label`, buyBody), 'SHIPMENTS_UPDATE_REJECTED', 422, 'the carrier refusing the purchase')
  imitation.fault({ step: 'buy', kind: 'lose-answer' })
  imitation.fault({ step: 'retrieve', kind: 'error', status: 503, code: 'SERVICE_UNAVAILABLE', message: 'Down.' })
  expectCode(walk, await post(app, `${parcels}/${third}/label`, buyBody), 'SHIPMENTS_LABEL_OUTCOME_UNKNOWN', 503, 'a purchase without an answer')

  // --- documents ---
  const broken = await shippedOrder(app, 'BROKEN')
  expectCode(walk, await app.inject({ url: `${api}/shipments/${broken.shipmentId}/packing-slip`, headers: as('admin') }), 'SHIPMENTS_DOCUMENT_RENDERER_FAILED', 502, 'the host renderer fails')
  const labelled = await shippedOrder(app, 'EC-LABEL')
  const labelledParcels = `${api}/shipments/${labelled.shipmentId}/parcels`
  const labelledParcel = ((await post(app, labelledParcels, parcelBody)).json() as { parcel: { id: number } }).parcel.id
  t.equal((await post(app, `${labelledParcels}/${labelledParcel}/label`, buyBody)).statusCode, 200)
  expectCode(walk, await app.inject({ url: `${api}/documents/labels?ids=${labelled.shipmentId}`, headers: as('admin') }), 'SHIPMENTS_DOCUMENT_LABEL_UNAVAILABLE', 502, 'a label file that cannot be fetched')
  expectCode(walk, await app.inject({ url: `${labelledParcels}/${labelledParcel}/commercial-invoice`, headers: as('admin') }), 'SHIPMENTS_DOCUMENT_NO_DECLARATION', 404, 'a commercial invoice of a parcel without a customs declaration')
  const ids = expectCode(walk, await app.inject({ url: `${api}/documents/pick-list?ids=x`, headers: as('admin') }), 'SHIPMENTS_VALIDATION_FAILED', 422, 'ids that are not ids')
  t.ok(ids.errors, 'the per-field envelope')

  // --- returns ---
  const returns = `${api}/returns`
  expectCode(walk, await app.inject({ url: `${returns}/999999`, headers: as('admin') }), 'SHIPMENTS_RETURN_NOT_FOUND', 404, 'an unknown return')
  const requested = (await post(app, `${api}/orders/${orderId}/returns`, { lines: [{ lineItemId: lines[0], quantity: 1, reason: 'damaged' }] })).json() as { return: { id: number } }
  const returnId = requested.return.id
  const notTaken = expectCode(walk, await post(app, `${returns}/${returnId}`, { state: 'received' }), 'SHIPMENTS_RETURN_TRANSITION', 409, 'an update to a state the route does not take')
  t.equal(notTaken.message, `Return ${returnId} is requested: it cannot move to received.`)
  const notAState = expectCode(walk, await post(app, `${returns}/${returnId}`, { state: 'lost' }), 'SHIPMENTS_VALIDATION_FAILED', 422, 'a state that is none')
  t.same(notAState.errors, { state: ['must be one of: requested, authorised, rejected, label_sent, in_transit, received, closed'] }, 'one message naming the states')
  expectCode(walk, await post(app, `${returns}/${returnId}`, { state: 'closed' }), 'SHIPMENTS_RETURN_TRANSITION', 409, 'closing a requested return')
  expectCode(walk, await post(app, `${returns}/${returnId}/label/void`, {}), 'SHIPMENTS_RETURN_LABEL_NOT_VOIDABLE', 409, 'voiding a return without a label')
  t.equal((await post(app, `${returns}/${returnId}`, { state: 'authorised' })).statusCode, 200)
  t.equal((await post(app, `${returns}/${returnId}`, { trackingNumber: '1Z999AA10123456784' })).statusCode, 200, 'a tracking number by hand')
  expectCode(walk, await post(app, `${returns}/${returnId}`, { trackingNumber: '1Z999AA10123456785' }), 'SHIPMENTS_RETURN_LABEL_EXISTS', 409, 'a second tracking number')
  t.equal((await post(app, `${returns}/${returnId}/receive`, { lines: [{ lineItemId: lines[0], resellable: 1 }] })).statusCode, 200)
  expectCode(walk, await post(app, `${returns}/${returnId}/receive`, { lines: [{ lineItemId: lines[0], resellable: 1 }] }), 'SHIPMENTS_RETURN_RECEIVED', 409, 'a second receipt')
  const second2 = (await post(app, `${api}/orders/${orderId}/returns`, { lines: [{ lineItemId: lines[1], quantity: 1, reason: 'damaged' }] })).json() as { return: { id: number } }
  t.equal((await post(app, `${returns}/${second2.return.id}`, { state: 'authorised' })).statusCode, 200)
  imitation.fault({ step: 'buy', kind: 'lose-answer' })
  imitation.fault({ step: 'retrieve', kind: 'error', status: 503, code: 'SERVICE_UNAVAILABLE', message: 'Down.' })
  expectCode(walk, await post(app, `${returns}/${second2.return.id}/label`, { ...buyBody, weight: { value: '1', unit: 'kg' } }), 'SHIPMENTS_RETURN_LABEL_OUTCOME_UNKNOWN', 503, 'a return label without an answer')
  t.match(await app.shipments.returns.get(returnId), { state: 'received' }, 'the refused updates changed nothing')

  // --- the gateway ---
  const gateway = '/actions/shipments/gateway/handle'
  await app.shipments.integrations.create({ name: 'Off', handle: 'off', providerId: 'echo', enabled: false })
  await app.shipments.integrations.create({ name: 'Refusing', handle: 'refusing', providerId: 'echo', settings: { mode: 'refuse' } })
  await app.shipments.integrations.create({ name: 'Broken', handle: 'broken', providerId: 'echo' })
  expectCode(walk, await app.inject({ method: 'POST', url: gateway, payload: 'x' }), 'SHIPMENTS_GATEWAY_INTEGRATION_MISSING', 400, 'no integration parameter')
  expectCode(walk, await app.inject({ method: 'POST', url: `${gateway}?integration=nope`, payload: 'x' }), 'SHIPMENTS_GATEWAY_UNKNOWN_INTEGRATION', 404, 'an unknown integration')
  expectCode(walk, await app.inject({ method: 'POST', url: `${gateway}?integration=off`, payload: 'x' }), 'SHIPMENTS_GATEWAY_INTEGRATION_DISABLED', 400, 'a disabled integration')
  expectCode(walk, await app.inject({ method: 'POST', url: `${gateway}?integration=refusing`, payload: 'x' }), 'SHIPMENTS_INTEGRATION_ERROR', 400, 'a provider refusing the request')
  expectCode(walk, await app.inject({ method: 'POST', url: `${gateway}?integration=broken`, payload: 'x' }), 'SHIPMENTS_GATEWAY_REQUEST_FAILED', 400, 'a provider failing')
  const { db, schema } = tables(app)
  // Never asked for before: no cached row of it (PostgreSQL instances see a change within a second).
  await app.shipments.integrations.create({ name: 'Orphan', handle: 'orphan', providerId: 'echo' })
  await db.update(schema.integrations).set({ providerId: 'unregistered' }).where(eq(schema.integrations.handle, 'orphan'))
  expectCode(walk, await app.inject({ method: 'POST', url: `${gateway}?integration=orphan`, payload: 'x' }), 'SHIPMENTS_GATEWAY_NO_PROVIDER', 400, 'a provider no longer registered')

  // --- the order exchange, asked for JSON ---
  const json = { accept: 'application/json' }
  const exchange = (query: string, headers: Record<string, string> = basicAuth(), payload?: string) =>
    app.inject({ method: payload === undefined ? 'GET' : 'POST', url: `${EXCHANGE_URL}${query}`, headers: { ...json, ...headers, ...(payload === undefined ? {} : { 'content-type': 'application/xml' }) }, payload })
  expectCode(walk, await exchange('', {}), 'SHIPMENTS_EXCHANGE_UNAUTHORIZED', 401, 'no credentials')
  expectCode(walk, await exchange(''), 'SHIPMENTS_EXCHANGE_MISSING_ACTION', 400, 'no action')
  expectCode(walk, await exchange('?action=dance'), 'SHIPMENTS_EXCHANGE_UNKNOWN_ACTION', 400, 'an unknown action')
  expectCode(walk, await exchange('?action=export&start_date=soon&end_date=later'), 'SHIPMENTS_EXCHANGE_INVALID_DATE', 400, 'a date that is none')
  expectCode(walk, await exchange('?action=shipnotify'), 'SHIPMENTS_EXCHANGE_MISSING_ORDER_NUMBER', 406, 'no order number')
  expectCode(walk, await exchange('?action=shipnotify&order_number=nope'), 'SHIPMENTS_EXCHANGE_ORDER_NOT_FOUND', 404, 'an unknown order number')
  await insertExportOrder(app, { reference: 'EC-X' })
  expectCode(walk, await exchange('?action=shipnotify&order_number=EC-X', basicAuth(), '<ShipNotice><OrderNumber>'), 'SHIPMENTS_EXCHANGE_UNREADABLE_SHIPNOTICE', 400, 'a ShipNotice that is not XML')
  expectCode(walk, await exchange('?action=shipnotify&order_number=EC-X&carrier=U%1BPS'), 'SHIPMENTS_EXCHANGE_INVALID_PARAMETER', 400, 'a parameter it cannot take')

  const { wire } = await documentedCodes()
  for (const [code, status] of walk.seen) t.ok(wire.get(code)?.split(', ').includes(String(status)), `${code} ${status} is documented with that status`)
  const missing = [...wire.keys()].filter((code) => !walk.seen.has(code) && !(code in NOT_PROVOKED))
  t.same(missing, ['SHIPMENTS_DOCUMENT_UNSUPPORTED_CHARACTER', 'SHIPMENTS_EXCHANGE_SHIPNOTIFY_FAILED', 'SHIPMENTS_EXCHANGE_EXPORT_FAILED'], 'provoked by the next test: the options they need')
})

t.test('the codes that need other options: a document font without the glyph, a missing shipped status, an export failing validation', async (t) => {
  process.env.EC_FAIL_EXPORT = 'true'
  const app = await buildTestApp(t, {
    orderFields: ORDER_FIELDS,
    orderExchange: { username: EXCHANGE_USER, password: EXCHANGE_PASSWORD, shippedStatus: 'dispatched', failOnValidation: '$EC_FAIL_EXPORT' },
    documents: { missingGlyphs: 'error' },
  })
  const walk: Walk = { t, seen: new Map() }
  const json = { ...basicAuth(), accept: 'application/json' }
  await insertExportOrder(app, { reference: 'EC-N' })
  expectCode(walk, await app.inject({ method: 'POST', url: `${EXCHANGE_URL}?action=shipnotify&order_number=EC-N&carrier=UPS`, headers: json }), 'SHIPMENTS_EXCHANGE_SHIPNOTIFY_FAILED', 500, 'no shipped status')
  const { VALID_ADDRESS } = await import('./fixtures/exchange.js')
  await insertExportOrder(app, { reference: 'EC-BROKEN' }, { shipping: { ...VALID_ADDRESS, postalCode: null } })
  expectCode(walk, await app.inject({ url: `${EXCHANGE_URL}?action=export`, headers: json }), 'SHIPMENTS_EXCHANGE_EXPORT_FAILED', 500, 'an order failing validation')
  const orderId = await insertOrder(app, { reference: 'EC-\u{E000}' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  expectCode(walk, await app.inject({ url: `/shipments/api/shipments/${shipment!.id}/packing-slip`, headers: { 'x-test-user': 'admin' } }), 'SHIPMENTS_DOCUMENT_UNSUPPORTED_CHARACTER', 422, 'a character no font draws')
})
