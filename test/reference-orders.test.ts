// The reference store's typed service: statuses and orders created and changed without raw inserts.
import t from 'tap'
import { eq } from 'drizzle-orm'
import { buildTestApp, orderRow, postUpdate } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { buildExchangeApp, exportedOrders, exportRequest } from './fixtures/exchange.js'

t.test('statuses, then an order with addresses and items: shipped to the end and exported', async (t) => {
  const app = await buildExchangeApp(t)
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'processing', name: 'Processing', isDefault: true })
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  await orders.saveStatus({ handle: 'shipped', name: 'Sent' })
  t.same(await orders.listStatuses(), [
    { handle: 'processing', name: 'Processing', isDefault: true },
    { handle: 'shipped', name: 'Sent', isDefault: false },
  ], 'saving a handle again renames it')

  const orderId = await orders.createOrder({
    reference: 'REF-1001',
    isCompleted: true,
    email: 'jane@example.com',
    totalPrice: '59.90',
    totalShipping: 4.9,
    shippingAddress: { name: 'Jane Doe', address1: 'Main St 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
    items: [{ name: 'Mug', sku: 'MUG-1', quantity: 2, price: '27.50', weight: 350, weightUnit: 'g', options: { colour: 'blue' } }],
  })
  t.match(await orderRow(app, orderId), { reference: 'REF-1001', number: 'REF-1001', statusHandle: 'processing', isCompleted: true, totalPrice: '59.90', totalShipping: '4.9' })
  const { db, schema } = tables(app)
  t.match(await db.select().from(schema.orderLineItems).where(eq(schema.orderLineItems.orderId, orderId)), [{ name: 'Mug', quantity: 2, price: '27.50', options: { colour: 'blue' } }])

  const [shipment] = await app.shipments.shipments.create(orderId)
  t.equal(shipment.reference, 'REF-1001-s001')
  t.equal((await postUpdate(app, shipment.id, { status: 'shipped' })).statusCode, 200)
  t.equal((await orderRow(app, orderId)).statusHandle, 'shipped', 'the advance reaches the order')

  t.same(exportedOrders((await exportRequest(app)).body).numbers, ['REF-1001'], 'the completed order is exported')

  await orders.updateOrder(orderId, { isCompleted: false, internalNotes: 'Hold at the depot.' })
  t.match(await orderRow(app, orderId), { isCompleted: false, internalNotes: 'Hold at the depot.', statusHandle: 'shipped' })
  t.same(exportedOrders((await exportRequest(app)).body).numbers, [], 'an order no longer completed leaves the export')
})

t.test('every refusal names the field and stores nothing', async (t) => {
  const app = await buildTestApp(t)
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'processing', name: 'Processing' })
  await orders.createOrder({ reference: 'DUP' })
  const refusals: Array<[Parameters<typeof orders.createOrder>[0], string]> = [
    [{ reference: '' }, 'reference: is required'],
    [{ reference: 'X\u0000' }, 'reference: contains characters that are not allowed'],
    [{ reference: 'DUP' }, 'reference: an order with the reference "DUP" or the number "DUP" exists'],
    [{ reference: 'A', statusHandle: 'nope' }, 'statusHandle: no order status "nope" exists; create it with saveStatus()'],
    [{ reference: 'A', totalPrice: '1,000.00' }, 'totalPrice: must be a decimal such as "12.50"'],
    [{ reference: 'A', shippingAddress: { country: 'Germany' } }, 'shippingAddress.country: must be an ISO 3166-1 alpha-2 code such as "DE"'],
    [{ reference: 'A', items: [{ name: '' }] }, 'items.0.name: is required'],
    [{ reference: 'A', items: [{ name: 'B', quantity: 0 }] }, 'items.0.quantity: must be a positive integer'],
    [{ reference: 'A', items: [{ name: 'B', weightUnit: 'stone' as never }] }, 'items.0.weightUnit: must be g, kg, lb or oz'],
    [{ reference: 'A', customerId: 2 ** 31 }, 'customerId: must be a positive 32-bit integer'],
  ]
  for (const [input, message] of refusals) {
    await t.rejects(orders.createOrder(input), { name: 'ReferenceOrderError', message: new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) }, message)
  }
  const { db, schema } = tables(app)
  t.equal((await db.select().from(schema.orders)).length, 1, 'only the first order exists')
  await t.rejects(orders.updateOrder(424242, { isCompleted: true }), { message: 'orderId: no order 424242 exists' })
  await t.rejects(orders.saveStatus({ handle: 'bad handle', name: 'x' }), { name: 'ReferenceOrderError' })
  t.same(await orders.listStatuses(), [{ handle: 'processing', name: 'Processing', isDefault: false }])
})

t.test('with a host order store there is no reference service', async (t) => {
  const app = await buildTestApp(t, {
    orderStore: { findOrder: async () => null, findOrderByReference: async () => null, setOrderStatus: async () => undefined },
  })
  t.equal(app.shipments.referenceOrders, null)
})
