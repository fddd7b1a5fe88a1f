// Property-based tests of the order exchange: hostile requests never give a 500 or change anything
// when refused, and any text stored on an order comes back out of the export intact.
import t from 'tap'
import fc from 'fast-check'
import { eq } from 'drizzle-orm'
import { type ExportAddress, type ExportOrder, type OrderStore } from '../src/index.js'
import * as schema from '../src/db/sqlite/schema.js'
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

// What ShipStation reads for a text value, stated from the README's rules rather than computed with the
// package's own helpers (a bug in those would otherwise agree with itself):
// - the characters XML 1.0 forbids are removed: C0 controls other than tab, LF and CR, lone
//   surrogates, U+FFFE and U+FFFF (XML 1.0's Char production keeps everything else);
// - then ShipStation's limit is applied, counted in UTF-16 code units as ShipStation (.NET) counts a
//   string's length, and a surrogate pair that does not fit whole is left out, never halved.
const isXmlCharacter = (codePoint: number) =>
  codePoint === 0x09 ||
  codePoint === 0x0a ||
  codePoint === 0x0d ||
  (codePoint >= 0x20 && codePoint <= 0xd7ff) ||
  (codePoint >= 0xe000 && codePoint <= 0xfffd) ||
  (codePoint >= 0x10000 && codePoint <= 0x10ffff)

function exported(value: string | null | undefined, limit: number): string {
  let text = ''
  // for...of walks code points: a surrogate pair comes as one string of length 2, a lone surrogate alone.
  for (const character of value ?? '') {
    if (!isXmlCharacter(character.codePointAt(0)!)) continue
    if (text.length + character.length > limit) break
    text += character
  }
  return text
}

// ShipStation's limits per element, in characters (the ones src/order-exchange/export-document.ts applies).
const LIMITS = {
  OrderNumber: 50,
  OrderStatus: 50,
  PaymentMethod: 50,
  ShippingMethod: 100,
  CustomerCode: 100,
  InternalNotes: 1000,
  CustomField: 100,
  CustomerNotes: 1000,
  GiftMessage: 1000,
  SKU: 100,
  ItemName: 200,
  OptionName: 100,
  OptionValue: 100,
  AddressName: 100,
  Company: 100,
  Address1: 200,
  Address2: 200,
  City: 100,
  State: 100,
  PostalCode: 50,
  Phone: 50,
  Email: 100,
} as const

t.test('the expectation itself, on examples of each rule', async (t) => {
  const forbidden = '\u0000\u0001\u0008\u000B\u000C\u000E\u001F\uDC00\uDFFF\uD800\uDBFF\uFFFE\uFFFF' // no high surrogate before a low one
  t.equal(exported(`a${forbidden}b`, 100), 'ab', 'every forbidden character goes')
  const allowed = '\t\n\r \u007F\u0085\uD7FF\uE000\uFFFD\uD800\uDC00\uDBFF\uDFFF'
  t.equal(exported(allowed, 100), allowed, 'tab, LF, CR, DEL, NEL, the edges of the ranges and surrogate pairs stay')
  t.equal(exported('\uDC00\uD800', 100), '', 'a low surrogate before a high one is two lone halves')
  t.equal(exported('x'.repeat(99) + '😀', 100), 'x'.repeat(99), 'a pair straddling the limit is left out whole')
  t.equal(exported('x'.repeat(98) + '😀y', 100), 'x'.repeat(98) + '😀', 'a pair that fits counts two')
  t.equal(exported('\u0001\u0002' + 'y'.repeat(50), 50), 'y'.repeat(50), 'removed characters do not count toward the limit')
  t.equal(exported(null, 10), '')
})

const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 120 }), fc.string({ unit: 'grapheme', maxLength: 60 }), hostileString)
// Text whose length falls around `limit`, with characters in front that are removed or count twice,
// so the cut lands before, inside and after pairs and removed characters.
const aroundLimit = (limit: number) =>
  fc
    .tuple(fc.array(fc.constantFrom('\u0001', '\uFFFE', '\uD800', '😀', 'é', '\r'), { maxLength: 4 }), fc.integer({ min: limit - 4, max: limit + 1 }), text)
    .map(([front, length, tail]) => front.join('') + 'x'.repeat(length) + tail)
const field = (limit: number) => fc.oneof({ arbitrary: text, weight: 2 }, { arbitrary: aroundLimit(limit), weight: 1 })

