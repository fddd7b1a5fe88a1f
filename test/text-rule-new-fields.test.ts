// The package's text rule (src/text.ts) on every stored text field added with parcels, boxes, labels,
// documents and returns: control characters (NUL, ESC) and bidirectional overrides (U+202E) are refused
// with a 422 naming the field, and nothing is stored; the admin isolates such text (<bdi>).
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp } from './fixtures/app.js'
import { adminClient, buildAdminApp } from './fixtures/admin.js'
import { tables } from './fixtures/database.js'
import { completedOrderWithLines } from './fixtures/orders.js'

const NOT_TEXT = ['NUL\u0000here', 'ESC\u001b[31m', 'gift\u202Etxt.exe'] as const
const RULE = /characters that are not allowed/

const send = (app: FastifyInstance, url: string, payload: unknown, method: 'POST' | 'PUT' = 'POST') =>
  app.inject({ method, url: `/shipments/api${url}`, headers: { ...as('admin'), 'content-type': 'application/json' }, payload: JSON.stringify(payload) })

const BOX = { innerDimensions: { length: '20', width: '15', height: '10', unit: 'cm' }, emptyWeight: { value: '100', unit: 'g' }, maxWeight: { value: '2000', unit: 'g' } }

/** An order of Mug x2, shipped. */
async function shippedOrder(app: FastifyInstance) {
  const { orderId, lineIds } = await completedOrderWithLines(app, 'T100', [{ name: 'Mug', sku: 'MUG', quantity: 2 }])
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: lineIds[0]!, quantity: 2 }] })
  await app.shipments.shipments.update(shipment!.id, { status: 'shipped' })
  return { orderId, mug: lineIds[0]! }
}

async function stored(app: FastifyInstance) {
  const { db, schema } = tables(app)
  return { boxes: await db.select().from(schema.boxes), returns: await db.select().from(schema.returns), history: await db.select().from(schema.returnHistory) }
}

t.test('box names with NUL, ESC or U+202E: 422 naming the name, nothing stored (a NUL was a 500 on PostgreSQL)', async (t) => {
  const app = await buildTestApp(t)
  for (const name of NOT_TEXT) {
    const created = await send(app, '/boxes', { ...BOX, name })
    t.equal(created.statusCode, 422, JSON.stringify(name))
    t.match(created.json(), { errors: { name: [RULE] } })
  }
  t.same((await stored(app)).boxes, [], 'no box stored')
  const box = (await send(app, '/boxes', { ...BOX, name: 'Small' })).json().box
  const renamed = await send(app, `/boxes/${box.id}`, { name: 'Small\u0000' })
  t.equal(renamed.statusCode, 422)
  t.match((await stored(app)).boxes, [{ name: 'Small' }], 'the box keeps its name')
})

t.test("a return's notes and messages with control characters or bidi overrides: 422, nothing stored", async (t) => {
  const app = await buildTestApp(t)
  const { orderId, mug } = await shippedOrder(app)
  for (const text of NOT_TEXT) {
    const note = await send(app, `/orders/${orderId}/returns`, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged', note: text }] })
    t.equal(note.statusCode, 422, JSON.stringify(text))
    t.match(note.json(), { errors: { 'lines.0.note': [RULE] } })
    const message = await send(app, `/orders/${orderId}/returns`, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }], message: text })
    t.equal(message.statusCode, 422)
    t.match(message.json(), { errors: { message: [RULE] } })
  }
  t.same((await stored(app)).returns, [], 'no return stored')

  // A note may span lines; a rejection's message may not hold ESC.
  const requested = await send(app, `/orders/${orderId}/returns`, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged', note: 'Cracked.\nHandle loose.' }] })
  t.equal(requested.statusCode, 201, requested.body)
  const id = requested.json().return.id
  const before = await stored(app)
  for (const text of NOT_TEXT) {
    const rejected = await send(app, `/returns/${id}`, { state: 'rejected', message: text })
    t.equal(rejected.statusCode, 422, JSON.stringify(text))
    t.match(rejected.json(), { errors: { message: [RULE] } })
    const carrier = await send(app, `/returns/${id}`, { trackingNumber: '1Z999', carrier: text })
    t.equal(carrier.statusCode, 422)
    t.match(carrier.json(), { errors: { carrier: [RULE] } })
    const label = await send(app, `/returns/${id}/label`, { integration: 'easypost', carrier: text, service: text, weight: { value: '1', unit: 'kg' } })
    t.equal(label.statusCode, 422)
    t.match(label.json(), { errors: { carrier: [RULE], service: [RULE] } })
  }
  t.same(await stored(app), before, 'the return and its history unchanged')
  t.match(before.returns, [{ state: 'requested' }])
})

t.test('a ship-from address under the text rule', async (t) => {
  const app = await buildTestApp(t)
  const address = { name: 'Warehouse', street1: 'Main Street 1', city: 'Berlin\u202E', postalCode: '10115', country: 'DE' }
  const refused = await send(app, '/ship-from', { shipFrom: address }, 'PUT')
  t.equal(refused.statusCode, 422, refused.body)
  t.match(refused.json(), { errors: { 'shipFrom.city': [RULE] } })
  t.same((await (await app.inject({ url: '/shipments/api/ship-from', headers: as('admin') })).json()).shipFrom, null, 'no address stored')
})

t.test('the documents option refuses a shop name or title with control characters', async (t) => {
  await t.rejects(buildTestApp(t, { documents: { shop: { name: 'Shop\u202E' } } }), { message: /documents\.shop\.name/ })
  await t.rejects(buildTestApp(t, { documents: { title: 'Slip\u0000' } }), { message: /documents\.title/ })
})

t.test('the admin isolates user-supplied text: box names, return notes and messages in <bdi>', async (t: Test) => {
  const app = await buildAdminApp(t)
  const { orderId, mug } = await shippedOrder(app)
  await send(app, '/boxes', { ...BOX, name: 'קופסה קטנה' })
  const created = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged', note: 'مكسور' }], message: 'שבור' })
  await app.shipments.returns.update(created.id, { state: 'rejected', message: 'לא ניתן' })
  const admin = adminClient(app, 'admin')
  const boxes = await admin.get('/boxes')
  t.equal(boxes.statusCode, 200)
  t.match(boxes.body, '<bdi>קופסה קטנה</bdi>')
  const page = await admin.get(`/returns/${created.id}`)
  t.equal(page.statusCode, 200)
  t.match(page.body, '<bdi>مكسور</bdi>', 'the note')
  t.match(page.body, '<bdi>לא ניתן</bdi>', 'the rejection message')
})
