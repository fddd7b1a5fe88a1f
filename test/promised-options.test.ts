// README promises no other test touches: custom prefixes, a host order store end to end, providers
// registered after registration, retryable integration errors, perPage bounds, and the 422 of a save
// the database refuses. Every test checks the status, the body and what was (or was not) stored.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import {
  defineProvider,
  DuplicateProviderError,
  IntegrationError,
  UnknownOrderStatusError,
  type ExportOrder,
  type ExportOrdersPage,
  type ExportOrdersQuery,
  type OrderStore,
  type OrderSummary,
  type ShipNotificationChange,
  type ShipNotificationResult,
} from '../src/index.js'
import { as, buildTestApp, historyRows, insertOrder, orderRow, orderWithShipments, postUpdate, shipmentRow } from './fixtures/app.js'
import { rawQuery, tables, TEST_ENGINE } from './fixtures/database.js'
import { basicAuth, EXCHANGE_PASSWORD, EXCHANGE_USER, exportedOrders, insertExportOrder, textOf } from './fixtures/exchange.js'

const DEFAULT_EXCHANGE_URL = '/actions/shippingplatformconnect/orders/process'

/** Fastify's own answer for a path nothing is mounted on (not the plugin's "Shipment 7 not found."). */
function isUnmountedRoute(t: Test, response: { statusCode: number; json(): unknown }, what: string) {
  t.equal(response.statusCode, 404, `${what}: 404`)
  t.match(response.json(), { statusCode: 404, error: 'Not Found', message: /^Route [A-Z]+:.* not found$/ }, `${what}: no route there`)
}

/** The steps of a shipment's history, `from>to`, creation included. */
const steps = async (app: FastifyInstance, id: number) => (await historyRows(app, id)).map((row) => `${row.fromStatus}>${row.toStatus}`)

// ---------------------------------------------------------------------------------------------------
// prefixes

t.test('prefixes: each surface answers under its custom prefix, and the default paths are not mounted', async (t) => {
  let gatewayCalls = 0
  const countingProvider = defineProvider({
    id: 'counting',
    settingsSchema: Type.Object({}),
    async handleGatewayRequest(request) {
      gatewayCalls++
      return { status: 202, body: { received: request.rawBody.toString('utf8') } }
    },
  })
  const app = await buildTestApp(t, {
    prefixes: { shipmentApi: '/admin/ship-api', gateway: '/hooks/in', orderExchange: '/ss/custom-store' },
    providers: [countingProvider],
    orderExchange: { username: EXCHANGE_USER, password: EXCHANGE_PASSWORD },
  })
  const orderId = await insertExportOrder(app, { reference: 'PFX-1' })
  const [{ id }] = await app.shipments.shipments.create(orderId)
  await app.shipments.integrations.create({ name: 'Counting', handle: 'counting', providerId: 'counting' })

  // Shipment API
  const update = (url: string) =>
    app.inject({ method: 'POST', url, headers: { ...as('admin'), 'content-type': 'application/json' }, payload: { carrier: url } })
  isUnmountedRoute(t, await update(`/shipments/api/shipments/${id}`), 'default shipment API update')
  isUnmountedRoute(t, await app.inject({ url: `/shipments/api/shipments/${id}`, headers: as('admin') }), 'default shipment API read')
  t.equal((await shipmentRow(app, id)).carrier, null, 'nothing was updated through the default path')
  let response = await update(`/admin/ship-api/shipments/${id}`)
  t.equal(response.statusCode, 200)
  t.match(response.json(), { success: true, shipment: { id, carrier: `/admin/ship-api/shipments/${id}` } })
  t.equal((await shipmentRow(app, id)).carrier, `/admin/ship-api/shipments/${id}`, 'stored through the custom prefix')
  response = await app.inject({ url: `/admin/ship-api/shipments?orderId=${orderId}`, headers: as('admin') })
  t.equal(response.statusCode, 200)
  t.same(response.json().shipments.map((shipment: { id: number }) => shipment.id), [id])

  // Gateway
  isUnmountedRoute(t, await app.inject({ method: 'POST', url: '/actions/shipments/gateway/handle?integration=counting', payload: 'x' }), 'default gateway')
  t.equal(gatewayCalls, 0, 'the provider was not called through the default path')
  response = await app.inject({ method: 'POST', url: '/hooks/in/handle?integration=counting', headers: { 'content-type': 'text/plain' }, payload: 'hello' })
  t.equal(response.statusCode, 202)
  t.same(response.json(), { received: 'hello' })
  t.equal(gatewayCalls, 1)

  // Order exchange
  const exchange = (base: string, query: Record<string, string>) =>
    app.inject({ method: 'POST', url: `${base}?${new URLSearchParams(query)}`, headers: basicAuth() })
  const notify = { action: 'shipnotify', order_number: 'PFX-1', carrier: 'UPS' }
  isUnmountedRoute(t, await exchange(DEFAULT_EXCHANGE_URL, notify), 'default order exchange shipnotify')
  isUnmountedRoute(t, await exchange(DEFAULT_EXCHANGE_URL, { action: 'export' }), 'default order exchange export')
  t.equal((await orderRow(app, orderId)).statusHandle, 'processing', 'no notification applied through the default path')
  response = await exchange('/ss/custom-store/process', { action: 'export' })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^text\/xml/)
  t.same(exportedOrders(response.body).numbers, ['PFX-1'])
  response = await exchange('/ss/custom-store/process', notify)
  t.equal(response.statusCode, 200)
  t.same(response.json(), { success: true })
  t.equal((await orderRow(app, orderId)).statusHandle, 'shipped', 'the notification applied through the custom prefix')
})

