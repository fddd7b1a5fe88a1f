// Order lines on the admin pages: the order page's lines and staging form (typed quantities, split
// rules), refusals beside the line, a shipment's items editor, the attention list and its navigation
// count; each on the page, in the answer's status and in what is stored.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { eq } from 'drizzle-orm'
import { ShipmentUpdateRejectedError, type ShipmentsPluginOptions } from '../src/index.js'
import { buildTestApp, insertOrder } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'

const XSS = '<script>alert(1)</script>'

/** A host rule: half of what is left of each line now (rounded up), the rest later. */
const SPLIT_RULES: ShipmentsPluginOptions['splitRules'] = {
  halfNow: (lines) => [lines.map((line) => ({ lineItemId: line.id, quantity: Math.ceil(line.remaining / 2) }))],
  unreachable: () => {
    throw new Error('the warehouse service is down')
  },
  nonsense: () => [[{ lineItemId: 0, quantity: 1 }]],
}

const buildApp = (t: Parameters<typeof buildAdminApp>[0]) => buildAdminApp(t, { splitRules: SPLIT_RULES })

let orderCounter = 0

/** A completed reference order: T-shirts x3, a mug x1, a gift card that does not ship; its line ids by SKU. */
async function orderWithLines(app: FastifyInstance, overrides: { isCompleted?: boolean; teeName?: string } = {}) {
  const reference = `L${process.pid}-${++orderCounter}`
  const orderId = await app.shipments.referenceOrders!.createOrder({
    reference,
    isCompleted: overrides.isCompleted ?? true,
    email: `buyer${orderCounter}@example.com`,
    dateOrdered: new Date('2025-03-04T10:20:00Z'),
    items: [
      { name: overrides.teeName ?? 'T-shirt', sku: 'TEE', quantity: 3 },
      { name: 'Mug', sku: 'MUG', quantity: 1 },
      { name: 'Gift card', sku: 'GIFT', quantity: 1, shippable: false },
    ],
  })
  const lines = (await app.shipments.shipments.allocation(orderId)).lines!
  const id = (sku: string) => lines.find((line) => line.sku === sku)!.id
  return { orderId, reference, tee: id('TEE'), mug: id('MUG'), gift: id('GIFT') }
}

/** What the order's active shipments hold of each line: [allocated, unallocated] by SKU. */
async function allocated(app: FastifyInstance, orderId: number) {
  const { lines } = await app.shipments.shipments.allocation(orderId)
  return Object.fromEntries((lines ?? []).map((line) => [line.sku, [line.allocated, line.unallocated]]))
}

const inputValue = (body: string, name: string) => new RegExp(`name="${name.replace('.', '\\.')}" value="([^"]*)"`).exec(body)?.[1]

