// The totals and the attention list are kept, not computed per request: the status counts follow every
// write of a shipment (the package's and anyone's, through triggers), the attention rows follow every
// change of an order's allocation (through the outbox), another instance sees them at once, and a
// database made before they existed gets its attention rows built once.
import t from 'tap'
import Fastify from 'fastify'
import { fastifyShipments } from '../src/index.js'
import { buildTestApp } from './fixtures/app.js'
import { rawQuery, testDatabase } from './fixtures/database.js'

type App = Awaited<ReturnType<typeof buildTestApp>>

/** The counts as a full COUNT(*) finds them: what the kept counts must always equal. */
async function countedByStatus(app: App) {
  const rows = await rawQuery(app, 'SELECT status, count(*) AS n FROM shipments_shipments WHERE date_deleted IS NULL GROUP BY status')
  return Object.fromEntries(rows.map((row) => [row.status as string, Number(row.n)]))
}

/** Shipped per quarter hour, counted and kept: they must always be equal. */
async function shippedCountedAndKept(app: App) {
  const counted = await rawQuery(app, 'SELECT id, date_shipped FROM shipments_shipments WHERE date_deleted IS NULL AND date_shipped IS NOT NULL')
  const byQuarter = new Map<number, number>()
  for (const row of counted) {
    const at = row.date_shipped instanceof Date ? row.date_shipped.getTime() : Number(row.date_shipped)
    const quarter = Math.floor(at / 900_000)
    byQuarter.set(quarter, (byQuarter.get(quarter) ?? 0) + 1)
  }
  const kept = await rawQuery(app, 'SELECT quarter_hour, sum(count) AS n FROM shipments_shipped_counts GROUP BY quarter_hour')
  return {
    counted: Object.fromEntries([...byQuarter].sort(([a], [b]) => a - b)),
    kept: Object.fromEntries(kept.filter((row) => Number(row.n) > 0).map((row) => [Number(row.quarter_hour), Number(row.n)]).sort(([a], [b]) => a - b)),
  }
}

async function keptByStatus(app: App) {
  const rows = await rawQuery(app, 'SELECT status, sum(count) AS n FROM shipments_status_counts GROUP BY status')
  return Object.fromEntries(rows.filter((row) => Number(row.n) > 0).map((row) => [row.status as string, Number(row.n)]))
}

t.test('the kept status counts equal a full count after every kind of write, the list totals read them', async (t) => {
  const app = await buildTestApp(t)
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'C100', isCompleted: true })
  const check = async (what: string) => {
    t.same(await keptByStatus(app), await countedByStatus(app), what)
    const shipped = await shippedCountedAndKept(app)
    t.same(shipped.kept, shipped.counted, `${what}: shipped per quarter hour`)
  }

  const created = await app.shipments.shipments.create(orderId, { count: 20 })
  await check('after creating 20')
  for (const [index, shipment] of created.entries()) {
    if (index % 3 === 0) await app.shipments.shipments.update(shipment.id, { status: 'in_progress' })
    if (index % 5 === 0) await app.shipments.shipments.update(shipment.id, { status: 'cancelled' })
    if (index % 4 === 1) await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  }
  await check('after status changes')
  await app.shipments.shipments.softDelete(created[1].id)
  await app.shipments.shipments.softDelete(created[3].id)
  await check('after soft deletes')
  await app.shipments.shipments.restore(created[1].id)
  await check('after a restore')
  await app.shipments.shipments.update(created[3].id, { status: 'on_hold' })
  await check('a deleted shipment changing status counts nowhere')
  // dateShipped is no update field (ShipmentUpdateInput has none; the type now says so): ignored, the counts stay.
  await app.shipments.shipments.update(created[5].id, { dateShipped: '2026-11-20T08:00:00Z' } as never)
  await check('an unknown field changes nothing')
  // Writes that are not the package's: a host's own SQL, a hard delete.
  await rawQuery(app, "UPDATE shipments_shipments SET status = 'fulfilled' WHERE id = ?", [created[4].id])
  await rawQuery(app, 'DELETE FROM shipments_shipments WHERE id = ?', [created[6].id])
  await rawQuery(app, 'DELETE FROM shipments_shipments WHERE id = ?', [created[3].id])
  await check("after a host's own update and hard deletes")

  const counted = await countedByStatus(app)
  const total = Object.values(counted).reduce((sum, n) => sum + n, 0)
  t.equal((await app.shipments.shipments.list()).total, total, 'the list total')
  t.equal((await app.shipments.shipments.list({ status: 'in_progress' })).total, counted.in_progress ?? 0, 'the list total of a status')
  t.equal((await app.shipments.shipments.list({ status: 'on_hold' })).total, 0, 'a status without shipments')
  t.equal((await app.shipments.shipments.list({ orderId, includeDeleted: true })).total, 18, 'a list with its own filter counts its own rows')

  // Key paging, through the API: the shipments after the last id seen.
  const firstPage = await app.inject({ url: '/shipments/api/shipments?perPage=5', headers: { 'x-test-user': 'viewer' } })
  const ids = firstPage.json<{ shipments: Array<{ id: number }> }>().shipments.map((shipment) => shipment.id)
  const nextPage = await app.inject({ url: `/shipments/api/shipments?perPage=5&afterId=${ids.at(-1)}`, headers: { 'x-test-user': 'viewer' } })
  t.equal(nextPage.statusCode, 200)
  const byOffset = await app.inject({ url: '/shipments/api/shipments?perPage=5&page=2', headers: { 'x-test-user': 'viewer' } })
  t.same(nextPage.json<{ shipments: Array<{ id: number }> }>().shipments.map((shipment) => shipment.id), byOffset.json<{ shipments: Array<{ id: number }> }>().shipments.map((shipment) => shipment.id), 'the page after the last id is the next page')
  t.equal((await app.inject({ url: '/shipments/api/shipments?afterId=-1', headers: { 'x-test-user': 'viewer' } })).statusCode, 400, 'a negative key is refused')
})

