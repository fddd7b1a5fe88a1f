import t from 'tap'
import { count, eq } from 'drizzle-orm'
import { buildDemoHost } from '../examples/demo-host.js'
import { tables, testDatabase } from './fixtures/database.js'

async function login(app: Awaited<ReturnType<typeof buildDemoHost>>, username: string, password = username) {
  const response = await app.inject({ method: 'POST', url: '/login', payload: { username, password } })
  const cookie = response.cookies.find((candidate) => candidate.name === 'demo_session')
  return { response, cookie: cookie ? `${cookie.name}=${cookie.value}` : '' }
}

t.test('the demo host seeds once and keeps its data across restarts', async (t) => {
  const database = await testDatabase(t, 'demo')
  let app = await buildDemoHost({ database, logger: false })
  const { db, schema } = tables(app)
  const orders = await db.select().from(schema.orders)
  t.equal(orders.length, 5)
  t.equal(orders.filter((order) => order.isCompleted).length, 4)
  const shipments = await db.select().from(schema.shipments)
  for (const order of orders.filter((candidate) => candidate.isCompleted)) {
    const own = shipments.filter((shipment) => shipment.orderId === order.id)
    t.ok(own.length >= 1 && own.every((shipment) => shipment.status === 'new'), `order ${order.reference} has new shipments`)
  }
  t.ok(shipments.some((shipment) => shipments.filter((other) => other.orderId === shipment.orderId).length === 2), 'one order has two shipments')
  t.ok(orders.some((order) => order.couponCode && order.totalDiscount !== '0'), 'one order has a discount')
  const addresses = await db.select().from(schema.orderAddresses)
  t.ok(addresses.some((address) => /[^\x00-\x7f]/.test(address.fullName ?? '') && /&/.test(address.company ?? '') && /<.*>/.test(address.company ?? '') && /"/.test(address.company ?? '')))

  await app.close()
  app = await buildDemoHost({ database, logger: false })
  t.teardown(() => app.close())
  t.equal((await tables(app).db.select({ total: count() }).from(tables(app).schema.orders))[0].total, 5, 'not seeded twice')
})

t.test('demo login: a signed session cookie, three users with their permissions', async (t) => {
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false })
  t.teardown(() => app.close())
  const wrong = await login(app, 'admin', 'nope')
  t.equal(wrong.response.statusCode, 401)
  t.equal(wrong.cookie, '')

  const editor = await login(app, 'editor')
  t.equal(editor.response.statusCode, 200)
  const headers = { cookie: editor.cookie, 'content-type': 'application/json' }
  let response = await app.inject({ method: 'POST', url: '/shipments/api/shipments/1', headers, payload: JSON.stringify({ carrier: 'UPS' }) })
  t.equal(response.statusCode, 200)
  response = await app.inject({ method: 'POST', url: '/shipments/api/shipments/1', headers, payload: JSON.stringify({ status: 'shipped' }) })
  t.equal(response.statusCode, 403, 'the editor cannot transition')

  const forged = await app.inject({ method: 'POST', url: '/shipments/api/shipments/1', headers: { cookie: 'demo_session=admin', 'content-type': 'application/json' }, payload: '{"status":"shipped"}' })
  t.equal(forged.statusCode, 401, 'an unsigned cookie is nobody')

  const admin = await login(app, 'admin')
  response = await app.inject({ method: 'POST', url: '/shipments/api/shipments/1', headers: { cookie: admin.cookie, 'content-type': 'application/json' }, payload: '{"status":"shipped"}' })
  t.equal(response.statusCode, 200)
  const order = (await tables(app).db.select().from(tables(app).schema.orders).where(eq(tables(app).schema.orders.id, response.json().shipment.orderId)))[0]
  t.equal(order.statusHandle, 'shipped', 'the single-shipment order advanced')

  const viewer = await login(app, 'viewer')
  response = await app.inject({ url: '/shipments/api/shipments', headers: { cookie: viewer.cookie } })
  t.equal(response.statusCode, 200)
  response = await app.inject({ method: 'POST', url: '/shipments/api/shipments/2', headers: { cookie: viewer.cookie, 'content-type': 'application/json' }, payload: '{}' })
  t.equal(response.statusCode, 403)
})

