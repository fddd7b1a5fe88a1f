// Shipments of order line items: allocation against the order's lines (create, change, enable, restore,
// un-cancel), split rules, orderCompleted(), the full-coverage rule, the attention list, the API.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp, historyRows, shipmentRow } from './fixtures/app.js'
import { testDatabase } from './fixtures/database.js'
import { exited, lineMatching, spawnWorker } from './fixtures/processes.js'
import { completedOrderWithLines } from './fixtures/orders.js'
import type { ShipmentsPluginOptions } from '../src/index.js'

/** A completed reference order of three shippable lines (2, 3, 1) and a digital one; returns its id and line ids. */
async function orderWithLines(app: FastifyInstance, reference = 'L100') {
  const { orderId, lineIds } = await completedOrderWithLines(app, reference, [
    { name: 'Mug', sku: 'MUG', quantity: 2 },
    { name: 'Tea', sku: 'TEA', quantity: 3 },
    { name: 'Spoon', sku: 'SPN', quantity: 1 },
    { name: 'E-book', sku: 'EBOOK', quantity: 1, shippable: false },
  ])
  const [mug, tea, spoon, ebook] = lineIds
  return { orderId, mug, tea, spoon, ebook }
}

async function setup(t: Test, options: Partial<ShipmentsPluginOptions> = {}) {
  const app = await buildTestApp(t, options)
  return { app, ...(await orderWithLines(app)) }
}

const held = async (app: FastifyInstance, orderId: number) =>
  Object.fromEntries(((await app.shipments.shipments.allocation(orderId)).lines ?? []).map((line) => [line.sku, [line.allocated, line.unallocated]]))

t.test('a shipment holds items: shown with SKU and name in every shape, stored with the quantity ordered', async (t) => {
  const { app, orderId, mug, tea } = await setup(t)
  const events: Array<{ name: string; items: unknown }> = []
  app.shipments.events.on('shipmentCreated', (event) => events.push({ name: 'shipmentCreated', items: event.shipment.items }))
  app.shipments.events.on('shipmentStatusChanged', (event) => events.push({ name: 'shipmentStatusChanged', items: event.shipment.items }))
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 1 }] })
  t.same(shipment.items, [
    { lineItemId: mug, quantity: 2, sku: 'MUG', name: 'Mug' },
    { lineItemId: tea, quantity: 1, sku: 'TEA', name: 'Tea' },
  ])
  t.same((await shipmentRow(app, shipment.id)).items, [
    { lineItemId: mug, quantity: 2, sku: 'MUG', name: 'Mug', ordered: 2 },
    { lineItemId: tea, quantity: 1, sku: 'TEA', name: 'Tea', ordered: 3 },
  ])
  const read = await app.inject({ url: `/shipments/api/shipments/${shipment.id}`, headers: as('viewer') })
  t.same(read.json().shipment.items, shipment.items, 'the read route')
  const updated = await app.inject({ method: 'POST', url: `/shipments/api/shipments/${shipment.id}`, headers: as('admin'), payload: { carrier: 'UPS' } })
  t.same(updated.json().shipment.items, shipment.items, 'the update answer')
  t.same(await held(app, orderId), { MUG: [2, 0], TEA: [1, 2], SPN: [0, 1], EBOOK: [0, 0] })
  await app.shipments.shipments.update(shipment.id, { status: 'in_progress' })
  t.same(events, [
    { name: 'shipmentCreated', items: shipment.items },
    { name: 'shipmentStatusChanged', items: shipment.items },
  ], 'the events (and so webhooks and pushes, which carry their payloads) hold the items')
})