t.test('the order page lists each line with ordered, allocated and unallocated, and a staging form pre-filled by the rule', async (t) => {
  const app = await buildApp(t)
  const order = await orderWithLines(app, { teeName: XSS })
  await app.shipments.shipments.create(order.orderId, { items: [{ lineItemId: order.tee, quantity: 1 }] })
  const admin = adminClient(app, 'admin')

  const page = await admin.get(`/orders/${order.orderId}`)
  t.equal(page.statusCode, 200)
  const row = (id: number) => new RegExp(`<tr data-line="${id}">([\\s\\S]*?)</tr>`).exec(page.body)?.[1] ?? ''
  t.match(row(order.tee), /<td class="num">3<\/td><td class="num">1<\/td><td class="num">2<\/td>/, 'ordered 3, allocated 1, unallocated 2')
  t.match(row(order.mug), /<td class="num">1<\/td><td class="num">0<\/td><td class="num">1<\/td>/)
  t.match(row(order.gift), /Does not ship/)
  t.notMatch(row(order.gift), /<input/, 'a line that does not ship has no quantity')
  t.equal(inputValue(page.body, `items.${order.tee}`), '2', 'remaining: each line pre-filled with what is left')
  t.equal(inputValue(page.body, `items.${order.mug}`), '1')
  t.match(page.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/, 'a line name is text')
  t.notMatch(page.body, /<script>alert/)
  t.match(page.body, /<td>1 × &lt;script&gt;/, 'the shipments table lists what each holds')
  for (const rule of ['remaining', 'perLine', 'halfNow']) t.match(page.body, new RegExp(`<option value="${rule}"`), `the selector offers ${rule}`)
  t.match(page.body, /<form method="get" action="\/shipments\/admin\/orders\/\d+" class="toolbar" aria-label="Pre-fill by split rule">/)
  t.notMatch(page.body, /name="count"/, 'an order with lines stages shipments instead of "create N"')

  const perLine = await admin.get(`/orders/${order.orderId}?rule=perLine`)
  t.equal(perLine.statusCode, 200)
  t.match(perLine.body, /<option value="perLine" selected>/)
  t.equal(inputValue(perLine.body, `items.${order.tee}`), '2', 'the first of the rule\'s shipments')
  t.equal(inputValue(perLine.body, `items.${order.mug}`), '0')
  t.match(perLine.body, /it makes 2 shipments of what is left; the form holds the first/)
  t.match(perLine.body, /<input type="hidden" name="rule" value="perLine">/)

  const host = await admin.get(`/orders/${order.orderId}/panel?rule=halfNow`)
  t.equal(host.statusCode, 200)
  t.equal(inputValue(host.body, `items.${order.tee}`), '1', 'a host rule pre-fills too (the embeddable panel as well)')
  t.equal(inputValue(host.body, `items.${order.mug}`), '1')

  const unknown = await admin.get(`/orders/${order.orderId}?rule=constructor`)
  t.equal(unknown.statusCode, 400)
  t.match(unknown.body, /No split rule &quot;constructor&quot;\./)

  const viewer = adminClient(app, 'viewer')
  const readOnly = await viewer.get(`/orders/${order.orderId}`)
  t.equal(readOnly.statusCode, 200)
  t.match(readOnly.body, new RegExp(`<tr data-line="${order.tee}">`))
  t.notMatch(readOnly.body, /name="items\./, 'no staging form without the edit permission')
  t.same(await allocated(app, order.orderId), { TEE: [1, 2], MUG: [0, 1], GIFT: [0, 0] }, 'reading changed nothing')
})

t.test('the staging form creates one shipment with the quantities typed', async (t) => {
  const app = await buildApp(t)
  const order = await orderWithLines(app)
  const admin = adminClient(app, 'admin')
  await admin.get(`/orders/${order.orderId}`)

  // A field sent twice counts once, as typed first.
  const created = await admin.post(`/orders/${order.orderId}/shipments`, { action: 'items', rule: 'remaining', [`items.${order.tee}`]: ['2', '3'], [`items.${order.mug}`]: '0' })
  t.equal(created.statusCode, 303)
  t.equal(created.headers.location, `/shipments/admin/orders/${order.orderId}?notice=created`)
  const { shipments } = await app.shipments.shipments.list({ orderId: order.orderId })
  t.equal(shipments.length, 1)
  t.same(shipments[0].items, [{ lineItemId: order.tee, quantity: 2, sku: 'TEE', name: 'T-shirt' }], 'exactly the typed items; a 0 leaves the line out')
  t.same(await allocated(app, order.orderId), { TEE: [2, 1], MUG: [0, 1], GIFT: [0, 0] })

  const after = await admin.get(`/orders/${order.orderId}?notice=created`)
  t.match(after.body, /Created\./)
  t.equal(inputValue(after.body, `items.${order.tee}`), '1', 'the form now offers what is left')

  const viewer = adminClient(app, 'viewer')
  await viewer.get(`/orders/${order.orderId}`)
  const refused = await viewer.post(`/orders/${order.orderId}/shipments`, { action: 'items', [`items.${order.mug}`]: '1' })
  t.equal(refused.statusCode, 403)
  t.equal((await app.shipments.shipments.list({ orderId: order.orderId })).total, 1, 'nothing created without the edit permission')
})

t.test('an over-allocation re-renders 422 with the message beside its line, what was typed kept, nothing stored', async (t) => {
  const app = await buildApp(t)
  const order = await orderWithLines(app)
  await app.shipments.shipments.create(order.orderId, { items: [{ lineItemId: order.tee, quantity: 2 }] })
  const admin = adminClient(app, 'admin')
  await admin.get(`/orders/${order.orderId}`)

  const over = await admin.post(`/orders/${order.orderId}/shipments`, { action: 'items', rule: 'remaining', [`items.${order.tee}`]: '2', [`items.${order.mug}`]: '1' })
  t.equal(over.statusCode, 422)
  const beside = fieldMarkup(over.body, `items.${order.tee}`)
  t.match(beside, /class="field-error" id="error-items\.\d+" role="alert">Line \d+ \(TEE\): 2 requested, 1 of 3 left to allocate\./)
  t.match(beside, new RegExp(`aria-invalid="true" aria-describedby="error-items\\.${order.tee}"`))
  t.notMatch(fieldMarkup(over.body, `items.${order.mug}`), /field-error|aria-invalid/, 'the other line is not blamed')
  t.equal(inputValue(over.body, `items.${order.tee}`), '2', 'what was typed is kept')
  t.equal((await app.shipments.shipments.list({ orderId: order.orderId })).total, 1, 'nothing stored')
  t.same(await allocated(app, order.orderId), { TEE: [2, 1], MUG: [0, 1], GIFT: [0, 0] })

  const notNumber = await admin.post(`/orders/${order.orderId}/shipments`, { action: 'items', [`items.${order.tee}`]: 'two', [`items.${order.mug}`]: '1' })
  t.equal(notNumber.statusCode, 422)
  t.match(fieldMarkup(notNumber.body, `items.${order.tee}`), /Enter a whole number, 0 or more\./)
  t.equal(inputValue(notNumber.body, `items.${order.tee}`), 'two')

  const none = await admin.post(`/orders/${order.orderId}/shipments`, { action: 'items', [`items.${order.tee}`]: '0', [`items.${order.mug}`]: '' })
  t.equal(none.statusCode, 422)
  t.match(none.body, /<div class="notice notice-error" role="alert"><div>Enter a quantity for at least one line\.<\/div><\/div>\s*<div class="table-scroll"[^>]*><table class="order-lines">/, 'a message on `items` shows above the lines')

  const tampered = await admin.post(`/orders/${order.orderId}/shipments`, { action: 'rule', rule: 'noSuchRule' })
  t.equal(tampered.statusCode, 422)
  t.match(tampered.body, /role="alert"><div>No split rule &quot;noSuchRule&quot;\.<\/div>/, 'a message on `rule` shows above the form')
  t.match(tampered.body, /<option value="remaining" selected>/)
  t.equal((await app.shipments.shipments.list({ orderId: order.orderId })).total, 1, 'still nothing stored')
})

t.test('"create by rule" creates the rule\'s shipments from what is left', async (t) => {
  const app = await buildApp(t)
  const order = await orderWithLines(app)
  const admin = adminClient(app, 'admin')
  await admin.get(`/orders/${order.orderId}?rule=perLine`)

  const created = await admin.post(`/orders/${order.orderId}/shipments`, { action: 'rule', rule: 'perLine', [`items.${order.tee}`]: '3', [`items.${order.mug}`]: '0' })
  t.equal(created.statusCode, 303)
  t.equal(created.headers.location, `/shipments/admin/orders/${order.orderId}?notice=created`)
  const { shipments } = await app.shipments.shipments.list({ orderId: order.orderId })
  t.same(
    shipments.map((shipment) => shipment.items.map((item) => [item.sku, item.quantity])),
    [[['TEE', 3]], [['MUG', 1]]],
    'one shipment per line, by the rule (not the typed quantities)',
  )

  const full = await admin.get(`/orders/${order.orderId}`)
  t.match(full.body, /Every shippable line is allocated in full\./)
  t.notMatch(full.body, /name="items\./, 'nothing left to stage')
  const again = await admin.post(`/orders/${order.orderId}/shipments`, { action: 'rule', rule: 'remaining' })
  t.equal(again.statusCode, 303)
  t.equal(again.headers.location, `/shipments/admin/orders/${order.orderId}?notice=nothingLeft`)
  t.match((await admin.get(`/orders/${order.orderId}?notice=nothingLeft`)).body, /Nothing is left to allocate: no shipment was created\./)
  t.equal((await app.shipments.shipments.list({ orderId: order.orderId })).total, 2, 'no shipment more')
})

t.test('a shipment\'s page edits its items: quantities per line, 0 removes, refusals beside the line', async (t) => {
  const app = await buildApp(t)
  const order = await orderWithLines(app)
  const [shipment] = await app.shipments.shipments.create(order.orderId, { items: [{ lineItemId: order.tee, quantity: 1 }] })
  const [other] = await app.shipments.shipments.create(order.orderId, { items: [{ lineItemId: order.mug, quantity: 1 }] })
  const admin = adminClient(app, 'admin')

  const page = await admin.get(`/shipments/${shipment.id}`)
  t.equal(page.statusCode, 200)
  t.match(page.body, /<form method="post" action="\/shipments\/admin\/shipments\/\d+\/items" novalidate aria-label="Shipment items">/)
  t.equal(inputValue(page.body, `items.${order.tee}`), '1')
  t.equal(inputValue(page.body, `items.${order.mug}`), '0')

  const saved = await admin.post(`/shipments/${shipment.id}/items`, { [`items.${order.tee}`]: '3', [`items.${order.mug}`]: '0' })
  t.equal(saved.statusCode, 303)
  t.equal(saved.headers.location, `/shipments/admin/shipments/${shipment.id}?notice=saved`)
  t.same((await app.shipments.shipments.get(shipment.id))!.items, [{ lineItemId: order.tee, quantity: 3, sku: 'TEE', name: 'T-shirt' }])

  const unchanged = await admin.post(`/shipments/${shipment.id}/items`, { [`items.${order.tee}`]: '3', [`items.${order.mug}`]: '' })
  t.equal(unchanged.headers.location, `/shipments/admin/shipments/${shipment.id}?notice=unchanged`)

  const over = await admin.post(`/shipments/${shipment.id}/items`, { [`items.${order.tee}`]: '3', [`items.${order.mug}`]: '1' })
  t.equal(over.statusCode, 422)
  t.match(fieldMarkup(over.body, `items.${order.mug}`), /role="alert">Line \d+ \(MUG\): 1 requested, 0 of 1 left to allocate\./)
  t.match(fieldMarkup(over.body, `items.${order.mug}`), /aria-invalid="true"/)
  t.equal(inputValue(over.body, `items.${order.mug}`), '1', 'what was typed is kept')
  t.same((await app.shipments.shipments.get(shipment.id))!.items.map((item) => [item.sku, item.quantity]), [['TEE', 3]], 'nothing stored')

  const removed = await admin.post(`/shipments/${other.id}/items`, { [`items.${order.tee}`]: '0', [`items.${order.mug}`]: '0' })
  t.equal(removed.statusCode, 303)
  t.same((await app.shipments.shipments.get(other.id))!.items, [], 'every line at 0: a shipment of the whole order')
  t.match((await admin.get(`/orders/${order.orderId}`)).body, new RegExp(`<tr data-shipment="${other.id}">[\\s\\S]*?<td><span class="meta">Whole order</span></td>`))
  t.same(await allocated(app, order.orderId), { TEE: [3, 0], MUG: [0, 1], GIFT: [0, 0] })

  // A refusal of the whole change (another update holds the order's lock) shows above the items, and what was typed stays.
  const service = app.shipments.shipments
  const update = service.update
  service.update = async () => {
    throw new ShipmentUpdateRejectedError(`Couldn't update shipment ${shipment.id} right now because another update is in progress. Please try again.`)
  }
  const busy = await admin.post(`/shipments/${shipment.id}/items`, { [`items.${order.tee}`]: '2', [`items.${order.mug}`]: '0' })
  service.update = update
  t.equal(busy.statusCode, 422)
  t.match(busy.body, /<form method="post" action="[^"]+\/items" novalidate aria-label="Shipment items">\s*<input type="hidden"[^>]+>\s*<div class="notice notice-error" role="alert"><div>Couldn&#39;t update shipment \d+ right now/)
  t.equal(inputValue(busy.body, `items.${order.tee}`), '2')
  t.equal((await app.shipments.shipments.get(shipment.id))!.items[0].quantity, 3)

  // The order store no longer lists a line the shipment holds: the editor still shows it, and 0 removes it.
  const [third] = await app.shipments.shipments.create(order.orderId, { items: [{ lineItemId: order.mug, quantity: 1 }] })
  const { db, schema } = tables(app)
  await db.delete(schema.orderLineItems).where(eq(schema.orderLineItems.id, order.mug))
  const gone = await admin.get(`/shipments/${third.id}`)
  t.match(gone.body, new RegExp(`<tr data-line="${order.mug}"><td>Mug</td><td>MUG</td>\\s*<td class="num">0</td>`))
  t.equal(inputValue(gone.body, `items.${order.mug}`), '1')
  const dropped = await admin.post(`/shipments/${third.id}/items`, { [`items.${order.tee}`]: '0', [`items.${order.mug}`]: '0' })
  t.equal(dropped.statusCode, 303)
  t.same((await app.shipments.shipments.get(third.id))!.items, [])

  const viewer = adminClient(app, 'viewer')
  const readOnly = await viewer.get(`/shipments/${shipment.id}`)
  t.match(readOnly.body, /<h2 id="items"[^>]*>Items<\/h2>/)
  t.notMatch(readOnly.body, /name="items\./, 'a viewer sees the quantities, not the editor')
  t.match(readOnly.body, new RegExp(`<tr data-line="${order.tee}">[\\s\\S]*?<td class="num">3</td></tr>`))
  const refused = await viewer.post(`/shipments/${shipment.id}/items`, { [`items.${order.tee}`]: '1' })
  t.equal(refused.statusCode, 403)
  t.equal((await app.shipments.shipments.get(shipment.id))!.items[0].quantity, 3)
})

t.test('the attention page lists completed orders with lines missing, the navigation counts them, and an order fully allocated leaves', async (t) => {
  const app = await buildApp(t)
  const first = await orderWithLines(app)
  const second = await orderWithLines(app)
  await orderWithLines(app, { isCompleted: false })
  await app.shipments.shipments.create(second.orderId, { items: [{ lineItemId: second.tee, quantity: 3 }] })
  const admin = adminClient(app, 'admin')

  const page = await admin.get('/attention')
  t.equal(page.statusCode, 200)
  t.match(page.body, /<h1>Orders needing attention<\/h1>/)
  t.equal(page.body.match(/<tr data-order=/g)?.length, 2, 'the open order is not listed')
  const row = (orderId: number) => new RegExp(`<tr data-order="${orderId}">([\\s\\S]*?)</tr>`).exec(page.body)?.[1] ?? ''
  t.match(row(first.orderId), new RegExp(`<a href="/shipments/admin/orders/${first.orderId}">${first.reference}</a>`), 'a link to fix the order: its page')
  t.match(row(first.orderId), /<time datetime="2025-03-04T11:20:00\+01:00" title="2025-03-04T11:20:00\+01:00">4 Mar 2025, 11:20<\/time>/, 'the date in the site timezone')
  t.match(row(first.orderId), /buyer\d+@example\.com/)
  t.match(row(first.orderId), /<td class="num">2<\/td><td class="num">4<\/td>/, 'two lines, four units missing')
  t.match(row(second.orderId), /<td class="num">1<\/td><td class="num">1<\/td>/, 'only the mug is missing')
  t.match(page.body, /Page 1 of 1 · 2 orders/)
  t.match(page.body, /<a href="\/shipments\/admin\/attention" aria-current="page">Attention <span class="badge nav-count badge-attention" data-count="2">2<\/span><\/a>/)

  // Allocate the rest of the second order through its staging form.
  await admin.get(`/orders/${second.orderId}`)
  t.equal((await admin.post(`/orders/${second.orderId}/shipments`, { action: 'items', [`items.${second.tee}`]: '0', [`items.${second.mug}`]: '1' })).statusCode, 303)
  const after = await admin.get('/attention')
  t.equal(after.body.match(/<tr data-order=/g)?.length, 1)
  t.match(after.body, new RegExp(`<tr data-order="${first.orderId}">`))
  t.notMatch(after.body, new RegExp(`<tr data-order="${second.orderId}">`), 'the order fully allocated left the list')
  t.match(after.body, /data-count="1">1<\/span>/)
  const shipmentsPage = await admin.get('/shipments')
  t.match(shipmentsPage.body, /<a href="\/shipments\/admin\/attention">Attention <span class="badge nav-count badge-attention" data-count="1">1<\/span><\/a>/, 'every page shows the count')
  t.equal((await app.shipments.shipments.attention()).total, 1)

  const beyond = await admin.get('/attention?page=2')
  t.equal(beyond.body.match(/<tr data-order=/g), null)
  t.match(beyond.body, /Page 2 of 1 · 1 orders/)
  t.match(beyond.body, /rel="prev"/)

  t.equal((await adminClient(app, 'nobody').get('/attention')).statusCode, 403)
  t.equal((await adminClient(app, 'viewer').get('/attention')).statusCode, 200, 'viewing needs viewShipments only')
})

t.test('the attention list pages 50 orders at a time', async (t) => {
  const app = await buildApp(t)
  for (let index = 0; index < 51; index++) await orderWithLines(app)
  const admin = adminClient(app, 'admin')
  const first = await admin.get('/attention')
  t.equal(first.body.match(/<tr data-order=/g)?.length, 50)
  t.match(first.body, /Page 1 of 2 · 51 orders/)
  t.match(first.body, /<a href="\/shipments\/admin\/attention\?page=2" rel="next">Next<\/a>/)
  const second = await admin.get('/attention?page=2')
  t.equal(second.body.match(/<tr data-order=/g)?.length, 1)
  t.match(second.body, /data-count="51">51</)
})

t.test('an order whose store gives no lines keeps "create N shipments"; the shipment page has no items editor', async (t) => {
  const app = await buildApp(t)
  const orderId = await insertOrder(app)
  const admin = adminClient(app, 'admin')
  const page = await admin.get(`/orders/${orderId}`)
  t.equal(page.statusCode, 200)
  t.match(page.body, /name="count" value="1"/)
  t.notMatch(page.body, /Pre-fill by split rule|name="items\./)
  const created = await admin.post(`/orders/${orderId}/shipments`, { count: '2' })
  t.equal(created.statusCode, 303)
  const { shipments } = await app.shipments.shipments.list({ orderId })
  t.same(shipments.map((shipment) => shipment.items), [[], []])
  const shipment = await admin.get(`/shipments/${shipments[0].id}`)
  t.notMatch(shipment.body, /<h2 id="items"[^>]*>Items<\/h2>/)
})

t.test('a host rule that fails leaves the staging form to be typed by hand, with the reason above it', async (t) => {
  const logLines: string[] = []
  const app = await buildTestApp(t, { admin: {}, splitRules: SPLIT_RULES }, undefined, logLines)
  const order = await orderWithLines(app)
  const admin = adminClient(app, 'admin')

  const thrown = await admin.get(`/orders/${order.orderId}?rule=unreachable`)
  t.equal(thrown.statusCode, 200)
  t.match(thrown.body, /role="alert"><div>The split rule &quot;unreachable&quot; could not suggest quantities; the log has the details\.<\/div>/)
  t.equal(inputValue(thrown.body, `items.${order.tee}`), '0', 'nothing suggested; the form still works')
  t.ok(logLines.some((line) => line.includes('the warehouse service is down')), 'the rule\'s error is logged')

  const odd = await admin.get(`/orders/${order.orderId}?rule=nonsense`)
  t.equal(odd.statusCode, 200)
  t.match(odd.body, /could not suggest quantities: Each item needs a lineItemId, a positive integer\./)

  const typed = await admin.post(`/orders/${order.orderId}/shipments`, { action: 'items', rule: 'unreachable', [`items.${order.mug}`]: '1' })
  t.equal(typed.statusCode, 303)
  t.same((await app.shipments.shipments.list({ orderId: order.orderId })).shipments.map((shipment) => shipment.items.map((item) => item.sku)), [['MUG']])
  t.same(await allocated(app, order.orderId), { TEE: [0, 3], MUG: [1, 0], GIFT: [0, 0] })
})

t.test('the order page sums up what each shipment holds; the attention list shows an order without date or customer', async (t) => {
  const app = await buildApp(t)
  const orderId = await app.shipments.referenceOrders!.createOrder({
    reference: `N${process.pid}`,
    isCompleted: true,
    items: [
      { name: 'Poster', quantity: 2 },
      { name: 'Frame', sku: 'FRAME', quantity: 1 },
    ],
  })
  const admin = adminClient(app, 'admin')
  const listed = await admin.get('/attention')
  const row = /<tr data-order="\d+">([\s\S]*?)<\/tr>/.exec(listed.body)?.[1] ?? ''
  t.match(row, /<td>—<\/td><td><\/td><td class="num">2<\/td><td class="num">3<\/td>/, 'no date, no customer')

  await admin.get(`/orders/${orderId}`)
  t.equal((await admin.post(`/orders/${orderId}/shipments`, { action: 'rule', rule: 'remaining' })).statusCode, 303)
  const page = await admin.get(`/orders/${orderId}`)
  t.match(page.body, /<td>2 × Poster, 1 × Frame<\/td>/)
  t.match(page.body, /<td>Poster<\/td><td><\/td>/, 'a line without SKU')
  const empty = await admin.get('/attention')
  t.match(empty.body, /No order needs attention\./)
  t.match(empty.body, /data-count="0">0<\/span>/)
  t.equal((await app.shipments.shipments.list({ orderId })).total, 1)
})

t.test('an order store without lines: "create N shipments" stays, and the attention page says why it is empty', async (t) => {
  const order = { id: 7, reference: 'EXT-7', statusHandle: null, isCompleted: true }
  let orderGone = false
  const app = await buildTestApp(t, {
    admin: {},
    orderStore: {
      findOrder: async (id) => (id === order.id && !orderGone ? order : null),
      findOrderByReference: async (reference) => (reference === order.reference ? order : null),
      setOrderStatus: async () => undefined,
    },
  })
  const admin = adminClient(app, 'admin')
  const page = await admin.get(`/orders/${order.id}`)
  t.equal(page.statusCode, 200)
  t.match(page.body, /name="count" value="1"/)
  t.notMatch(page.body, /href="\/shipments\/admin\/attention"/, 'no attention link without order lines')
  t.equal((await admin.post(`/orders/${order.id}/shipments`, { count: '1' })).statusCode, 303)
  const [shipment] = (await app.shipments.shipments.list({ orderId: order.id })).shipments
  t.same(shipment.items, [])
  t.notMatch((await admin.get(`/shipments/${shipment.id}`)).body, /<h2 id="items"[^>]*>Items<\/h2>/)
  orderGone = true
  const orphan = await admin.get(`/shipments/${shipment.id}`)
  t.equal(orphan.statusCode, 200, 'a shipment whose order the store no longer finds still opens')
  t.notMatch(orphan.body, /<h2 id="items"[^>]*>Items<\/h2>/)
  const attention = await admin.get('/attention')
  t.equal(attention.statusCode, 200)
  t.match(attention.body, /The order store gives no order lines, so no order is listed here\./)
})

t.test('a failing attention count costs the navigation its badge, never the page', async (t) => {
  const logLines: string[] = []
  const app = await buildTestApp(t, { admin: {} }, undefined, logLines)
  const service = app.shipments.shipments
  service.attention = async () => {
    throw new Error('the order store is unreachable')
  }
  const page = await adminClient(app, 'admin').get('/shipments')
  t.equal(page.statusCode, 200)
  t.match(page.body, /<a href="\/shipments\/admin\/attention">Attention<\/a>/, 'the link without a count')
  t.ok(logLines.some((line) => line.includes('The attention count for the admin navigation failed') && line.includes('the order store is unreachable')))
})
