// Regression tests of two classes (issue 20, items 5 and 7), on the run's engine: years 1 to 99 read as
// 1900 to 1999 (and, on PostgreSQL, read back as 2001 or 1950), on every path that parses a date; and
// text such as `constructor` or `__proto__` found on Object.prototype where a status map, a form or
// an environment reference was looked up by it.
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { eq } from 'drizzle-orm'
import { fastifyShipments, signWebhook } from '../src/index.js'
import { buildTestApp, historyRows, insertOrder, orderWithShipments, postUpdate, shipmentRow } from './fixtures/app.js'
import { rawQuery, tables, testDatabase } from './fixtures/database.js'
import { buildExchangeApp, exportedOrders, exportRequest, insertExportOrder, textOf } from './fixtures/exchange.js'
import { adminClient, buildAdminApp } from './fixtures/admin.js'
import { pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { parsePostgresTimestamp, readTimestampsExactly } from '../src/db/postgres/timestamps.js'
import { EARLIEST_INSTANT, formatIsoWithOffset, formatPlatformDate, LATEST_INSTANT } from '../src/time.js'

const SECRET = 'whsec_' + Buffer.from('a-test-signing-secret-of-32-bytes').toString('base64')
const NOW_SECONDS = Math.floor(Date.parse('2026-11-22T12:00:00Z') / 1000)
const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty']

/** A stored timestamp as ISO-8601 UTC, read with raw SQL (epoch milliseconds on SQLite, a Date from pg on PostgreSQL). */
async function storedInstant(app: Awaited<ReturnType<typeof buildTestApp>>, sql: string, values: unknown[]): Promise<string | null> {
  const [row] = await rawQuery(app, sql, values)
  const value = Object.values(row)[0] as number | Date | null
  return value === null ? null : new Date(value).toISOString()
}

/** A host with the signed-webhook integration `carrier` (status map as given) and order A100 with one shipment. */
async function webhookHost(t: Test, statusMap: Record<string, string>) {
  const app = await buildTestApp(t, { clock: () => NOW_SECONDS * 1000 }, await testDatabase(t, 'hooks'))
  await app.shipments.integrations.create({ name: 'Carrier', handle: 'carrier', providerId: 'signed-webhook', settings: { secret: SECRET }, statusMap })
  const [shipment] = await app.shipments.shipments.create(await insertOrder(app, { reference: 'A100' }))
  let deliveries = 0
  const send = (body: Record<string, unknown>) => {
    const raw = JSON.stringify({ orderNumber: 'A100', occurredAt: '2026-11-22T11:00:00Z', ...body })
    const id = `msg_${++deliveries}`
    return app.inject({
      method: 'POST',
      url: '/actions/shipments/gateway/handle?integration=carrier',
      headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(NOW_SECONDS), 'webhook-signature': signWebhook(SECRET, id, NOW_SECONDS, raw) },
      payload: raw,
    })
  }
  return { app, send, shipment }
}

t.test('years 1 to 99 were stored as 1901 to 1999 and read back on PostgreSQL as 2001 or 1950: the API keeps them', async (t) => {
  const app = await buildTestApp(t, { shipmentFields: [{ handle: 'due', type: 'date' }] })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const cases: Array<[unknown, string]> = [
    ['0001-01-01', '0001-01-01T00:00:00+00:00'],
    ['0050-06-01T12:30:00+02:00', '0050-06-01T10:30:00+00:00'],
    ['0099-12-31T23:59:59Z', '0099-12-31T23:59:59+00:00'],
    ['0004-02-29', '0004-02-29T00:00:00+00:00'],
    [{ date: '0007-07-07', time: '10:00', timezone: 'UTC' }, '0007-07-07T10:00:00+00:00'],
    [-62_135_596_800, '0001-01-01T00:00:00+00:00'],
  ]
  for (const [value, expected] of cases) {
    const response = await postUpdate(app, id, { dateScheduledShip: value, fields: { due: value } })
    t.equal(response.statusCode, 200, JSON.stringify(value))
    t.equal(response.json().shipment.dateScheduledShip, expected, 'the answer')
    t.equal(response.json().shipment.fields.due, `${expected.slice(0, 19)}.000Z`, 'a custom date field')
    t.equal(await storedInstant(app, 'SELECT date_scheduled_ship FROM shipments_shipments WHERE id = ?', [id]), `${expected.slice(0, 19)}.000Z`, 'as stored')
    t.equal((await shipmentRow(app, id)).dateScheduledShip?.toISOString(), `${expected.slice(0, 19)}.000Z`, 'as Drizzle reads it back')
    const read = await app.inject({ url: `/shipments/api/shipments/${id}`, headers: { 'x-test-user': 'viewer' } })
    t.equal(read.json().shipment.dateScheduledShip, expected, 'as the API reads it back')
  }
})

