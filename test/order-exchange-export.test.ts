// ShipStation export (spec 2.4, 4.3): document shape, paging, the date window, stores, validation, text.
import t from 'tap'
import { eq } from 'drizzle-orm'
import { pageSizeSetting } from '../src/order-exchange/settings.js'
import { pageParameter } from '../src/order-exchange/service.js'
import { limitCharacters, removeIllegalXmlCharacters } from '../src/order-exchange/export-document.js'
import {
  buildExchangeApp,
  child,
  childNames,
  exportedOrders,
  exportRequest,
  insertExportOrder,
  parseXml,
  textOf,
  VALID_ADDRESS,
} from './fixtures/exchange.js'
import { otherConnection, storable, tables, TEST_ENGINE } from './fixtures/database.js'

const at = (iso: string) => new Date(iso)

t.test('the document: spec 2.4 element order, values, units, discount, absolute image URLs', async (t) => {
  const app = await buildExchangeApp(t)
  await insertExportOrder(
    app,
    {
      reference: 'A-100',
      statusHandle: 'processing',
      totalPrice: '1234.50',
      totalTax: '12.5',
      totalShipping: '4.95',
      totalDiscount: '-10.00',
      couponCode: 'WELCOME10',
      paymentMethod: 'Credit card',
      shippingMethod: 'Ground',
      customerId: 77,
      internalNotes: 'internal',
      customerNotes: 'customer',
      isGift: true,
      giftMessage: 'Enjoy',
      customField1: 'one',
      customField3: 'three',
      dateOrdered: at('2026-03-05T08:09:00Z'),
      dateUpdated: at('2026-03-05T17:28:30Z'),
    },
    {
      items: [
        { sku: 'G', name: 'In grams', weight: 180, weightUnit: 'g', quantity: 2, price: '19.95', imageUrl: '/img/g.jpg', options: { Size: 'M', Colour: 'Black' } },
        { sku: 'K', name: 'In kilograms', weight: 0.35, weightUnit: 'kg', quantity: 1, price: '14.10', imageUrl: '//cdn.example.com/k.jpg' },
        { sku: 'L', name: 'In pounds', weight: 2.2, weightUnit: 'lb', quantity: 1, price: '89', imageUrl: 'https://img.example.com/l.png' },
        { sku: null, name: 'In ounces', weight: 8, weightUnit: 'oz', quantity: 3, price: '1.00' },
        { sku: 'X', name: 'Unknown unit', weight: 3, weightUnit: 'stone', quantity: 1, price: '2.00' },
      ],
      billing: { ...VALID_ADDRESS, fullName: 'Bill Payer', email: 'bill@example.com', countryCode: 'ca' },
      shipping: { ...VALID_ADDRESS, company: 'ACME', address2: 'Suite 9' },
    },
  )

  const response = await exportRequest(app, {}, { host: 'shop.example.com' })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['content-type'], 'text/xml; charset=utf-8')
  t.match(response.body, /^<\?xml version="1\.0" encoding="utf-8"\?>/)
  const { pages, orders } = exportedOrders(response.body)
  t.equal(pages, 1)
  t.equal(orders.length, 1)
  const order = orders[0]
  t.same(childNames(order), [
    'OrderID', 'OrderNumber', 'OrderStatus', 'OrderTotal', 'TaxAmount', 'ShippingAmount', 'LastModified', 'PaymentMethod',
    'ShippingMethod', 'Items', 'Customer', 'InternalNotes', 'Gift', 'OrderDate', 'CustomField1', 'CustomField2',
    'CustomField3', 'CustomerNotes', 'GiftMessage',
  ])
  t.match(textOf(order, 'OrderID'), /^\d+$/)
  t.equal(textOf(order, 'OrderNumber'), 'A-100')
  t.equal(textOf(order, 'OrderStatus'), 'processing')
  t.equal(textOf(order, 'OrderTotal'), '1234.50')
  t.equal(textOf(order, 'TaxAmount'), '12.5')
  t.equal(textOf(order, 'ShippingAmount'), '4.95')
  t.equal(textOf(order, 'LastModified'), '3/5/2026 17:28')
  t.equal(textOf(order, 'OrderDate'), '3/5/2026 08:09')
  t.equal(textOf(order, 'Gift'), 'true')
  t.equal(textOf(order, 'GiftMessage'), 'Enjoy')
  t.equal(textOf(order, 'CustomField2'), '')
  t.equal(textOf(order, 'CustomField3'), 'three')

  const items = child(order, 'Items').children
  // Spec 2.4's children in its order, then the line's id (LineItemID), which ShipStation echoes in its ShipNotice.
  t.same(childNames(items[0]), ['SKU', 'Name', 'Weight', 'Quantity', 'UnitPrice', 'ImageUrl', 'WeightUnits', 'Adjustment', 'Options', 'LineItemID'])
  const lineIds = (await app.shipments.orders.orderLines!(Number(textOf(order, 'OrderID'))))!.map((line) => String(line.id))
  t.same(items.slice(0, 5).map((item) => textOf(item, 'LineItemID')), lineIds, 'each line\'s id, as orderLines gives it')
  t.same(childNames(items[5]), ['SKU', 'Name', 'Weight', 'Quantity', 'UnitPrice', 'ImageUrl', 'WeightUnits', 'Adjustment', 'Options'], 'the discount is no line: no LineItemID')
  const row = (item: (typeof items)[number]) => ['SKU', 'Weight', 'WeightUnits', 'Quantity', 'UnitPrice', 'ImageUrl', 'Adjustment'].map((name) => textOf(item, name))
  t.same(items.map(row), [
    ['G', '180', 'Grams', '2', '19.95', 'http://shop.example.com/img/g.jpg', 'false'],
    ['K', '350', 'Grams', '1', '14.10', 'https://cdn.example.com/k.jpg', 'false'],
    ['L', '2.2', 'Pounds', '1', '89', 'https://img.example.com/l.png', 'false'],
    ['', '8', 'Ounces', '3', '1.00', '', 'false'],
    ['X', '0', '', '1', '2.00', '', 'false'],
    ['', '0', '', '1', '-10.00', '', 'true'],
  ])
  t.equal(textOf(items[5], 'Name'), 'WELCOME10', 'the discount line is named after its coupon')
  const options = child(items[0], 'Options').children
  t.same(options.map((option) => [textOf(option, 'Name'), textOf(option, 'Value')]), [['Size', 'M'], ['Colour', 'Black']])

  const customer = child(order, 'Customer')
  t.same(childNames(customer), ['CustomerCode', 'BillTo', 'ShipTo'])
  t.equal(textOf(customer, 'CustomerCode'), '77')
  const billTo = child(customer, 'BillTo')
  t.same(childNames(billTo), ['Name', 'Address1', 'City', 'State', 'PostalCode', 'Country', 'Phone', 'Email'])
  t.equal(textOf(billTo, 'Name'), 'Bill Payer')
  t.equal(textOf(billTo, 'Country'), 'CA')
  t.equal(textOf(billTo, 'Email'), 'bill@example.com')
  const shipTo = child(customer, 'ShipTo')
  t.same(childNames(shipTo), ['Name', 'Company', 'Address1', 'Address2', 'City', 'State', 'PostalCode', 'Country', 'Phone'])
  t.same(
    childNames(shipTo).map((name) => textOf(shipTo, name)),
    ['Jane Doe', 'ACME', '12 Harbour Street', 'Suite 9', 'Portland', 'OR', '97201', 'US', '+1 503 555 0101'],
  )
})

