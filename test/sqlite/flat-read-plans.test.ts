// SQLite only: what a store admin opens reads no more rows as the store grows. The overview's totals
// and its shipped-per-day series come from counts kept by triggers, its late shipments and failing
// pushes from partial indexes of their own rows; the shipments list's total is the kept count; the attention list reads its
// kept rows and never pages through the completed orders. Checked on the statements the pages send.
import t from 'tap'
import { adminClient, buildAdminApp } from '../fixtures/admin.js'
import { recordedSqlite } from '../fixtures/recorded-sqlite.js'

t.test('the overview, the shipments list and the attention list read kept totals and their own index ranges', async (t) => {
  const { database, statements, plansOf } = recordedSqlite(t, 'plans.sqlite')
  const app = await buildAdminApp(t, { database })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'P100', isCompleted: true, items: [{ name: 'Mug', sku: 'MUG', quantity: 2 }] })
  const [shipment] = await app.shipments.shipments.create(orderId, { count: 1 })
  await app.shipments.shipments.update(shipment.id, { status: 'in_progress', dateScheduledShip: '2020-01-01' })
  const admin = adminClient(app, 'admin')

  const fullScans = (pattern: RegExp, table: string) =>
    plansOf(pattern).filter(({ plan }) => plan.some((detail) => new RegExp(`^SCAN ${table}\\b(?! USING (COVERING )?INDEX)`).test(detail)))

  statements.length = 0
  t.equal((await admin.get('/overview')).statusCode, 200, 'the overview')
  t.same(fullScans(/shipments_shipments/, 'shipments_shipments'), [], 'no statement of the overview scans the shipments table')
  t.notOk(statements.some((text) => /count\(\*\)[^]*from "?shipments_shipments"?/i.test(text) && !/date_scheduled_ship|last_push_error/i.test(text)), 'and none counts shipments but the late and the failing pushes')
  const late = plansOf(/date_scheduled_ship/).find(({ text }) => /count/i.test(text))
  t.ok(late?.plan.some((detail) => /USING (COVERING )?INDEX shipments_shipments_late_idx/.test(detail)), `late shipments: ${late?.plan.join('; ')}`)
  t.ok(statements.some((text) => /shipments_status_counts/.test(text)), 'the totals by status come from the kept counts')
  t.ok(statements.some((text) => /shipments_shipped_counts/.test(text)), 'shipped per day too')
  t.notOk(statements.some((text) => /from "?shipments_shipments"?[^]*date_shipped/i.test(text)), 'no shipment is read for the series')

  statements.length = 0
  t.equal((await admin.get('/shipments')).statusCode, 200, 'the shipments list')
  t.equal((await admin.get('/shipments?status=in_progress')).statusCode, 200, 'filtered by status')
  t.notOk(statements.some((text) => /count\(\*\)[^]*from "?shipments_shipments"?/i.test(text)), 'the lists count no shipment: their totals are kept')

  statements.length = 0
  const page = await admin.get('/attention')
  t.equal(page.statusCode, 200, 'the attention list')
  t.match(page.body, /P100/, 'the completed order with a line held by no shipment is listed')
  t.notOk(statements.some((text) => /from "?shipments_orders"?/i.test(text) && /is_completed/i.test(text)), 'read from the kept rows, not by paging through completed orders')

  // A shipment's carrier checkpoints: its own rows, by the index, in the carrier's order (no sort step).
  await app.shipments.shipments.recordCheckpoints(shipment.id, { trackingNumber: '1Z999AA10123456784', source: 'aftership', checkpoints: [{ occurredAt: new Date('2026-11-21T21:05:00Z'), occurredAtText: '2026-11-21T22:05:00+01:00', message: 'Departed' }] })
  statements.length = 0
  const shipmentPage = await admin.get(`/shipments/${shipment.id}`)
  t.equal(shipmentPage.statusCode, 200)
  t.match(shipmentPage.body, 'Departed')
  const [checkpointRead] = plansOf(/from "?shipments_checkpoints"?/i)
  t.ok(checkpointRead?.plan.some((detail) => /USING INDEX shipments_checkpoints_shipment_idx/.test(detail)), `checkpoints: ${checkpointRead?.plan.join('; ')}`)
  t.notOk(checkpointRead?.plan.some((detail) => /TEMP B-TREE/.test(detail)), 'read in the index order, never sorted')
})

t.test('the returns list and the navigation count of returns waiting read their own index ranges', async (t) => {
  const { database, statements, plansOf } = recordedSqlite(t, 'returns-plans.sqlite')
  const app = await buildAdminApp(t, { database })
  const admin = adminClient(app, 'admin')

  statements.length = 0
  t.equal((await admin.get('/returns?state=requested')).statusCode, 200)
  const plans = plansOf(/from "shipments_returns"/)
  t.ok(plans.length >= 2, 'the navigation count and the list both read returns')
  for (const { plan } of plans) t.ok(plan.some((detail) => /USING INDEX shipments_returns_state_idx/.test(detail)), `by the state index: ${plan.join('; ')}`)
  t.notOk(statements.some((text) => /count\(\*\)[^]*from "?shipments_returns"?/i.test(text)), 'no return is counted')
})

t.test("a return request reads its order's shipments by the order's index, not every shipped shipment", async (t) => {
  const { database, statements, plansOf } = recordedSqlite(t, 'ledger-plans.sqlite')
  const app = await buildAdminApp(t, { database })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'R100', isCompleted: true, items: [{ name: 'Mug', sku: 'MUG', quantity: 2 }] })
  const [line] = (await app.shipments.orders.orderLines!(orderId))!
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: line!.id, quantity: 2 }] })
  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })

  statements.length = 0
  const requested = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: line!.id, quantity: 1, reason: 'damaged' }] })
  t.match(requested, { orderId, state: 'requested' })
  const shippedReads = plansOf(/from "?shipments_shipments"?[^]*'shipped'/i)
  t.ok(shippedReads.length >= 1, 'the request read what its order shipped')
  for (const { text, plan } of shippedReads) t.ok(plan.some((detail) => /USING INDEX shipments_shipments_order_idx/.test(detail)), `${text}: ${plan.join('; ')}`)

  statements.length = 0
  t.equal((await app.shipments.shipments.list({ orderId, status: 'shipped' })).total, 1, "an order's shipments of one status")
  const [listRead] = plansOf(/from "?shipments_shipments"?/i)
  t.ok(listRead?.plan.some((detail) => /USING INDEX shipments_shipments_order_idx/.test(detail)), `by the order's index: ${listRead?.plan.join('; ')}`)
})
