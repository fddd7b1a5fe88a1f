// ShipStation ship notifications with items (issue 21: 7): a notification ships exactly the lines it
// names (the shipment holding them, or one made from what is left), the rest of the order stays open,
// matching by LineItemID then SKU, more than is left, repeats, and notifications without items.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import type { ShipNotificationRecordedEvent } from '../src/index.js'
import { buildTestApp, historyRows, orderRow, shipmentRow } from './fixtures/app.js'
import { testDatabase } from './fixtures/database.js'
import { basicAuth, buildExchangeApp, child, EXCHANGE_PASSWORD, EXCHANGE_URL, EXCHANGE_USER, exportedOrders, exportRequest, insertExportOrder, ORDER_FIELDS, textOf } from './fixtures/exchange.js'
import { snapshotDatabase } from './fixtures/hostile.js'

interface NoticeItem {
  sku?: string
  quantity?: string | number
  lineItemId?: string | number
  name?: string
}

/** A ShipNotice as ShipStation sends it: CDATA values, a recipient, and the items shipped. */
const shipNotice = (orderNumber: string, items: NoticeItem[], tracking: string | null = 'T-1') =>
  `<?xml version="1.0" encoding="utf-8"?>\n<ShipNotice><OrderNumber><![CDATA[${orderNumber}]]></OrderNumber><Carrier>UPS</Carrier>` +
  `<Service>Ground</Service>${tracking === null ? '' : `<TrackingNumber>${tracking}</TrackingNumber>`}<Recipient><Name>Jane</Name></Recipient><Items>` +
  items
    .map(
      (item) =>
        '<Item>' +
        (item.sku !== undefined ? `<SKU><![CDATA[${item.sku}]]></SKU>` : '') +
        `<Name><![CDATA[${item.name ?? 'A thing'}]]></Name>` +
        (item.quantity !== undefined ? `<Quantity>${item.quantity}</Quantity>` : '') +
        (item.lineItemId !== undefined ? `<LineItemID>${item.lineItemId}</LineItemID>` : '') +
        '</Item>',
    )
    .join('') +
  '</Items></ShipNotice>'

const notify = (app: FastifyInstance, body: string, query: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: `${EXCHANGE_URL}?${new URLSearchParams({ action: 'shipnotify', ...query })}`,
    headers: { ...basicAuth(), 'content-type': 'text/xml', accept: 'application/json' },
    payload: body,
  })

/** A completed order of three shippable lines (MUG 2, TEA 3, SPN 1) and a digital one; its id and line ids. */
async function orderWithLines(app: FastifyInstance, reference: string) {
  const orderId = await insertExportOrder(
    app,
    { reference },
    {
      items: [
        { sku: 'MUG', name: 'Mug', quantity: 2, price: '8.00' },
        { sku: 'TEA', name: 'Tea', quantity: 3, price: '4.00' },
        { sku: 'SPN', name: 'Spoon', quantity: 1, price: '2.00' },
        { sku: 'EBOOK', name: 'E-book', quantity: 1, price: '5.00', shippable: false },
      ],
    },
  )
  const [mug, tea, spoon, ebook] = (await app.shipments.orders.orderLines!(orderId))!.map((line) => line.id)
  return { orderId, mug, tea, spoon, ebook }
}

async function setup(t: Test, reference = 'IT-1', exchange: Record<string, unknown> = {}) {
  const app = await buildExchangeApp(t, { updateShipments: true, integrationHandle: 'shipstation-main', ...exchange })
  const events: ShipNotificationRecordedEvent[] = []
  app.shipments.events.on('shipNotificationRecorded', (event) => events.push(event))
  return { app, events, ...(await orderWithLines(app, reference)) }
}

/** The order's shipments with what matters here, oldest first. */
const shipmentsOf = async (app: FastifyInstance, orderId: number) =>
  (await app.shipments.shipments.list({ orderId, perPage: 100 })).shipments
    .sort((a, b) => a.id - b.id)
    .map(({ id, status, trackingNumber, carrier, items }) => ({ id, status, trackingNumber, carrier, items: items.map(({ lineItemId, quantity }) => ({ lineItemId, quantity })) }))

/** Per SKU: [allocated, unallocated]. */
const held = async (app: FastifyInstance, orderId: number) =>
  Object.fromEntries(((await app.shipments.shipments.allocation(orderId)).lines ?? []).map((line) => [line.sku, [line.allocated, line.unallocated]]))

const orderState = async (app: FastifyInstance, orderId: number) => {
  const row = await orderRow(app, orderId)
  return { status: row.statusHandle, tracking: (row.fields as Record<string, unknown>).shippingInfo ?? null }
}