t.test('PostgreSQL timestamp text was read with years 1 to 99 as 2001 or 1950: every year reads as itself', async (t) => {
  const cases: Array<[string, string]> = [
    ['0001-01-01 00:00:00+00', '0001-01-01T00:00:00.000Z'],
    ['0050-06-01 12:00:00.123+00', '0050-06-01T12:00:00.123Z'],
    ['0099-12-31 23:59:59.5+05:30', '0099-12-31T18:29:59.500Z'],
    // A session in America/New_York: local mean time (an offset with seconds) and the year before year 1.
    ['0001-12-31 19:03:58-04:56:02 BC', '0001-01-01T00:00:00.000Z'],
    ['0050-01-01 00:00:00', '0050-01-01T00:00:00.000Z'],
    ['2026-11-22 13:00:00+01', '2026-11-22T12:00:00.000Z'],
  ]
  for (const [text, expected] of cases) t.equal(parsePostgresTimestamp(text).toISOString(), expected, text)
  t.ok(Number.isNaN(parsePostgresTimestamp('infinity').getTime()), 'what is no timestamp of DateStyle ISO is read as Drizzle reads it')
  // Only the given tables' timestamp columns change; a Date (a driver that parses itself) passes through.
  const probe = pgTable('probe', { at: timestamp('at', { withTimezone: true, mode: 'date' }), other: timestamp('other', { mode: 'date' }), note: text('note') })
  readTimestampsExactly({ probe, notATable: 'x' })
  t.equal((probe.at.mapFromDriverValue('0005-05-05 05:05:05+00') as Date).toISOString(), '0005-05-05T05:05:05.000Z')
  const date = new Date(0)
  t.equal(probe.other.mapFromDriverValue(date as never), date)
  t.equal(probe.note.mapFromDriverValue('0005-05-05 05:05:05+00'), '0005-05-05 05:05:05+00', 'other columns are left alone')
  const untouched = pgTable('untouched', { at: timestamp('at', { withTimezone: true, mode: 'date' }) })
  t.equal((untouched.at.mapFromDriverValue('0005-05-05 05:05:05+00') as Date).getUTCFullYear(), 2005, "another table keeps Drizzle's own reading")
})

t.test('a year below 1000 was written with fewer than four digits, and a negative one as "00-1": ISO-8601 forms', async (t) => {
  t.equal(formatIsoWithOffset(EARLIEST_INSTANT, 'UTC'), '0001-01-01T00:00:00+00:00')
  t.equal(formatPlatformDate(Date.parse('0005-03-04T05:06:00Z'), 'UTC'), '3/4/0005 05:06')
  // Beyond years 0 to 9999 (nothing stored is; a host's order date may be), the expanded form of toISOString.
  t.equal(formatIsoWithOffset(LATEST_INSTANT, 'Europe/Berlin'), '+010000-01-01T00:59:59+01:00')
  t.equal(formatIsoWithOffset(Date.parse('-000001-06-01T00:00:00Z'), 'UTC'), '-000001-06-01T00:00:00+00:00')
  t.equal(formatPlatformDate(Date.parse('-000001-06-01T00:00:00Z'), 'UTC'), '6/1/-000001 00:00')
})

