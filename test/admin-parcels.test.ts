// The shipment page's parcels section: add a parcel (errors beside the field), get rates, buy from a
// quote against the EasyPost imitation, the carrier's refusal beside the form, void; buying needs
// shipments-buyLabels.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'
import { insertOrder } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { easyPostImitation } from './fixtures/easypost-api.js'

const API_KEY = 'EZTK-admin-parcels-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }

async function parcelRows(app: FastifyInstance) {
  const { db, schema } = tables(app)
  return db.select().from(schema.parcels).orderBy(schema.parcels.id)
}

t.test('parcels on the shipment page: add, rates, buy, a refusal in the carrier\'s words, void', async (t) => {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const app = await buildAdminApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 1000 } })
  const orderId = await insertOrder(app)
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Ada', address1: '1 Main St', city: 'Springfield', state: 'IL', postalCode: '62701', countryCode: 'US' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const admin = adminClient(app, 'admin')
  const page = `/shipments/${shipment.id}`

  const first = await admin.get(page)
  t.equal(first.statusCode, 200)
  t.match(first.body, /<h2 id="parcels"[^>]*>Parcels<\/h2>/)
  t.match(first.body, /No parcels yet/)

  const bad = await admin.post(`${page}/parcels`, { 'parcel.weight': 'heavy', 'parcel.weightUnit': 'kg' })
  t.equal(bad.statusCode, 422)
  t.match(fieldMarkup(bad.body, 'parcel.weight'), /field-error/, 'the error sits beside the weight field')
  t.same(await parcelRows(app), [])

  const added = await admin.post(`${page}/parcels`, { 'parcel.weight': '1.5', 'parcel.weightUnit': 'kg' })
  t.equal(added.statusCode, 303)
  const [parcel] = await parcelRows(app)
  t.match(parcel, { weight: '1.5', weightUnit: 'kg' })

  await admin.get(page)
  const rates = await admin.post(`${page}/parcels/${parcel.id}/rates`, { integration: 'easypost' })
  t.equal(rates.statusCode, 200, rates.body.slice(0, 500))
  const quoteIds = [...rates.body.matchAll(/data-quote="(\d+)"/g)].map((match) => Number(match[1]))
  t.equal(quoteIds.length, 3, 'a table of three rates')
  t.match(rates.body, /5\.25 USD[\s\S]*7\.90 USD[\s\S]*11\.03 USD/, 'cheapest first')

  const editor = adminClient(app, 'editor')
  await editor.get(page)
  t.equal((await editor.post(`${page}/parcels/${parcel.id}/label`, { integration: 'easypost', quoteId: String(quoteIds[0]) })).statusCode, 403, 'buying needs shipments-buyLabels')
  t.equal(imitation.stats.buys, 0)

  imitation.fault({ step: 'buy', kind: 'error', status: 402, code: 'PAYMENT_REQUIRED', message: 'Insufficient funds.' })
  const refused = await admin.post(`${page}/parcels/${parcel.id}/label`, { integration: 'easypost', quoteId: String(quoteIds[0]) })
  t.equal(refused.statusCode, 422)
  t.match(refused.body, new RegExp(`id="error-label\\.${parcel.id}"[^>]*>The carrier refused: EasyPost: the account has no funds`))

  const bought = await admin.post(`${page}/parcels/${parcel.id}/label`, { integration: 'easypost', quoteId: String(quoteIds[0]) })
  t.equal(bought.statusCode, 303, bought.body.slice(0, 500))
  t.equal(imitation.stats.buys, 1)
  const shown = await admin.get(page)
  t.match(shown.body, /<bdi>USPS<\/bdi> <bdi>GroundAdvantage<\/bdi><br><bdi>9400/)
  t.match(shown.body, /5\.25 USD/)
  t.match(shown.body, /Void label/)

  const voided = await admin.post(`${page}/parcels/${parcel.id}/void`, {})
  t.equal(voided.statusCode, 303)
  t.equal(imitation.stats.refunds, 1)
  t.match((await parcelRows(app))[0], { trackingNumber: null, labelOperationId: null })
})

t.test('the box catalogue page: add a box (errors beside the fields), list it, remove it', async (t) => {
  const app = await buildAdminApp(t)
  const admin = adminClient(app, 'admin')
  const empty = await admin.get('/boxes')
  t.equal(empty.statusCode, 200)
  t.match(empty.body, /No boxes yet/)
  t.match(empty.body, /<a href="\/shipments\/admin\/boxes" aria-current="page">Boxes<\/a>/, 'linked in the navigation')
  const form = { name: 'Mailer', length: '30', width: '20', height: '10', dimensionUnit: 'cm', emptyWeight: '150', maxWeight: '100', weightUnit: 'g' }
  const bad = await admin.post('/boxes', form)
  t.equal(bad.statusCode, 422)
  t.match(fieldMarkup(bad.body, 'maxWeight'), /must be more than the empty weight/)
  const { db, schema } = tables(app)
  t.same(await db.select().from(schema.boxes), [])
  const added = await admin.post('/boxes', { ...form, maxWeight: '2000' })
  t.equal(added.statusCode, 303)
  const [box] = await db.select().from(schema.boxes)
  t.match(box, { name: 'Mailer', innerLength: '30', emptyWeight: '150', maxWeight: '2000', weightUnit: 'g' })
  const listed = await admin.get('/boxes')
  t.match(listed.body, new RegExp(`data-box="${box.id}"><td><bdi>Mailer</bdi>`))
  t.equal((await adminClient(app, 'viewer').post(`/boxes/${box.id}/delete`, {})).statusCode, 403)
  t.equal((await admin.post(`/boxes/${box.id}/delete`, {})).statusCode, 303)
  t.same(await db.select().from(schema.boxes), [])
})