t.test('a notification for some of the items ships exactly those in a new shipment; the order stays open', async (t) => {
  const { app, events, orderId, mug, tea } = await setup(t)
  const advanced: unknown[] = []
  app.shipments.events.on('orderAdvanced', (event) => advanced.push(event))

  const response = await notify(app, shipNotice('IT-1', [{ sku: 'MUG', quantity: 2, lineItemId: mug }, { sku: 'TEA', quantity: 1, lineItemId: tea }]))
  t.equal(response.statusCode, 200)
  t.same(response.json(), { success: true })
  const [shipment] = await shipmentsOf(app, orderId)
  t.same(await shipmentsOf(app, orderId), [
    { id: shipment.id, status: 'shipped', trackingNumber: 'T-1', carrier: 'UPS', items: [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 1 }] },
  ])
  t.match((await historyRows(app, shipment.id)).map((row) => [row.toStatus, row.sourceIntegration, row.sourceExternalCode]), [
    ['new', null, null],
    ['shipped', 'shipstation-main', 'shipnotify'],
  ])
  t.same(await held(app, orderId), { MUG: [2, 0], TEA: [1, 2], SPN: [0, 1], EBOOK: [0, 0] })
  t.same(await orderState(app, orderId), { status: 'processing', tracking: null }, 'neither the Status Handle nor the tracking entry: the rest is still to ship')
  t.same(advanced, [], "the shipment's own order advance (shippedOrderStatus) waits for the rest too")
  t.match(events, [
    {
      orderId,
      orderReference: 'IT-1',
      shipmentIds: [shipment.id],
      tracking: { carrier: 'UPS', service: 'Ground', trackingNumber: 'T-1' },
      items: { shipped: [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 1 }], notShipped: [], orderComplete: false },
    },
  ])
})

t.test('a second notification for the rest completes the order: the Status Handle and the tracking entry', async (t) => {
  const { app, events, orderId, mug, tea, spoon } = await setup(t)
  t.equal((await notify(app, shipNotice('IT-1', [{ sku: 'MUG', quantity: 2 }], 'T-1'))).statusCode, 200)
  const rest = await notify(app, shipNotice('IT-1', [{ sku: 'TEA', quantity: 3 }, { sku: 'SPN', quantity: 1 }], 'T-2'))
  t.equal(rest.statusCode, 200)
  t.same(rest.json(), { success: true })
  const [first, second] = await shipmentsOf(app, orderId)
  t.same(await shipmentsOf(app, orderId), [
    { id: first.id, status: 'shipped', trackingNumber: 'T-1', carrier: 'UPS', items: [{ lineItemId: mug, quantity: 2 }] },
    { id: second.id, status: 'shipped', trackingNumber: 'T-2', carrier: 'UPS', items: [{ lineItemId: tea, quantity: 3 }, { lineItemId: spoon, quantity: 1 }] },
  ])
  t.same(await orderState(app, orderId), { status: 'shipped', tracking: [{ carrier: 'UPS', service: 'Ground', trackingNumber: 'T-2' }] })
  t.same(await held(app, orderId), { MUG: [2, 0], TEA: [3, 0], SPN: [1, 0], EBOOK: [0, 0] })
  t.match(events[1], { shipmentIds: [second.id], items: { shipped: [{ lineItemId: tea, quantity: 3 }, { lineItemId: spoon, quantity: 1 }], notShipped: [], orderComplete: true } })
  t.equal(events.length, 2)
})

t.test("matching: LineItemID first when it names a line of the order, then SKU (the SKU's lines in turn, up to what is left of each)", async (t) => {
  const app = await buildExchangeApp(t, { updateShipments: true })
  const orderId = await insertExportOrder(
    app,
    { reference: 'IT-MATCH' },
    {
      items: [
        { sku: 'CAP', name: 'Cap (red)', quantity: 1, price: '5' },
        { sku: 'CAP', name: 'Cap (blue)', quantity: 2, price: '5' },
        { sku: ' SCARF ', name: 'Scarf', quantity: 4, price: '9' },
        { sku: null, name: 'Sticker', quantity: 1, price: '1' },
        { sku: '  ', name: 'Badge', quantity: 1, price: '1' },
      ],
    },
  )
  const [red, blue, scarf, sticker, badge] = (await app.shipments.orders.orderLines!(orderId))!.map((line) => line.id)

  // The id names the blue cap although the red one comes first with the same SKU.
  t.equal((await notify(app, shipNotice('IT-MATCH', [{ sku: 'CAP', quantity: 1, lineItemId: blue }], 'M-1'))).statusCode, 200)
  // SKU only: the first CAP line with something left is the red one; then its second unit goes to blue.
  t.equal((await notify(app, shipNotice('IT-MATCH', [{ sku: 'CAP', quantity: 2 }], 'M-2'))).statusCode, 200)
  // An id that is no line of this order, or no number at all, falls back to the SKU (trimmed on both sides).
  t.equal((await notify(app, shipNotice('IT-MATCH', [{ sku: 'SCARF', quantity: 1, lineItemId: 999_999_999 }, { sku: 'SCARF ', quantity: 1, lineItemId: 'L-7' }], 'M-3'))).statusCode, 200)
  // Lines without a SKU are named by their id only; an item whose id is no line and has no SKU names nothing.
  t.equal((await notify(app, shipNotice('IT-MATCH', [{ quantity: 1, lineItemId: sticker }, { quantity: 1, lineItemId: 'nope' }, { sku: '', quantity: 1, lineItemId: badge }], 'M-4'))).statusCode, 200)
  t.same(
    (await shipmentsOf(app, orderId)).map((shipment) => [shipment.trackingNumber, shipment.items]),
    [
      ['M-1', [{ lineItemId: blue, quantity: 1 }]],
      ['M-2', [{ lineItemId: red, quantity: 1 }, { lineItemId: blue, quantity: 1 }]],
      ['M-3', [{ lineItemId: scarf, quantity: 2 }]],
      ['M-4', [{ lineItemId: sticker, quantity: 1 }, { lineItemId: badge, quantity: 1 }]],
    ],
    'quantities are summed per line',
  )
  const lines = (await app.shipments.shipments.allocation(orderId)).lines!
  t.same(lines.map((line) => [line.id, line.allocated, line.unallocated]), [[red, 1, 0], [blue, 2, 0], [scarf, 2, 2], [sticker, 1, 0], [badge, 1, 0]])
  t.equal((await orderState(app, orderId)).status, 'processing')
})

