// The returns admin pages: the list with filters and the navigation's count of returns waiting, a
// return's page (authorise, reject with a message, a tracking number, receive line by line, close, a
// return label bought through EasyPost), the order page's returned and returnable quantities; changing
// a return needs shipments-manageReturns.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'
import { tables } from './fixtures/database.js'
import { easyPostImitation } from './fixtures/easypost-api.js'

const API_KEY = 'EZTK-admin-returns-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }

async function shippedOrder(app: FastifyInstance) {
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'processing', name: 'Processing', isDefault: true })
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'AR1', isCompleted: true, statusHandle: 'processing', items: [{ name: 'Mug', sku: 'MUG', quantity: 2 }] })
  const [mug] = (await app.shipments.orders.orderLines!(orderId))!.map((line) => line.id)
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: mug!, quantity: 2 }] })
  await app.shipments.shipments.update(shipment!.id, { status: 'shipped' })
  return { orderId, mug: mug! }
}

async function storedReturn(app: FastifyInstance, id: number) {
  const { db, schema } = tables(app)
  return (await db.select().from(schema.returns)).find((row) => row.id === id)!
}

t.test('the returns list, the navigation count and a return page from requested to closed', async (t) => {
  const app = await buildAdminApp(t)
  const { orderId, mug } = await shippedOrder(app)
  const created = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 2, reason: 'damaged', note: 'Both chipped' }] })
  const admin = adminClient(app, 'admin')

  const list = await admin.get('/returns')
  t.equal(list.statusCode, 200)
  t.match(list.body, new RegExp(`data-return="${created.id}"`))
  t.match(list.body, /AR1-r001/)
  t.match(list.body, /Returns <span class="badge nav-count badge-attention" data-count="1">1<\/span>/, 'one return waits for action')
  t.notMatch((await admin.get('/returns?state=closed')).body, /data-return=/, 'the state filter')
  t.notMatch((await admin.get('/returns?olderThanDays=3')).body, /data-return=/, 'the age filter: nothing three days old')
  t.equal((await admin.get('/returns?state=bogus')).statusCode, 400)
  t.equal((await admin.get('/returns/424242')).statusCode, 404)

  const page = `/returns/${created.id}`
  const opened = await admin.get(page)
  t.equal(opened.statusCode, 200)
  t.match(opened.body, /Both chipped/)
  t.match(opened.body, /aria-label="Authorise"/)

  const viewer = adminClient(app, 'editor')
  await viewer.get(page)
  t.notMatch((await viewer.get(page)).body, /aria-label="Authorise"/, 'no actions without manageReturns')
  t.equal((await viewer.post(`${page}/state`, { state: 'authorised' })).statusCode, 403)
  t.equal((await storedReturn(app, created.id)).state, 'requested')

  const rejectedBlank = await admin.post(`${page}/state`, { state: 'rejected', message: '' })
  t.equal(rejectedBlank.statusCode, 422)
  t.match(fieldMarkup(rejectedBlank.body, 'message.rejected'), /is required to reject a return/, 'the message is asked for beside its field')

  t.equal((await admin.post(`${page}/state`, { state: 'authorised' })).statusCode, 303)
  t.equal((await storedReturn(app, created.id)).state, 'authorised')
  await admin.get(page)
  t.equal((await admin.post(`${page}/tracking`, { trackingNumber: '1Z999AA10123456784', carrier: 'UPS' })).statusCode, 303)
  t.match(await storedReturn(app, created.id), { state: 'in_transit', trackingNumber: '1Z999AA10123456784', carrier: 'UPS' })

  await admin.get(page)
  const wrong = await admin.post(`${page}/receive`, { [`resellable.${mug}`]: '1', [`damaged.${mug}`]: '0', [`missing.${mug}`]: '0' })
  t.equal(wrong.statusCode, 422)
  t.match(wrong.body, /must add up to 2/)
  t.equal((await storedReturn(app, created.id)).dateReceived, null)
  t.equal((await admin.post(`${page}/receive`, { [`resellable.${mug}`]: '1', [`damaged.${mug}`]: '1', [`missing.${mug}`]: '0' })).statusCode, 303)
  t.match(await storedReturn(app, created.id), { state: 'received', lines: [{ received: { resellable: 1, damaged: 1, missing: 0 } }] })
  await admin.get(page)
  t.equal((await admin.post(`${page}/state`, { state: 'closed', message: 'Refunded' })).statusCode, 303)
  const closed = await admin.get(page)
  t.match(closed.body, /data-return-state="closed"/)
  t.match(closed.body, /<td>received<\/td><td>closed<\/td><td><bdi>Refunded<\/bdi><\/td><td>admin<\/td><td>admin<\/td>/, 'history with user and source')
  t.match(closed.body, /Returns <span class="badge nav-count badge-muted" data-count="0">0<\/span>/, 'nothing waits now')

  const order = await admin.get(`/orders/${orderId}`)
  t.equal(order.statusCode, 200)
  t.match(order.body, new RegExp(`data-returnable="${mug}"><td>MUG</td><td>2</td><td>2</td><td>0</td>`), 'shipped, returned, returnable')
  t.match(order.body, new RegExp(`href="/shipments/admin/returns/${created.id}"`))
})

