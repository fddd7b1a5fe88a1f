// The admin pages' error summary (issue 33): a refused form answers with "There is a problem" at the top
// of the page's content, focused on load, each message linking to its field; the fields keep their own
// messages and aria-invalid; nothing is stored. On every form: the shipment's, the order's, webhooks',
// the return page's, the Boxes page's and the shipment page's parcel forms. Plus the default layout's
// skip link, wrapping navigation and viewport meta, and the viewport meta of the layouts a host copies.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { historyRows, insertOrder, orderWithShipments } from './fixtures/app.js'
import { adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'
import { tables } from './fixtures/database.js'
import { easyPostImitation } from './fixtures/easypost-api.js'

/** The summary's markup, or '' when the page has none. */
const summaryOf = (body: string) => /<div class="error-summary"[\s\S]*?<\/div>/.exec(body)?.[0] ?? ''

t.test('a status change with no status: the summary opens the content, focused, linking to the status field', async (t) => {
  const app = await buildAdminApp(t)
  const { shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]
  const admin = adminClient(app, 'admin')
  const page = await admin.get(`/shipments/${id}`)
  t.equal(page.statusCode, 200)
  t.equal(summaryOf(page.body), '', 'no summary without errors')
  t.match(page.body, /<a class="skip-link" href="#main-content">Skip to main content<\/a>/)
  t.match(page.body, /<main id="main-content" tabindex="-1"><div class="shipments-admin"><h1>/)
  t.match(page.body, /<\/a>\n<a href="\/shipments\/admin\/shipments" aria-current="page">Shipments<\/a>/, 'the navigation links are apart, so they wrap')
  t.match(page.body, /<nav class="page-links" aria-label="On this page"><a href="#change-status">Change status<\/a>/, 'the status change is linked near the top')
  t.match(page.body, /<h2 id="change-status" tabindex="-1">Change status<\/h2>/)

  const refused = await admin.post(`/shipments/${id}/transition`, { status: '' })
  t.equal(refused.statusCode, 422)
  const summary = summaryOf(refused.body)
  t.match(refused.body, /<main id="main-content" tabindex="-1"><div class="shipments-admin"><div class="error-summary"/, 'first in the main content')
  t.match(summary, /role="alert"/)
  t.match(summary, /tabindex="-1" autofocus data-error-summary/, 'focused when the page loads')
  t.match(summary, /<h2 id="error-summary-title">There is a problem<\/h2>/)
  t.match(summary, /<li><a href="#input-status" data-focus="input-status">Choose the new status\.<\/a><\/li>/)
  t.match(fieldMarkup(refused.body, 'status'), /aria-invalid="true" aria-describedby="error-status"/, 'the field keeps aria-invalid')
  t.match(fieldMarkup(refused.body, 'status'), /<p class="field-error" id="error-status" role="alert">Choose the new status\.<\/p>/, 'and its message')
  t.equal((await historyRows(app, id)).length, 1, 'nothing stored')
})

t.test('the edit form: a message per field, each linking to its input; a message on no field is listed without a link', async (t) => {
  const app = await buildAdminApp(t)
  const { shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]
  const admin = adminClient(app, 'admin')
  await admin.get(`/shipments/${id}`)
  const refused = await admin.post(`/shipments/${id}`, { trackingUrl: 'not a url', 'fields.dimensions': '{nope' })
  t.equal(refused.statusCode, 422)
  const summary = summaryOf(refused.body)
  t.match(summary, /<a href="#input-fields\.dimensions" data-focus="input-fields\.dimensions">Dimensions is not valid JSON\.<\/a>/)
  t.equal(summary.match(/<li>/g)?.length, 1, 'one problem: the form stops at the JSON it cannot read')

  const webhooks = await admin.get('/webhooks')
  t.equal(webhooks.statusCode, 200)
  const badUrl = await admin.post('/webhooks', { url: 'ftp://example.com', events: 'shipmentCreated' })
  t.equal(badUrl.statusCode, 422)
  t.match(summaryOf(badUrl.body), /<a href="#input-url" data-focus="input-url">URL: [^<]+<\/a>/, 'named by its label, linked to its input')
  const noEvents = await admin.post('/webhooks', { url: 'https://example.com/hook' })
  t.equal(noEvents.statusCode, 422)
  t.match(summaryOf(noEvents.body), /<a href="#field-events" data-focus="field-events">Events: [^<]+<\/a>/, 'a group of checkboxes: its fieldset')
  t.match(noEvents.body, /<fieldset class="field has-error" data-field="events" id="field-events">/)
  t.equal((await app.shipments.webhooks.list()).length, 0, 'nothing stored')
})

/** The link the summary gives for a message, as a pattern: `#<target>` and the text. */
const summaryLink = (target: string, text: string) =>
  new RegExp(`<li><a href="#${target.replace(/[.]/g, '\\.')}" data-focus="${target.replace(/[.]/g, '\\.')}">${text}`)

/** An order shipped in full (two mugs), ready for a return. */
async function shippedOrder(app: FastifyInstance) {
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'processing', name: 'Processing', isDefault: true })
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'ES1', isCompleted: true, statusHandle: 'processing', items: [{ name: 'Mug', sku: 'MUG', quantity: 2 }] })
  const [mug] = (await app.shipments.orders.orderLines!(orderId))!.map((line) => line.id)
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: mug!, quantity: 2 }] })
  await app.shipments.shipments.update(shipment!.id, { status: 'shipped' })
  return { orderId, mug: mug! }
}