t.test("the export's LineItemID comes back in the ShipNotice and names the line", async (t) => {
  const { app, orderId, tea } = await setup(t, 'IT-ROUND')
  const [order] = exportedOrders((await exportRequest(app)).body).orders
  const exportedTea = child(order, 'Items').children.find((item) => textOf(item, 'SKU') === 'TEA')!
  t.equal(textOf(exportedTea, 'LineItemID'), String(tea))
  // ShipStation may rename the SKU; the line id still names the line.
  const response = await notify(app, shipNotice('IT-ROUND', [{ sku: 'TEA-RENAMED', quantity: 2, lineItemId: textOf(exportedTea, 'LineItemID') }]))
  t.equal(response.statusCode, 200)
  t.match(await shipmentsOf(app, orderId), [{ status: 'shipped', items: [{ lineItemId: tea, quantity: 2 }] }])
})

t.test('an open shipment holding exactly the items ships; units are taken from open shipments when none are free', async (t) => {
  const { app, events, orderId, mug, tea, spoon } = await setup(t, 'IT-HOLD')
  // The order's shipments were staged when it completed: one for everything.
  const [staged] = await app.shipments.shipments.orderCompleted(orderId)
  t.same(await held(app, orderId), { MUG: [2, 0], TEA: [3, 0], SPN: [1, 0], EBOOK: [0, 0] })

  const partial = await notify(app, shipNotice('IT-HOLD', [{ sku: 'MUG', quantity: 1 }], 'H-1'))
  t.equal(partial.statusCode, 200)
  const [, carved] = await shipmentsOf(app, orderId)
  t.same(await shipmentsOf(app, orderId), [
    { id: staged.id, status: 'new', trackingNumber: null, carrier: null, items: [{ lineItemId: mug, quantity: 1 }, { lineItemId: tea, quantity: 3 }, { lineItemId: spoon, quantity: 1 }] },
    { id: carved.id, status: 'shipped', trackingNumber: 'H-1', carrier: 'UPS', items: [{ lineItemId: mug, quantity: 1 }] },
  ])
  t.same(await held(app, orderId), { MUG: [2, 0], TEA: [3, 0], SPN: [1, 0], EBOOK: [0, 0] }, 'never over-allocated')
  t.equal((await orderState(app, orderId)).status, 'processing')

  const rest = await notify(app, shipNotice('IT-HOLD', [{ sku: 'SPN', quantity: 1 }, { sku: 'TEA', quantity: 3 }, { sku: 'MUG', quantity: 1 }], 'H-2'))
  t.equal(rest.statusCode, 200)
  t.match(await shipmentRow(app, staged.id), { status: 'shipped', trackingNumber: 'H-2', carrier: 'UPS', service: 'Ground' }, 'the shipment that held them shipped, whatever the item order')
  t.equal((await shipmentsOf(app, orderId)).length, 2, 'no new shipment')
  t.same(await orderState(app, orderId), { status: 'shipped', tracking: [{ carrier: 'UPS', service: 'Ground', trackingNumber: 'H-2' }] })
  t.match(events.map((event) => [event.shipmentIds, event.items?.orderComplete]), [[[carved.id], false], [[staged.id], true]])
})