t.test('a discount without a coupon is named "Discount"; relative image URLs resolve against siteUrl', async (t) => {
  const app = await buildExchangeApp(t, { siteUrl: 'https://cdn.shop.example' })
  await insertExportOrder(app, { totalDiscount: '5.00', isGift: false }, { items: [{ name: 'Mug', quantity: 1, price: '20', imageUrl: 'img/mug.jpg' }] })
  const { orders } = exportedOrders((await exportRequest(app)).body)
  const [item, discount] = child(orders[0], 'Items').children
  t.equal(textOf(item, 'ImageUrl'), 'https://cdn.shop.example/img/mug.jpg')
  t.equal(textOf(discount, 'Name'), 'Discount')
  t.equal(textOf(discount, 'UnitPrice'), '-5.00', 'a positive stored discount is exported as a negative adjustment')
  t.equal(textOf(orders[0], 'Gift'), 'false')
})

t.test('only completed orders, by dateUpdated then id; stable page edges over equal timestamps', async (t) => {
  const app = await buildExchangeApp(t, { pageSize: 3 })
  const same = at('2026-05-01T10:00:00Z')
  const ids: number[] = []
  for (let index = 0; index < 7; index++) ids.push(await insertExportOrder(app, { reference: `EQ-${index}`, dateUpdated: same }))
  await insertExportOrder(app, { reference: 'EARLIER', dateUpdated: at('2026-04-30T10:00:00Z') })
  await insertExportOrder(app, { reference: 'OPEN', isCompleted: false, dateUpdated: at('2026-04-30T11:00:00Z') })

  const seen: string[] = []
  for (const page of ['1', '2', '3']) {
    const response = await exportRequest(app, { page })
    t.equal(response.statusCode, 200)
    const { pages, numbers } = exportedOrders(response.body)
    t.equal(pages, 3, `page ${page} reports the total page count`)
    seen.push(...numbers)
  }
  t.same(seen, ['EARLIER', 'EQ-0', 'EQ-1', 'EQ-2', 'EQ-3', 'EQ-4', 'EQ-5', 'EQ-6'], 'every order once, ties broken by id')

  const past = exportedOrders((await exportRequest(app, { page: '4' })).body)
  t.same(past, { pages: 3, orders: [], numbers: [] }, 'a page past the end is empty')
  for (const page of ['0', '-2', 'abc', '', '1e']) {
    t.same(exportedOrders((await exportRequest(app, { page })).body).numbers, ['EARLIER', 'EQ-0', 'EQ-1'], `page=${page} is page 1`)
  }
})