const EASYPOST_KEY = 'EZTK-error-summary-0123456789abcdef'
/** An EasyPost integration against the local imitation: the return page's label form and the parcels' rates are shown. */
async function withLabels(t: Test, options: Parameters<typeof buildAdminApp>[1] = {}) {
  const imitation = await easyPostImitation(t, { apiKey: EASYPOST_KEY })
  const app = await buildAdminApp(t, options)
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'secret', apiKey: EASYPOST_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 1000 } })
  return { app, imitation }
}

t.test("a return's rejection with no message: the summary links to the message field, whose label names it", async (t) => {
  const app = await buildAdminApp(t)
  const { orderId, mug } = await shippedOrder(app)
  const created = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }] })
  const admin = adminClient(app, 'admin')
  const page = await admin.get(`/returns/${created.id}`)
  t.equal(summaryOf(page.body), '')
  t.match(page.body, /<label for="input-message\.rejected">Message<\/label>\n<input type="text" id="input-message\.rejected" name="message" value="">/, "the label's for is the input's id")

  const refused = await admin.post(`/returns/${created.id}/state`, { state: 'rejected', message: '' })
  t.equal(refused.statusCode, 422)
  t.match(refused.body, /<main id="main-content" tabindex="-1"><div class="shipments-admin"><div class="error-summary"/, 'first in the main content')
  t.match(summaryOf(refused.body), summaryLink('input-message.rejected', 'Message: is required to reject a return</a>'))
  t.match(fieldMarkup(refused.body, 'message.rejected'), /id="input-message\.rejected" name="message" value="" aria-invalid="true" aria-describedby="error-message\.rejected"/)
  t.match(fieldMarkup(refused.body, 'message.rejected'), /<p class="field-error" id="error-message\.rejected" role="alert">is required to reject a return<\/p>/)
  t.equal((await app.shipments.returns.get(created.id))!.state, 'requested', 'nothing stored')
})

t.test("a return's tracking number refused: linked from the summary, marked invalid, nothing stored", async (t) => {
  const app = await buildAdminApp(t)
  const { orderId, mug } = await shippedOrder(app)
  const created = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }] })
  await app.shipments.returns.update(created.id, { state: 'authorised' })
  const admin = adminClient(app, 'admin')
  await admin.get(`/returns/${created.id}`)
  const refused = await admin.post(`/returns/${created.id}/tracking`, { trackingNumber: 'with spaces', carrier: 'UPS' })
  t.equal(refused.statusCode, 422)
  t.match(summaryOf(refused.body), summaryLink('input-trackingNumber', 'Tracking number: must be 1 to 64 printable characters without spaces</a>'))
  t.match(fieldMarkup(refused.body, 'trackingNumber'), /aria-invalid="true" aria-describedby="error-trackingNumber"/)
  t.match(await app.shipments.returns.get(created.id), { state: 'authorised', trackingNumber: null }, 'nothing stored')
})