t.test('an open shipment emptied by a notification is cancelled; a completing one fills an open order-level shipment', async (t) => {
  const { app, orderId, mug, tea, spoon } = await setup(t, 'IT-EMPTY')
  const [mugs] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: mug, quantity: 2 }] })
  const [teas] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: tea, quantity: 3 }] })
  const [orderLevel] = await app.shipments.shipments.create(orderId)

  t.equal((await notify(app, shipNotice('IT-EMPTY', [{ sku: 'MUG', quantity: 1 }, { sku: 'TEA', quantity: 3 }], 'E-1'))).statusCode, 200)
  const after = await shipmentsOf(app, orderId)
  t.same(after.slice(0, 3), [
    { id: mugs.id, status: 'new', trackingNumber: null, carrier: null, items: [{ lineItemId: mug, quantity: 1 }] },
    { id: teas.id, status: 'cancelled', trackingNumber: null, carrier: null, items: [{ lineItemId: tea, quantity: 3 }] },
    { id: orderLevel.id, status: 'new', trackingNumber: null, carrier: null, items: [] },
  ])
  t.match(after[3], { status: 'shipped', trackingNumber: 'E-1', items: [{ lineItemId: mug, quantity: 1 }, { lineItemId: tea, quantity: 3 }] })
  t.match((await historyRows(app, teas.id)).at(-1), { toStatus: 'cancelled', message: 'Its items were shipped in another ShipStation package.', sourceExternalCode: 'shipnotify' })
  t.equal((await orderState(app, orderId)).status, 'processing', 'the order-level shipment and the rest stay open')

  // The rest, completing the order: the open order-level shipment takes the items it names.
  t.equal((await notify(app, shipNotice('IT-EMPTY', [{ sku: 'MUG', quantity: 1 }, { sku: 'SPN', quantity: 1 }], 'E-2'))).statusCode, 200)
  const final = await shipmentsOf(app, orderId)
  t.same(final.find((shipment) => shipment.id === mugs.id)?.status, 'cancelled', 'emptied in turn')
  t.same(final.find((shipment) => shipment.id === orderLevel.id), {
    id: orderLevel.id,
    status: 'shipped',
    trackingNumber: 'E-2',
    carrier: 'UPS',
    items: [{ lineItemId: mug, quantity: 1 }, { lineItemId: spoon, quantity: 1 }],
  })
  t.equal(final.length, 4, 'no shipment created for the last package')
  t.same(await held(app, orderId), { MUG: [2, 0], TEA: [3, 0], SPN: [1, 0], EBOOK: [0, 0] })
  t.equal((await orderState(app, orderId)).status, 'shipped')
})

t.test('more than is left of a line: what is left ships, the rest is reported and logged, nothing over-allocated', async (t) => {
  const logLines: string[] = []
  const app = await buildExchangeApp(t, { updateShipments: true }, {}, logLines)
  const events: ShipNotificationRecordedEvent[] = []
  app.shipments.events.on('shipNotificationRecorded', (event) => events.push(event))
  const { orderId, mug, tea } = await orderWithLines(app, 'IT-OVER')

  const response = await notify(app, shipNotice('IT-OVER', [{ sku: 'MUG', quantity: 5 }, { sku: 'GIFTWRAP', quantity: 1 }, { sku: 'TEA', quantity: 1 }], 'O-1'))
  t.equal(response.statusCode, 200)
  t.same(response.json(), { success: true })
  t.match(await shipmentsOf(app, orderId), [{ status: 'shipped', trackingNumber: 'O-1', items: [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 1 }] }])
  t.same(await held(app, orderId), { MUG: [2, 0], TEA: [1, 2], SPN: [0, 1], EBOOK: [0, 0] })
  t.same(events[0].items, {
    shipped: [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 1 }],
    notShipped: [
      { lineItemId: null, sku: 'GIFTWRAP', quantity: 1, reason: 'no-such-line' },
      { lineItemId: mug, sku: 'MUG', quantity: 3, reason: 'nothing-left' },
    ],
    orderComplete: false,
  })
  t.ok(logLines.some((line) => line.includes('"level":40') && line.includes('units not shipped') && line.includes('GIFTWRAP')), 'a warning names them')

  // Everything named has shipped already (another package, another tracking number): nothing ships again.
  const before = await shipmentsOf(app, orderId)
  const again = await notify(app, shipNotice('IT-OVER', [{ sku: 'MUG', quantity: 1 }], 'O-2'))
  t.equal(again.statusCode, 200)
  t.same(await shipmentsOf(app, orderId), before)
  t.equal(events.length, 2, 'nothing changed, and the event still reports the units it could not ship (never silently dropped)')
  t.same(events[1].items, { shipped: [], notShipped: [{ lineItemId: mug, sku: 'MUG', quantity: 1, reason: 'nothing-left' }], orderComplete: false })
  t.same(events[1].shipmentIds, [])
  t.equal((await orderState(app, orderId)).status, 'processing')
})