t.test('page and page-size parameters', async (t) => {
  t.equal(pageParameter(undefined), 1)
  t.equal(pageParameter('2'), 2)
  t.equal(pageParameter(' 3 '), 3)
  t.equal(pageParameter('2.7'), 2)
  t.equal(pageParameter('0x10'), 1)
  t.equal(pageParameter('99999999999999999999'), Number.MAX_SAFE_INTEGER)
  for (const value of ['abc', -5, '-5', 0, '', null, undefined, Number.NaN]) t.equal(pageSizeSetting(value), 25, `${String(value)} falls back to 25`)
  t.equal(pageSizeSetting('50'), 50)
  t.equal(pageSizeSetting(100), 100)

  const app = await buildExchangeApp(t, { pageSize: 'lots' })
  for (let index = 0; index < 26; index++) await insertExportOrder(app, { dateUpdated: at('2026-05-01T10:00:00Z') })
  const first = exportedOrders((await exportRequest(app)).body)
  t.equal(first.orders.length, 25, 'a non-numeric page size is 25')
  t.equal(first.pages, 2)
})

t.test('the date window: both dates or none, exclusive, start floored to its minute, end at second 59', async (t) => {
  const app = await buildExchangeApp(t)
  const updates: Record<string, string> = {
    'start-minute': '2026-01-23T17:28:00.000Z', // equal to the floored start: excluded
    'start-plus-500ms': '2026-01-23T17:28:00.500Z', // still second :00 of the start minute: excluded
    'start-plus-1s': '2026-01-23T17:28:01.000Z',
    'end-second-58': '2026-01-24T09:15:58.999Z',
    'end-second-59': '2026-01-24T09:15:59.000Z', // the end itself: excluded
    'after-end': '2026-01-24T09:16:30.000Z',
    'before-start': '2026-01-23T17:27:59.000Z',
  }
  for (const [reference, iso] of Object.entries(updates)) await insertExportOrder(app, { reference, dateUpdated: at(iso) })

  // ShipStation's own encoding: start_date=01%2f23%2f2012+17%3a28 (seconds in the parameters are floored away).
  const response = await app.inject({
    url: '/actions/shippingplatformconnect/orders/process?action=export&start_date=01%2f23%2f2026+17%3a28&end_date=01%2f24%2f2026+09%3a15',
    headers: (await import('./fixtures/exchange.js')).basicAuth(),
  })
  t.equal(response.statusCode, 200)
  t.same(exportedOrders(response.body).numbers, ['start-plus-1s', 'end-second-58'])

  const withSeconds = exportedOrders((await exportRequest(app, { start_date: '01/23/2026 17:28:45', end_date: '01/24/2026 09:15:10' })).body)
  t.same(withSeconds.numbers, ['start-plus-1s', 'end-second-58'], 'seconds given are floored to the minute')
  const iso = exportedOrders((await exportRequest(app, { start_date: '2026-01-23T17:28:00Z', end_date: '2026-01-24T09:15Z' })).body)
  t.same(iso.numbers, ['start-plus-1s', 'end-second-58'], 'ISO-8601 works the same')
  const meridiem = exportedOrders((await exportRequest(app, { start_date: '1/23/2026 5:28 PM', end_date: '1/24/2026 9:15 AM' })).body)
  t.same(meridiem.numbers, ['start-plus-1s', 'end-second-58'], 'so does 12-hour time')

  const all = Object.keys(updates).length
  t.equal(exportedOrders((await exportRequest(app, { start_date: '01/23/2026 17:28' })).body).orders.length, all, 'a start alone is ignored')
  t.equal(exportedOrders((await exportRequest(app, { end_date: '01/24/2026 09:15' })).body).orders.length, all, 'an end alone is ignored')
})