t.test("a return's label form: a field's refusal beside that field and linked, the carrier's refusal linked to the form", async (t) => {
  const { app, imitation } = await withLabels(t, { deliveries: { shipFrom: { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' } } })
  const { orderId, mug } = await shippedOrder(app)
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Ada', address1: '1 Main St', city: 'Springfield', state: 'IL', postalCode: '62701', countryCode: 'US' })
  const created = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }] })
  await app.shipments.returns.update(created.id, { state: 'authorised' })
  const admin = adminClient(app, 'admin')
  await admin.get(`/returns/${created.id}`)

  const noCarrier = await admin.post(`/returns/${created.id}/label`, { integration: 'easypost', labelCarrier: '', service: 'Priority', weight: '1', weightUnit: 'kg' })
  t.equal(noCarrier.statusCode, 422)
  t.match(summaryOf(noCarrier.body), summaryLink('input-labelCarrier', 'Carrier: is required, at most 255 characters</a>'))
  t.match(fieldMarkup(noCarrier.body, 'labelCarrier'), /aria-invalid="true" aria-describedby="error-labelCarrier"/, 'the carrier field, not the whole form')
  t.match(fieldMarkup(noCarrier.body, 'labelCarrier'), /<p class="field-error" id="error-labelCarrier" role="alert">is required, at most 255 characters<\/p>/)

  const badWeight = await admin.post(`/returns/${created.id}/label`, { integration: 'easypost', labelCarrier: 'USPS', service: 'Priority', weight: 'heavy', weightUnit: 'kg' })
  t.equal(badWeight.statusCode, 422)
  t.match(summaryOf(badWeight.body), summaryLink('input-weight', 'Weight: must be a positive decimal'))
  t.match(fieldMarkup(badWeight.body, 'weight'), /aria-invalid="true"/)

  const teleport = await admin.post(`/returns/${created.id}/label`, { integration: 'easypost', labelCarrier: 'USPS', service: 'Teleport', weight: '1', weightUnit: 'kg' })
  t.equal(teleport.statusCode, 422)
  t.match(summaryOf(teleport.body), summaryLink('buy-return-label', 'Return label: [^<]*EasyPost offers no USPS Teleport'))
  t.match(teleport.body, /<form method="post" action="[^"]+\/label" aria-label="Buy the return label" id="buy-return-label"/)
  t.equal(imitation.stats.buys, 0, 'nothing bought')
  t.match(await app.shipments.returns.get(created.id), { state: 'authorised', label: null }, 'nothing stored')
})

t.test("what arrived of a return, refused: the line's counts marked invalid, its message beside it and linked", async (t) => {
  const app = await buildAdminApp(t)
  const { orderId, mug } = await shippedOrder(app)
  const created = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 2, reason: 'damaged' }] })
  await app.shipments.returns.update(created.id, { state: 'authorised' })
  const admin = adminClient(app, 'admin')
  await admin.get(`/returns/${created.id}`)
  const refused = await admin.post(`/returns/${created.id}/receive`, { [`resellable.${mug}`]: '1', [`damaged.${mug}`]: '0', [`missing.${mug}`]: '0' })
  t.equal(refused.statusCode, 422)
  t.match(summaryOf(refused.body), summaryLink(`input-resellable.${mug}`, `Line ${mug}: resellable, damaged and missing must add up to 2`))
  const row = new RegExp(`<tr data-receive-line="${mug}">[\\s\\S]*?</tr>`).exec(refused.body)?.[0] ?? ''
  t.match(row, new RegExp(`<p class="field-error" id="error-line-${mug}" role="alert">resellable, damaged and missing must add up to 2`), 'the message beside its line')
  t.equal(row.match(new RegExp(`aria-invalid="true" aria-describedby="error-line-${mug}"`, 'g'))?.length, 3, 'its three counts marked invalid')
  t.match(row, new RegExp(`id="input-resellable\\.${mug}" name="resellable\\.${mug}"`))
  t.notMatch(refused.body, /class="notice notice-error"/, 'not repeated above the form')
  t.match(await app.shipments.returns.get(created.id), { dateReceived: null, lines: [{ received: null }] }, 'nothing stored')
})

