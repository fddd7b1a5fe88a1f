// A database file made by 0.1.0 (test/fixtures/database-0.1.0.sqlite) keeps every row and keeps working.
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { MIGRATIONS_TABLE } from '../../src/index.js'
import { buildTestApp, historyRows, orderRow, postUpdate, shipmentRow } from '../fixtures/app.js'
import { migrationCount, rawQuery, tables } from '../fixtures/database.js'

const made = fileURLToPath(new URL('../fixtures/database-0.1.0.sqlite', import.meta.url))

t.test('a 0.1.0 database file: no data lost, nothing migrated twice, updates and the export work', async (t) => {
  const file = join(t.testdir(), 'old.sqlite')
  copyFileSync(made, file)
  const app = await buildTestApp(t, { lockDirectory: null, orderExchange: { username: 'u', password: 'p' } }, file)

  // The 0.1.0 migration is the first of the journal; the later ones are applied once each.
  t.same(await rawQuery(app, `select count(*) as applied from ${MIGRATIONS_TABLE}`), [{ applied: migrationCount('sqlite') }], 'the 0.1.0 migration is not applied again')
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
  t.same(await app.shipments.integrations.externalReferences(1), [{ integrationHandle: 'acme', externalId: 'X-1', externalUrl: 'https://acme.example/x1' }])
  t.match(await app.shipments.integrations.get('acme'), { providerId: 'signed-webhook', settings: { secret: '********' }, statusMap: { shipped: 'shipped' } })

  const moved = await postUpdate(app, 1, { status: 'in_progress', statusMessage: 'after the upgrade' })
  t.equal(moved.statusCode, 200)
  t.equal(moved.json().shipment.status, 'in_progress')
  t.equal((await historyRows(app, 1)).at(-1)!.message, 'after the upgrade')
  const exported = await app.inject({ url: '/actions/shippingplatformconnect/orders/process?action=export', headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` } })
  t.equal(exported.statusCode, 200)
  t.match(exported.body, /<OrderNumber><!\[CDATA\[1001\]\]><\/OrderNumber>/)
})