// ---------------------------------------------------------------------------------------------------
// A host order store

interface HostOrder extends OrderSummary {
  tracking: Record<string, string> | null
  dateUpdated: Date
}

/** A host's own orders, in memory: what a shop with its own order tables implements. */
function createMemoryOrderStore(orders: HostOrder[], statuses: string[]) {
  const byId = new Map(orders.map((order) => [order.id, order]))
  const summary = ({ id, reference, statusHandle, isCompleted }: HostOrder): OrderSummary => ({ id, reference, statusHandle, isCompleted })
  const calls = {
    setOrderStatus: [] as Array<[number, string]>,
    exportOrders: [] as ExportOrdersQuery[],
    recordShipNotification: [] as Array<[number, ShipNotificationChange]>,
  }
  const exportOrder = (order: HostOrder): ExportOrder => ({
    id: order.id,
    reference: order.reference,
    statusHandle: order.statusHandle,
    total: '42.50',
    tax: '0',
    shipping: '4.50',
    discount: '0',
    couponCode: null,
    paymentMethod: 'card',
    shippingMethod: 'Ground',
    customerCode: `cust-${order.id}`,
    email: 'host@example.com',
    internalNotes: null,
    customerNotes: null,
    isGift: false,
    giftMessage: null,
    customFields: [null, null, null],
    dateOrdered: order.dateUpdated,
    dateUpdated: order.dateUpdated,
    billingAddress: null,
    shippingAddress: {
      name: 'Host Customer',
      company: null,
      address1: '1 Host Street',
      address2: null,
      city: 'Hosttown',
      state: 'CA',
      postalCode: '90001',
      country: 'US',
      phone: null,
      email: null,
    },
    items: [{ sku: `SKU-${order.id}`, name: 'Host item', weight: 1, weightUnit: 'lb', quantity: 2, unitPrice: '19.00', imageUrl: null, options: {} }],
    problems: [],
  })
  const store: OrderStore = {
    async findOrder(orderId) {
      const order = byId.get(orderId)
      return order ? summary(order) : null
    },
    async findOrderByReference(reference) {
      const order = orders.find((candidate) => candidate.reference === reference)
      return order ? summary(order) : null
    },
    async setOrderStatus(orderId, statusHandle) {
      calls.setOrderStatus.push([orderId, statusHandle])
      if (!statuses.includes(statusHandle)) throw new UnknownOrderStatusError(statusHandle)
      byId.get(orderId)!.statusHandle = statusHandle
    },
    async exportOrders(query): Promise<ExportOrdersPage> {
      calls.exportOrders.push(query)
      const completed = orders.filter((order) => order.isCompleted)
      const start = (query.page - 1) * query.pageSize
      return { orders: completed.slice(start, start + query.pageSize).map(exportOrder), total: completed.length }
    },
    async recordShipNotification(orderId, change): Promise<ShipNotificationResult> {
      calls.recordShipNotification.push([orderId, change])
      if (!statuses.includes(change.statusHandle)) throw new UnknownOrderStatusError(change.statusHandle)
      const order = byId.get(orderId)!
      const tracking = change.tracking ? change.tracking.values : order.tracking
      const changed = order.statusHandle !== change.statusHandle || JSON.stringify(tracking) !== JSON.stringify(order.tracking)
      order.statusHandle = change.statusHandle
      order.tracking = tracking
      return { changed, trackingSkipped: null }
    },
  }
  return { store, calls, byId }
}