t.test('the same notification twice, one after the other or at once, ships once', async (t) => {
  const { app, events, orderId, mug } = await setup(t, 'IT-DUP')
  const body = shipNotice('IT-DUP', [{ sku: 'MUG', quantity: 1, lineItemId: mug }], 'D-1')
  t.equal((await notify(app, body)).statusCode, 200)
  const once = await snapshotDatabase(app)
  const repeated = await notify(app, body)
  t.equal(repeated.statusCode, 200)
  t.same(repeated.json(), { success: true })
  t.equal(await snapshotDatabase(app), once, 'a repeat changes nothing at all')
  t.equal(events.length, 1)

  // The other unit of the same line, in another package: not a repeat (another tracking number).
  t.equal((await notify(app, shipNotice('IT-DUP', [{ sku: 'MUG', quantity: 1, lineItemId: mug }], 'D-2'))).statusCode, 200)
  t.same((await shipmentsOf(app, orderId)).map((shipment) => [shipment.trackingNumber, shipment.items]), [
    ['D-1', [{ lineItemId: mug, quantity: 1 }]],
    ['D-2', [{ lineItemId: mug, quantity: 1 }]],
  ])

  // No tracking number: a repeat is the shipped shipment without one holding exactly the items.
  t.equal((await notify(app, shipNotice('IT-DUP', [{ sku: 'TEA', quantity: 1 }], null))).statusCode, 200)
  const untracked = await snapshotDatabase(app)
  t.equal((await notify(app, shipNotice('IT-DUP', [{ sku: 'TEA', quantity: 1 }], null))).statusCode, 200)
  t.equal(await snapshotDatabase(app), untracked)

  // Sent four times at once: the order's lock lets one ship, the others find it shipped.
  const race = shipNotice('IT-DUP', [{ sku: 'TEA', quantity: 2 }, { sku: 'SPN', quantity: 1 }], 'D-3')
  const responses = await Promise.all(Array.from({ length: 4 }, () => notify(app, race)))
  t.same(responses.map((response) => response.statusCode), [200, 200, 200, 200])
  const final = await shipmentsOf(app, orderId)
  t.equal(final.length, 4, 'one shipment for the four')
  t.same((await historyRows(app, final[3].id)).map((row) => row.toStatus), ['new', 'shipped'])
  t.equal((await orderState(app, orderId)).status, 'shipped')
  t.equal(events.length, 4)
  t.same(await held(app, orderId), { MUG: [2, 0], TEA: [3, 0], SPN: [1, 0], EBOOK: [0, 0] })
})

t.test("without items, or with items that name no line of the order, a notification is today's: every open shipment ships", async (t) => {
  const { app, events, orderId } = await setup(t, 'IT-NONE')
  const [open] = await app.shipments.shipments.create(orderId)
  const bare = await notify(app, '<ShipNotice><OrderNumber>IT-NONE</OrderNumber><TrackingNumber>N-1</TrackingNumber></ShipNotice>')
  t.equal(bare.statusCode, 200)
  t.same(bare.json(), { success: true })
  t.match(await shipmentRow(app, open.id), { status: 'shipped', trackingNumber: 'N-1', items: [] })
  t.same(await orderState(app, orderId), { status: 'shipped', tracking: [{ carrier: '', service: '', trackingNumber: 'N-1' }] })
  t.same(events.map((event) => Object.keys(event).sort()), [['eventId', 'orderId', 'orderReference', 'shipmentIds', 'status', 'tracking']], 'no items in the event')

  const other = await orderWithLines(app, 'IT-NONE-2')
  const [otherOpen] = await app.shipments.shipments.create(other.orderId)
  const unknown = await notify(app, shipNotice('IT-NONE-2', [{ sku: 'NOT-OURS', quantity: 1 }, { name: 'Discount', quantity: 1 }], 'N-2'))
  t.equal(unknown.statusCode, 200)
  t.match(await shipmentRow(app, otherOpen.id), { status: 'shipped', trackingNumber: 'N-2' })
  t.equal((await shipmentsOf(app, other.orderId)).length, 1, 'no shipment created')
  t.equal((await orderState(app, other.orderId)).status, 'shipped')
})

t.test('without updateShipments, items are not read: the order moves to the Status Handle, no shipment is made', async (t) => {
  const app = await buildExchangeApp(t)
  const { orderId } = await orderWithLines(app, 'IT-OFF')
  const response = await notify(app, shipNotice('IT-OFF', [{ sku: 'MUG', quantity: 'two' }], 'F-1'))
  t.equal(response.statusCode, 200)
  t.same(await shipmentsOf(app, orderId), [])
  t.same(await orderState(app, orderId), { status: 'shipped', tracking: [{ carrier: 'UPS', service: 'Ground', trackingNumber: 'F-1' }] })
})

