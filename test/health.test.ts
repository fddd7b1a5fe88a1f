// The health report (app.shipments.health() and the opt-in route): ready with the database and its
// migrations; the outbox's lag, dead letters and claims, and ShipStation's last fetch as warnings.
import t from 'tap'
import { buildTestApp } from './fixtures/app.js'
import { drizzle } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import { rawQuery, TEST_ENGINE, testDatabase } from './fixtures/database.js'
import { EXCHANGE_PASSWORD, EXCHANGE_USER } from './fixtures/exchange.js'

const checkOf = (report: { checks: Array<{ name: string; status: string; detail: string }> }, name: string) => report.checks.find((check) => check.name === name)
// No poll after start-up: a message the test writes stays as written until the test reads the report.
const quietOutbox = { outbox: { pollIntervalMs: 3_600_000 } }
const epoch = (date: Date) => (TEST_ENGINE === 'sqlite' ? date.getTime() : date)

t.test('a fresh host is ready: every check ok, and the route is not mounted unless asked for', async (t) => {
  const app = await buildTestApp(t, quietOutbox)
  const report = await app.shipments.health()
  t.equal(report.ready, true)
  t.same(report.checks.map((check) => [check.name, check.status]), [['database', 'ok'], ['migrations', 'ok'], ['outbox', 'ok'], ['deadLetters', 'ok'], ['claims', 'ok']])
  t.match(checkOf(report, 'migrations')!.detail, /^\d+ migrations applied$/)
  t.equal(checkOf(report, 'outbox')!.detail, 'no message is waiting')
  t.match(report.instanceId, /^[0-9a-f-]{36}$/)
  t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 404, 'opt-in: no route without health.path')
})

t.test('the route answers without a user, never cached, 200 when ready', async (t) => {
  const app = await buildTestApp(t, { ...quietOutbox, health: { path: '/health' } })
  const response = await app.inject({ method: 'GET', url: '/health' })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['cache-control'], 'no-store')
  const body = response.json()
  t.equal(body.ready, true)
  t.same(Object.keys(body).sort(), ['checkedAt', 'checks', 'instanceId', 'ready'])
  t.equal(body.checks.length, 5)
})

t.test('a late outbox message and a dead letter warn; the instance stays ready', async (t) => {
  const app = await buildTestApp(t, { ...quietOutbox, health: { path: '/health', outboxLagMs: 60_000 } })
  const insert = `INSERT INTO shipments_outbox (message_id, kind, name, ordering_key, payload, state, attempts, available_at, created_at) VALUES (?, 'job', 'test.none', 'test:1', '{}', ?, 0, ?, ?)`
  const fiveMinutesAgo = new Date(Date.now() - 5 * 60_000)
  await rawQuery(app, insert, ['11111111-1111-7111-8111-111111111111', 'pending', epoch(fiveMinutesAgo), epoch(fiveMinutesAgo)])
  await rawQuery(app, insert, ['22222222-2222-7222-8222-222222222222', 'failed', epoch(fiveMinutesAgo), epoch(fiveMinutesAgo)])
  const response = await app.inject({ method: 'GET', url: '/health' })
  t.equal(response.statusCode, 200, 'warnings keep the instance in the load balancer')
  const report = response.json()
  t.equal(report.ready, true)
  t.equal(checkOf(report, 'outbox')!.status, 'warn')
  t.match(checkOf(report, 'outbox')!.detail, /^the oldest due message has waited (29\d|30\d) s \(warns past 60 s\)$/)
  t.same(checkOf(report, 'deadLetters'), { name: 'deadLetters', status: 'warn', detail: '1 failed messages (retry or dismiss them on the system page, or with outbox.retry)' })
})

t.test('a migration missing from the database: not ready, and the route answers 503', async (t) => {
  const app = await buildTestApp(t, { ...quietOutbox, health: { path: '/health' } })
  await rawQuery(app, 'DELETE FROM __shipments_migrations WHERE created_at = (SELECT max(created_at) FROM __shipments_migrations)')
  const response = await app.inject({ method: 'GET', url: '/health' })
  t.equal(response.statusCode, 503)
  const report = response.json()
  t.equal(report.ready, false)
  t.equal(checkOf(report, 'migrations')!.status, 'fail')
  t.match(checkOf(report, 'migrations')!.detail, /^1 of the package's \d+ migrations not applied: run migrate\(\) or let the plugin migrate$/)
  t.equal(checkOf(report, 'database')!.status, 'ok')
})

t.test("ShipStation's silence warns once the order exchange is configured; a fetch clears it", async (t) => {
  const app = await buildTestApp(t, { ...quietOutbox, orderExchange: { username: EXCHANGE_USER, password: EXCHANGE_PASSWORD } })
  const before = await app.shipments.health()
  t.same(checkOf(before, 'shipStation'), { name: 'shipStation', status: 'warn', detail: 'ShipStation has never fetched the export (see the ShipStation page and its connection doctor)' })
  const at = new Date(Date.now() - 60_000)
  await rawQuery(app, 'INSERT INTO shipments_exchange_activity (action, page, order_number, orders_exported, status_code, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', ['export', 1, null, 0, 200, null, epoch(at)])
  const after = await app.shipments.health()
  t.equal(checkOf(after, 'shipStation')!.status, 'ok')
  t.match(checkOf(after, 'shipStation')!.detail, /^ShipStation last fetched the export (59|60|61) s ago \(answered 200\)$/)
  await rawQuery(app, 'INSERT INTO shipments_exchange_activity (action, page, order_number, orders_exported, status_code, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', ['export', null, null, null, 401, 'wrong password', epoch(new Date())])
  const refused = await app.shipments.health()
  t.equal(checkOf(refused, 'shipStation')!.status, 'warn')
  t.match(checkOf(refused, 'shipStation')!.detail, /\(refused with 401\)$/)
  t.equal(refused.ready, true)
})

t.test('a database that fails the read: not ready, in words without a statement', async (t) => {
  // SQLite: the package's own connection closed under it; PostgreSQL: the host's pool, ended by the host.
  const hostPool = TEST_ENGINE === 'postgres' ? new pg.Pool({ connectionString: await testDatabase(t, 'health', 'migrated') }) : null
  const app = await buildTestApp(t, { ...quietOutbox, health: { path: '/health' }, ...(hostPool && { database: drizzle({ client: hostPool }) }) })
  const handle = app.shipments.database
  if (handle.engine === 'sqlite') handle.db.$client.close()
  else await hostPool!.end()
  const response = await app.inject({ method: 'GET', url: '/health' })
  t.equal(response.statusCode, 503)
  const report = response.json()
  t.equal(report.ready, false)
  t.same(report.checks.map((check: { name: string }) => check.name), ['database'])
  t.equal(report.checks[0].status, 'fail')
  t.match(report.checks[0].detail, /^the database refused the health read/)
  t.notMatch(report.checks[0].detail, /SELECT|shipments_outbox/i, 'no statement')
})

t.test("the claims check names who holds a running label batch's lease", async (t) => {
  const app = await buildTestApp(t, { ...quietOutbox, batches: { worker: false } })
  const future = new Date(Date.now() + 60_000)
  await rawQuery(app, `INSERT INTO shipments_label_batches (state, settings, lease_owner, lease_expires_at, created_at, updated_at) VALUES ('running', '{"suggestParcels":false,"labelFormat":"PDF"}', 'instance-7', ?, ?, ?)`, [epoch(future), epoch(new Date()), epoch(new Date())])
  const report = await app.shipments.health()
  t.match(checkOf(report, 'claims')!.detail, /^instance-7 holds label batch \d+$/)
  t.equal(report.ready, true)
})