t.test('an impossible or unreadable date is a 400 naming its parameter, as HTML or JSON', async (t) => {
  const app = await buildExchangeApp(t)
  await insertExportOrder(app, { reference: 'IN-WINDOW', dateUpdated: at('2026-01-24T00:00:00Z') })
  const good = { start_date: '01/23/2026 17:28', end_date: '01/24/2026 09:15' }
  t.same(exportedOrders((await exportRequest(app, good)).body).numbers, ['IN-WINDOW'], 'the good window alone exports')
  // February 30th and month 13 must be refused, not rolled over into March or the next year.
  for (const bad of ['02/30/2026 10:00', '13/01/2026 10:00', 'yesterday-ish']) {
    for (const parameter of ['start_date', 'end_date'] as const) {
      const query = { ...good, [parameter]: bad }
      const json = await exportRequest(app, query, { accept: 'application/json' })
      t.equal(json.statusCode, 400, `${parameter}=${bad}`)
      t.match(json.headers['content-type'], /^application\/json/)
      t.same(json.json(), { name: 'Bad Request', message: `${parameter} is not a date.`, code: 0, status: 400, errorCode: 'SHIPMENTS_EXCHANGE_INVALID_DATE' })
      const html = await exportRequest(app, query)
      t.equal(html.statusCode, 400)
      t.equal(html.headers['content-type'], 'text/html; charset=utf-8')
      t.match(html.body, `<title>400 Bad Request</title>`)
      t.match(html.body, `<h1>Bad Request</h1><p>${parameter} is not a date.</p>`)
    }
  }
  const both = await exportRequest(app, { start_date: '02/30/2026 10:00', end_date: '13/01/2026 10:00' }, { accept: 'application/json' })
  t.equal(both.statusCode, 400)
  t.same(both.json(), { name: 'Bad Request', message: 'start_date is not a date.', code: 0, status: 400, errorCode: 'SHIPMENTS_EXCHANGE_INVALID_DATE' }, 'both bad: the first is named')
})

