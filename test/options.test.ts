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