t.test('any text stored on an order comes out of the export as the README says', async (t) => {
  const app = await buildExchangeApp(t)
  const values = fc.record({
    customerNotes: field(LIMITS.CustomerNotes),
    internalNotes: field(LIMITS.InternalNotes),
    giftMessage: field(LIMITS.GiftMessage),
    shippingMethod: field(LIMITS.ShippingMethod),
    paymentMethod: field(LIMITS.PaymentMethod),
    customField1: field(LIMITS.CustomField),
    fullName: field(LIMITS.AddressName),
    company: field(LIMITS.Company),
    address2: field(LIMITS.Address2),
    state: field(LIMITS.State),
    phone: field(LIMITS.Phone),
    sku: field(LIMITS.SKU),
    itemName: field(LIMITS.ItemName),
    optionName: field(LIMITS.OptionName),
    optionValue: field(LIMITS.OptionValue),
  }).map((record) => Object.fromEntries(Object.entries(record).map(([key, value]) => [key, storable(value)])) as typeof record)
  await fc.assert(
    fc.asyncProperty(values, async (v) => {
      await tables(app).db.delete(tables(app).schema.orders)
      const orderId = await insertExportOrder(
        app,
        {
          reference: 'U-1',
          customerNotes: v.customerNotes,
          internalNotes: v.internalNotes,
          isGift: true,
          giftMessage: v.giftMessage,
          shippingMethod: v.shippingMethod,
          paymentMethod: v.paymentMethod,
          customField1: v.customField1,
        },
        {
          // The prefixes keep the order valid (a shipping name and an item name are required).
          items: [{ sku: v.sku, name: `I ${v.itemName}`, quantity: 1, price: '1', options: { [v.optionName]: v.optionValue } }],
          shipping: { fullName: `N ${v.fullName}`, company: v.company, address1: 'a', address2: v.address2, city: 'c', state: v.state, postalCode: 'p', countryCode: 'US', phone: v.phone },
        },
      )
      // What the database kept is the input (PostgreSQL cannot hold NUL, and either engine may replace a lone
      // surrogate when it encodes UTF-8); the expectation is applied to it.
      const { db, schema: tableSchema } = tables(app)
      const [row] = await db.select().from(tableSchema.orders).where(eq(tableSchema.orders.id, orderId))
      const [address] = await db.select().from(tableSchema.orderAddresses).where(eq(tableSchema.orderAddresses.orderId, orderId))
      const [item] = await db.select().from(tableSchema.orderLineItems).where(eq(tableSchema.orderLineItems.orderId, orderId))
      const [[optionName, optionValue]] = Object.entries(item.options)

      const response = await app.inject({ url: `${EXCHANGE_URL}?action=export`, headers: basicAuth() })
      if (response.statusCode !== 200) return false
      const order = exportedOrders(response.body).orders[0] // throws unless well-formed XML 1.0
      const exportedItem = child(order, 'Items').children[0]
      const option = child(child(exportedItem, 'Options'), 'Option')
      const shipTo = child(child(order, 'Customer'), 'ShipTo')
      const billTo = child(child(order, 'Customer'), 'BillTo') // the shipping address, billed
      const actual = {
        customerNotes: textOf(order, 'CustomerNotes'),
        internalNotes: textOf(order, 'InternalNotes'),
        giftMessage: textOf(order, 'GiftMessage'),
        shippingMethod: textOf(order, 'ShippingMethod'),
        paymentMethod: textOf(order, 'PaymentMethod'),
        customField1: textOf(order, 'CustomField1'),
        name: [textOf(shipTo, 'Name'), textOf(billTo, 'Name')],
        company: textOf(shipTo, 'Company'),
        address2: textOf(shipTo, 'Address2'),
        state: [textOf(shipTo, 'State'), textOf(billTo, 'State')],
        phone: [textOf(shipTo, 'Phone'), textOf(billTo, 'Phone')],
        sku: textOf(exportedItem, 'SKU'),
        itemName: textOf(exportedItem, 'Name'),
        option: [textOf(option, 'Name'), textOf(option, 'Value')],
      }
      const expected = {
        customerNotes: exported(row.customerNotes, 1000),
        internalNotes: exported(row.internalNotes, 1000),
        giftMessage: exported(row.giftMessage, 1000),
        shippingMethod: exported(row.shippingMethod, 100),
        paymentMethod: exported(row.paymentMethod, 50),
        customField1: exported(row.customField1, 100),
        name: [exported(address.fullName, 100), exported(address.fullName, 100)],
        company: exported(address.company, 100),
        address2: exported(address.address2, 200),
        state: [exported(address.state, 100), exported(address.state, 100)],
        phone: [exported(address.phone, 50), exported(address.phone, 50)],
        sku: exported(item.sku, 100),
        itemName: exported(item.name, 200),
        option: [exported(optionName, 100), exported(String(optionValue), 100)],
      }
      // JSON shows every character, lone surrogates and controls included, in fast-check's report.
      if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new Error(`exported ${JSON.stringify(actual)}\nexpected ${JSON.stringify(expected)}`)
      return true
    }),
    { numRuns: RUNS },
  )
  t.pass(`${RUNS} random orders read back through saxes as expected`)
})

