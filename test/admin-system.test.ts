// The admin's system page: the health report for people, jobs that failed for good (retried or
// dismissed, with the stored effect), provider calls that failed in the last day, versions and migrations.
import t, { type Test } from 'tap'
import { rawQuery, TEST_ENGINE } from './fixtures/database.js'
import { ADMIN, adminClient, buildAdminApp } from './fixtures/admin.js'

const FAILED_JOB = '0193b0c8-7c6e-7000-8000-00000000f001'
const epoch = (date: Date) => (TEST_ENGINE === 'sqlite' ? date.getTime() : date)

async function withFailures(t: Test) {
  const app = await buildAdminApp(t, { outbox: { pollIntervalMs: 3_600_000 } })
  const an = new Date(Date.now() - 60_000)
  await rawQuery(app, `INSERT INTO shipments_outbox (message_id, kind, name, ordering_key, payload, state, attempts, available_at, created_at, done_at, last_error) VALUES (?, 'job', 'webhook.deliver', 'webhook:7', '{}', 'failed', 10, ?, ?, ?, ?)`, [FAILED_JOB, epoch(an), epoch(an), epoch(an), 'HTTP 500 from the receiver'])
  await rawQuery(app, `INSERT INTO shipments_label_attempts (operation_id, step, request, response, status_code, error, duration_ms, created_at) VALUES ('op-1', 'purchase', '{}', '{}', 422, ?, 120, ?)`, ['Address not found by the carrier', epoch(an)])
  // A day and more ago: left out.
  await rawQuery(app, `INSERT INTO shipments_label_attempts (operation_id, step, request, response, status_code, error, duration_ms, created_at) VALUES ('op-0', 'purchase', '{}', '{}', 500, ?, 120, ?)`, ['An old failure', epoch(new Date(Date.now() - 25 * 60 * 60 * 1000))])
  return app
}

const stateOf = async (app: Awaited<ReturnType<typeof buildAdminApp>>) => (await rawQuery(app, 'SELECT state, last_error FROM shipments_outbox WHERE message_id = ?', [FAILED_JOB]))[0]

t.test('the page shows the checks, the failed job and the failed call of the last day, the versions and migrations', async (t) => {
  const app = await withFailures(t)
  const page = await adminClient(app, 'admin').get('/system')
  t.equal(page.statusCode, 200)
  t.equal(page.headers['cache-control'], 'no-store')
  t.match(page.body, /<strong>Ready\.<\/strong>/)
  t.match(page.body, /<tr data-check="deadLetters"><td>deadLetters<\/td><td><span class="badge badge-warn">Look at it<\/span><\/td><td>1 failed messages/)
  t.match(page.body, new RegExp(`<tr data-job="${FAILED_JOB}">.*<code>webhook.deliver</code>.*HTTP 500 from the receiver`, 's'))
  t.match(page.body, /Address not found by the carrier/)
  t.notMatch(page.body, /An old failure/, 'only the last day')
  t.match(page.body, new RegExp(`<dt>Database</dt><dd>${TEST_ENGINE === 'sqlite' ? 'SQLite 3\\.' : 'PostgreSQL 1'}`))
  t.match(page.body, /<dt>Migrations<\/dt><dd>(\d+) of \1 applied<\/dd>/)
  t.match(page.body, new RegExp(`<a href="${ADMIN}/system"[^>]*>System</a>`), 'in the navigation')
})

t.test('retry: the job is pending again with fresh retries; dismiss: skipped, and no longer a dead letter', async (t) => {
  const app = await withFailures(t)
  const admin = adminClient(app, 'admin')
  await admin.get('/system')
  const retried = await admin.post('/system/jobs/retry', { messageId: FAILED_JOB })
  t.equal(retried.statusCode, 303)
  t.equal(retried.headers.location, `${ADMIN}/system?notice=jobRetried`)
  const [row] = await rawQuery(app, 'SELECT attempts FROM shipments_outbox WHERE message_id = ?', [FAILED_JOB])
  t.ok(Number(row!.attempts) <= 1, 'its attempts counted from zero again (it may have run once since)')

  const second = await withFailures(t)
  const other = adminClient(second, 'admin')
  await other.get('/system')
  const dismissed = await other.post('/system/jobs/dismiss', { messageId: FAILED_JOB })
  t.equal(dismissed.headers.location, `${ADMIN}/system?notice=jobDismissed`)
  t.same(await stateOf(second), { state: 'skipped', last_error: 'Dismissed by admin after failing for good.' })
  const report = await second.shipments.health()
  t.equal(report.checks.find((check) => check.name === 'deadLetters')!.status, 'ok')
  const page = await other.get('/system?notice=jobDismissed')
  t.match(page.body, /Job dismissed: it will not be tried again\./)
  t.match(page.body, /No failed job\./)

  const again = await other.post('/system/jobs/dismiss', { messageId: FAILED_JOB })
  t.equal(again.headers.location, `${ADMIN}/system?notice=jobNotFailed`, 'a job dismissed already is not dismissed twice')
})

t.test('the page and its actions need the manage permission, and a form its CSRF token', async (t) => {
  const app = await withFailures(t)
  t.equal((await adminClient(app, 'viewer').get('/system')).statusCode, 403)
  const admin = adminClient(app, 'admin')
  await admin.get('/system')
  const forged = await admin.post('/system/jobs/dismiss', { messageId: FAILED_JOB }, { withToken: false })
  t.equal(forged.statusCode, 403)
  t.match(await stateOf(app), { state: 'failed' }, 'nothing changed')
})