t.test('the demo integrations answer signed webhooks and the custom provider', async (t) => {
  const { signWebhook } = await import('../src/index.js')
  const { DEMO_WEBHOOK_SECRET, DEMO_ACME_TOKEN } = await import('../examples/demo-integrations.js')
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false })
  t.teardown(() => app.close())
  const body = JSON.stringify({ orderNumber: '1003', status: 'in_transit', occurredAt: new Date().toISOString(), trackingNumber: 'JD0146' })
  const timestamp = Math.floor(Date.now() / 1000)
  let response = await app.inject({
    method: 'POST',
    url: '/actions/shipments/gateway/handle?integration=demo-webhooks',
    headers: { 'webhook-id': 'msg_demo', 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(DEMO_WEBHOOK_SECRET, 'msg_demo', timestamp, body) },
    payload: body,
  })
  t.equal(response.statusCode, 200)
  t.match(response.json(), { applied: true, shipment: { reference: '1003-s001', status: 'shipped' } })

  response = await app.inject({
    method: 'POST',
    url: '/actions/shipments/gateway/handle?integration=acme-3pl',
    headers: { authorization: `Bearer ${DEMO_ACME_TOKEN}`, 'content-type': 'application/json' },
    payload: { shipmentReference: '1004-s001', state: 'PICKING' },
  })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { accepted: true, applied: true, status: 'in_progress' })
  response = await app.inject({
    method: 'POST',
    url: '/actions/shipments/gateway/handle?integration=acme-3pl',
    headers: { authorization: 'Bearer wrong-token', 'content-type': 'application/json' },
    payload: { shipmentReference: '1004-s001', state: 'DISPATCHED' },
  })
  t.equal(response.statusCode, 400)
  t.equal(response.json().message, 'Invalid bearer token.')
  const shipment = (await tables(app).db.select().from(tables(app).schema.shipments).where(eq(tables(app).schema.shipments.reference, '1004-s001')))[0]
  t.equal(shipment.status, 'in_progress')
})

t.test('the demo host answers ShipStation: export of the four completed orders, a ship notification', async (t) => {
  const { DEMO_SHIPSTATION_PASSWORD, DEMO_SHIPSTATION_USERNAME } = await import('../examples/demo-host.js')
  const { exportedOrders, textOf } = await import('./fixtures/exchange.js')
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false })
  t.teardown(() => app.close())
  const authorization = `Basic ${Buffer.from(`${DEMO_SHIPSTATION_USERNAME}:${DEMO_SHIPSTATION_PASSWORD}`).toString('base64')}`
  const url = '/actions/shippingplatformconnect/orders/process'

  const exported = await app.inject({ url: `${url}?action=export&page=1`, headers: { authorization } })
  t.equal(exported.statusCode, 200)
  const { numbers, orders } = exportedOrders(exported.body)
  t.same([...numbers].sort(), ['1001', '1002', '1003', '1004'])
  const tricky = orders.find((order) => textOf(order, 'OrderNumber') === '1004')!
  t.equal(textOf(tricky, 'CustomerNotes'), 'Fragile: <glass> & "porcelain" ]]> handle with care — ありがとう 🙏')
  const retail = exportedOrders((await app.inject({ url: `${url}?action=export&store=wholesale`, headers: { authorization } })).body)
  t.same(retail.numbers, ['1002'])

  const notified = await app.inject({
    method: 'POST',
    url: `${url}?action=shipnotify&order_number=1003&carrier=DHL&service=Paket&tracking_number=JD014600003828`,
    headers: { authorization, 'content-type': 'application/xml; charset=utf-8' },
    payload: '<?xml version="1.0" encoding="utf-8"?><ShipNotice><OrderNumber>1003</OrderNumber><Carrier>DHL</Carrier></ShipNotice>',
  })
  t.equal(notified.statusCode, 200)
  const order = (await tables(app).db.select().from(tables(app).schema.orders).where(eq(tables(app).schema.orders.reference, '1003')))[0]
  t.equal(order.statusHandle, 'shipped')
  t.same(order.fields, { store: 'retail', shippingInfo: [{ carrier: 'DHL', service: 'Paket', trackingNumber: 'JD014600003828' }] })
  const shipments = (await tables(app).db.select().from(tables(app).schema.shipments).where(eq(tables(app).schema.shipments.orderId, order.id)))
  t.ok(shipments.every((shipment) => shipment.status === 'shipped' && shipment.trackingNumber === 'JD014600003828'), 'the demo moves open shipments too')
})
