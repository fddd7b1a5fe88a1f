// Returns customers start themselves from the tracking page of a delivered parcel: the return window,
// the host's hook, lines as the ledger offers them, the return's own signed page, the shop's automatic
// authorisation and label (EasyPost imitation), the rate limit, the origin check, and links that are
// not links (the HTML not-found page), on both engines.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { tables } from './fixtures/database.js'
import { buildTestApp } from './fixtures/app.js'
import { easyPostImitation } from './fixtures/easypost-api.js'
import type { ShipmentsPluginOptions } from '../src/index.js'

const TRACKING = { secret: 'a-customer-returns-tracking-secret-32+', baseUrl: 'https://shop.example' }
const DAY = 24 * 60 * 60 * 1000
const DELIVERED = Date.UTC(2026, 10, 20, 15, 0, 0)
const API_KEY = 'EZTK-customer-return-key-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

/**
 * An order of Mug x2, Tea x3; a parcel of Mug x2 and Tea x1 shipped and delivered (a carrier scan) on
 * DELIVERED; Tea x2 in a parcel not shipped. The clock stands 3 days after delivery.
 */
async function setup(t: Test, returns: NonNullable<ShipmentsPluginOptions['returns']> = { windowDays: 14 }, extra: Partial<ShipmentsPluginOptions> = {}) {
  const clock = { now: DELIVERED + 3 * DAY }
  const app = await buildTestApp(t, { trackingPage: TRACKING, returns, clock: () => clock.now, ...extra })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'processing', name: 'Processing', isDefault: true })
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'C100', isCompleted: true, statusHandle: 'processing', items: [{ name: 'Mug <big>', sku: 'MUG', quantity: 2 }, { name: 'Tea', sku: 'TEA', quantity: 3 }] })
  const [mug, tea] = (await app.shipments.orders.orderLines!(orderId))!.map((line) => line.id)
  const [parcel] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: mug!, quantity: 2 }, { lineItemId: tea!, quantity: 1 }] })
  await app.shipments.shipments.update(parcel!.id, { status: 'shipped', trackingNumber: '1Z5R89390357567127', carrier: 'UPS' })
  await app.shipments.shipments.recordCheckpoints(parcel!.id, {
    trackingNumber: '1Z5R89390357567127',
    source: 'test',
    checkpoints: [
      { occurredAt: new Date(DELIVERED - DAY), occurredAtText: new Date(DELIVERED - DAY).toISOString(), status: 'in_transit', message: 'On its way' },
      { occurredAt: new Date(DELIVERED), occurredAtText: new Date(DELIVERED).toISOString(), status: 'delivered', message: 'Delivered' },
    ],
  })
  const [unshipped] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: tea!, quantity: 2 }] })
  const link = new URL(await app.shipments.trackingLinks!.url(parcel!.id)).pathname
  return { app, clock, orderId, mug: mug!, tea: tea!, parcelId: parcel!.id, unshippedId: unshipped!.id, link }
}

const send = (app: FastifyInstance, url: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: { ...FORM, ...headers }, payload: new URLSearchParams(form).toString() })

async function storedReturns(app: FastifyInstance) {
  const { db, schema } = tables(app)
  return db.select().from(schema.returns).orderBy(schema.returns.id)
}

const isHtmlNotFound = (t: Test, response: { statusCode: number; headers: Record<string, unknown>; body: string }, what: string) => {
  t.equal(response.statusCode, 404, what)
  t.equal(response.headers['content-type'], 'text/html; charset=utf-8', `${what}: HTML`)
  t.match(response.body, 'Tracking link not found', `${what}: the not-found page`)
}

t.test('without a return window (the default) the tracking page offers nothing and the form is not found', async (t) => {
  const { app, link } = await setup(t, {})
  const page = await app.inject({ url: link })
  t.equal(page.statusCode, 200)
  t.notMatch(page.body, /Return items|Returns<\/h2>/)
  isHtmlNotFound(t, await app.inject({ url: `${link}/return` }), 'the form')
  isHtmlNotFound(t, await send(app, `${link}/return`, { 'quantity.1': '1' }), 'a form sent')
  t.same(await storedReturns(app), [])
})