t.test('an item without a whole-number Quantity is refused with a 400 naming it, and nothing changes', async (t) => {
  const { app, orderId, mug } = await setup(t, 'IT-BAD')
  const before = await snapshotDatabase(app)
  for (const quantity of [undefined, '', 'two', '-1', '1.5', '1e3', '99999999999']) {
    const response = await notify(app, shipNotice('IT-BAD', [{ sku: 'TEA', quantity: 1 }, { sku: 'MUG', quantity, lineItemId: mug }]))
    t.equal(response.statusCode, 400, `Quantity ${JSON.stringify(quantity)}`)
    t.same(response.json(), { name: 'Bad Request', message: 'Items/Item[2]/Quantity must be a whole number of units.', code: 0, status: 400, errorCode: 'SHIPMENTS_EXCHANGE_INVALID_PARAMETER' })
  }
  const html = await app.inject({
    method: 'POST',
    url: `${EXCHANGE_URL}?action=shipnotify`,
    headers: { ...basicAuth(), 'content-type': 'text/xml' },
    payload: shipNotice('IT-BAD', [{ sku: 'MUG', quantity: 'x' }]),
  })
  t.equal(html.statusCode, 400)
  t.match(html.body, /<p>Items\/Item\[1\]\/Quantity must be a whole number of units\.<\/p>/)
  const control = await notify(app, shipNotice('IT-BAD', [{ sku: 'MUG\u0085', quantity: 1 }]))
  t.equal(control.statusCode, 400)
  t.match(control.json().message, /^Items\/Item\[1\]\/SKU contains characters that are not allowed/)
  t.equal(await snapshotDatabase(app), before)

  // Quantity 0 ships nothing of that item; an item naming no line at all (the discount) is skipped.
  const zero = await notify(app, shipNotice('IT-BAD', [{ sku: 'MUG', quantity: 0 }, { name: 'Discount', quantity: 1 }, { sku: 'TEA', quantity: '+2' }]))
  t.equal(zero.statusCode, 200)
  t.match(await shipmentsOf(app, orderId), [{ status: 'shipped', items: [{ quantity: 2 }] }])
})

t.test('a ShipNotice listing more than 500 items is refused while it is read', async (t) => {
  const { app } = await setup(t, 'IT-MANY')
  const items = Array.from({ length: 501 }, () => ({ sku: 'MUG', quantity: 0 }))
  const response = await notify(app, shipNotice('IT-MANY', items))
  t.equal(response.statusCode, 400)
  t.equal(response.json().message, 'The ShipNotice XML body cannot be read: it lists more than 500 items.')
})

t.test('a host calls shipNotify with items directly: the same rules', async (t) => {
  const { app, events, orderId, spoon } = await setup(t, 'IT-HOST')
  const exchange = app.shipments.orderExchange!
  await exchange.shipNotify({
    orderNumber: 'IT-HOST',
    carrier: 'DHL',
    service: null,
    trackingNumber: 'X-1',
    orderId: null,
    items: [{ sku: null, name: null, quantity: ' 1 ', lineItemId: String(spoon) }],
  })
  t.match(await shipmentsOf(app, orderId), [{ status: 'shipped', carrier: 'DHL', trackingNumber: 'X-1', items: [{ lineItemId: spoon, quantity: 1 }] }])
  t.match(events, [{ items: { shipped: [{ lineItemId: spoon, quantity: 1 }], orderComplete: false } }])
  await t.rejects(
    exchange.shipNotify({ orderNumber: 'IT-HOST', carrier: null, service: null, trackingNumber: null, orderId: null, items: [{ sku: 5 as unknown as string, name: null, quantity: '1', lineItemId: null }] }),
    { statusCode: 400, message: 'Items/Item[1]/SKU must be text.' },
  )
})

t.test('an order of more than 100 shipments: all are read, and the one holding the items ships', async (t) => {
  const { app, orderId, mug } = await setup(t, 'IT-PAGES')
  await app.shipments.shipments.create(orderId, { count: 100 })
  const [holder] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: mug, quantity: 2 }] })
  t.equal((await notify(app, shipNotice('IT-PAGES', [{ sku: 'MUG', quantity: 2 }], 'P-1'))).statusCode, 200)
  t.match(await shipmentRow(app, holder.id), { status: 'shipped', trackingNumber: 'P-1' })
  t.equal((await app.shipments.shipments.list({ orderId })).total, 101, 'no shipment created')
})