const hostOrder = (id: number, reference: string, isCompleted = true): HostOrder => ({
  id,
  reference,
  statusHandle: 'paid',
  isCompleted,
  tracking: null,
  dateUpdated: new Date(Date.UTC(2026, 0, 10, 12, id % 60)),
})

t.test('a host orderStore: shipments are created on its orders and shipping them all advances it once', async (t) => {
  const host = createMemoryOrderStore([hostOrder(5001, 'HOST-5001'), hostOrder(5002, 'HOST-5002')], ['paid', 'dispatched'])
  const app = await buildTestApp(t, { orderStore: host.store, shippedOrderStatus: 'dispatched' })
  t.equal(app.shipments.orders, host.store, 'app.shipments.orders is the host store')
  const advanced: unknown[] = []
  app.shipments.events.on('orderAdvanced', (event) => advanced.push(event))

  // Order 5001 exists only in the host store: the reference store would answer "not found".
  const created = await app.shipments.shipments.create(5001, { count: 3 })
  t.same(created.map((shipment) => shipment.reference), ['HOST-5001-s001', 'HOST-5001-s002', 'HOST-5001-s003'])
  t.same(created.map((shipment) => shipment.orderId), [5001, 5001, 5001])
  await t.rejects(app.shipments.shipments.create(7777), { code: 'SHIPMENTS_ORDER_NOT_FOUND', statusCode: 404 }, 'unknown to the host store')

  for (const [index, shipment] of created.entries()) {
    const response = await postUpdate(app, shipment.id, { status: 'shipped', trackingNumber: `T-${index}` })
    t.equal(response.statusCode, 200)
    t.match(response.json(), { success: true, shipment: { id: shipment.id, status: 'shipped', trackingNumber: `T-${index}` } })
    t.same(await steps(app, shipment.id), ['null>new', 'new>shipped'])
    if (index < created.length - 1) t.same(host.calls.setOrderStatus, [], `not advanced while ${created.length - index - 1} are unshipped`)
  }
  t.same(host.calls.setOrderStatus, [[5001, 'dispatched']], 'advanced once, with shippedOrderStatus, when the last one shipped')
  t.equal(host.byId.get(5001)!.statusHandle, 'dispatched')
  t.equal(host.byId.get(5002)!.statusHandle, 'paid', 'the other order is untouched')
  t.match(advanced, [{ orderId: 5001, status: 'dispatched', shipmentId: created[2].id }])

  // Moving one back and shipping it again does not advance the order a second time.
  t.equal((await postUpdate(app, created[0].id, { status: 'in_progress' })).statusCode, 200)
  t.equal((await postUpdate(app, created[0].id, { status: 'shipped' })).statusCode, 200)
  t.equal(host.calls.setOrderStatus.length, 1, 'still once')

  // The package's own order tables were never used.
  t.same(await tables(app).db.select().from(tables(app).schema.orders), [])
})