t.test('the Boxes page: the new box, a box of the list and the ship-from address each summarised with links to their fields', async (t) => {
  const app = await buildAdminApp(t)
  const box = await app.shipments.boxes.createBox({ name: 'Mailer', innerDimensions: { length: '30', width: '20', height: '10', unit: 'cm' }, emptyWeight: { value: '150', unit: 'g' }, maxWeight: { value: '2000', unit: 'g' } })
  const { db, schema } = tables(app)
  const admin = adminClient(app, 'admin')
  t.equal(summaryOf((await admin.get('/boxes')).body), '')

  const newBox = await admin.post('/boxes', { name: 'Crate', length: 'long', width: '20', height: '10', dimensionUnit: 'cm', emptyWeight: '150', maxWeight: '2000', weightUnit: 'g' })
  t.equal(newBox.statusCode, 422)
  t.match(newBox.body, /<main id="main-content" tabindex="-1"><div class="shipments-admin"><div class="error-summary"/)
  t.match(summaryOf(newBox.body), summaryLink('input-length', 'New box, Inner length: must be a positive decimal'))
  t.match(fieldMarkup(newBox.body, 'length'), /aria-invalid="true" aria-describedby="error-length"/)
  t.equal((await db.select().from(schema.boxes)).length, 1, 'no box added')

  const name = (key: string) => `box.${box.id}.${key}`
  const changed = await admin.post(`/boxes/${box.id}`, { [name('name')]: 'Mailer', [name('length')]: '30', [name('width')]: '20', [name('height')]: '10', [name('dimensionUnit')]: 'cm', [name('emptyWeight')]: '200', [name('maxWeight')]: '100', [name('weightUnit')]: 'g' })
  t.equal(changed.statusCode, 422)
  t.match(summaryOf(changed.body), summaryLink(`input-box.${box.id}.maxWeight`, 'Box Mailer, Maximum weight: must be more than the empty weight</a>'))
  t.match(fieldMarkup(changed.body, name('maxWeight')), /aria-invalid="true"/)
  t.equal(summaryOf(changed.body).match(/<li>/g)?.length, 1, "only that box's problem")
  t.match((await db.select().from(schema.boxes))[0], { emptyWeight: '150', maxWeight: '2000' }, 'the box unchanged')

  const address = await admin.post('/boxes/ship-from', { 'shipFrom.street1': '', 'shipFrom.city': 'Springfield', 'shipFrom.postalCode': '62701', 'shipFrom.country': 'USA' })
  t.equal(address.statusCode, 422)
  const summary = summaryOf(address.body)
  t.match(summary, summaryLink('input-shipFrom.street1', 'Ship-from address, Street: is required</a>'))
  t.match(summary, summaryLink('input-shipFrom.country', 'Ship-from address, Country: must be a two-letter country code'))
  t.match(fieldMarkup(address.body, 'shipFrom.street1'), /aria-invalid="true" aria-describedby="error-shipFrom\.street1"/)
  t.match(fieldMarkup(address.body, 'shipFrom.country'), /aria-invalid="true"/)
  t.same(await app.shipments.deliveries.shipFrom(), { address: null, source: null }, 'no address stored')
})