t.test('a Status Handle or shippedOrderStatus that names no status: a 500, and what was done is found when sent again', async (t) => {
  const logLines: string[] = []
  // The Status Handle is applied only by a notification that completes the order: it fails before anything moves.
  const noHandle = await buildExchangeApp(t, { updateShipments: true, shippedStatus: 'dispatched' }, {}, logLines)
  const handleOrder = await orderWithLines(noHandle, 'IT-NOHANDLE')
  const partial = await notify(noHandle, shipNotice('IT-NOHANDLE', [{ sku: 'MUG', quantity: 2 }], 'S-1'))
  t.equal(partial.statusCode, 200, 'a partial notification does not touch the order')
  const before = await snapshotDatabase(noHandle)
  const completing = await notify(noHandle, shipNotice('IT-NOHANDLE', [{ sku: 'TEA', quantity: 3 }, { sku: 'SPN', quantity: 1 }], 'S-2'))
  t.equal(completing.statusCode, 500)
  t.same(completing.json(), { name: 'Internal Server Error', message: 'The shipping notification could not be applied.', code: 0, status: 500, errorCode: 'SHIPMENTS_EXCHANGE_SHIPNOTIFY_FAILED' })
  t.equal(await snapshotDatabase(noHandle), before, 'nothing moved')
  t.equal((await shipmentsOf(noHandle, handleOrder.orderId)).length, 1)

  // The shipments' own advance status does not exist: the shipment is made, but refused its move to shipped.
  const noAdvance = await buildExchangeApp(t, { updateShipments: true }, { shippedOrderStatus: 'dispatched' }, logLines)
  const advanceOrder = await orderWithLines(noAdvance, 'IT-NOADVANCE')
  const body = shipNotice('IT-NOADVANCE', [{ sku: 'MUG', quantity: 1 }], 'S-3')
  const refused = await notify(noAdvance, body)
  t.equal(refused.statusCode, 500)
  t.match(await shipmentsOf(noAdvance, advanceOrder.orderId), [{ status: 'new', items: [{ lineItemId: advanceOrder.mug, quantity: 1 }] }])
  t.ok(logLines.some((line) => line.includes('"level":50') && line.includes('its items could not be shipped')))
  await noAdvance.shipments.referenceOrders!.saveStatus({ handle: 'dispatched', name: 'Dispatched' })
  t.equal((await notify(noAdvance, body)).statusCode, 200, 'sent again once the status exists')
  t.match(await shipmentsOf(noAdvance, advanceOrder.orderId), [{ status: 'shipped', trackingNumber: 'S-3', items: [{ lineItemId: advanceOrder.mug, quantity: 1 }] }])
})

t.test("a notification waiting too long for the order's lock is a 500 and changes nothing", async (t) => {
  const logLines: string[] = []
  const app = await buildExchangeApp(t, { updateShipments: true }, { lockTimeoutMs: 100 }, logLines)
  const { orderId } = await orderWithLines(app, 'IT-LOCK')
  // A slow order store holds the first notification inside the order's lock (its lines are read under it).
  const store = app.shipments.orders
  const orderLines = store.orderLines!.bind(store)
  let release!: () => void
  let hold: Promise<void> | null = new Promise<void>((resolve) => (release = resolve))
  let entered!: () => void
  const inside = new Promise<void>((resolve) => (entered = resolve))
  store.orderLines = async (id) => {
    const held = hold
    hold = null
    if (held) {
      entered()
      await held
    }
    return orderLines(id)
  }
  const first = notify(app, shipNotice('IT-LOCK', [{ sku: 'MUG', quantity: 1 }], 'L-1'))
  await inside
  const before = await snapshotDatabase(app)
  const second = await notify(app, shipNotice('IT-LOCK', [{ sku: 'TEA', quantity: 1 }], 'L-2'))
  t.equal(second.statusCode, 500)
  t.equal(await snapshotDatabase(app), before)
  t.ok(logLines.some((line) => line.includes('held its lock too long')))
  release()
  t.equal((await first).statusCode, 200)
  t.match(await shipmentsOf(app, orderId), [{ status: 'shipped', trackingNumber: 'L-1' }])
})

t.test('the ShipNotice parser reads Items/Item where ShipStation puts them: the first of each value, other elements ignored', async (t) => {
  const { parseShipNotice } = await import('../src/order-exchange/ship-notice.js')
  const notice = parseShipNotice(
    '<ShipNotice><OrderNumber>P-1</OrderNumber><Recipient><Items><Item><SKU>NOT-AN-ITEM</SKU></Item></Items></Recipient>' +
      '<Items><Note>x</Note><Item><LineItemID>7</LineItemID><SKU><![CDATA[ A&B ]]></SKU><SKU>second</SKU><UnitPrice>9.50</UnitPrice>' +
      '<Options><Option><Name>Size</Name><Quantity>99</Quantity></Option></Options><Quantity>2</Quantity></Item>' +
      '<Item><Name>Only a name</Name></Item></Items></ShipNotice>',
  )
  t.same(notice.values.OrderNumber, 'P-1')
  t.same(notice.items, [
    { sku: ' A&B ', name: null, quantity: '2', lineItemId: '7' },
    { sku: null, name: 'Only a name', quantity: null, lineItemId: null },
  ])
})

/**
 * The notice (sent to `notifier`) reads the lines when it plans, then again when it creates its
 * shipment: in between, `taker` ships both mugs in a shipment of its own. The notice plans again,
 * answers 200 and reports the mugs as nothing left; both instances read the same, nothing over-allocated.
 */