t.test('a non-UTC site parses the window in its own timezone (spec 4.3 rule 4) and writes dates in it', async (t) => {
  const app = await buildExchangeApp(t, {}, { timezone: 'America/New_York' })
  // 10:00 in New York on 2026-07-01 is 14:00 UTC (EDT, UTC-4).
  await insertExportOrder(app, { reference: 'NY-10:30', dateUpdated: at('2026-07-01T14:30:00Z') })
  await insertExportOrder(app, { reference: 'UTC-10:30', dateUpdated: at('2026-07-01T10:30:00Z') })
  const { numbers, orders } = exportedOrders((await exportRequest(app, { start_date: '07/01/2026 10:00', end_date: '07/01/2026 11:00' })).body)
  t.same(numbers, ['NY-10:30'], 'the window is shifted by the site offset')
  t.equal(textOf(orders[0], 'LastModified'), '7/1/2026 10:30', 'dates are written in the site timezone')
})

t.test('store: matched against the configured dropdown field, ignored without one', async (t) => {
  const app = await buildExchangeApp(t, { storeField: 'store' })
  await insertExportOrder(app, { reference: 'RETAIL', fields: { store: 'retail' } })
  await insertExportOrder(app, { reference: 'WHOLESALE', fields: { store: 'wholesale' } })
  await insertExportOrder(app, { reference: 'NONE' })
  t.same(exportedOrders((await exportRequest(app, { store: 'retail' })).body).numbers, ['RETAIL'])
  t.same(exportedOrders((await exportRequest(app, { store: 'outlet' })).body), { pages: 0, orders: [], numbers: [] })
  t.same(exportedOrders((await exportRequest(app)).body).numbers, ['RETAIL', 'WHOLESALE', 'NONE'], 'no store: every store')

  const unconfigured = await buildExchangeApp(t)
  await insertExportOrder(unconfigured, { reference: 'ANY', fields: { store: 'retail' } })
  await insertExportOrder(unconfigured, { reference: 'OTHER', fields: { store: 'wholesale' } })
  t.same(exportedOrders((await exportRequest(unconfigured, { store: 'retail' })).body).numbers, ['ANY', 'OTHER'], 'ignored without a store field')
})

t.test('orders failing validation are left out before paging, so pages are never short', async (t) => {
  const app = await buildExchangeApp(t, { pageSize: 2 })
  const when = at('2026-06-01T00:00:00Z')
  await insertExportOrder(app, { reference: 'V1', dateUpdated: when })
  await insertExportOrder(app, { reference: 'NO-ADDRESS', dateUpdated: when }, { shipping: null })
  await insertExportOrder(app, { reference: 'V2', dateUpdated: when })
  await insertExportOrder(app, { reference: 'NO-ITEMS', dateUpdated: when }, { items: [] })
  await insertExportOrder(app, { reference: 'BAD-COUNTRY', dateUpdated: when }, { shipping: { ...VALID_ADDRESS, countryCode: 'USA' } })
  await insertExportOrder(app, { reference: 'V3', dateUpdated: when })
  await insertExportOrder(app, { reference: 'NO-CITY', dateUpdated: when }, { shipping: { ...VALID_ADDRESS, city: '  ' } })
  await insertExportOrder(app, { reference: 'DIGIT-COUNTRY', dateUpdated: when }, { shipping: { ...VALID_ADDRESS, countryCode: 'U1' } })
  await insertExportOrder(app, { reference: 'BILLING-NO-NAME', dateUpdated: when }, { billing: { ...VALID_ADDRESS, fullName: ' ' } })
  await insertExportOrder(app, { reference: 'BILLING-BAD-COUNTRY', dateUpdated: when }, { billing: { ...VALID_ADDRESS, countryCode: 'DEU' } })
  await insertExportOrder(app, { reference: 'ITEM-NO-NAME', dateUpdated: when }, { items: [{ name: '  ', quantity: 1, price: '1' }] })
  await insertExportOrder(app, { reference: 'V4', dateUpdated: when }, { billing: { ...VALID_ADDRESS, countryCode: '' } })
  const first = exportedOrders((await exportRequest(app, { page: '1' })).body)
  const second = exportedOrders((await exportRequest(app, { page: '2' })).body)
  t.same([first.pages, first.numbers, second.numbers], [2, ['V1', 'V2'], ['V3', 'V4']])
})