t.test('a host orderStore: the order exchange exports and records ship notifications through it', async (t) => {
  const host = createMemoryOrderStore(
    [hostOrder(6001, 'HX-6001'), hostOrder(6002, 'HX-6002'), hostOrder(6003, 'HX-6003'), hostOrder(6004, 'HX-OPEN', false)],
    ['paid', 'shipped', 'dispatched'],
  )
  const app = await buildTestApp(t, {
    orderStore: host.store,
    shippedOrderStatus: 'dispatched',
    orderExchange: { username: EXCHANGE_USER, password: EXCHANGE_PASSWORD, pageSize: 2, updateShipments: true },
  })
  const [shipment] = await app.shipments.shipments.create(6002)
  const exchange = (query: Record<string, string>, accept = 'application/json') =>
    app.inject({ method: 'POST', url: `${DEFAULT_EXCHANGE_URL}?${new URLSearchParams(query)}`, headers: { ...basicAuth(), accept } })

  // Export: the host's completed orders, paged by the exchange's pageSize.
  let response = await exchange({ action: 'export', page: '2' })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^text\/xml/)
  const page = exportedOrders(response.body)
  t.equal(page.pages, 2, 'three completed host orders in pages of two')
  t.same(page.numbers, ['HX-6003'])
  t.equal(textOf(page.orders[0], 'OrderID'), '6003')
  t.same(host.calls.exportOrders, [{ window: null, store: null, page: 2, pageSize: 2, includeInvalid: false }])

  // Ship notification: recorded on the host order, and the order's open shipment moves to shipped.
  response = await exchange({ action: 'shipnotify', order_number: 'HX-6002', carrier: 'UPS', service: 'Ground', tracking_number: '1ZHOST' })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { success: true })
  const change = { statusHandle: 'shipped', tracking: { fieldHandle: 'shippingInfo', values: { carrier: 'UPS', service: 'Ground', trackingNumber: '1ZHOST' } } }
  // Recorded first; the shipment's own advance then sets shippedOrderStatus, and the notification's
  // status is put back on the order.
  t.same(host.calls.recordShipNotification, [[6002, change], [6002, change]])
  t.same(host.calls.setOrderStatus, [[6002, 'dispatched']])
  t.match(host.byId.get(6002), { statusHandle: 'shipped', tracking: { carrier: 'UPS', service: 'Ground', trackingNumber: '1ZHOST' } })
  t.match(await shipmentRow(app, shipment.id), { status: 'shipped', carrier: 'UPS', service: 'Ground', trackingNumber: '1ZHOST' })
  t.match((await historyRows(app, shipment.id))[1], { fromStatus: 'new', toStatus: 'shipped', sourceIntegration: 'shipstation', sourceExternalCode: 'shipnotify' })

  // An order number the host store does not know is a 404 and records nothing.
  response = await exchange({ action: 'shipnotify', order_number: 'NOPE' })
  t.equal(response.statusCode, 404)
  t.match(response.json(), { name: 'Not Found', message: /NOPE/, code: 0, status: 404 })
  t.equal(host.calls.recordShipNotification.length, 2)
  t.same(await tables(app).db.select().from(tables(app).schema.orders), [], "the package's order tables stayed empty")
})

// ---------------------------------------------------------------------------------------------------
// providers.register() after registration, and retryable integration errors

const lateProvider = defineProvider({
  id: 'late-3pl',
  settingsSchema: Type.Object({ shipmentId: Type.Integer() }),
  async handleGatewayRequest(request, context) {
    const result = await context.shipments.update(context.settings.shipmentId, {
      status: 'fulfilled',
      integrationHandle: context.integration.handle,
      externalCode: 'PACKED',
    })
    return { status: 200, headers: { 'x-handled-by': 'late-3pl' }, body: { ok: true, status: result.shipment.status, method: request.method } }
  },
})

t.test('providers.register() adds a provider after registration; a duplicate id is refused', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const { integrations, providers } = app.shipments

  await t.rejects(
    integrations.create({ name: 'Late', handle: 'late', providerId: 'late-3pl', settings: { shipmentId: id } }),
    { name: 'IntegrationConfigError', message: /^providerId: no provider "late-3pl"/ },
    'unknown before it is registered',
  )
  providers.register(lateProvider)
  t.equal(providers.get('late-3pl'), lateProvider)
  t.same(providers.list().map((provider) => provider.id), ['signed-webhook', 'easypost', 'aftership', 'late-3pl'])
  const integration = await integrations.create({ name: 'Late', handle: 'late', providerId: 'late-3pl', settings: { shipmentId: id } })
  t.match(integration, { handle: 'late', providerId: 'late-3pl', enabled: true })

  const impostor = defineProvider({
    id: 'late-3pl',
    settingsSchema: Type.Object({}),
    async handleGatewayRequest() {
      return { status: 418, body: 'impostor' }
    },
  })
  t.throws(() => providers.register(impostor), DuplicateProviderError)
  t.throws(() => providers.register(impostor), { message: 'A provider with the id "late-3pl" is already registered' })
  t.throws(() => providers.register({ ...impostor, id: 'signed-webhook' }), DuplicateProviderError, 'the built-in id is taken too')
  t.equal(providers.get('late-3pl'), lateProvider, 'the refused duplicate replaced nothing')

  const response = await app.inject({ method: 'PUT', url: '/actions/shipments/gateway/handle?integration=late', payload: '' })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['x-handled-by'], 'late-3pl')
  t.same(response.json(), { ok: true, status: 'fulfilled', method: 'PUT' })
  t.equal((await shipmentRow(app, id)).status, 'fulfilled')
  t.match(await historyRows(app, id), [{ toStatus: 'new' }, { fromStatus: 'new', toStatus: 'fulfilled', sourceIntegration: 'late', sourceExternalCode: 'PACKED' }])
})

