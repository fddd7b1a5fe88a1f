// Whether an order can be exported (spec 4.3) is judged by the database: shipments_orders.export_problem,
// kept by triggers whenever the order, its addresses or its line items are written, by anyone (here
// another connection, as a host's own code or another process would write). After each write the
// export answers with exactly the orders whose stored problem is NULL, and the stored problem is the
// rule's first reason.
import t from 'tap'
import { orderRow, insertOrder } from './fixtures/app.js'
import { buildExchangeApp, exportedOrders, exportRequest, insertExportOrder, VALID_ADDRESS } from './fixtures/exchange.js'
import { otherConnection, rawQuery } from './fixtures/database.js'

const ADDRESS_COLUMNS = 'order_id, kind, full_name, address1, city, postal_code, country_code'
const address = (orderId: number, kind: 'shipping' | 'billing', fullName = VALID_ADDRESS.fullName) =>
  [orderId, kind, fullName, VALID_ADDRESS.address1, VALID_ADDRESS.city, VALID_ADDRESS.postalCode, VALID_ADDRESS.countryCode]

t.test('the stored export problem follows every write of an order, its addresses and its items', async (t) => {
  const app = await buildExchangeApp(t)
  const a = await insertExportOrder(app)
  const b = await insertOrder(app)
  const references = { [a]: (await orderRow(app, a)).reference, [b]: (await orderRow(app, b)).reference }
  const other = await otherConnection(t, app)

  const check = async (step: string, expected: Record<number, string | null>) => {
    const stored = await rawQuery(app, 'SELECT id, export_problem FROM shipments_orders WHERE id IN (?, ?) ORDER BY id', [a, b])
    t.same(stored, [a, b].map((id) => ({ id, export_problem: expected[id] })), `${step}: the stored problems`)
    const response = await exportRequest(app)
    t.equal(response.statusCode, 200, `${step}: the export answers`)
    const exportable = [a, b].filter((id) => expected[id] === null)
    t.same(exportedOrders(response.body).numbers, exportable.map((id) => references[id]), `${step}: the export holds exactly the orders without a problem`)
  }

  await check('a valid order and one without anything', { [a]: null, [b]: 'no shipping address' })
  await other(`INSERT INTO shipments_order_addresses (${ADDRESS_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`, address(b, 'shipping'))
  await check('a shipping address added', { [a]: null, [b]: 'no line items' })
  await other("INSERT INTO shipments_order_line_items (order_id, name) VALUES (?, '  ')", [b])
  await check('an item without a name added', { [a]: null, [b]: 'a line item has no name' })
  await other("UPDATE shipments_order_line_items SET name = 'Mug' WHERE order_id = ?", [b])
  await check('the item named', { [a]: null, [b]: null })
  await other(`INSERT INTO shipments_order_addresses (${ADDRESS_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`, address(a, 'billing', ' '))
  await check('a billing address without a name added', { [a]: 'the billing address has no name', [b]: null })
  await other("UPDATE shipments_order_addresses SET full_name = 'Bill Payer', country_code = 'USA' WHERE order_id = ? AND kind = 'billing'", [a])
  await check('the billing address named, with a 3-letter country', { [a]: 'the billing country is not a 2-letter code', [b]: null })
  await other("DELETE FROM shipments_order_addresses WHERE order_id = ? AND kind = 'billing'", [a])
  await check('the billing address removed', { [a]: null, [b]: null })
  await other("UPDATE shipments_order_addresses SET city = '  ' WHERE order_id = ? AND kind = 'shipping'", [a])
  await check("the shipping address's city blanked", { [a]: 'the shipping address has no city', [b]: null })
  await other("DELETE FROM shipments_order_addresses WHERE order_id = ? AND kind = 'shipping'", [a])
  await check('the shipping address removed', { [a]: 'no shipping address', [b]: null })
  await other("UPDATE shipments_order_addresses SET order_id = ? WHERE order_id = ? AND kind = 'shipping'", [a, b])
  await check("one order's shipping address moved to the other", { [a]: null, [b]: 'no shipping address' })
  await other('DELETE FROM shipments_order_line_items WHERE order_id = ?', [a])
  await check('the items removed', { [a]: 'no line items', [b]: 'no shipping address' })
  await other("UPDATE shipments_orders SET export_problem = NULL, internal_notes = 'edited' WHERE id = ?", [a])
  await check('the column itself written', { [a]: 'no line items', [b]: 'no shipping address' })
  await other('INSERT INTO shipments_order_line_items (order_id, name) VALUES (?, ?)', [a, 'Cup'])
  await check('an item added again', { [a]: null, [b]: 'no shipping address' })

  // Removing an order removes its addresses and items (cascade): the triggers on them find no order to judge.
  await other('DELETE FROM shipments_orders WHERE id = ?', [a])
  t.same(await rawQuery(app, 'SELECT id, export_problem FROM shipments_orders WHERE id IN (?, ?) ORDER BY id', [a, b]), [{ id: b, export_problem: 'no shipping address' }])
  const response = await exportRequest(app)
  t.equal(response.statusCode, 200)
  t.same(exportedOrders(response.body).numbers, [], 'the export is empty')
})