t.test('failOnValidation: a page with an invalid order is a 500, with the reason in the log only', async (t) => {
  process.env.FAIL_EXPORT_FLAG = 'true'
  const logLines: string[] = []
  const app = await buildExchangeApp(t, { failOnValidation: '$FAIL_EXPORT_FLAG' }, {}, logLines)
  t.equal(app.shipments.orderExchange !== null, true)
  await insertExportOrder(app, { reference: 'OK', dateUpdated: at('2026-06-01T00:00:00Z') })
  await insertExportOrder(app, { reference: 'BROKEN', dateUpdated: at('2026-06-02T00:00:00Z') }, { shipping: { ...VALID_ADDRESS, postalCode: null } })

  const html = await exportRequest(app)
  t.equal(html.statusCode, 500)
  t.match(html.headers['content-type'], /^text\/html/)
  t.match(html.body, /<p>The export failed: an order failed validation\.<\/p>/)
  t.notMatch(html.body, /postal code|at .*\.ts/, 'the reason and no stack trace reach the client')
  const json = await exportRequest(app, {}, { accept: 'application/json' })
  t.same(json.json(), { name: 'Internal Server Error', message: 'The export failed: an order failed validation.', code: 0, status: 500, errorCode: 'SHIPMENTS_EXCHANGE_EXPORT_FAILED' })
  t.ok(logLines.some((line) => line.includes('BROKEN') && line.includes('the shipping address has no postal code')), 'the log names the order and why')
})
t.test('text: unicode, markup characters and ]]> read back exactly; illegal characters removed; limits by characters', async (t) => {
  const app = await buildExchangeApp(t)
  const tricky = 'Zoë & <Co> "q" \'a\' ]]> ]]]]> 東京 🍵 \u0085 end'
  // Lone surrogates cannot even be stored (SQLite keeps UTF-8); removeIllegalXmlCharacters is tested on them below.
  const withIllegal = storable(`a\u0000b\u0001c\u0008d\u000Be\u000Cf\u001Fg\uFFFEh\uFFFFi\u007Fj\u0085k\tl\nm`)
  const longName = 'x'.repeat(99) + '😀' + 'tail' // the emoji straddles the 100-character limit
  await insertExportOrder(
    app,
    { reference: 'T-1', customerNotes: tricky, internalNotes: withIllegal, shippingMethod: 'EMS <Express> & "Tracked"', customField1: ']]>' },
    {
      items: [{ sku: 'TEA-"JP"', name: 'Tea set <Kyūsu> & cups 🍵', quantity: 1, price: '1', options: { 'Glaze & <b>': 'Ōbori ]]> blue' } }],
      shipping: { ...VALID_ADDRESS, fullName: longName, address1: '東京都千代田区 1-2-3 & <Annex>' },
    },
  )
  const response = await exportRequest(app)
  t.equal(response.statusCode, 200)
  const order = exportedOrders(response.body).orders[0] // parsing at all proves well-formedness
  t.equal(textOf(order, 'CustomerNotes'), tricky)
  t.equal(textOf(order, 'InternalNotes'), 'abcdefghi\u007Fj\u0085k\tl\nm', 'DEL and NEL are legal XML 1.0 and stay')
  t.equal(textOf(order, 'ShippingMethod'), 'EMS <Express> & "Tracked"')
  t.equal(textOf(order, 'CustomField1'), ']]>')
  const item = child(order, 'Items').children[0]
  t.equal(textOf(item, 'SKU'), 'TEA-"JP"')
  t.equal(textOf(item, 'Name'), 'Tea set <Kyūsu> & cups 🍵')
  const option = child(item, 'Options').children[0]
  t.same([textOf(option, 'Name'), textOf(option, 'Value')], ['Glaze & <b>', 'Ōbori ]]> blue'])
  const shipTo = child(child(order, 'Customer'), 'ShipTo')
  t.equal(textOf(shipTo, 'Name'), 'x'.repeat(99), 'cut before the emoji, never inside it')
  t.equal(textOf(shipTo, 'Address1'), '東京都千代田区 1-2-3 & <Annex>')
  t.notMatch(response.body, /&amp;/, 'nothing is escaped twice inside CDATA')
})