t.test("a host's bulk statements keep the totals exact: an import, a mass status change, a soft delete and a delete of thousands of rows in one statement each", async (t) => {
  // Regression (PostgreSQL): the totals were kept row by row, so one statement writing N shipments updated
  // the same total rows N times in its transaction and a million-row import never finished. They are now
  // kept once per statement (migration 0023); SQLite's row triggers were always linear.
  const app = await buildTestApp(t)
  const orderId = await app.shipments.referenceOrders!.createOrder({ reference: 'BULK1', isCompleted: true })
  const sqlite = app.shipments.database.engine === 'sqlite'
  const rows = 6_000
  const series = sqlite
    ? `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows}) SELECT i FROM n`
    : `SELECT i FROM generate_series(1, ${rows}) AS i`
  const shippedAt = sqlite ? `1795000000000 + (i % 40) * 900000` : `timestamptz '2026-11-18 10:00:00Z' + (i % 40) * interval '15 minutes'`
  const check = async (what: string) => {
    t.same(await keptByStatus(app), await countedByStatus(app), what)
    const shipped = await shippedCountedAndKept(app)
    t.same(shipped.kept, shipped.counted, `${what}: shipped per quarter hour`)
  }
  await rawQuery(
    app,
    `INSERT INTO shipments_shipments (reference, order_id, status, date_shipped)
     SELECT 'BULK1-' || i, ${orderId}, CASE i % 4 WHEN 0 THEN 'new' WHEN 1 THEN 'in_progress' ELSE 'shipped' END,
            CASE WHEN i % 4 >= 2 THEN ${shippedAt} END
     FROM (${series}) s`,
  )
  await check('after an import of 6,000 in one statement')
  t.equal((await countedByStatus(app)).shipped, 3_000, 'the import is there')
  await rawQuery(app, `UPDATE shipments_shipments SET status = 'on_hold' WHERE status = 'in_progress'`)
  await rawQuery(app, `UPDATE shipments_shipments SET status = 'fulfilled' WHERE status = 'shipped' AND id % 3 = 0`)
  await check('after mass status changes')
  await rawQuery(app, `UPDATE shipments_shipments SET date_shipped = NULL, status = 'new' WHERE status = 'shipped' AND id % 5 = 0`)
  await check('after a mass un-ship')
  await rawQuery(app, `UPDATE shipments_shipments SET date_deleted = ${sqlite ? '1795000000000' : 'now()'} WHERE id % 7 = 0`)
  await check('after a mass soft delete')
  await rawQuery(app, `UPDATE shipments_shipments SET reference = reference || '-x' WHERE id % 2 = 0`)
  await check('after an update of other columns only')
  await rawQuery(app, `DELETE FROM shipments_shipments WHERE id % 3 = 1`)
  await check('after a mass delete')
  await rawQuery(app, `DELETE FROM shipments_shipments`)
  t.same(await keptByStatus(app), {}, 'nothing left, nothing kept')
})