async function unitsTakenBetweenPlanAndWrite(
  t: Test,
  { notifier, taker, events, orderId, mug, tea, reference }: { notifier: FastifyInstance; taker: FastifyInstance; events: ShipNotificationRecordedEvent[]; orderId: number; mug: number; tea: number; reference: string },
) {
  const store = notifier.shipments.orders
  const readLines = store.orderLines!.bind(store)
  let reads = 0
  store.orderLines = async (id) => {
    const lines = await readLines(id)
    if (++reads === 2) {
      const [other] = await taker.shipments.shipments.create(orderId, { items: [{ lineItemId: mug, quantity: 2 }] })
      await taker.shipments.shipments.update(other.id, { status: 'shipped', trackingNumber: 'OTHER-1' })
    }
    return lines
  }
  const response = await notify(notifier, shipNotice(reference, [{ sku: 'MUG', quantity: 2 }, { sku: 'TEA', quantity: 1 }], 'R-1'))
  t.equal(response.statusCode, 200, 'not a 500 that ShipStation would retry')
  t.same(response.json(), { success: true })
  t.ok(reads >= 3, 'the notice planned again')
  for (const app of new Set([notifier, taker])) {
    t.match(await shipmentsOf(app, orderId), [
      { status: 'shipped', trackingNumber: 'OTHER-1', items: [{ lineItemId: mug, quantity: 2 }] },
      { status: 'shipped', trackingNumber: 'R-1', items: [{ lineItemId: tea, quantity: 1 }] },
    ], 'the other request keeps its mugs; the notice ships what was left of what it named')
    t.same(await held(app, orderId), { MUG: [2, 0], TEA: [1, 2], SPN: [0, 1], EBOOK: [0, 0] }, 'nothing over-allocated')
  }
  t.equal(events.length, 1)
  t.same(events[0].items, { shipped: [{ lineItemId: tea, quantity: 1 }], notShipped: [{ lineItemId: mug, sku: 'MUG', quantity: 2, reason: 'nothing-left' }], orderComplete: false })
}

t.test('units taken by another request between the notice plan and its write: planned again, those gone reported as nothing left, a 200', async (t) => {
  const { app, events, orderId, mug, tea } = await setup(t, 'IT-RACE')
  await unitsTakenBetweenPlanAndWrite(t, { notifier: app, taker: app, events, orderId, mug, tea, reference: 'IT-RACE' })
})

/** Two instances of the package on one database (each its own pool or connection), as two processes behind a load balancer. */
async function twoInstances(t: Test, reference: string) {
  const database = await testDatabase(t)
  const options = { orderFields: ORDER_FIELDS, orderExchange: { username: EXCHANGE_USER, password: EXCHANGE_PASSWORD, updateShipments: true, integrationHandle: 'shipstation-main' } }
  const first = await buildTestApp(t, options, database)
  const second = await buildTestApp(t, options, database)
  const events: ShipNotificationRecordedEvent[] = []
  first.shipments.events.on('shipNotificationRecorded', (event) => events.push(event))
  return { first, second, events, ...(await orderWithLines(first, reference)) }
}

t.test('two instances on one database: units the other instance took between the notice plan and its write are nothing left, a 200', async (t) => {
  const { first, second, events, orderId, mug, tea } = await twoInstances(t, 'IT-TWO')
  // The other instance takes the mugs through its own connection, under the order's lock both take.
  await unitsTakenBetweenPlanAndWrite(t, { notifier: first, taker: second, events, orderId, mug, tea, reference: 'IT-TWO' })
})

t.test('two instances on one database racing notices against shipment creation for the same units: every notice a 200, nothing over-allocated', async (t) => {
  const { first, second } = await twoInstances(t, 'IT-RACE-0')
  // The creation starts later and later, so that it lands before, inside and after the notice's work.
  const delays = [0, 1, 3, 6, 10, 15, 25, 40]
  for (const [index, delay] of delays.entries()) {
    const round = index + 1
    const { orderId, mug } = await orderWithLines(first, `IT-RACE-${round}`)
    const [notice, created] = await Promise.all([
      notify(first, shipNotice(`IT-RACE-${round}`, [{ sku: 'MUG', quantity: 2 }], `R-${round}`)),
      new Promise((resolve) => setTimeout(resolve, delay)).then(() => second.shipments.shipments.create(orderId, { items: [{ lineItemId: mug, quantity: 2 }] })).then(
        () => 'created',
        (error: Error) => error.name,
      ),
    ])
    t.equal(notice.statusCode, 200, `round ${round}: the notice answers 200`)
    const mugs = (await held(second, orderId)).MUG
    t.same(mugs, [2, 0], `round ${round}: the two mugs are held once (${created})`)
    const holders = (await shipmentsOf(second, orderId)).filter((shipment) => shipment.items.some((item) => item.lineItemId === mug))
    t.equal(holders.reduce((sum, shipment) => sum + shipment.items.filter((item) => item.lineItemId === mug).reduce((units, item) => units + item.quantity, 0), 0), 2, `round ${round}: by one shipment or the other, never both`)
  }
})