t.test("a parcel's weight and size are changed or the parcel removed on the shipment page; refusals beside the parcel's own fields", async (t) => {
  const app = await buildAdminApp(t)
  const orderId = await insertOrder(app)
  const [shipment] = await app.shipments.shipments.create(orderId)
  const parcel = await app.shipments.deliveries.addParcel(shipment.id, { weight: { value: '1.5', unit: 'kg' } })
  const admin = adminClient(app, 'admin')
  const page = `/shipments/${shipment.id}`
  const form = (fields: Record<string, string>) => Object.fromEntries(Object.entries(fields).map(([name, value]) => [`edit.${parcel.id}.${name}`, value]))

  const shown = await admin.get(page)
  t.match(fieldMarkup(shown.body, `edit.${parcel.id}.weight`), /value="1.5"/, 'the form shows the parcel as stored')

  const bad = await admin.post(`${page}/parcels/${parcel.id}/change`, form({ weight: '2', weightUnit: 'kg', length: '30', width: 'wide', height: '10', dimensionUnit: 'cm' }))
  t.equal(bad.statusCode, 422)
  t.match(fieldMarkup(bad.body, `edit.${parcel.id}.width`), /field-error/, 'the error sits beside the width of this parcel')
  t.match(fieldMarkup(bad.body, `edit.${parcel.id}.length`), /value="30"/, 'what was typed stays')
  t.match((await parcelRows(app))[0], { weight: '1.5', length: null }, 'nothing changed')

  const saved = await admin.post(`${page}/parcels/${parcel.id}/change`, form({ weight: '2.25', weightUnit: 'lb', length: '30', width: '20', height: '10', dimensionUnit: 'in' }))
  t.equal(saved.statusCode, 303)
  t.match((await parcelRows(app))[0], { weight: '2.25', weightUnit: 'lb', length: '30', width: '20', height: '10', dimensionUnit: 'in' })
  t.same((await app.shipments.shipments.get(shipment.id))!.parcels.map((each) => each.weight), [{ value: '2.25', unit: 'lb' }], 'the read follows')

  const cleared = await admin.post(`${page}/parcels/${parcel.id}/change`, form({ weight: '2.25', weightUnit: 'lb', length: '', width: '', height: '', dimensionUnit: 'in' }))
  t.equal(cleared.statusCode, 303)
  t.match((await parcelRows(app))[0], { length: null, width: null, height: null }, 'empty sizes clear the dimensions')

  t.equal((await adminClient(app, 'viewer').post(`${page}/parcels/${parcel.id}/remove`, {})).statusCode, 403)
  t.equal((await admin.post(`${page}/parcels/${parcel.id}/remove`, {})).statusCode, 303)
  t.same(await parcelRows(app), [])
  t.equal((await admin.post(`${page}/parcels/${parcel.id}/remove`, {})).statusCode, 404, 'gone')
})

t.test("a box is changed from its own form on the Boxes page; a refusal shows beside that box's fields only", async (t) => {
  const app = await buildAdminApp(t)
  const box = await app.shipments.boxes.createBox({ name: 'Mailer', innerDimensions: { length: '30', width: '20', height: '10', unit: 'cm' }, emptyWeight: { value: '150', unit: 'g' }, maxWeight: { value: '2000', unit: 'g' } })
  const admin = adminClient(app, 'admin')
  const name = (key: string) => `box.${box.id}.${key}`
  const form = { [name('name')]: 'Large mailer', [name('length')]: '40', [name('width')]: '30', [name('height')]: '15', [name('dimensionUnit')]: 'cm', [name('emptyWeight')]: '200', [name('maxWeight')]: '100', [name('weightUnit')]: 'g' }
  t.match(fieldMarkup((await admin.get('/boxes')).body, name('length')), /value="30"/, 'the form shows the box as stored')

  const bad = await admin.post(`/boxes/${box.id}`, form)
  t.equal(bad.statusCode, 422)
  t.match(fieldMarkup(bad.body, name('maxWeight')), /must be more than the empty weight/)
  t.notMatch(bad.body, /class="notice notice-error"/, 'no form lists it as an error of its own (the add form, the address)')
  const { db, schema } = tables(app)
  t.match((await db.select().from(schema.boxes))[0], { name: 'Mailer', innerLength: '30' }, 'nothing changed')

  const saved = await admin.post(`/boxes/${box.id}`, { ...form, [name('maxWeight')]: '5000' })
  t.equal(saved.statusCode, 303)
  t.match((await db.select().from(schema.boxes))[0], { name: 'Large mailer', innerLength: '40', emptyWeight: '200', maxWeight: '5000' })
  t.equal((await adminClient(app, 'viewer').post(`/boxes/${box.id}`, form)).statusCode, 403)
  t.equal((await admin.post('/boxes/999999', form)).statusCode, 404)
})

