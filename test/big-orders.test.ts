// Orders of thousands of lines: the reference store writes them (in pieces, never past a driver's limit
// on parameters), `orderCompleted()` and the `remaining` rule split them into shipments of at most
// MAX_ITEMS_PER_SHIPMENT lines, the allocation stays exact, and an order over MAX_ORDER_LINES is refused
// with a ReferenceOrderError that changes nothing.
import t from 'tap'
import { MAX_ITEMS_PER_SHIPMENT, MAX_ORDER_LINES } from '../src/index.js'
import { buildTestApp } from './fixtures/app.js'
import { rawQuery } from './fixtures/database.js'

const lines = (count: number) => Array.from({ length: count }, (_, index) => ({ name: `Part ${index + 1}`, sku: `P${index + 1}`, quantity: 1 + (index % 3) }))

t.test('an order of 10,000 lines is written, completed into shipments of at most 500 lines, and fully allocated', async (t) => {
  t.equal(MAX_ORDER_LINES, 10_000)
  t.equal(MAX_ITEMS_PER_SHIPMENT, 500)
  const app = await buildTestApp(t)
  const orders = app.shipments.referenceOrders!
  const orderId = await orders.createOrder({ reference: 'BIG1', isCompleted: true, items: lines(10_000) })
  const stored = (await app.shipments.orders.orderLines!(orderId))!
  t.equal(stored.length, 10_000, 'every line stored')
  t.same(stored.slice(-1).map((line) => [line.sku, line.quantity]), [['P10000', 1 + (9_999 % 3)]], 'in order, with its quantity')

  const shipments = await app.shipments.shipments.orderCompleted(orderId)
  t.equal(shipments.length, 20, '10,000 lines in shipments of 500')
  t.ok(shipments.every((shipment) => shipment.items.length === 500))
  t.same(shipments[0].items[0], { ...shipments[0].items[0], lineItemId: stored[0].id, quantity: stored[0].quantity }, 'in the order of the lines')
  const allocation = await app.shipments.shipments.allocation(orderId)
  t.ok(allocation.lines!.every((line) => line.unallocated === 0), 'every unit allocated, once')
  t.same(await app.shipments.shipments.orderCompleted(orderId), [], 'completing again creates nothing more')
  const [{ count }] = await rawQuery(app, 'SELECT count(*) AS count FROM shipments_shipments WHERE order_id = ?', [orderId])
  t.equal(Number(count), 20)
})

t.test('the remaining rule splits what is left of a big order the same way', async (t) => {
  const app = await buildTestApp(t)
  const orderId = await app.shipments.referenceOrders!.createOrder({ reference: 'BIG2', isCompleted: true, items: lines(1_201) })
  const stored = (await app.shipments.orders.orderLines!(orderId))!
  await app.shipments.shipments.create(orderId, { items: [{ lineItemId: stored[0].id, quantity: stored[0].quantity }] })
  const created = await app.shipments.shipments.create(orderId, { rule: 'remaining' })
  t.same(created.map((shipment) => shipment.items.length), [500, 500, 200], '1,200 lines left: 500, 500 and 200')
  t.ok((await app.shipments.shipments.allocation(orderId)).lines!.every((line) => line.unallocated === 0))
})

t.test('an order over MAX_ORDER_LINES is refused, naming the field, and nothing is stored', async (t) => {
  const app = await buildTestApp(t)
  await t.rejects(app.shipments.referenceOrders!.createOrder({ reference: 'BIG3', isCompleted: true, items: lines(10_001) }), {
    name: 'ReferenceOrderError',
    field: 'items',
    message: 'items: an order may hold at most 10000 lines',
  })
  t.same(await rawQuery(app, "SELECT id FROM shipments_orders WHERE reference = 'BIG3'"), [], 'no order')
})
