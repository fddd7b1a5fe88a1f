// A database file made by 0.1.0 (test/fixtures/database-0.1.0.sqlite) keeps every row and keeps working.
import { copyFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import Database from 'better-sqlite3'
import { MIGRATIONS_TABLE } from '../../src/index.js'
import { buildTestApp, historyRows, orderRow, postUpdate, shipmentRow } from '../fixtures/app.js'
import { migrationCount, rawQuery, tables } from '../fixtures/database.js'

const made = fileURLToPath(new URL('../fixtures/database-0.1.0.sqlite', import.meta.url))
const journal = JSON.parse(readFileSync(fileURLToPath(new URL('../../drizzle/sqlite/meta/_journal.json', import.meta.url)), 'utf8')) as {
  entries: Array<{ tag: string; when: number }>
}

t.test('a 0.1.0 database file: no data lost, nothing migrated twice, updates and the export work', async (t) => {
  const file = join(t.testdir(), 'old.sqlite')
  copyFileSync(made, file)
  // A second completed order, written by 0.1.0's tables before the upgrade: it has no shipping address.
  const old = new Database(file)
  old.prepare("INSERT INTO shipments_orders (id, number, reference, is_completed, date_updated) VALUES (2, 'no-address', '1002', 1, 1700000000000)").run()
  old.prepare("INSERT INTO shipments_order_line_items (order_id, name) VALUES (2, 'Mug')").run()
  old.close()
  const app = await buildTestApp(t, { lockDirectory: null, orderExchange: { username: 'u', password: 'p' } }, file)

  t.same(
    (await rawQuery(app, `select created_at from ${MIGRATIONS_TABLE} order by created_at`)).map((row) => Number(row.created_at)),
    journal.entries.map((entry) => entry.when),
    'the 0.1.0 migration is not applied again; each later one once',
  )
  t.same(
    await rawQuery(app, 'select id, export_problem from shipments_orders order by id'),
    [{ id: 1, export_problem: null }, { id: 2, export_problem: 'no shipping address' }],
    'existing orders are judged for the export by the upgrade (backfill)',
  )
  const [first, second] = [await shipmentRow(app, 1), await shipmentRow(app, 2)]
  t.match(first, { reference: '1001-s001', status: 'shipped', carrier: 'UPS', trackingNumber: '1Z999', fields: { packageCount: 2 } })
  t.ok(first.dateShipped instanceof Date)
  t.match(second, { reference: '1001-s002', status: 'shipped' })
  t.ok(second.dateDeleted instanceof Date, 'the soft delete is kept')
  t.same((await historyRows(app, 1)).map((row) => [row.fromStatus, row.toStatus, row.message, row.userId]), [
    [null, 'new', null, '7'],
    ['new', 'shipped', 'first', '7'],
  ])
  t.equal((await orderRow(app, 1)).statusHandle, 'shipped', 'the order advanced by 0.1.0 stays advanced')
  const { db, schema } = tables(app)
  t.same((await db.select().from(schema.orderAdvances)).map((row) => [row.orderId, row.status]), [[1, 'shipped']])
  t.same((await db.select().from(schema.webhookDeliveries)).map((row) => row.deliveryId), ['msg_1'])
  t.same(await app.shipments.integrations.externalReferences(1), [
    { integrationHandle: 'acme', externalId: 'X-1', externalUrl: 'https://acme.example/x1', lastPushAt: null, lastPushError: null, pushAttempts: 0 },
  ])
  t.match(await app.shipments.integrations.get('acme'), { providerId: 'signed-webhook', settings: { secret: '********' }, statusMap: { shipped: 'shipped' }, outboundStatusMap: {}, pushOn: [] })

  const moved = await postUpdate(app, 1, { status: 'in_progress', statusMessage: 'after the upgrade' })
  t.equal(moved.statusCode, 200)
  t.equal(moved.json().shipment.status, 'in_progress')
  t.equal((await historyRows(app, 1)).at(-1)!.message, 'after the upgrade')
  const exported = await app.inject({ url: '/actions/shippingplatformconnect/orders/process?action=export', headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` } })
  t.equal(exported.statusCode, 200)
  t.match(exported.body, /<OrderNumber><!\[CDATA\[1001\]\]><\/OrderNumber>/)
  t.notMatch(exported.body, /1002/, 'the order without a shipping address is left out')
  t.match(exported.body, /<Orders pages="1">/)
})