t.test('over-allocation is a 422 naming the line and changes nothing', async (t) => {
  const { app, orderId, mug, tea, ebook } = await setup(t)
  await app.shipments.shipments.create(orderId, { items: [{ lineItemId: mug, quantity: 2 }] })
  const refused = await app.inject({
    method: 'POST',
    url: `/shipments/api/orders/${orderId}/shipments`,
    headers: as('admin'),
    payload: { items: [{ lineItemId: tea, quantity: 1 }, { lineItemId: mug, quantity: 1 }] },
  })
  t.equal(refused.statusCode, 422)
  t.same(refused.json(), { success: false, errors: { [`items.${mug}`]: [`Line ${mug} (MUG): 1 requested, 0 of 2 left to allocate.`] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' })
  const { total } = await app.shipments.shipments.list({ orderId })
  t.equal(total, 1, 'no shipment was created')

  for (const [items, key, message] of [
    [[{ lineItemId: 999999, quantity: 1 }], 'items.999999', 'Line 999999 is not a line of this order.'],
    [[{ lineItemId: ebook, quantity: 1 }], `items.${ebook}`, `Line ${ebook} does not ship.`],
    [[{ lineItemId: tea, quantity: 4 }], `items.${tea}`, `Line ${tea} (TEA): 4 requested, 3 of 3 left to allocate.`],
    [[{ lineItemId: mug, quantity: 3 }], `items.${mug}`, `Line ${mug} (MUG): 3 requested, 0 of 2 left to allocate.`],
    [[{ lineItemId: tea, quantity: 0 }], `items.${tea}`, `Line ${tea}: the quantity must be a positive integer.`],
    [[{ lineItemId: tea, quantity: 1 }, { lineItemId: tea, quantity: 1 }], `items.${tea}`, `Line ${tea} is listed twice.`],
    ['all', 'items', 'Items must be a list of { lineItemId, quantity }.'],
  ] as const) {
    const response = await app.inject({ method: 'POST', url: `/shipments/api/orders/${orderId}/shipments`, headers: as('admin'), payload: { items } })
    t.same([response.statusCode, response.json()], [422, { success: false, errors: { [key]: [message] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' }], message)
  }
  t.equal((await app.shipments.shipments.list({ orderId })).total, 1)
  t.same(await held(app, orderId), { MUG: [2, 0], TEA: [0, 3], SPN: [0, 1], EBOOK: [0, 0] })
})

t.test('cancelling, disabling and deleting free the quantities; bringing a shipment back is refused when they are gone', async (t) => {
  const { app, orderId, mug } = await setup(t)
  const service = app.shipments.shipments
  const [first] = await service.create(orderId, { items: [{ lineItemId: mug, quantity: 2 }] })
  const post = (id: number, payload: Record<string, unknown>) => app.inject({ method: 'POST', url: `/shipments/api/shipments/${id}`, headers: as('admin'), payload })
  const refusal = { success: false, errors: { [`items.${mug}`]: [`Line ${mug} (MUG): 2 requested, 0 of 2 left to allocate.`] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' }

  for (const [free, back, check] of [
    [{ status: 'cancelled' }, { status: 'new' }, (row: { status: string }) => row.status === 'cancelled'],
    [{ enabled: false }, { enabled: true }, (row: { enabled: boolean }) => !row.enabled],
  ] as const) {
    t.equal((await post(first.id, free)).statusCode, 200, `${JSON.stringify(free)} frees the line`)
    const [second] = await service.create(orderId, { items: [{ lineItemId: mug, quantity: 2 }] })
    const response = await post(first.id, back)
    t.same([response.statusCode, response.json()], [422, refusal], `${JSON.stringify(back)} is refused while another shipment holds the line`)
    t.ok(check((await shipmentRow(app, first.id)) as never), 'and changed nothing')
    await service.softDelete(second.id)
    t.equal((await post(first.id, back)).statusCode, 200, `${JSON.stringify(back)} once the line is free again`)
  }

  await service.softDelete(first.id)
  const [third] = await service.create(orderId, { items: [{ lineItemId: mug, quantity: 1 }] })
  await t.rejects(service.restore(first.id), { name: 'ShipmentValidationError', errors: { [`items.${mug}`]: [`Line ${mug} (MUG): 2 requested, 1 of 2 left to allocate.`] } })
  t.ok((await shipmentRow(app, first.id)).dateDeleted, 'the refused restore left it deleted')
  await post(third.id, { items: [] })
  t.same((await service.restore(first.id)).items.map((item) => item.quantity), [2], 'restored once the third is order-level')
  t.same((await historyRows(app, first.id)).map((row) => row.toStatus), ['new', 'cancelled', 'new'])
})

t.test('restoring with the order: a shipment whose quantities were taken meanwhile stays cancelled, the others are restored', async (t) => {
  const logLines: string[] = []
  const app = await buildTestApp(t, { cancelWithOrderStatuses: ['cancelled'] }, undefined, logLines)
  const { orderId, mug, tea } = await orderWithLines(app)
  const service = app.shipments.shipments
  const [first] = await service.create(orderId, { items: [{ lineItemId: mug, quantity: 2 }] })
  const [second] = await service.create(orderId, { items: [{ lineItemId: tea, quantity: 1 }] })
  const [third] = await service.create(orderId, { items: [{ lineItemId: tea, quantity: 2 }] })
  await service.update(second.id, { status: 'in_progress' })
  t.same((await service.orderStatusChanged(orderId, 'cancelled')).notRestored, [], 'cancelling refuses nothing')
  const [taker] = await service.create(orderId, { items: [{ lineItemId: mug, quantity: 1 }] })

  const restored = await service.orderStatusChanged(orderId, 'processing')
  const errors = { [`items.${mug}`]: [`Line ${mug} (MUG): 2 requested, 1 of 2 left to allocate.`] }
  t.same(restored, {
    action: 'restored',
    shipments: [
      { ...restored.shipments[0], id: second.id, status: 'in_progress' },
      { ...restored.shipments[1], id: third.id, status: 'new' },
    ],
    notRestored: [{ shipmentId: first.id, errors }],
  })
  t.match(await shipmentRow(app, first.id), { status: 'cancelled', statusBeforeOrderCancel: 'new' }, 'the refused one stays cancelled, still restorable')
  t.same((await historyRows(app, first.id)).map((row) => row.message), [null, 'Cancelled with the order.'])
  t.match(await shipmentRow(app, third.id), { status: 'new', statusBeforeOrderCancel: null })
  t.same(await held(app, orderId), { MUG: [1, 1], TEA: [3, 0], SPN: [0, 1], EBOOK: [0, 0] })
  const warning = logLines.map((line) => JSON.parse(line)).find((entry) => entry.level === 40)
  t.match(warning, { shipmentId: first.id, orderId, errors, msg: new RegExp(`^Shipment ${first.id} stays cancelled.*2 requested, 1 of 2 left`) }, 'the refusal is logged as a warning')

  await service.softDelete(taker.id)
  const again = await service.orderStatusChanged(orderId, 'processing')
  t.same([again.shipments.map((shipment) => [shipment.id, shipment.status]), again.notRestored], [[[first.id, 'new']], []], 'restored once its quantities are free')
})

t.test("changing a shipment's items: replaced, checked against the others, [] makes it order-level", async (t) => {
  const { app, orderId, mug, tea } = await setup(t)
  const service = app.shipments.shipments
  const [a] = await service.create(orderId, { items: [{ lineItemId: tea, quantity: 2 }] })
  const [b] = await service.create(orderId, { items: [{ lineItemId: tea, quantity: 1 }] })
  const post = (id: number, payload: Record<string, unknown>) => app.inject({ method: 'POST', url: `/shipments/api/shipments/${id}`, headers: as('admin'), payload })
  let response = await post(b.id, { items: [{ lineItemId: tea, quantity: 2 }] })
  t.same([response.statusCode, response.json().errors], [422, { [`items.${tea}`]: [`Line ${tea} (TEA): 2 requested, 1 of 3 left to allocate.`] }])
  response = await post(a.id, { items: [{ lineItemId: tea, quantity: 1 }, { lineItemId: mug, quantity: 2 }], carrier: 'DHL' })
  t.equal(response.statusCode, 200)
  t.same(response.json().shipment.items.map((item: { sku: string; quantity: number }) => [item.sku, item.quantity]), [['TEA', 1], ['MUG', 2]])
  t.equal(response.json().shipment.carrier, 'DHL')
  t.equal((await post(b.id, { items: [{ lineItemId: tea, quantity: 2 }] })).statusCode, 200, 'the freed quantity can be taken')
  // Regression: more than was ordered read "Line 2: 4 requested, 3 ordered." here and "... left to allocate." on creation.
  response = await post(b.id, { items: [{ lineItemId: tea, quantity: 4 }] })
  t.same([response.statusCode, response.json().errors], [422, { [`items.${tea}`]: [`Line ${tea} (TEA): 4 requested, 2 of 3 left to allocate.`] }], 'more than was ordered: the same wording, what this shipment holds counted as its own')
  const created = await app.inject({ method: 'POST', url: `/shipments/api/orders/${orderId}/shipments`, headers: as('admin'), payload: { items: [{ lineItemId: tea, quantity: 4 }] } })
  t.same(created.json().errors, { [`items.${tea}`]: [`Line ${tea} (TEA): 4 requested, 0 of 3 left to allocate.`] }, 'and on creation')
  response = await post(b.id, { items: [{ lineItemId: tea, quantity: 0 }] })
  t.same(response.json().errors, { [`items.${tea}`]: [`Line ${tea}: the quantity must be a positive integer.`] }, 'a bad quantity is keyed by its line on update too')
  response = await post(a.id, { items: [] })
  t.same(response.json().shipment.items, [])
  t.same(await held(app, orderId), { MUG: [0, 2], TEA: [2, 1], SPN: [0, 1], EBOOK: [0, 0] })
})

t.test('split rules and orderCompleted(): what is left, once', async (t) => {
  const byFirstLetter = (lines: ReadonlyArray<{ id: number; sku: string | null; remaining: number }>) => {
    const groups = new Map<string, Array<{ lineItemId: number; quantity: number }>>()
    for (const line of lines) {
      const key = (line.sku ?? '?')[0]
      groups.set(key, [...(groups.get(key) ?? []), { lineItemId: line.id, quantity: line.remaining }])
    }
    return [...groups.values()]
  }
  const { app, orderId, mug, tea, spoon } = await setup(t, { splitRules: { byFirstLetter } })
  const service = app.shipments.shipments
  await service.create(orderId, { items: [{ lineItemId: tea, quantity: 1 }] })

  const perLine = await service.create(orderId, { rule: 'perLine' })
  t.same(perLine.map((shipment) => shipment.items.map((item) => [item.sku, item.quantity])), [[['MUG', 2]], [['TEA', 2]], [['SPN', 1]]])
  t.same(await service.create(orderId, { rule: 'remaining' }), [], 'nothing is left')
  t.same(await service.orderCompleted(orderId), [], 'orderCompleted creates nothing more')
  await t.rejects(service.create(orderId, { rule: 'nope' }), { name: 'ShipmentValidationError', errors: { rule: ['No split rule "nope".'] } })

  const other = await orderWithLines(app, 'L200')
  const created = await service.orderCompleted(other.orderId, { rule: 'byFirstLetter' })
  t.same(created.map((shipment) => shipment.items.map((item) => item.sku)), [['MUG'], ['TEA'], ['SPN']].map((skus) => skus), 'a host rule by name')
  const third = await orderWithLines(app, 'L300')
  const [all] = await service.orderCompleted(third.orderId)
  t.same(all.items.map((item) => [item.sku, item.quantity]), [['MUG', 2], ['TEA', 3], ['SPN', 1]], 'the default rule: one shipment for everything left')
  t.same(await service.orderCompleted(third.orderId), [], 'calling it twice creates nothing more')
  t.equal((await service.list({ orderId: third.orderId })).total, 1)
  void mug
  void spoon
})

t.test('the full-coverage rule: the order advances only when every shippable line is shipped in full', async (t) => {
  const { app, orderId, mug, tea, spoon } = await setup(t, { requireFullCoverage: true })
  const service = app.shipments.shipments
  const [first] = await service.create(orderId, { items: [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 3 }] })
  await service.update(first.id, { status: 'shipped' })
  const order = async () => (await app.shipments.orders.findOrder(orderId))!.statusHandle
  t.equal(await order(), 'processing', 'every shipment is shipped, but the spoon is not allocated: no advance')
  const [second] = await service.create(orderId, { items: [{ lineItemId: spoon, quantity: 1 }] })
  await service.update(second.id, { status: 'shipped' })
  t.equal(await order(), 'shipped', 'the last line shipped advances the order')

  const plain = await buildTestApp(t, { requireFullCoverage: false })
  const other = await orderWithLines(plain, 'L900')
  const [only] = await plain.shipments.shipments.create(other.orderId, { items: [{ lineItemId: other.mug, quantity: 1 }] })
  await plain.shipments.shipments.update(only.id, { status: 'shipped' })
  t.equal((await plain.shipments.orders.findOrder(other.orderId))!.statusHandle, 'shipped', 'requireFullCoverage: false, as 0.2.0 did: every enabled shipment shipped')
})

// Regression: an order was marked shipped with units still unallocated, under the default options.
t.test('the default coverage follows the order store: with lines, an order whose shipments hold lines advances once every unit shipped; an explicit value wins', async (t) => {
  const { app, orderId, mug, tea, spoon } = await setup(t)
  const service = app.shipments.shipments
  const order = async () => (await app.shipments.orders.findOrder(orderId))!.statusHandle
  const [part] = await service.create(orderId, { items: [{ lineItemId: mug, quantity: 2 }] })
  await service.update(part.id, { status: 'shipped' })
  t.equal(await order(), 'processing', 'the reference store gives lines: part of the order shipped does not advance it')
  const [orderLevel] = await service.create(orderId)
  await service.update(orderLevel.id, { status: 'shipped' })
  t.equal(await order(), 'processing', 'beside a shipment that holds lines, an order-level one (which holds none) does not complete the order')
  t.match((await service.attention()).orders, [{ orderId, linesMissing: 2, unitsMissing: 4 }], 'the order is on the attention list')
  const [rest] = await service.create(orderId, { items: [{ lineItemId: tea, quantity: 3 }, { lineItemId: spoon, quantity: 1 }] })
  await service.update(rest.id, { status: 'shipped' })
  t.equal(await order(), 'shipped', 'every unit shipped: the order advances')

  // An order shipped as order-level shipments only is shipped as a whole (spec 3.5), and listed for attention.
  const whole = await orderWithLines(app, 'L200')
  const [first, second] = await service.create(whole.orderId, { count: 2 })
  await service.update(first.id, { status: 'shipped' })
  t.equal((await app.shipments.orders.findOrder(whole.orderId))!.statusHandle, 'processing', 'one of two order-level shipments shipped: no advance')
  await service.update(second.id, { status: 'shipped' })
  t.equal((await app.shipments.orders.findOrder(whole.orderId))!.statusHandle, 'shipped', 'every order-level shipment shipped: the order advances')
  t.match((await service.attention()).orders, [{ orderId: whole.orderId, reference: 'L200', linesMissing: 3, unitsMissing: 6 }], 'and is on the attention list: its shipments hold no line')

  const strict = await buildTestApp(t, { requireFullCoverage: true })
  const strictOrder = await orderWithLines(strict, 'L300')
  const [orderLevelOnly] = await strict.shipments.shipments.create(strictOrder.orderId)
  await strict.shipments.shipments.update(orderLevelOnly.id, { status: 'shipped' })
  t.equal((await strict.shipments.orders.findOrder(strictOrder.orderId))!.statusHandle, 'processing', 'an explicit true keeps its meaning: order-level shipments cover no line')

  const statuses: string[] = []
  const linesFree = await buildTestApp(t, {
    orderStore: {
      findOrder: async (id) => (id === 5 ? { id: 5, reference: 'NL-5', statusHandle: 'processing', isCompleted: true } : null),
      findOrderByReference: async () => null,
      setOrderStatus: async (_id, status) => void statuses.push(status),
    },
  })
  const [onlyShipment] = await linesFree.shipments.shipments.create(5)
  await linesFree.shipments.shipments.update(onlyShipment.id, { status: 'shipped' })
  await linesFree.shipments.outbox.sweep()
  t.same(statuses, ['shipped'], 'a store without lines: every enabled shipment shipped advances the order, as before')
})

t.test('the attention list: completed orders whose active shipments leave shippable lines uncovered', async (t) => {
  const { app, orderId, mug, tea, spoon } = await setup(t)
  const full = await orderWithLines(app, 'L500')
  await app.shipments.shipments.orderCompleted(full.orderId)
  await app.shipments.referenceOrders!.createOrder({ reference: 'OPEN1', isCompleted: false, items: [{ name: 'X', quantity: 1 }] })
  await app.shipments.shipments.create(orderId, { items: [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 1 }] })

  const response = await app.inject({ url: '/shipments/api/attention', headers: as('viewer') })
  t.equal(response.statusCode, 200)
  t.match(response.json(), {
    success: true,
    orders: [{ orderId, reference: 'L100', statusHandle: 'processing', linesMissing: 2, unitsMissing: 3 }],
    pagination: { page: 1, perPage: 50, total: 1, pages: 1 },
  })
  t.equal((await app.inject({ url: '/shipments/api/attention', headers: as('nobody') })).statusCode, 403)
  await app.shipments.shipments.create(orderId, { items: [{ lineItemId: tea, quantity: 2 }, { lineItemId: spoon, quantity: 1 }] })
  t.same((await app.shipments.shipments.attention()).orders, [], 'covered: off the list at once')

  const allocation = await app.inject({ url: `/shipments/api/orders/${orderId}/allocation`, headers: as('viewer') })
  t.same(allocation.json().lines.map((line: { sku: string; allocated: number; unallocated: number }) => [line.sku, line.allocated, line.unallocated]), [
    ['MUG', 2, 0],
    ['TEA', 3, 0],
    ['SPN', 1, 0],
    ['EBOOK', 0, 0],
  ])
  t.equal((await app.inject({ url: '/shipments/api/orders/424242/allocation', headers: as('viewer') })).statusCode, 404)
})

t.test('competing allocations from several processes never over-allocate a line', async (t) => {
  const database = await testDatabase(t, 'compete')
  const app = await buildTestApp(t, {}, database)
  const { orderId, tea } = await orderWithLines(app)
  const workers = [0, 1, 2].map(() => spawnWorker([database, 'allocate', String(orderId), String(tea), '1', '6']))
  await Promise.all(workers.map((worker) => lineMatching(worker, (line) => line === 'ready')))
  // Listening before the release: a worker's answer must not arrive with no one reading.
  const remote = Promise.all(workers.map(async (worker) => JSON.parse(await lineMatching(worker, (line) => line.startsWith('['))) as string[]))
  for (const worker of workers) worker.stdin!.write('go\n')
  const local = Promise.all(Array.from({ length: 6 }, () => app.shipments.shipments.create(orderId, { items: [{ lineItemId: tea, quantity: 1 }] }).then(() => 'created', (error: Error) => error.name)))
  const outcomes = [...(await local), ...(await remote).flat()]
  await Promise.all(workers.map((worker) => exited(worker)))
  t.equal(outcomes.filter((outcome) => outcome === 'created').length, 3, 'exactly the three units ordered were allocated')
  t.equal(outcomes.filter((outcome) => outcome === 'ShipmentValidationError').length, 21, 'every other attempt was refused as over-allocation')
  t.same(await held(app, orderId), { MUG: [0, 2], TEA: [3, 0], SPN: [0, 1], EBOOK: [0, 0] })
})

t.test('several processes completing the same order at once create its shipments once', async (t) => {
  const database = await testDatabase(t, 'complete')
  const app = await buildTestApp(t, {}, database)
  const { orderId } = await orderWithLines(app)
  const workers = [0, 1].map(() => spawnWorker([database, 'complete', String(orderId), '3']))
  await Promise.all(workers.map((worker) => lineMatching(worker, (line) => line === 'ready')))
  const remote = Promise.all(workers.map(async (worker) => JSON.parse(await lineMatching(worker, (line) => line.startsWith('['))) as Array<number | string>))
  for (const worker of workers) worker.stdin!.write('go\n')
  const local = Promise.all(Array.from({ length: 3 }, () => app.shipments.shipments.orderCompleted(orderId).then((created) => created.length, (error: Error) => error.name)))
  const outcomes = [...(await local), ...(await remote).flat()]
  await Promise.all(workers.map((worker) => exited(worker)))
  t.same(outcomes.filter((outcome) => outcome !== 0), [1], 'one call of nine created the one shipment; the others found nothing left and no error')
  t.same(await held(app, orderId), { MUG: [2, 0], TEA: [3, 0], SPN: [1, 0], EBOOK: [0, 0] }, 'every unit allocated once')
  t.equal((await app.shipments.shipments.list({ orderId })).total, 1)
})