t.test('IntegrationError with retryable: true answers like any integration error and keeps the flag', async (t) => {
  const thrown: IntegrationError[] = []
  const flaky = defineProvider({
    id: 'flaky',
    settingsSchema: Type.Object({ retryable: Type.Boolean(), shipmentId: Type.Integer() }),
    async handleGatewayRequest(_request, context) {
      const error = context.settings.retryable
        ? new IntegrationError('Carrier API is busy, try again later.', { retryable: true })
        : new IntegrationError('Unknown tracking number.')
      thrown.push(error)
      throw error
    },
  })
  const logLines: string[] = []
  const app = await buildTestApp(t, { providers: [flaky] }, undefined, logLines)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  await app.shipments.integrations.create({ name: 'Busy', handle: 'busy', providerId: 'flaky', settings: { retryable: true, shipmentId: id } })
  await app.shipments.integrations.create({ name: 'Final', handle: 'final', providerId: 'flaky', settings: { retryable: false, shipmentId: id } })

  let response = await app.inject({ method: 'POST', url: '/actions/shipments/gateway/handle?integration=busy', payload: '{}' })
  t.equal(response.statusCode, 400)
  t.same(response.json(), { name: 'Bad Request', message: 'Carrier API is busy, try again later.', code: 0, status: 400, errorCode: 'SHIPMENTS_INTEGRATION_ERROR' })
  response = await app.inject({ method: 'POST', url: '/actions/shipments/gateway/handle?integration=final', payload: '{}' })
  t.equal(response.statusCode, 400)
  t.same(response.json(), { name: 'Bad Request', message: 'Unknown tracking number.', code: 0, status: 400, errorCode: 'SHIPMENTS_INTEGRATION_ERROR' }, 'the same envelope either way')

  t.equal(thrown.length, 2)
  t.equal(thrown[0].retryable, true, 'retryable kept on the error')
  t.equal(thrown[1].retryable, false, 'default false')
  t.equal(new IntegrationError('plain').retryable, false)
  t.equal(thrown[0].code, 'SHIPMENTS_INTEGRATION_ERROR')
  // A refusal is the sender's business: a warning with the reason and the flag, no stack, no error entry.
  const entries = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.integration === 'busy')
  t.match(entries.filter((entry) => entry.level === 40), [{ reason: 'Carrier API is busy, try again later.', retryable: true, msg: 'Integration request refused' }])
  t.same(entries.filter((entry) => entry.level >= 50), [], 'no error-level entry')
  t.notOk(logLines.some((line) => line.includes('"stack"')), 'no stack trace logged')
  t.same(await steps(app, id), ['null>new'], 'nothing changed')
})

// ---------------------------------------------------------------------------------------------------
// perPage bounds

t.test('GET /shipments: perPage 1 to 100, default 50; anything else is a 400 naming perPage', async (t) => {
  const app = await buildTestApp(t)
  const { orderId, shipmentIds } = await orderWithShipments(app, 3)
  const list = (query: string) => app.inject({ url: `/shipments/api/shipments?orderId=${orderId}${query}`, headers: as('viewer') })
  const ids = (body: { shipments: Array<{ id: number }> }) => body.shipments.map((shipment) => shipment.id)

  let response = await list('')
  t.equal(response.statusCode, 200)
  t.same(response.json().pagination, { page: 1, perPage: 50, total: 3, pages: 1 }, 'default 50')
  t.same(ids(response.json()), shipmentIds)

  response = await list('&perPage=1')
  t.equal(response.statusCode, 200)
  t.same(response.json().pagination, { page: 1, perPage: 1, total: 3, pages: 3 })
  t.same(ids(response.json()), [shipmentIds[0]])
  response = await list('&perPage=1&page=3')
  t.same(ids(response.json()), [shipmentIds[2]], 'perPage 1 pages one by one')

  response = await list('&perPage=100')
  t.equal(response.statusCode, 200)
  t.same(response.json().pagination, { page: 1, perPage: 100, total: 3, pages: 1 })
  t.same(ids(response.json()), shipmentIds)

  const refusals: Array<[string, RegExp]> = [
    ['0', /perPage must be >= 1/],
    ['-1', /perPage must be >= 1/],
    ['101', /perPage must be <= 100/],
    ['abc', /perPage must be integer/],
    ['1.5', /perPage must be integer/],
  ]
  for (const [value, message] of refusals) {
    response = await list(`&perPage=${value}`)
    t.equal(response.statusCode, 400, `perPage=${value}`)
    t.match(response.json(), { name: 'Bad Request', message, code: 0, status: 400 }, `perPage=${value}: the message names perPage and why`)
    t.notOk('shipments' in response.json(), `perPage=${value} lists nothing`)
  }
})