// Text from a host's own order store never passes through a database, so lone surrogates, NUL and
// the other forbidden characters reach the document as they are.
const rawText = fc
  .array(fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('\u0000', '\u0008', '\u001F', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uFFFE', '\uFFFF', '\r', '\t', '😀', ']]>')), { maxLength: 30 })
  .map((parts) => parts.join(''))
const rawField = (limit: number) => fc.oneof({ arbitrary: rawText, weight: 2 }, { arbitrary: aroundLimit(limit), weight: 1 })

t.test('text from a host\'s own order store (lone surrogates, NUL) comes out as the README says, in every limited element', async (t) => {
  const address = (prefix: 'b' | 's', v: Record<string, string>): ExportAddress => ({
    name: v[`${prefix}Name`],
    company: v[`${prefix}Company`],
    address1: v[`${prefix}Address1`],
    address2: v[`${prefix}Address2`],
    city: v[`${prefix}City`],
    state: v[`${prefix}State`],
    postalCode: v[`${prefix}PostalCode`],
    country: 'US',
    phone: v[`${prefix}Phone`],
    email: v[`${prefix}Email`],
  })
  const addressFields = (prefix: 'b' | 's') => ({
    [`${prefix}Name`]: rawField(LIMITS.AddressName),
    [`${prefix}Company`]: rawField(LIMITS.Company),
    [`${prefix}Address1`]: rawField(LIMITS.Address1),
    [`${prefix}Address2`]: rawField(LIMITS.Address2),
    [`${prefix}City`]: rawField(LIMITS.City),
    [`${prefix}State`]: rawField(LIMITS.State),
    [`${prefix}PostalCode`]: rawField(LIMITS.PostalCode),
    [`${prefix}Phone`]: rawField(LIMITS.Phone),
    [`${prefix}Email`]: rawField(LIMITS.Email),
  })
  const values = fc.record({
    reference: rawField(LIMITS.OrderNumber),
    statusHandle: rawField(LIMITS.OrderStatus),
    paymentMethod: rawField(LIMITS.PaymentMethod),
    shippingMethod: rawField(LIMITS.ShippingMethod),
    customerCode: rawField(LIMITS.CustomerCode),
    internalNotes: rawField(LIMITS.InternalNotes),
    customField1: rawField(LIMITS.CustomField),
    customField2: rawField(LIMITS.CustomField),
    customField3: rawField(LIMITS.CustomField),
    customerNotes: rawField(LIMITS.CustomerNotes),
    giftMessage: rawField(LIMITS.GiftMessage),
    sku: rawField(LIMITS.SKU),
    itemName: rawField(LIMITS.ItemName),
    optionName: rawField(LIMITS.OptionName),
    optionValue: rawField(LIMITS.OptionValue),
    ...addressFields('b'),
    ...addressFields('s'),
  })
  let current: ExportOrder | null = null
  const orderStore: OrderStore = {
    findOrder: async () => null,
    findOrderByReference: async () => null,
    setOrderStatus: async () => undefined,
    exportOrders: async () => ({ orders: current ? [current] : [], total: current ? 1 : 0 }),
    recordShipNotification: async () => ({ changed: false, trackingSkipped: null }),
  }
  const app = await buildExchangeApp(t, {}, { orderStore })
  await fc.assert(
    fc.asyncProperty(values, async (v) => {
      current = {
        id: 7,
        reference: v.reference,
        statusHandle: v.statusHandle,
        total: '1',
        tax: '0',
        shipping: '0',
        discount: '0',
        couponCode: null,
        paymentMethod: v.paymentMethod,
        shippingMethod: v.shippingMethod,
        customerCode: v.customerCode,
        email: null,
        internalNotes: v.internalNotes,
        customerNotes: v.customerNotes,
        isGift: true,
        giftMessage: v.giftMessage,
        customFields: [v.customField1, v.customField2, v.customField3],
        dateOrdered: null,
        dateUpdated: new Date('2026-01-01T00:00:00Z'),
        billingAddress: address('b', v),
        shippingAddress: address('s', v),
        items: [{ sku: v.sku, name: v.itemName, weight: 1, weightUnit: 'g', quantity: 1, unitPrice: '1', imageUrl: null, options: { [v.optionName]: v.optionValue } }],
        problems: [],
      }
      const response = await app.inject({ url: `${EXCHANGE_URL}?action=export`, headers: basicAuth() })
      if (response.statusCode !== 200) return false
      const order = exportedOrders(response.body).orders[0] // throws unless well-formed XML 1.0
      const item = child(order, 'Items').children[0]
      const option = child(child(item, 'Options'), 'Option')
      const customer = child(order, 'Customer')
      const addressText = (element: string, prefix: 'b' | 's') => {
        const parent = child(customer, element)
        const names = element === 'BillTo' ? ['Name', 'Address1', 'City', 'State', 'PostalCode', 'Phone', 'Email'] : ['Name', 'Company', 'Address1', 'Address2', 'City', 'State', 'PostalCode', 'Phone']
        return Object.fromEntries(names.map((name) => [name, [textOf(parent, name), exported((v as Record<string, string>)[`${prefix}${name}`], LIMITS[name === 'Name' ? 'AddressName' : (name as keyof typeof LIMITS)])]]))
      }
      const pairs: Record<string, [string, string]> = {
        OrderNumber: [textOf(order, 'OrderNumber'), exported(v.reference, 50)],
        OrderStatus: [textOf(order, 'OrderStatus'), exported(v.statusHandle, 50)],
        PaymentMethod: [textOf(order, 'PaymentMethod'), exported(v.paymentMethod, 50)],
        ShippingMethod: [textOf(order, 'ShippingMethod'), exported(v.shippingMethod, 100)],
        CustomerCode: [textOf(customer, 'CustomerCode'), exported(v.customerCode, 100)],
        InternalNotes: [textOf(order, 'InternalNotes'), exported(v.internalNotes, 1000)],
        CustomField1: [textOf(order, 'CustomField1'), exported(v.customField1, 100)],
        CustomField2: [textOf(order, 'CustomField2'), exported(v.customField2, 100)],
        CustomField3: [textOf(order, 'CustomField3'), exported(v.customField3, 100)],
        CustomerNotes: [textOf(order, 'CustomerNotes'), exported(v.customerNotes, 1000)],
        GiftMessage: [textOf(order, 'GiftMessage'), exported(v.giftMessage, 1000)],
        SKU: [textOf(item, 'SKU'), exported(v.sku, 100)],
        ItemName: [textOf(item, 'Name'), exported(v.itemName, 200)],
        OptionName: [textOf(option, 'Name'), exported(v.optionName, 100)],
        OptionValue: [textOf(option, 'Value'), exported(v.optionValue, 100)],
        ...Object.fromEntries(Object.entries(addressText('BillTo', 'b')).map(([name, pair]) => [`BillTo/${name}`, pair])),
        ...Object.fromEntries(Object.entries(addressText('ShipTo', 's')).map(([name, pair]) => [`ShipTo/${name}`, pair])),
      }
      const wrong = Object.entries(pairs).filter(([, [actual, expected]]) => actual !== expected)
      if (wrong.length > 0) throw new Error(`element: [exported, expected]: ${JSON.stringify(Object.fromEntries(wrong))}`)
      return true
    }),
    { numRuns: RUNS },
  )
  t.pass(`${RUNS} random orders from a host's store read back through saxes as expected`)
})

t.test('a carriage return survives the round trip as a character reference', async (t) => {
  const app = await buildExchangeApp(t)
  await insertExportOrder(app, { reference: 'CR', customerNotes: 'line one\r\nline two\rend ]]> x' })
  const response = await app.inject({ url: `${EXCHANGE_URL}?action=export`, headers: basicAuth() })
  t.match(response.body, /line one]]>&#13;<!\[CDATA\[\nline two]]>&#13;<!\[CDATA\[end ]]]]><!\[CDATA\[> x/)
  t.equal(textOf(exportedOrders(response.body).orders[0], 'CustomerNotes'), 'line one\r\nline two\rend ]]> x')
})
