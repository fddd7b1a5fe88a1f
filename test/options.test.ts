import { existsSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import Fastify from 'fastify'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import Database from 'better-sqlite3'
import { fastifyShipments, migrate, MIGRATIONS_TABLE, type ShipmentsPluginOptions } from '../src/index.js'
import { buildTestApp, orderWithShipments, postUpdate } from './fixtures/app.js'
import { testDatabase } from './fixtures/database.js'

async function registrationError(t: Parameters<typeof testDatabase>[0], options: Record<string, unknown>) {
  const app = Fastify({ logger: false })
  try {
    await app.register(fastifyShipments, { database: await testDatabase(t, 'x'), ...options } as ShipmentsPluginOptions)
    await app.ready()
    return null
  } catch (error) {
    return error as Error & { code?: string }
  } finally {
    await app.close().catch(() => undefined)
  }
}

t.test('a bad option fails ready() with a message naming it', async (t) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ database: 42 }, /Invalid option "database"/],
    [{ database: '' }, /Invalid option "database"/],
    [{ timezone: 'Mars/Olympus' }, /Invalid option "timezone": "Mars\/Olympus" is not an IANA timezone/],
    [{ lockTimeoutMs: 0 }, /Invalid option "lockTimeoutMs"/],
    [{ groupCommit: 'yes' }, /Invalid option "groupCommit"/],
    [{ prefixes: { shipmentApi: 'no-slash' } }, /Invalid option "prefixes.shipmentApi"/],
    [{ resolveUser: 'yes' }, /Invalid option "resolveUser": must be a function/],
    [{ hasPermission: {} }, /Invalid option "hasPermission": must be a function/],
    [{ shippedOrderStatus: '' }, /Invalid option "shippedOrderStatus"/],
    [{ shipmentFields: [{ handle: 'a', type: 'colour' }] }, /Invalid option "shipmentFields.0.type"/],
    [{ shipmentFields: [{ handle: 'a', type: 'text' }, { handle: 'a', type: 'number' }] }, /"shipmentFields": the handle "a" is declared twice/],
    [{ orderStore: { findOrder() {} } }, /Invalid option "orderStore": must implement findOrderByReference\(\)/],
    [{ colour: 'blue' }, /Invalid option "colour": is not an option of this plugin/],
  ]
  for (const [options, message] of cases) {
    const error = await registrationError(t, options)
    t.match(error?.message, message, JSON.stringify(options))
    t.equal(error?.code, 'SHIPMENTS_INVALID_OPTION')
  }
})

t.test('a database string with a URL scheme other than postgres:// is refused at registration, no file created', async (t) => {
  for (const database of ['postgress://localhost/x', 'mysql://user:hunter2@db/shop', 'sqlite:///tmp/shop.sqlite', 'file:///tmp/shop.sqlite']) {
    const error = await registrationError(t, { database })
    t.equal(error?.code, 'SHIPMENTS_INVALID_OPTION', database)
    t.match(error?.message, /Invalid option "database": .*postgres:\/\/ or postgresql:\/\/.*SQLite file/, database)
    t.match(error?.message, `"${database.split('://')[0]}://"`, 'names the scheme it does not open')
    t.notMatch(error?.message, /hunter2|localhost|shop\.sqlite/, 'and nothing else of the value')
    // It was a SQLite file under a directory named after the scheme, relative to the working directory.
    t.notOk(existsSync(`${database.split('://')[0]}:`), 'no SQLite file or directory was created')
  }
  // A file name with a colon further on is still a file name.
  t.equal(await registrationError(t, { database: join(t.testdir(), 'shop:2026.sqlite') }), null)
})

t.test('with no hooks every request is denied (default: deny)', async (t) => {
  const app = Fastify({ logger: false })
  await app.register(fastifyShipments, { database: await testDatabase(t, 'deny') })
  t.teardown(() => app.close())
  const response = await app.inject({ method: 'POST', url: '/shipments/api/shipments/1', payload: {} })
  t.equal(response.statusCode, 401)
})

t.test('prefixes move the API', async (t) => {
  const app = await buildTestApp(t, { prefixes: { shipmentApi: '/admin/v1' } })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const moved = await app.inject({ method: 'POST', url: `/admin/v1/shipments/${id}`, headers: { 'x-test-user': 'admin' }, payload: { carrier: 'UPS' } })
  t.equal(moved.statusCode, 200)
  t.equal(moved.json().shipment.carrier, 'UPS')
  const old = await postUpdate(app, id, { carrier: 'DHL' })
  t.equal(old.statusCode, 404)
})


