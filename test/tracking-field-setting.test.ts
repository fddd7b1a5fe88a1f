// The order exchange's tracking field must exist among the reference store's orderFields, or every ship
// notification drops its tracking number ("tracking entry skipped"). Regression: the README's complete
// host configured `orderExchange` without the field and said nothing until the first notification;
// now start-up warns naming the setting, and the admin ShipStation page says so.
import t from 'tap'
import { adminClient } from './fixtures/admin.js'
import { basicAuth, buildExchangeApp, EXCHANGE_URL } from './fixtures/exchange.js'
import { orderRow } from './fixtures/app.js'

type LogEntry = { level: number; msg: string }
const warnings = (logLines: string[]) =>
  logLines.map((line) => JSON.parse(line) as LogEntry).filter((entry) => entry.level === 40 && entry.msg.includes('trackingField')).map((entry) => entry.msg)

t.test('no matrix field for the tracking entry: a warning at start-up naming the setting, and the admin page says so', async (t) => {
  const logLines: string[] = []
  const app = await buildExchangeApp(t, {}, { orderFields: [], admin: {} }, logLines)
  t.same(warnings(logLines), [
    'Order exchange: orderExchange.trackingField.matrix names "shippingInfo", which is not a matrix field of orderFields; ship notifications cannot store their tracking numbers there',
  ])
  const admin = adminClient(app, 'admin')
  const page = await admin.get('/shipstation')
  t.equal(page.statusCode, 200)
  t.match(page.body, /class="notice notice-error"[^>]*>Tracking numbers from ShipStation are not stored: orderExchange\.trackingField\.matrix names &quot;shippingInfo&quot;, which is not a matrix field of orderFields\./)

  // What the warning is about: a notification moves the order but keeps no tracking number.
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'T-1', isCompleted: true })
  const notified = await app.inject({ url: `${EXCHANGE_URL}?action=shipnotify&order_number=T-1&carrier=UPS&tracking_number=1Z999`, method: 'POST', headers: basicAuth() })
  t.equal(notified.statusCode, 200)
  t.match(await orderRow(app, orderId), { statusHandle: 'shipped', fields: {} })
})

t.test('a matrix field without some of the sub-fields: one warning per setting', async (t) => {
  const logLines: string[] = []
  const orderFields = [{ handle: 'shipping', type: 'matrix' as const, subFields: ['trackingNumber'] }]
  const app = await buildExchangeApp(t, { trackingField: { matrix: 'shipping', carrier: 'carrierName' } }, { orderFields, admin: {} }, logLines)
  t.same(warnings(logLines), [
    'Order exchange: orderExchange.trackingField.carrier names "carrierName", which is not a sub-field of the matrix field "shipping" (orderFields); ship notifications cannot store their tracking numbers there',
    'Order exchange: orderExchange.trackingField.service names "service", which is not a sub-field of the matrix field "shipping" (orderFields); ship notifications cannot store their tracking numbers there',
  ])
  const page = await adminClient(app, 'admin').get('/shipstation')
  t.match(page.body, /Tracking numbers from ShipStation are not stored: orderExchange\.trackingField\.carrier names &quot;carrierName&quot;[^<]*; orderExchange\.trackingField\.service names &quot;service&quot;/)
})

t.test('the field declared: no warning, no notice, and a notification stores its tracking entry', async (t) => {
  const logLines: string[] = []
  const app = await buildExchangeApp(t, {}, { admin: {} }, logLines)
  t.same(warnings(logLines), [])
  const page = await adminClient(app, 'admin').get('/shipstation')
  t.equal(page.statusCode, 200)
  t.notMatch(page.body, /are not stored/)
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'T-2', isCompleted: true })
  await app.inject({ url: `${EXCHANGE_URL}?action=shipnotify&order_number=T-2&carrier=UPS&service=Ground&tracking_number=1Z999`, method: 'POST', headers: basicAuth() })
  t.match(await orderRow(app, orderId), { fields: { shippingInfo: [{ carrier: 'UPS', service: 'Ground', trackingNumber: '1Z999' }] } })
})

t.test('a host order store: nothing to decide, nothing said', async (t) => {
  const logLines: string[] = []
  const orderStore = {
    findOrder: async () => null,
    findOrderByReference: async () => null,
    setOrderStatus: async () => undefined,
    exportOrders: async () => ({ orders: [], total: 0 }),
    recordShipNotification: async () => ({ changed: false, trackingSkipped: null }),
  }
  const app = await buildExchangeApp(t, {}, { orderFields: [], orderStore, admin: {} }, logLines)
  t.same(warnings(logLines), [])
  t.notMatch((await adminClient(app, 'admin').get('/shipstation')).body, /are not stored/)
})