// ---------------------------------------------------------------------------------------------------
// A save the database refuses

/** Makes every UPDATE of the shipments table fail inside the database, as a broken disk or constraint would. */
async function refuseShipmentUpdates(app: FastifyInstance) {
  if (TEST_ENGINE === 'sqlite') {
    await rawQuery(app, "CREATE TRIGGER refuse_updates BEFORE UPDATE ON shipments_shipments BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END")
  } else {
    await rawQuery(app, "CREATE FUNCTION refuse_updates() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test trigger'; END $$")
    await rawQuery(app, 'CREATE TRIGGER refuse_updates BEFORE UPDATE ON shipments_shipments FOR EACH ROW EXECUTE FUNCTION refuse_updates()')
  }
}

async function allowShipmentUpdates(app: FastifyInstance) {
  await rawQuery(app, TEST_ENGINE === 'sqlite' ? 'DROP TRIGGER refuse_updates' : 'DROP TRIGGER refuse_updates ON shipments_shipments')
}

t.test('a save the database refuses is the 422 "could not be saved", and changes nothing', async (t) => {
  const logLines: string[] = []
  const app = await buildTestApp(t, { shipmentFields: [{ handle: 'packageCount', type: 'number' }] }, undefined, logLines)
  const orderId = await insertOrder(app)
  const [shipment] = await app.shipments.shipments.create(orderId)
  const id = shipment.id
  const events: string[] = []
  app.shipments.events.on('shipmentStatusChanged', () => events.push('shipmentStatusChanged'))
  app.shipments.events.on('orderAdvanced', () => events.push('orderAdvanced'))
  const before = await shipmentRow(app, id)
  await refuseShipmentUpdates(app)

  const refused = { success: false, error: `Couldn't update shipment ${id}: the change could not be saved.`, errorCode: 'SHIPMENTS_UPDATE_REJECTED' }
  // Each update path: a status change (mutex, transaction, history row, order advance), a plain
  // column change (one UPDATE) and a custom field merge (read and write in one transaction).
  for (const body of [{ status: 'shipped', trackingNumber: 'T1' }, { carrier: 'UPS' }, { fields: { packageCount: 2 } }]) {
    const response = await postUpdate(app, id, body)
    t.equal(response.statusCode, 422, JSON.stringify(body))
    t.same(response.json(), refused, JSON.stringify(body))
  }
  t.same(await shipmentRow(app, id), before, 'the shipment is unchanged')
  t.same(await steps(app, id), ['null>new'], 'the history row written before the failing UPDATE was rolled back')
  t.equal((await orderRow(app, orderId)).statusHandle, 'processing', 'the order did not advance')
  t.same(await tables(app).db.select().from(tables(app).schema.orderAdvances), [], 'no advance claimed')
  t.same(events, [], 'no event for a change that was not committed')
  const logged = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'Saving a shipment failed')
  t.equal(logged.length, 3, 'each failure logged')
  t.match(logged[0], { level: 50, shipmentId: id, err: { message: /refused by the test trigger/ } }, 'with the database error')

  // Nothing was left held (mutex, transaction): once the database accepts writes the same request applies.
  await allowShipmentUpdates(app)
  const response = await postUpdate(app, id, { status: 'shipped', trackingNumber: 'T1' })
  t.equal(response.statusCode, 200)
  t.match(response.json(), { success: true, shipment: { id, status: 'shipped', trackingNumber: 'T1' } })
  t.same(await steps(app, id), ['null>new', 'new>shipped'])
  t.equal((await orderRow(app, orderId)).statusHandle, 'shipped')
  t.same(events, ['shipmentStatusChanged', 'orderAdvanced'])
})