t.test('a change to the orders shows in the next export, from this connection or another process', async (t) => {
  const app = await buildExchangeApp(t)
  await insertExportOrder(app, { reference: 'FIRST', dateUpdated: at('2026-01-01T00:00:00Z') })
  t.same(exportedOrders((await exportRequest(app)).body).numbers, ['FIRST'])
  await insertExportOrder(app, { reference: 'SECOND', dateUpdated: at('2026-01-02T00:00:00Z') })
  t.same(exportedOrders((await exportRequest(app)).body).numbers, ['FIRST', 'SECOND'], 'a write on the same connection')

  const other = await otherConnection(t, app)
  await other('UPDATE shipments_orders SET is_completed = ? WHERE reference = ?', [TEST_ENGINE === 'sqlite' ? 0 : false, 'FIRST'])
  t.same(exportedOrders((await exportRequest(app)).body).numbers, ['SECOND'], 'a write committed by another connection')
  const row = (await tables(app).db.select().from(tables(app).schema.orders).where(eq(tables(app).schema.orders.reference, 'FIRST')))[0]
  t.equal(row.isCompleted, false)
})

t.test('removeIllegalXmlCharacters and limitCharacters on strings that never reach the database', async (t) => {
  t.equal(removeIllegalXmlCharacters('a\uD800b\uDFFFc\uD83D\uDE00d\u0000'), 'abc\uD83D\uDE00d', 'lone surrogates go, pairs stay')
  t.equal(removeIllegalXmlCharacters('plain ascii'), 'plain ascii')
  t.equal(limitCharacters('ab😀', 3), 'ab')
  t.equal(limitCharacters('ab😀', 4), 'ab😀')
  t.equal(limitCharacters('abc', 3), 'abc')
})

t.test('parseXml is strict: it refuses what ShipStation would refuse', async (t) => {
  t.throws(() => parseXml('<a>\u0001</a>'))
  t.throws(() => parseXml('<a><b></a>'))
  t.same(parseXml('<a x="1"><![CDATA[<&>]]></a>'), { name: 'a', attributes: { x: '1' }, children: [], text: '<&>' })
})

t.test('wall times around daylight-saving changes: the earlier of a repeated hour, a skipped time moved past the gap', async (t) => {
  const { parsePlatformDate, formatPlatformDate } = await import('../src/time.js')
  const iso = (instant: number | null) => (instant === null ? null : new Date(instant).toISOString())
  // Berlin, 2026-10-25: 02:00-03:00 happens twice (CEST then CET).
  t.equal(iso(parsePlatformDate('10/25/2026 02:30', 'Europe/Berlin')), '2026-10-25T00:30:00.000Z')
  t.equal(iso(parsePlatformDate('10/25/2026 01:30', 'Europe/Berlin')), '2026-10-24T23:30:00.000Z')
  t.equal(iso(parsePlatformDate('10/25/2026 03:30', 'Europe/Berlin')), '2026-10-25T02:30:00.000Z')
  // New York, 2026-11-01: 01:00-02:00 happens twice (EDT then EST).
  t.equal(iso(parsePlatformDate('11/01/2026 01:30', 'America/New_York')), '2026-11-01T05:30:00.000Z')
  // New York, 2026-03-08: 02:00-03:00 does not exist; Berlin, 2026-03-29: 02:00-03:00 does not exist.
  t.equal(iso(parsePlatformDate('03/08/2026 02:30', 'America/New_York')), '2026-03-08T07:30:00.000Z')
  t.equal(iso(parsePlatformDate('03/29/2026 02:30', 'Europe/Berlin')), '2026-03-29T01:30:00.000Z')
  t.equal(formatPlatformDate(Date.parse('2026-10-25T00:30:00Z'), 'Europe/Berlin'), '10/25/2026 02:30')
  t.equal(formatPlatformDate(Date.parse('2026-10-25T01:30:00Z'), 'Europe/Berlin'), '10/25/2026 02:30')
  t.equal(iso(parsePlatformDate('2026-10-25T02:30:00+01:00', 'Europe/Berlin')), '2026-10-25T01:30:00.000Z', 'an explicit offset wins')
})