t.test('the attention rows follow every change of an order allocation, and another instance sees them at once', async (t) => {
  const database = await testDatabase(t)
  const app = await buildTestApp(t, {}, database)
  const other = Fastify({ logger: false })
  await other.register(fastifyShipments, { database })
  t.teardown(() => other.close())
  await other.ready()

  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'processing', name: 'Processing', isDefault: true })
  const orderId = await orders.createOrder({ reference: 'A100', isCompleted: true, items: [{ name: 'Mug', sku: 'MUG', quantity: 2 }, { name: 'Tea', sku: 'TEA', quantity: 3 }] })
  const open = await orders.createOrder({ reference: 'A200', isCompleted: false, items: [{ name: 'Mug', sku: 'MUG', quantity: 1 }] })
  const [mug, tea] = (await app.shipments.orders.orderLines!(orderId))!
  const listed = async (instance: App = app) => (await instance.shipments.shipments.attention()).orders.map((order) => [order.reference, order.linesMissing, order.unitsMissing])

  t.same(await listed(), [['A100', 2, 5]], 'a completed order with nothing allocated; not the open one')
  const [first] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: mug.id, quantity: 2 }] })
  t.same(await listed(), [['A100', 1, 3]], 'a shipment holds the mugs')
  t.same(await listed(other), [['A100', 1, 3]], 'the other instance sees it at once')

  const [second] = await other.shipments.shipments.create(orderId, { items: [{ lineItemId: tea.id, quantity: 3 }] })
  t.same(await listed(), [], 'covered, through the other instance')
  await app.shipments.shipments.update(second.id, { status: 'cancelled' })
  t.same(await listed(), [['A100', 1, 3]], 'a cancelled shipment holds nothing')
  await app.shipments.shipments.update(second.id, { status: 'new' })
  t.same(await listed(), [], 'un-cancelled')
  await app.shipments.shipments.update(first.id, { enabled: false })
  t.same(await listed(), [['A100', 1, 2]], 'a disabled shipment holds nothing')
  await app.shipments.shipments.update(first.id, { enabled: true })
  await app.shipments.shipments.softDelete(second.id)
  t.same(await listed(), [['A100', 1, 3]], 'a deleted one neither')
  await app.shipments.shipments.restore(second.id)
  await app.shipments.shipments.update(first.id, { items: [{ lineItemId: mug.id, quantity: 1 }] })
  t.same(await listed(), [['A100', 1, 1]], 'its items changed')

  await orders.updateOrder(open, { isCompleted: true })
  t.same((await listed()).map(([reference]) => reference), ['A100', 'A200'], 'an order completed later is listed, oldest first')
  t.equal((await app.shipments.shipments.attention()).total, 2)
  t.same((await app.shipments.shipments.attention({ afterOrderId: orderId, perPage: 10 })).orders.map((order) => order.reference), ['A200'], 'key paging')
  t.equal((await app.shipments.shipments.orderCompleted(open)).length, 1, 'completed: its shipment created')
  t.same((await listed()).map(([reference]) => reference), ['A100'], 'and it left the list')
})

t.test('a database without attention rows (made before them) gets them built once at start', async (t) => {
  const database = await testDatabase(t)
  const first = await buildTestApp(t, {}, database)
  const orders = first.shipments.referenceOrders!
  for (let index = 0; index < 30; index++) {
    const orderId = await orders.createOrder({ reference: `B${index}`, isCompleted: true, items: [{ name: 'Mug', sku: 'MUG', quantity: 1 }] })
    if (index % 2 === 0) await first.shipments.shipments.create(orderId, { rule: 'remaining' })
  }
  t.equal((await first.shipments.shipments.attention()).total, 15)
  await first.close()

  // As 0.2.0 left it: no rows, nothing recorded as built.
  const cleared = await buildTestApp(t, {}, database)
  await rawQuery(cleared, 'DELETE FROM shipments_attention_orders')
  await rawQuery(cleared, 'DELETE FROM shipments_package_state')
  await cleared.close()

  const started = Fastify({ logger: false })
  await started.register(fastifyShipments, { database })
  t.teardown(() => started.close())
  await started.ready()
  for (let tries = 0; tries < 500 && (await rawQuery(started as App, "SELECT value FROM shipments_package_state WHERE key = 'attentionRowsBuilt'")).length === 0; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const page = await started.shipments.shipments.attention({ perPage: 100 })
  t.equal(page.total, 15, 'rebuilt at start')
  t.same(page.orders.map((order) => order.reference), Array.from({ length: 15 }, (_, index) => `B${index * 2 + 1}`))
})