t.test('a customer starts a return from a delivered parcel: the form, the return stored as the customer’s, its own page', async (t) => {
  const { app, link, mug, tea, orderId } = await setup(t, { windowDays: 14, reasons: ['damaged', 'no_longer_needed'] })
  const page = await app.inject({ url: link })
  t.equal(page.statusCode, 200)
  t.match(page.body, /<h2>Returns<\/h2><p><a class="button" href="[A-Za-z0-9_-]+-[A-Za-z0-9_-]+\/return">Return items<\/a><\/p><p>You can start a return until <time datetime="2026-12-04T15:00:00.000Z">4 Dec 2026<\/time>/)
  t.match(page.headers['content-security-policy'], "form-action 'none'", 'the tracking page itself posts nowhere')

  const form = await app.inject({ url: `${link}/return` })
  t.equal(form.statusCode, 200)
  const policy = String(form.headers['content-security-policy'])
  t.match(policy, "form-action 'self'")
  t.match(policy, "frame-ancestors 'none'")
  t.match(policy, "default-src 'none'")
  t.notMatch(policy, /script-src/, 'no script allowed')
  t.notMatch(form.body, /<script/)
  t.match(form.headers, { 'referrer-policy': 'same-origin', 'cache-control': 'private, no-store', 'x-frame-options': 'DENY' }, 'the form names this site as its origin; no Referer leaves it')
  t.match(form.body, `<label for="quantity-${mug}">Mug &lt;big&gt;</label>`, 'the name escaped')
  t.match(form.body, `name="quantity.${mug}" type="number" inputmode="numeric" min="0" max="2"`)
  t.match(form.body, `name="quantity.${tea}" type="number" inputmode="numeric" min="0" max="1"`, 'tea: 1 in this parcel, the 2 unshipped are not offered')
  t.match(form.body, '<option value="no_longer_needed">No longer needed</option>')

  const sent = await send(app, `${link}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged', [`quantity.${tea}`]: '0', [`reason.${tea}`]: '', note: 'Handle broke' })
  t.equal(sent.statusCode, 303, sent.body)
  const location = String(sent.headers.location)
  t.match(location, /^\/shipments\/track\/returns\/[A-Za-z0-9_-]{22}-[A-Za-z0-9_-]{32}$/)
  const [row, ...others] = await storedReturns(app)
  t.same(others, [])
  t.match(row, { orderId, state: 'requested', lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged', note: 'Handle broke', received: null }] })
  t.same(new URL(app.shipments.trackingLinks!.returnUrl(row!.id)).pathname, location, 'the return’s own link, as the service gives it')
  t.match(await app.shipments.returns.history(row!.id), [{ fromState: null, toState: 'requested', userId: null, source: 'customer' }])
  const events = (await app.shipments.outbox.list({ kind: 'event' })).filter((message) => message.name === 'returnRequested')
  t.match(events.map((event) => event.payload), [{ source: 'customer', userId: null, return: { id: row!.id } }])

  const own = await app.inject({ url: location })
  t.equal(own.statusCode, 200)
  t.match(own.body, '<h1>Return C100-r001</h1>')
  t.match(own.body, '<p class="status" data-state="requested">Requested</p>')
  t.match(own.body, 'The shop will look at your return')
  t.match(own.body, '<td>Mug &lt;big&gt;</td><td>1</td><td>Damaged</td>')
  t.notMatch(own.body, /Handle broke|customer|<script/, 'no notes or sources on the customer’s page')
  t.match(own.headers['content-security-policy'], "form-action 'none'")
  t.match((await app.inject({ url: link })).body, new RegExp(`<a href="returns/${location.split('/').pop()}">Return C100-r001</a>: Requested`), 'the tracking page lists the order’s returns')

  // What is left of the parcel is offered again: Mug 1, Tea 1.
  t.match((await app.inject({ url: `${link}/return` })).body, `name="quantity.${mug}" type="number" inputmode="numeric" min="0" max="1"`)
})

t.test('over what is left: a 422 form naming the line, nothing stored; no line chosen, no reason: 422', async (t) => {
  const { app, link, mug, tea, orderId } = await setup(t)
  const over = await send(app, `${link}/return`, { [`quantity.${mug}`]: '3', [`reason.${mug}`]: 'damaged' })
  t.equal(over.statusCode, 422)
  t.match(over.body, '<li>Mug &lt;big&gt;: 3 to return, 2 left to return.</li>')
  t.match(over.body, `value="3" aria-invalid="true"`, 'the form keeps what was sent')
  t.match(over.headers['content-security-policy'], "form-action 'self'")
  const none = await send(app, `${link}/return`, { [`quantity.${mug}`]: '0' })
  t.equal(none.statusCode, 422)
  t.match(none.body, 'Choose at least one item to return.')
  const noReason = await send(app, `${link}/return`, { [`quantity.${tea}`]: '1', [`reason.${tea}`]: 'bored' })
  t.equal(noReason.statusCode, 422)
  t.match(noReason.body, 'Tea: choose a reason.')
  const notNumber = await send(app, `${link}/return`, { [`quantity.${tea}`]: '1e3', [`reason.${tea}`]: 'damaged' })
  t.equal(notNumber.statusCode, 422)
  t.same(await storedReturns(app), [])

  // The shop took both mugs back meanwhile (a return through the API): the customer's form is refused by name.
  await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 2, reason: 'damaged' }] })
  const late = await send(app, `${link}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged' })
  t.equal(late.statusCode, 422)
  t.match(late.body, 'Mug &lt;big&gt;: 1 to return, 0 left to return.')
  t.equal((await storedReturns(app)).length, 1, 'only the shop’s return')
})

t.test('outside the return window, or before delivery: the page says why and a form sent is refused (403)', async (t) => {
  const { app, clock, link, mug, unshippedId } = await setup(t, { windowDays: 14 })
  clock.now = DELIVERED + 14 * DAY + 1000
  const page = await app.inject({ url: link })
  t.match(page.body, '<p class="notice">The return window closed on 2026-12-04. Please contact the shop.</p>')
  t.notMatch(page.body, /Return items<\/a>/)
  const form = await app.inject({ url: `${link}/return` })
  t.equal(form.statusCode, 200)
  t.match(form.body, 'The return window closed on 2026-12-04.')
  t.notMatch(form.body, /<form/)
  const sent = await send(app, `${link}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged' })
  t.equal(sent.statusCode, 403)
  t.match(sent.body, 'The return window closed on 2026-12-04.')
  t.same(await storedReturns(app), [])

  // The parcel not shipped yet: nothing to return from it.
  clock.now = DELIVERED
  const unshippedLink = new URL(await app.shipments.trackingLinks!.url(unshippedId)).pathname
  t.match((await app.inject({ url: `${unshippedLink}/return` })).body, 'Returns can be started here once the parcel is delivered.')
  t.equal((await send(app, `${unshippedLink}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged' })).statusCode, 403)
  t.same(await storedReturns(app), [])
})

t.test("the host's hook refuses per order or per product, and its reason is shown", async (t) => {
  const asked: string[][] = []
  const { app, link, mug, tea } = await setup(t, {
    windowDays: 30,
    customerMayReturn: ({ order, lines, shipment }) => {
      asked.push(lines.map((line) => `${line.sku}:${line.quantity}`))
      if (order.reference !== 'C100' || shipment.items.length === 0) return 'No returns for this order.'
      return lines.some((line) => line.sku === 'TEA' && line.reason !== undefined) ? 'Opened tea cannot be returned.' : true
    },
  })
  t.equal((await app.inject({ url: `${link}/return` })).statusCode, 200)
  t.same(asked[0], ['MUG:2', 'TEA:1'], 'asked with the offered lines')
  const refused = await send(app, `${link}/return`, { [`quantity.${tea}`]: '1', [`reason.${tea}`]: 'damaged' })
  t.equal(refused.statusCode, 403)
  t.match(refused.body, '<p class="notice">Opened tea cannot be returned.</p>')
  t.same(asked.at(-1), ['TEA:1'], 'asked again with the chosen lines')
  t.same(await storedReturns(app), [])
  t.equal((await send(app, `${link}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged' })).statusCode, 303, 'the mug may go back')
  t.equal((await storedReturns(app)).length, 1)
})

t.test('an order the hook refuses as a whole: the page shows its reason instead of the button', async (t) => {
  const { app, link, mug } = await setup(t, { windowDays: 30, customerMayReturn: () => 'Sale items are final.' })
  t.match((await app.inject({ url: link })).body, '<p class="notice">Sale items are final.</p>')
  t.match((await app.inject({ url: `${link}/return` })).body, 'Sale items are final.')
  t.equal((await send(app, `${link}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged' })).statusCode, 403)
  t.same(await storedReturns(app), [])
})

t.test('the shop authorises automatically and buys the label: the customer gets the label link', async (t) => {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const label = { integration: 'easypost', carrier: 'USPS', service: 'Priority', weight: { value: '1.5', unit: 'kg' } }
  const { app, link, mug, orderId } = await setup(t, { windowDays: 14, autoAuthorise: true, customerLabel: label }, { deliveries: { shipFrom: SHIP_FROM } })
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'webhook-secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 1000 } })
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Dr. Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', countryCode: 'US' })

  const sent = await send(app, `${link}/return`, { [`quantity.${mug}`]: '2', [`reason.${mug}`]: 'defective' })
  t.equal(sent.statusCode, 303, sent.body)
  const [row] = await storedReturns(app)
  t.match(row, { state: 'label_sent', labelState: 'purchased', carrier: 'USPS', trackingNumber: /^9400/ })
  t.equal(imitation.stats.buys, 1)
  t.same(
    (await app.shipments.returns.history(row!.id)).map((entry) => [entry.toState, entry.source]).reverse(),
    [['requested', 'customer'], ['authorised', 'automatic'], ['label_sent', 'automatic']],
  )
  const own = await app.inject({ url: String(sent.headers.location) })
  t.match(own.body, '<p class="status" data-state="label_sent">Label sent</p>')
  t.match(own.body, new RegExp(`<a class="button" href="${row!.labelUrl!.replace(/[.?]/g, '\\$&')}" rel="noopener noreferrer">Print the return label</a>`))
  t.match(own.body, `USPS: <a href="${row!.trackingUrl}" rel="noopener noreferrer">${row!.trackingNumber}</a>`)
})

t.test('a label that cannot be bought leaves the return authorised, and the page says the label follows', async (t) => {
  const label = { integration: 'no-such-integration', carrier: 'USPS', service: 'Priority', weight: { value: '1', unit: 'kg' } }
  const { app, link, mug } = await setup(t, { windowDays: 14, autoAuthorise: true, customerLabel: label })
  const sent = await send(app, `${link}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged' })
  t.equal(sent.statusCode, 303)
  t.match(String(sent.headers.location), /\?label=later$/)
  const [row] = await storedReturns(app)
  t.match(row, { state: 'authorised', labelState: null })
  const own = await app.inject({ url: String(sent.headers.location) })
  t.match(own.body, 'Your return is accepted. Please send the items back')
  t.match(own.body, 'The return label will follow by email.')
})

t.test('too many forms from one link or one address: 429, an HTML page with Retry-After, nothing stored', async (t) => {
  const { app, link, mug } = await setup(t, { windowDays: 14, customerRateLimit: { max: 2, windowMs: 60_000 } })
  for (let attempt = 0; attempt < 2; attempt++) t.equal((await send(app, `${link}/return`, {})).statusCode, 422)
  const limited = await send(app, `${link}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged' })
  t.equal(limited.statusCode, 429)
  t.equal(limited.headers['content-type'], 'text/html; charset=utf-8')
  t.equal(limited.headers['retry-after'], '60')
  t.match(limited.body, '<h1>Too many attempts</h1>')
  t.same(await storedReturns(app), [])
  t.equal((await send(app, '/shipments/track/AAAAAAAAAAAAAAAAAAAAAA-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/return', {})).statusCode, 429, 'the same address with another link')
  t.equal((await app.inject({ url: `${link}/return` })).statusCode, 200, 'reading is not limited')
})

t.test('a form from another site is refused (403); from the shop’s own origin it is taken', async (t) => {
  const { app, link, mug } = await setup(t)
  const form = { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged' }
  const foreign = await send(app, `${link}/return`, form, { origin: 'https://evil.example' })
  t.equal(foreign.statusCode, 403)
  t.match(foreign.body, 'This form must be sent from the shop’s own page.')
  t.equal((await send(app, `${link}/return`, form, { 'sec-fetch-site': 'cross-site' })).statusCode, 403)
  t.equal((await send(app, `${link}/return`, form, { origin: 'null' })).statusCode, 403)
  t.equal((await send(app, `${link}/return`, form, { 'sec-fetch-site': 'same-site', origin: 'https://blog.shop.example' })).statusCode, 403, 'another site of the same domain')
  t.same(await storedReturns(app), [])
  t.equal((await send(app, `${link}/return`, form, { origin: 'https://shop.example', 'sec-fetch-site': 'same-origin' })).statusCode, 303)
  t.equal((await storedReturns(app)).length, 1)
})

t.test('links that are not links get the HTML not-found page; a body that is not a form gets an HTML 415', async (t) => {
  const { app, link, mug, parcelId } = await setup(t)
  const token = link.split('/').pop()!
  isHtmlNotFound(t, await app.inject({ url: '/shipments/track/nonsense/return' }), 'a malformed token’s form')
  isHtmlNotFound(t, await send(app, '/shipments/track/nonsense/return', { [`quantity.${mug}`]: '1' }), 'a malformed token’s form sent')
  isHtmlNotFound(t, await app.inject({ url: `/shipments/track/returns/${token}` }), 'a shipment’s token as a return’s')
  isHtmlNotFound(t, await app.inject({ url: '/shipments/track/returns/nonsense' }), 'a malformed return token')
  isHtmlNotFound(t, await app.inject({ url: '/shipments/track/returns/' }), 'no return token')
  isHtmlNotFound(t, await app.inject({ url: `${link}/return/more` }), 'a further segment')
  isHtmlNotFound(t, await app.inject({ url: `/shipments/track/returns/${'x'.repeat(300)}` }), 'a token past the router’s limit')
  isHtmlNotFound(t, await app.inject({ method: 'POST', url: `/shipments/track/returns/${token}`, headers: FORM, payload: 'a=1' }), 'a form sent to a return page')
  const returnPath = new URL(app.shipments.trackingLinks!.returnUrl(1)).pathname
  isHtmlNotFound(t, await app.inject({ url: returnPath }), 'a return link for a return that does not exist')
  isHtmlNotFound(t, await app.inject({ url: `/shipments/track/${returnPath.split('/').pop()}/return` }), 'a return’s token as a shipment’s')
  const json = await app.inject({ method: 'POST', url: `${link}/return`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ [`quantity.${mug}`]: '1' }) })
  t.equal(json.statusCode, 415)
  t.equal(json.headers['content-type'], 'text/html; charset=utf-8')
  await app.shipments.shipments.softDelete(parcelId)
  isHtmlNotFound(t, await app.inject({ url: `${link}/return` }), 'a deleted parcel')
  t.same(await storedReturns(app), [])
})

t.test("a form sent to a link past the router's parameter limit is the HTML not-found page, never Fastify's JSON 414 echoing the path", async (t) => {
  const { app } = await setup(t)
  const long = 'x'.repeat(10_000)
  const answers = [
    [await send(app, `/shipments/track/${long}/return`, { 'quantity.1': '1' }), 'a form'],
    [await app.inject({ method: 'POST', url: `/shipments/track/${long}/return`, headers: { 'content-type': 'application/json' }, payload: '{}' }), 'JSON'],
    [await app.inject({ method: 'POST', url: `/shipments/track/${long}/return`, headers: FORM, payload: 'x'.repeat(20_000) }), 'a body over the limit'],
    [await app.inject({ method: 'POST', url: `/shipments/track/${long}` }), 'no body, the tracking page'],
    [await send(app, `/shipments/track/returns/${long}`, {}), "a return's page"],
    [await app.inject({ url: `/shipments/track/${long}/return` }), 'the form read'],
  ] as const
  for (const [response, what] of answers) {
    isHtmlNotFound(t, response, what)
    t.notMatch(response.body, 'xxxxxxxxxx', `${what}: the path is not echoed`)
    t.equal(response.headers['x-frame-options'], 'DENY', `${what}: the page's headers`)
  }
  t.same(await storedReturns(app), [])
})

t.test('bad customer-return options fail ready() naming them', async (t) => {
  await t.rejects(buildTestApp(t, { returns: { windowDays: 14 } }), { message: /returns\.windowDays/ })
  await t.rejects(buildTestApp(t, { trackingPage: TRACKING, returns: { windowDays: -1 } }), { message: /returns\.windowDays/ })
  // @ts-expect-error: not a function
  await t.rejects(buildTestApp(t, { trackingPage: TRACKING, returns: { windowDays: 14, customerMayReturn: 'no' } }), { message: /returns\.customerMayReturn/ })
  await t.rejects(buildTestApp(t, { trackingPage: TRACKING, returns: { windowDays: 14, customerLabel: { integration: 'x', carrier: 'USPS', service: 'P', weight: { value: '1', unit: 'kg' } } } }), {
    message: /returns\.customerLabel/,
  })
  await t.rejects(buildTestApp(t, { trackingPage: TRACKING, returns: { windowDays: 14, customerRateLimit: { max: 0 } } }), { message: /returns\.customerRateLimit\.max/ })
})

t.test("the OpenAPI document shows the customers' return pages, with the statuses they answer, only when a window is set", async (t) => {
  const { app, link, mug } = await setup(t, { windowDays: 14, customerRateLimit: { max: 1, windowMs: 60_000 } }, { openapi: { path: '/docs/shipments.json' } })
  const document = (await app.inject({ url: '/docs/shipments.json' })).json()
  const form = document.paths['/shipments/track/{token}/return']
  const answered = [
    [await app.inject({ url: `${link}/return` }), 'get'],
    [await app.inject({ url: '/shipments/track/nonsense/return' }), 'get'],
    [await send(app, `${link}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged' }), 'post'],
    [await send(app, `${link}/return`, {}), 'post'],
  ] as const
  for (const [response, method] of answered) t.ok(form[method].responses[String(response.statusCode)], `${method} ${response.statusCode} is documented`)
  t.same(Object.keys(document.paths['/shipments/track/returns/{token}'].get.responses), ['200', '404'])
  t.ok(form.post.requestBody.content['application/x-www-form-urlencoded'])
  const without = await buildTestApp(t, { trackingPage: TRACKING, openapi: { path: '/docs/shipments.json' } })
  t.notOk('/shipments/track/{token}/return' in (await without.inject({ url: '/docs/shipments.json' })).json().paths, 'left out without a window')
})

t.test('another return taking the units between the form and the ledger: refused under the order’s lock, the line named by its product', async (t) => {
  let app: FastifyInstance | null = null
  let orderId = 0
  let raced = false
  const s = await setup(t, {
    windowDays: 14,
    // The hook runs after the form is read and before the request: the shop's return lands in between.
    customerMayReturn: async ({ lines }): Promise<true> => {
      if (!raced && lines.some((line) => line.reason !== undefined)) {
        raced = true
        await app!.shipments.returns.request(orderId, { lines: [{ lineItemId: lines[0]!.lineItemId, quantity: 2, reason: 'damaged' }] })
      }
      return true
    },
  })
  app = s.app
  orderId = s.orderId
  const sent = await send(s.app, `${s.link}/return`, { [`quantity.${s.mug}`]: '1', [`reason.${s.mug}`]: 'damaged' })
  t.equal(sent.statusCode, 422)
  t.match(sent.body, '<li>Mug &lt;big&gt;: 1 to return, 0 of 2 shipped left to return.</li>', "the ledger's refusal, named by the product")
  t.match(await storedReturns(s.app), [{ state: 'requested', lines: [{ lineItemId: s.mug, quantity: 2 }] }])
  t.equal((await storedReturns(s.app)).length, 1, "only the shop's return")
})

t.test('the rate limiter: a fixed window per key, bounded in keys; a flood of new keys never evicts a live window (ended ones go, then new keys are refused)', async (t) => {
  const { createRateLimiter } = await import('../src/http/rate-limit.js')
  const clock = { now: 0 }
  const limiter = createRateLimiter({ max: 2, windowMs: 10_000, clock: () => clock.now, maxKeys: 3 })
  t.ok(limiter.take(['a', 'x']))
  t.ok(limiter.take(['a', 'y']))
  t.notOk(limiter.take(['a', 'z']), 'a is at its limit: nothing counted, z included')
  t.equal(limiter.retryAfterSeconds(['a']), 10)
  clock.now = 4_000
  t.equal(limiter.retryAfterSeconds(['a']), 6)
  t.notOk(limiter.take(['z']), 'a new key while the 3 kept windows are live: refused, none forgotten')
  t.equal(limiter.retryAfterSeconds(['z']), 6, 'Retry-After: when the oldest kept window ends')
  for (let flood = 0; flood < 100; flood++) limiter.take([`flood-${flood}`])
  t.notOk(limiter.take(['a']), 'a flood of new keys did not reset a')
  clock.now = 10_000
  t.ok(limiter.take(['z']), 'once windows ended, they make room')
  t.ok(limiter.take(['a']) && limiter.take(['a']), 'a counts afresh after its own window ended')
  t.notOk(limiter.take(['a']))
  clock.now = 20_000
  t.ok(limiter.take(['d']) && limiter.take(['d']), 'every window ended: dropped, d counts')
  t.notOk(limiter.take(['d']))
})

t.test('client addresses as rate-limit keys: IPv6 by its /64, IPv4-mapped as IPv4', async (t) => {
  const { clientAddressKey } = await import('../src/http/rate-limit.js')
  t.equal(clientAddressKey('203.0.113.7'), '203.0.113.7')
  t.equal(clientAddressKey('::ffff:203.0.113.7'), '203.0.113.7')
  t.equal(clientAddressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64')
  t.equal(clientAddressKey('2001:DB8:1:2::9'), '2001:db8:1:2::/64', 'case and zero compression')
  t.equal(clientAddressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64', 'leading zeros')
  t.equal(clientAddressKey('2001:db8::1'), '2001:db8:0:0::/64')
  t.equal(clientAddressKey('1:2::3:4:5:1.2.3.4'), '1:2:0:3::/64', 'a dotted tail counts for two groups')
  t.equal(clientAddressKey('fe80::1%eth0'), 'fe80:0:0:0::/64', 'a zone is not part of the network')
})

t.test('return forms from many addresses of one IPv6 /64, or from new addresses for one parcel: each count holds (429 pages), nothing stored past it', async (t) => {
  const { app, link, mug } = await setup(t, { windowDays: 14, customerRateLimit: { max: 2, windowMs: 60_000 } })
  const from = (remoteAddress: string, url = `${link}/return`, form: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url, remoteAddress, headers: FORM, payload: new URLSearchParams(form).toString() })
  const forged = '/shipments/track/AAAAAAAAAAAAAAAAAAAAAA-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/return'
  t.equal((await from('2001:db8:5:6::1', forged)).statusCode, 404)
  t.equal((await from('2001:db8:5:6::2', forged)).statusCode, 404)
  const sameNetwork = await from('2001:db8:5:6:ffff::3', `${link}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged' })
  t.equal(sameNetwork.statusCode, 429, 'a third address of the same /64 is the same client')
  t.match(sameNetwork.body, '<h1>Too many attempts</h1>')
  t.equal(sameNetwork.headers['retry-after'], '60')
  t.equal((await from('2001:db8:5:7::1', forged)).statusCode, 404, 'the next /64 is another client')

  t.equal((await from('198.51.100.1')).statusCode, 422)
  t.equal((await from('198.51.100.2')).statusCode, 422)
  const newAddress = await from('198.51.100.3', `${link}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged' })
  t.equal(newAddress.statusCode, 429, "a new address does not reset the parcel's count")
  t.equal(newAddress.headers['content-type'], 'text/html; charset=utf-8')
  t.same(await storedReturns(app), [])
})

t.test("the docs' example of customer returns trusts a counted proxy, never every X-Forwarded-For hop", async (t) => {
  const { readFile } = await import('node:fs/promises')
  for (const page of ['docs/returns.md', 'docs/options.md', 'README.md']) {
    t.notMatch(await readFile(new URL(`../${page}`, import.meta.url), 'utf8'), /Fastify\(\{[^)]*trustProxy: true/, `${page} does not suggest trustProxy: true`)
  }
})

t.test("a return mail's template sees the return's own page as return.pageUrl", async (t) => {
  const { app, link, mug } = await setup(t)
  const sent = await send(app, `${link}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged' })
  const [row] = await storedReturns(app)
  const notification = await app.shipments.notifications.create({
    name: 'Return started',
    statuses: [],
    triggers: ['returnRequested'],
    recipient: 'customer',
    subject: 'Return {{ return.reference }}',
    html: '<a href="{{ return.pageUrl }}">Your return</a>',
    text: 'Your return: {{ return.pageUrl }}',
  })
  const rendered = await app.shipments.notifications.sendTest(notification.id, { returnId: row!.id }, ['lee@example.com'])
  t.equal(rendered.text, `Your return: https://shop.example${sent.headers.location}`)
  t.equal(rendered.sent, false, 'no sendMail: rendered only')
})

t.test('hostile forms: prototype keys, repeated fields, a body too large; answered as pages, nothing stored', async (t) => {
  const { app, link, mug } = await setup(t)
  const raw = (payload: string) => app.inject({ method: 'POST', url: `${link}/return`, headers: FORM, payload })
  const proto = await raw(`__proto__=x&constructor=y&quantity.${mug}=1&reason.${mug}=toString`)
  t.equal(proto.statusCode, 422)
  t.match(proto.body, 'Mug &lt;big&gt;: choose a reason.')
  const repeated = await raw(`quantity.${mug}=1&quantity.${mug}=2&reason.${mug}=damaged`)
  t.equal(repeated.statusCode, 422, 'a repeated field is no quantity')
  t.match(repeated.body, 'Choose at least one item to return.')
  const large = await raw(`note=${'x'.repeat(20_000)}`)
  t.equal(large.statusCode, 413)
  t.equal(large.headers['content-type'], 'text/html; charset=utf-8')
  t.same(await storedReturns(app), [])
  t.equal(({} as Record<string, unknown>).x, undefined, 'no prototype touched')
})

t.test("a customer's note with control characters or a bidi override: the 422 form names the note, nothing stored", async (t) => {
  const { app, link, mug } = await setup(t)
  for (const note of ['NUL\u0000here', 'ESC\u001b[31m', 'gift\u202Etxt.exe']) {
    const response = await send(app, `${link}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged', note })
    t.equal(response.statusCode, 422, JSON.stringify(note))
    t.equal(response.headers['content-type'], 'text/html; charset=utf-8')
    t.match(response.body, 'Your note contains characters that are not allowed')
  }
  t.same(await storedReturns(app), [], 'no return stored')
  const lines = await send(app, `${link}/return`, { [`quantity.${mug}`]: '1', [`reason.${mug}`]: 'damaged', note: 'Cracked.\r\nHandle loose.' })
  t.equal(lines.statusCode, 303, 'a note may span lines')
  t.match(await storedReturns(app), [{ lines: [{ note: 'Cracked.\r\nHandle loose.' }] }])
})