t.test("the shipment page's parcel forms: each refusal in the page's summary, linked to the parcel's own field", async (t) => {
  const { app, imitation } = await withLabels(t)
  const orderId = await insertOrder(app)
  const [shipment] = await app.shipments.shipments.create(orderId)
  const parcel = await app.shipments.deliveries.addParcel(shipment.id, { weight: { value: '1.5', unit: 'kg' } })
  const admin = adminClient(app, 'admin')
  const page = `/shipments/${shipment.id}`
  const first = await admin.get(page)
  t.equal(summaryOf(first.body), '')
  t.match(first.body, new RegExp(`<select id="input-rates\\.${parcel.id}\\.integration" name="integration" aria-label="Integration">`), "the rates form's select has the parcel's own id")
  const stored = async () => (await app.shipments.shipments.get(shipment.id))!.parcels

  const added = await admin.post(`${page}/parcels`, { 'parcel.weight': 'heavy', 'parcel.weightUnit': 'kg' })
  t.equal(added.statusCode, 422)
  t.match(added.body, /<main id="main-content" tabindex="-1"><div class="shipments-admin"><div class="error-summary"/, 'at the top of the page, not in the parcels section')
  t.match(summaryOf(added.body), summaryLink('input-parcel.weight', 'New parcel, weight: must be a positive decimal'))
  t.match(fieldMarkup(added.body, 'parcel.weight'), /aria-invalid="true" aria-describedby="error-parcel\.weight"/)
  t.equal((await stored()).length, 1, 'no parcel added')

  const edit = (key: string) => `edit.${parcel.id}.${key}`
  const changed = await admin.post(`${page}/parcels/${parcel.id}/change`, { [edit('weight')]: '2', [edit('weightUnit')]: 'kg', [edit('length')]: '30', [edit('width')]: 'wide', [edit('height')]: '10', [edit('dimensionUnit')]: 'cm' })
  t.equal(changed.statusCode, 422)
  t.match(summaryOf(changed.body), summaryLink(`input-edit.${parcel.id}.width`, `Parcel ${parcel.id}, width: must be a positive decimal`))
  t.match(fieldMarkup(changed.body, edit('width')), /aria-invalid="true"/)
  t.match(changed.body, new RegExp(`<details open><summary>Change or remove</summary>\\n<form method="post" action="[^"]+/change" aria-label="Change parcel ${parcel.id}" id="change-parcel-${parcel.id}"`), 'its form open')
  t.match((await stored())[0], { weight: { value: '1.5', unit: 'kg' }, dimensions: null }, 'the parcel unchanged')

  // No ship-from address: rates are refused; the summary leads to the parcel's row, its rates form first.
  const rates = await admin.post(`${page}/parcels/${parcel.id}/rates`, { integration: 'easypost' })
  t.equal(rates.statusCode, 422)
  t.match(summaryOf(rates.body), summaryLink(`parcel-${parcel.id}`, `Parcel ${parcel.id}, label: No ship-from address is set`))
  t.match(rates.body, new RegExp(`<tr data-parcel="${parcel.id}" id="parcel-${parcel.id}">`))
  t.match(rates.body, new RegExp(`<select id="input-rates\\.${parcel.id}\\.integration" name="integration" aria-label="Integration" aria-invalid="true" aria-describedby="error-label\\.${parcel.id}">`))
  t.match(rates.body, new RegExp(`<p class="field-error" role="alert" id="error-label\\.${parcel.id}">No ship-from address is set`), 'the message beside the parcel')
  t.equal(imitation.stats.creates, 0, 'no carrier call')
  t.match((await stored())[0], { trackingNumber: null, label: null }, 'nothing stored')
})

t.test('the viewport meta: in the default layout, and in every page of the layouts a host copies (examples, docs/admin.md)', async (t) => {
  const VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">'
  const app = await buildAdminApp(t)
  const page = await adminClient(app, 'admin').get('/shipments')
  t.equal(page.statusCode, 200)
  const head = /<head>[\s\S]*?<\/head>/.exec(page.body)?.[0] ?? ''
  t.ok(head.includes(VIEWPORT), 'the default layout has it in its head')

  const root = join(import.meta.dirname, '..')
  for (const [file, pages] of [
    ['examples/demo-host.ts', 1],
    ['examples/login-host.ts', 2],
    ['docs/admin.md', 2],
  ] as const) {
    const text = readFileSync(join(root, file), 'utf8')
    const heads = [...text.matchAll(/<html[^>]*><head>[\s\S]*?<\/head>/g)].map((match) => match[0])
    t.equal(heads.length, pages, `${file}: ${pages} page template(s) (the layout, the login page)`)
    t.same(heads.filter((each) => !each.includes(VIEWPORT)), [], `${file}: each has the viewport meta`)
  }
})