t.test('an option or service input given as undefined is the same as one left out (`cond ? undefined : value` under exactOptionalPropertyTypes)', async (t) => {
  const app = await buildTestApp(t, {
    migrate: undefined,
    timezone: undefined,
    shippedOrderStatus: undefined,
    lockTimeoutMs: undefined,
    lockDirectory: undefined,
    orderStore: undefined,
    providers: undefined,
    clock: undefined,
    openapi: undefined,
    notifications: undefined,
    trackingPage: undefined,
    splitRules: undefined,
    requireFullCoverage: undefined,
    prefixes: { shipmentApi: undefined, gateway: undefined, orderExchange: undefined },
    outbox: { leaseMs: undefined, pollIntervalMs: undefined, retentionMs: undefined, retryDelaysMs: undefined },
    webhooks: { allowPrivateAddresses: undefined, timeoutMs: undefined, disableAfterFailures: undefined },
    carriers: { custom: undefined, urlTemplates: undefined, detect: undefined },
    admin: { prefix: undefined, loginUrl: undefined, layout: undefined, csrfKey: undefined },
    orderFields: [{ handle: 'shippingInfo', type: 'matrix', subFields: ['carrier', 'service', 'trackingNumber'], options: undefined }],
    orderExchange: { username: 'u', password: 'p', pageSize: undefined, storeField: undefined, trackingField: { matrix: undefined, carrier: undefined }, siteUrl: undefined, bodyLimit: undefined },
  })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const updated = await postUpdate(app, id, { carrier: 'UPS' })
  t.equal(updated.statusCode, 200, 'the shipment API at its default prefix')
  t.equal((await app.inject({ url: '/actions/shipments/gateway/handle?integration=x' })).statusCode, 404, 'the gateway at its default prefix')
  const login = await app.inject({ url: '/shipments/admin/shipments' })
  t.equal(login.statusCode, 303, 'the admin pages at their default prefix')
  t.match(login.headers.location, /^\/login\?returnTo=/, 'the default login URL')
  const exported = await app.inject({ url: '/actions/shippingplatformconnect/orders/process?action=export', headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` } })
  t.equal(exported.statusCode, 200, 'the order exchange at its default prefix')
  t.match(app.shipments.orderExchange!.settings, { pageSize: 25, storeField: null, tracking: { matrix: 'shippingInfo', carrier: 'carrier' }, bodyLimit: 1_048_576 })

  // Service inputs: undefined keeps the value or takes the default, as a key left out does.
  const result = await app.shipments.shipments.update(id, { carrier: undefined, service: 'Ground', status: undefined }, { userId: undefined })
  t.match(result.shipment, { carrier: 'UPS', service: 'Ground', status: 'new' })
  t.equal((await app.shipments.shipments.list({ status: undefined, orderId: undefined, page: undefined })).total, 1)
  const webhook = await app.shipments.webhooks.create({ url: 'https://example.com/hooks', events: ['*'], secret: undefined, description: undefined, enabled: undefined })
  t.match(webhook, { secret: /^whsec_/, enabled: true, description: null })
  t.match(await app.shipments.webhooks.update(webhook.id, { url: undefined, description: 'ERP', enabled: undefined }), { url: 'https://example.com/hooks', description: 'ERP', enabled: true })
  await app.shipments.integrations.create({ name: 'Hooks', handle: 'hooks', providerId: 'signed-webhook', enabled: undefined, statusMap: undefined, settings: { secret: `whsec_${Buffer.alloc(32, 9).toString('base64')}` } })
  t.match(await app.shipments.integrations.update('hooks', { name: undefined, enabled: undefined, statusMap: { a: 'shipped' } }), { name: 'Hooks', enabled: true, statusMap: { a: 'shipped' } })
  const orders = app.shipments.referenceOrders!
  const orderId = await orders.createOrder({ reference: 'U-1', number: undefined, email: undefined, items: [{ name: 'Mug', quantity: undefined, price: undefined }], shippingAddress: undefined })
  await orders.updateOrder(orderId, { email: 'jane@example.com', isCompleted: undefined, reference: undefined })
  t.match(await app.shipments.orders.findOrder(orderId), { reference: 'U-1', email: 'jane@example.com', isCompleted: false })
  const notification = await app.shipments.notifications.create({ name: 'Shipped', statuses: ['shipped'], recipient: 'customer', subject: 'S', html: '<p>H</p>', text: 'T', enabled: undefined, language: undefined, addresses: undefined })
  t.match(await app.shipments.notifications.update(notification.id, { enabled: undefined, subject: 'Shipped!', addresses: undefined }), { enabled: true, subject: 'Shipped!', addresses: [] })
})