t.test('year 0000 was accepted (as 1900): years outside 1 to 9999 are a 422 and change nothing', async (t) => {
  const app = await buildTestApp(t, { shipmentFields: [{ handle: 'due', type: 'date' }] })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  await postUpdate(app, id, { dateScheduledShip: '2026-05-01' })
  const before = await shipmentRow(app, id)
  for (const value of ['0000-01-01', '0000-12-31T23:59:59Z', '0001-01-01T00:00:00+00:01', '9999-12-31T23:59:59-00:01', { date: '0000-06-01' }, -62_135_596_801, 'constructor', '__proto__']) {
    const response = await postUpdate(app, id, { dateScheduledShip: value, fields: { due: value } })
    t.equal(response.statusCode, 422, JSON.stringify(value))
    t.same(response.json(), { success: false, errors: { dateScheduledShip: ['Date Scheduled Ship is not a valid date.'], 'fields.due': ['Due is not a valid date.'] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' })
  }
  t.same(await shipmentRow(app, id), before, 'nothing changed')
})

t.test('a year-1 date in a site timezone of local mean time is written with the offset that names it exactly, and round-trips', async (t) => {
  const app = await buildTestApp(t, { timezone: 'America/New_York' })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const first = await postUpdate(app, id, { dateScheduledShip: '0001-01-01T00:00:00Z' })
  t.equal(first.statusCode, 200)
  // New York kept local mean time (-4:56:02) then; offsets are written in whole minutes, and the wall time with them.
  t.equal(first.json().shipment.dateScheduledShip, '0000-12-31T19:04:00-04:56')
  const again = await postUpdate(app, id, { dateScheduledShip: first.json().shipment.dateScheduledShip })
  t.equal(again.statusCode, 200)
  t.equal(again.json().shipment.dateScheduledShip, '0000-12-31T19:04:00-04:56')
  t.equal(await storedInstant(app, 'SELECT date_scheduled_ship FROM shipments_shipments WHERE id = ?', [id]), '0001-01-01T00:00:00.000Z')
})

t.test('a signed event of year 50 was dated 1950: occurredAt keeps years 1 to 99 and refuses years outside 1 to 9999', async (t) => {
  const { app, send, shipment } = await webhookHost(t, { in_transit: 'shipped', exception: 'on_hold', picking: 'in_progress' })
  const first = await send({ status: 'in_transit', occurredAt: '0050-01-01T00:00:00Z' })
  t.equal(first.statusCode, 200)
  t.match(first.json(), { success: true, applied: true, shipment: { status: 'shipped' } })
  // Read back as 1950 (or stored as 1950), year 100 would be older, and stale.
  const later = await send({ status: 'exception', occurredAt: '0100-01-01T00:00:00Z' })
  t.match(later.json(), { success: true, applied: true, shipment: { status: 'on_hold' } })
  const earlier = await send({ status: 'picking', occurredAt: '0099-12-31T00:00:00Z' })
  t.match(earlier.json(), { success: true, applied: false, reason: 'stale-event' })
  const { schema } = tables(app)
  t.equal(
    await storedInstant(app, 'SELECT last_event_at FROM shipments_external_references WHERE shipment_id = ?', [shipment.id]),
    '0100-01-01T00:00:00.000Z',
    'the last event mark, as stored',
  )
  const [reference] = await tables(app).db.select().from(schema.shipmentExternalReferences).where(eq(schema.shipmentExternalReferences.shipmentId, shipment.id))
  t.equal(reference.lastEventAt?.toISOString(), '0100-01-01T00:00:00.000Z', 'and as read back')

  const history = await historyRows(app, shipment.id)
  for (const occurredAt of ['0000-06-01T00:00:00Z', '0000-12-31T23:00:00-00:30']) {
    const refused = await send({ status: 'in_transit', occurredAt })
    t.equal(refused.statusCode, 400, occurredAt)
    t.same(refused.json(), { name: 'Bad Request', message: 'Invalid webhook payload: occurredAt is not an ISO-8601 date-time.', code: 0, status: 400, errorCode: 'SHIPMENTS_INTEGRATION_ERROR' })
  }
  t.equal((await shipmentRow(app, shipment.id)).status, 'on_hold', 'nothing changed')
  t.same(await historyRows(app, shipment.id), history)
})

t.test('an export window of years 1 to 99 covered 1901 to 1999: it covers those years, and year 0000 is a 400', async (t) => {
  const app = await buildExchangeApp(t)
  await insertExportOrder(app, { reference: 'YEAR-50', dateUpdated: new Date('0050-06-01T12:00:00Z'), dateOrdered: new Date('0049-12-31T08:05:00Z') })
  await insertExportOrder(app, { reference: 'YEAR-1950', dateUpdated: new Date('1950-06-01T12:00:00Z') })
  for (const window of [
    { start_date: '01/01/0001 00:00', end_date: '12/31/0099 23:59' },
    { start_date: '0001/01/01 00:00', end_date: '0099/12/31 23:59' },
    { start_date: '0001-01-01T00:00Z', end_date: '0099-12-31T23:59Z' },
  ]) {
    const response = await exportRequest(app, window)
    t.equal(response.statusCode, 200, window.start_date)
    const { numbers, orders } = exportedOrders(response.body)
    t.same(numbers, ['YEAR-50'], 'the window is years 1 to 99')
    t.equal(textOf(orders[0], 'LastModified'), '6/1/0050 12:00', 'a date of year 50 is written with four digits')
    t.equal(textOf(orders[0], 'OrderDate'), '12/31/0049 08:05')
  }
  // Unusable dates are refused, not ignored: the rule for any unreadable date (README, the order exchange).
  for (const parameter of ['start_date', 'end_date'] as const) {
    for (const bad of ['01/01/0000 00:00', '0000/06/01 00:00', '0000-12-31T23:00:00Z']) {
      const response = await exportRequest(app, { start_date: '01/01/0001 00:00', end_date: '12/31/0099 23:59', [parameter]: bad }, { accept: 'application/json' })
      t.equal(response.statusCode, 400, `${parameter}=${bad}`)
      t.same(response.json(), { name: 'Bad Request', message: `${parameter} is not a date.`, code: 0, status: 400, errorCode: 'SHIPMENTS_EXCHANGE_INVALID_DATE' })
    }
  }
})

t.test('a status code named like an Object.prototype member was matched against it (a 400): it is an unmapped status', async (t) => {
  const { app, send, shipment } = await webhookHost(t, { in_transit: 'shipped' })
  for (const status of PROTOTYPE_NAMES) {
    const response = await send({ status })
    t.equal(response.statusCode, 200, status)
    t.same(response.json(), { success: true, applied: false, reason: 'unmapped-status', externalCode: status, deliveryId: response.json().deliveryId })
  }
  t.equal((await shipmentRow(app, shipment.id)).status, 'new', 'nothing changed')
  t.equal((await historyRows(app, shipment.id)).length, 1, 'only the creation row')
  const integration = await app.shipments.integrations.get('carrier')
  t.equal(Object.getPrototypeOf(integration!.statusMap), null, 'the presented map has no prototype to match against')
})

t.test('a status map row `__proto__` set the prototype instead of a row: it is saved, presented and applied like any code', async (t) => {
  // As a host reads a map from JSON: `__proto__` is an own key there.
  const { app, send, shipment } = await webhookHost(t, JSON.parse('{"__proto__":"shipped","constructor":"on_hold"}'))
  t.same(Object.entries((await app.shipments.integrations.get('carrier'))!.statusMap), [['__proto__', 'shipped'], ['constructor', 'on_hold']])
  const response = await send({ status: '__proto__' })
  t.equal(response.statusCode, 200)
  t.match(response.json(), { success: true, applied: true, shipment: { id: shipment.id, status: 'shipped' } })
  t.match((await historyRows(app, shipment.id)).at(-1), { toStatus: 'shipped', sourceExternalCode: '__proto__' })
})

t.test('a status map row `__proto__` disappeared when the admin form was saved: it is stored with the other rows', async (t) => {
  const app = await buildAdminApp(t)
  const admin = adminClient(app, 'admin')
  await admin.get('/integrations/new?provider=signed-webhook')
  const created = await admin.post('/integrations', {
    providerId: 'signed-webhook',
    name: 'Carrier',
    handle: 'carrier',
    enabled: 'true',
    'settings.secret': 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=',
    'statusMap.code': ['__proto__', 'constructor', 'toString', 'in_transit'],
    'statusMap.status': ['shipped', 'on_hold', 'fulfilled', 'shipped'],
  })
  t.equal(created.statusCode, 303)
  const stored = [['__proto__', 'shipped'], ['constructor', 'on_hold'], ['toString', 'fulfilled'], ['in_transit', 'shipped']]
  const { db, schema } = tables(app)
  const [row] = await db.select().from(schema.integrations).where(eq(schema.integrations.handle, 'carrier'))
  t.same(Object.entries(row.statusMap), stored, 'as stored')
  const edit = await admin.get('/integrations/carrier')
  t.equal(edit.statusCode, 200)
  for (const [code] of stored) t.match(edit.body, `name="statusMap.code" value="${code}"`, `the editor shows ${code}`)
  const saved = await admin.post('/integrations/carrier', {
    name: 'Carrier',
    handle: 'carrier',
    enabled: 'true',
    'settings.secret': '********',
    'statusMap.code': ['__proto__', 'valueOf'],
    'statusMap.status': ['cancelled', 'new'],
  })
  t.equal(saved.statusCode, 303)
  const [updated] = await db.select().from(schema.integrations).where(eq(schema.integrations.handle, 'carrier'))
  t.same(Object.entries(updated.statusMap), [['__proto__', 'cancelled'], ['valueOf', 'new']], 'an edit keeps it too')
  t.same(updated.settings, { secret: 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=' }, 'the masked secret kept its value')
})

t.test('an environment reference `$constructor` resolved to Object.prototype: it is an unset variable', async (t) => {
  const app = await buildTestApp(t)
  for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
    await t.rejects(
      app.shipments.integrations.create({ name: 'Carrier', handle: 'carrier', providerId: 'signed-webhook', settings: { secret: `$${name}` } }),
      { name: 'IntegrationConfigError', message: `settings.secret: Environment variable ${name} is not set` },
      name,
    )
  }
  t.same(await app.shipments.integrations.list(), [], 'nothing was stored')
})

t.test('a plugin option named like an Object.prototype member was taken for a known option: it is refused', async (t) => {
  const app = Fastify({ logger: false })
  t.teardown(() => app.close())
  const options = { database: await testDatabase(t, 'options'), constructor: 1 }
  await t.rejects(async () => {
    await app.register(fastifyShipments, options as never)
    await app.ready()
  }, { message: /Invalid option "constructor": is not an option of this plugin/ })
})