t.test('a return label bought from the return page through EasyPost; buying needs buyLabels and manageReturns', async (t) => {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const app = await buildAdminApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 1000 } })
  const { orderId, mug } = await shippedOrder(app)
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Ada', address1: '1 Main St', city: 'Springfield', state: 'IL', postalCode: '62701', countryCode: 'US' })
  const created = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 1, reason: 'defective' }] })
  await app.shipments.returns.update(created.id, { state: 'authorised' })
  const admin = adminClient(app, 'admin')
  const page = `/returns/${created.id}`
  const opened = await admin.get(page)
  t.match(opened.body, /aria-label="Buy the return label"/)

  const refused = await admin.post(`${page}/label`, { integration: 'easypost', labelCarrier: 'USPS', service: 'Teleport', weight: '1', weightUnit: 'kg' })
  t.equal(refused.statusCode, 422)
  t.match(refused.body, /EasyPost offers no USPS Teleport/)
  t.equal(imitation.stats.buys, 0)
  const editor = adminClient(app, 'editor')
  await editor.get(page)
  t.equal((await editor.post(`${page}/label`, { integration: 'easypost', labelCarrier: 'USPS', service: 'Priority', weight: '1', weightUnit: 'kg' })).statusCode, 403)

  await admin.get(page)
  const bought = await admin.post(`${page}/label`, { integration: 'easypost', labelCarrier: 'USPS', service: 'Priority', weight: '1', weightUnit: 'kg' })
  t.equal(bought.statusCode, 303, bought.body.slice(0, 500))
  t.equal(imitation.stats.buys, 1)
  t.match(await storedReturn(app, created.id), { state: 'label_sent', labelState: 'purchased', carrier: 'USPS', trackingNumber: /^9400/ })
  const labelled = await admin.get(page)
  t.match(labelled.body, /postage_label\/shp_[0-9a-f]+\.pdf/, 'the label is linked')
  t.match(labelled.body, /aria-label="Void the return label"/)

  // Voiding the unused label: a refusal by EasyPost keeps it, shown in the summary; then it is refunded.
  imitation.fault({ step: 'refund', kind: 'error', status: 422, code: 'SHIPMENT.REFUND.NOT_ELIGIBLE', message: 'Not eligible for a refund.' })
  const notEligible = await admin.post(`${page}/label/void`, {})
  t.equal(notEligible.statusCode, 422)
  t.match(notEligible.body, /class="error-summary"[\s\S]*href="#void-return-label"[\s\S]*Not eligible for a refund/)
  t.match(await storedReturn(app, created.id), { state: 'label_sent', labelState: 'purchased' })
  await editor.get(page)
  t.equal((await editor.post(`${page}/label/void`, {})).statusCode, 403, 'voiding needs buyLabels')
  t.match(await storedReturn(app, created.id), { state: 'label_sent', labelState: 'purchased' })
  await admin.get(page)
  const voided = await admin.post(`${page}/label/void`, {})
  t.equal(voided.statusCode, 303, voided.body.slice(0, 500))
  t.equal(imitation.stats.refunds, 1)
  t.match(await storedReturn(app, created.id), { state: 'authorised', labelState: null, trackingNumber: null })
  const after = await admin.get(page)
  t.notMatch(after.body, /aria-label="Void the return label"/, 'nothing left to void')
  t.match(after.body, /aria-label="Buy the return label"/, 'a new label can be bought')
})
