// Property-based tests of the order exchange: hostile requests never give a 500 or change anything
// when refused, and any text stored on an order comes back out of the export intact.
import t from 'tap'
import fc from 'fast-check'
import { eq } from 'drizzle-orm'
import { schema } from '../src/index.js'
import { limitCharacters, removeIllegalXmlCharacters } from '../src/order-exchange/export-document.js'
import { contentTypes, hostileString, snapshotDatabase, STACK_TRACE } from './fixtures/hostile.js'
import { basicAuth, buildExchangeApp, child, EXCHANGE_URL, exportedOrders, insertExportOrder, textOf } from './fixtures/exchange.js'
import { storable, tables } from './fixtures/database.js'

const RUNS = Number(process.env.PROPERTY_RUNS ?? 150)

const queryValue = fc.oneof(
  hostileString,
  fc.constantFrom('export', 'shipnotify', 'P-1', 'P-2', '01/23/2026 17:28', '2026-01-23T17:28:00Z', '13/45/2026 99:99', '0', '-1', '1e9', '2'),
)
// Mostly well-aimed requests (a real action, the right credentials), so the property reaches the
// handlers instead of stopping at 400 and 401.
const action = fc.oneof({ arbitrary: fc.constantFrom('export', 'shipnotify'), weight: 4 }, { arbitrary: queryValue, weight: 1 })
const queryString = fc
  .tuple(
    action,
    fc.dictionary(
      fc.constantFrom('action', 'start_date', 'end_date', 'page', 'store', 'order_number', 'carrier', 'service', 'tracking_number', 'SS-UserName', 'SS-Password', 'x'),
      fc.oneof({ arbitrary: queryValue, weight: 5 }, { arbitrary: fc.array(queryValue, { minLength: 2, maxLength: 2 }), weight: 1 }),
      { maxKeys: 6 },
    ),
  )
  .map(([firstAction, entries]) => {
    const search = new URLSearchParams({ action: firstAction })
    for (const [key, value] of Object.entries(entries)) for (const each of [value].flat()) search.append(key, each)
    return search.toString()
  })
const authorization = fc.oneof(
  { arbitrary: fc.constant(basicAuth().authorization), weight: 6 },
  fc.constant(undefined),
  hostileString.map((value) => `Basic ${Buffer.from(value).toString('base64')}`),
  hostileString.map((value) => value.replace(/[\r\n]/g, '')),
)
const body = fc.oneof(
  hostileString,
  fc.constantFrom(
    '<ShipNotice><OrderNumber>P-1</OrderNumber><OrderID>abc</OrderID></ShipNotice>',
    '<ShipNotice><OrderID>99999999999999999999</OrderID></ShipNotice>',
    '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY b SYSTEM "file:///etc/passwd">]><ShipNotice><OrderNumber>&b;</OrderNumber></ShipNotice>',
    'order_number=P-2&carrier=%ZZ',
    '{"order_number":{"$gt":""}}',
  ),
)

t.test('hostile requests to the order exchange never give a 500 or a stack trace, and refusals change nothing', async (t) => {
  const app = await buildExchangeApp(t, { storeField: 'store', acceptQueryCredentials: true })
  await insertExportOrder(app, { reference: 'P-1', fields: { store: 'retail' } })
  await insertExportOrder(app, { reference: 'P-2' })
  let accepted = 0
  await fc.assert(
    fc.asyncProperty(fc.constantFrom('GET', 'POST'), queryString, authorization, contentTypes, body, fc.constantFrom(undefined, 'application/json', 'text/html', '*/*'), async (method, query, auth, contentType, payload, accept) => {
      const before = await snapshotDatabase(app)
      const headers: Record<string, string> = {}
      if (auth !== undefined) headers.authorization = auth
      if (contentType) headers['content-type'] = contentType
      if (accept) headers.accept = accept
      const response = await app.inject({ method, url: `${EXCHANGE_URL}?${query}`, headers, ...(method === 'POST' && { payload }) })
      if (response.statusCode >= 500 || STACK_TRACE.test(response.body)) return false
      if (response.statusCode === 415) return false // never, whatever the content type (REFERENCE 1)
      if (response.statusCode !== 200 && (await snapshotDatabase(app)) !== before) return false
      if (response.statusCode === 200) accepted++
      return true
    }),
    { numRuns: RUNS },
  )
  t.ok(accepted > RUNS / 20, `${RUNS} random requests, ${accepted} accepted: the handlers were reached`)
})

t.test('any text stored on an order comes back out of the export intact, illegal XML characters aside', async (t) => {
  const app = await buildExchangeApp(t)
  const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 120 }), fc.string({ unit: 'grapheme', maxLength: 60 }), hostileString).map(storable)
  await fc.assert(
    fc.asyncProperty(text, text, text, text, async (notes, name, itemName, optionValue) => {
      await tables(app).db.delete(tables(app).schema.orders)
      const orderId = await insertExportOrder(
        app,
        { reference: 'U-1', customerNotes: notes },
        {
          items: [{ name: `I ${itemName}`, quantity: 1, price: '1', options: { Colour: optionValue } }],
          shipping: { fullName: `N ${name}`, address1: 'a', city: 'c', postalCode: 'p', countryCode: 'US' },
        },
      )
      // What the database kept (it stores UTF-8, so a lone surrogate is already gone) is the reference.
      const row = (await tables(app).db.select().from(tables(app).schema.orders).where(eq(tables(app).schema.orders.id, orderId)))[0]
      const address = (await tables(app).db.select().from(tables(app).schema.orderAddresses).where(eq(tables(app).schema.orderAddresses.orderId, orderId)))[0]
      const item = (await tables(app).db.select().from(tables(app).schema.orderLineItems).where(eq(tables(app).schema.orderLineItems.orderId, orderId)))[0]
      const expected = (value: string | null, limit: number) => limitCharacters(removeIllegalXmlCharacters(value ?? ''), limit)

      const response = await app.inject({ url: `${EXCHANGE_URL}?action=export`, headers: basicAuth() })
      if (response.statusCode !== 200) return false
      const order = exportedOrders(response.body).orders[0] // throws unless well-formed XML 1.0
      const exportedItem = child(order, 'Items').children[0]
      return (
        textOf(order, 'CustomerNotes') === expected(row.customerNotes, 1000) &&
        textOf(child(child(order, 'Customer'), 'ShipTo'), 'Name') === expected(address.fullName, 100) &&
        textOf(exportedItem, 'Name') === expected(item.name, 200) &&
        textOf(child(child(exportedItem, 'Options'), 'Option'), 'Value') === expected(item.options.Colour, 100)
      )
    }),
    { numRuns: RUNS },
  )
  t.pass(`${RUNS} random texts read back through saxes`)
})

t.test('a carriage return survives the round trip as a character reference', async (t) => {
  const app = await buildExchangeApp(t)
  await insertExportOrder(app, { reference: 'CR', customerNotes: 'line one\r\nline two\rend ]]> x' })
  const response = await app.inject({ url: `${EXCHANGE_URL}?action=export`, headers: basicAuth() })
  t.match(response.body, /line one]]>&#13;<!\[CDATA\[\nline two]]>&#13;<!\[CDATA\[end ]]]]><!\[CDATA\[> x/)
  t.equal(textOf(exportedOrders(response.body).orders[0], 'CustomerNotes'), 'line one\r\nline two\rend ]]> x')
})