t.test('"Suggest parcels" over its bounds says why beside the parcel form and creates nothing', async (t) => {
  const app = await buildAdminApp(t)
  await app.shipments.boxes.createBox({ name: 'Large', innerDimensions: { length: '40', width: '30', height: '30', unit: 'cm' }, emptyWeight: { value: '400', unit: 'g' }, maxWeight: { value: '10000', unit: 'g' } })
  const orderId = await app.shipments.referenceOrders!.createOrder({
    reference: 'SUGGEST-1',
    isCompleted: true,
    items: [{ name: 'Mug', sku: 'MUG', quantity: 501, weight: 350, weightUnit: 'g', dimensions: { length: '12', width: '9', height: '10', unit: 'cm' } }],
  })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const admin = adminClient(app, 'admin')
  await admin.get(`/shipments/${shipment.id}`)
  const refused = await admin.post(`/shipments/${shipment.id}/parcels/suggest`, {})
  t.equal(refused.statusCode, 422)
  t.match(refused.body, /A suggestion packs at most 500 units \(this shipment has 501\): add its parcels by hand\./)
  t.same(await parcelRows(app), [], 'nothing created')
})

t.test('"Suggest parcels" shows the suggestion; "Accept" creates exactly those parcels, and a second accept is refused', async (t) => {
  const app = await buildAdminApp(t)
  const box = await app.shipments.boxes.createBox({ name: 'Large', innerDimensions: { length: '40', width: '30', height: '30', unit: 'cm' }, emptyWeight: { value: '400', unit: 'g' }, maxWeight: { value: '10000', unit: 'g' } })
  const orderId = await app.shipments.referenceOrders!.createOrder({
    reference: 'SUGGEST-2',
    isCompleted: true,
    items: [
      { name: 'Mug', sku: 'MUG', quantity: 2, weight: 350, weightUnit: 'g', dimensions: { length: '12', width: '9', height: '10', unit: 'cm' } },
      { name: 'Poster', sku: 'POSTER', quantity: 1 },
    ],
  })
  const [shipment] = await app.shipments.shipments.create(orderId, { rule: 'remaining' })
  const [mugLine, posterLine] = shipment.items.map((item) => item.lineItemId)
  const admin = adminClient(app, 'admin')
  await admin.get(`/shipments/${shipment.id}`)

  const shown = await admin.post(`/shipments/${shipment.id}/parcels/suggest`, {})
  t.equal(shown.statusCode, 200)
  t.match(shown.body, /<h3 id="suggested-parcels">Suggested parcels<\/h3>/)
  t.match(shown.body, new RegExp(`<tr><td>Large</td><td>2 × line ${mugLine}</td><td class="num">1100 g</td><td>40 × 30 × 30 cm</td></tr>`), 'the parcel as it will be created')
  t.match(shown.body, new RegExp(`<li>1 × line ${posterLine}: the order line has no weight or size</li>`), 'what is left out, and why')
  t.same(await parcelRows(app), [], 'shown, not created')
  const suggestion = /name="suggestion" value="([^"]*)"/.exec(shown.body)?.[1]?.replaceAll('&quot;', '"').replaceAll('&amp;', '&') ?? ''
  t.match(JSON.parse(suggestion), { id: /^sg_/, parcels: [{ box: { id: box.id } }] })
  t.match(shown.body, /<button type="submit">Accept this parcel<\/button><\/form>/)

  const accepted = await admin.post(`/shipments/${shipment.id}/parcels/accept-suggestion`, { suggestion })
  t.equal(accepted.statusCode, 303)
  t.match(await parcelRows(app), [{ shipmentId: shipment.id, boxId: box.id, weight: '1100', weightUnit: 'g', items: [{ lineItemId: mugLine, quantity: 2 }] }])

  const again = await admin.post(`/shipments/${shipment.id}/parcels/accept-suggestion`, { suggestion })
  t.equal(again.statusCode, 409)
  t.match(again.body, /changed since this suggestion was made/)
  const broken = await admin.post(`/shipments/${shipment.id}/parcels/accept-suggestion`, { suggestion: '{not json' })
  t.equal(broken.statusCode, 422)
  t.match(broken.body, /suggestion: is not an object: pass back the suggestion/)
  t.equal((await parcelRows(app)).length, 1, 'one parcel, as accepted once')
  t.equal((await adminClient(app, 'viewer').post(`/shipments/${shipment.id}/parcels/accept-suggestion`, { suggestion })).statusCode, 403)
})
