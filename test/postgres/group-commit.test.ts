// PostgreSQL only: group commit (src/db/postgres/group-commit.ts) on a real server. The runner's
// semantics with works the test controls (a failing work rolls back alone, a lost connection fails its
// whole group and stores nothing, a lock lasts until the group commits), then the package's own changes
// through it: concurrent status changes share commits, and two instances contending for one shipment
// keep one unbroken history.
import t from 'tap'
import { sql } from 'drizzle-orm'
import pg from 'pg'
import { ADVISORY_LOCK_CLASS } from '../../src/index.js'
import { openPostgres } from '../../src/db/postgres/connection.js'
import { createPostgresGroupCommit, type GroupWork } from '../../src/db/postgres/group-commit.js'
import { buildTestApp, historyRows, orderWithShipments, postUpdate, shipmentRow } from '../fixtures/app.js'
import { rawQuery, testDatabase } from '../fixtures/database.js'
import { sleep } from '../fixtures/outbox.js'

/** A pool on a fresh database with one table, and a group commit of one lane over it. */
async function runnerOnTable(t: Parameters<typeof testDatabase>[0]) {
  const url = await testDatabase(t, 'group')
  const db = openPostgres(url, () => {})
  t.teardown(() => db.$client.end())
  await db.$client.query('CREATE TABLE items (name text PRIMARY KEY)')
  const group = createPostgresGroupCommit(db, { lanes: 1, maxGroup: 32 })
  const insert = (name: string): GroupWork<string> => async (tx) => {
    await tx.execute(sql`INSERT INTO items (name) VALUES (${name})`)
    return name
  }
  /** A work that holds the lane until `open()`: the works submitted meanwhile form the next group. */
  const gate = () => {
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    return { open, work: (async () => void (await opened)) as GroupWork<void> }
  }
  /** The stored names, each with its transaction id (rows committed together share it). */
  const stored = async () => (await db.$client.query<{ name: string; xmin: string }>('SELECT name, xmin::text FROM items ORDER BY name')).rows
  return { db, group, insert, gate, stored, url }
}

t.test('a work that fails inside a group answers its own error; the others commit together, once', async (t) => {
  const { group, insert, gate, stored } = await runnerOnTable(t)
  const blocker = gate()
  const first = group.run(blocker.work, { ownLockTimeout: false })
  let runs = 0
  const failing: GroupWork<string> = async (tx) => {
    runs++
    await tx.execute(sql`INSERT INTO items (name) VALUES ('b')`)
    throw new Error('b refuses')
  }
  const outcomes = Promise.allSettled([group.run(insert('a'), { ownLockTimeout: false }), group.run(failing, { ownLockTimeout: false }), group.run(insert('c'), { ownLockTimeout: false })])
  blocker.open()
  await first
  const [a, b, c] = await outcomes
  t.same(a, { status: 'fulfilled', value: 'a' }, 'the work before it commits')
  t.equal(b.status, 'rejected')
  t.equal((b as PromiseRejectedResult).reason.message, 'b refuses', 'the failing work answers its own error')
  t.same(c, { status: 'fulfilled', value: 'c' }, 'the work after it commits')
  const rows = await stored()
  t.same(rows.map((row) => row.name), ['a', 'c'], "nothing of the failing work is kept")
  t.equal(rows[0].xmin, rows[1].xmin, 'a and c committed in one transaction')
  t.equal(runs, 1, 'the failing work ran once: the group ran again without it')
})

t.test('a lost connection fails every work of its group, stores nothing, and the next group runs on a new connection', async (t) => {
  const { group, insert, gate, stored } = await runnerOnTable(t)
  const blocker = gate()
  const first = group.run(blocker.work, { ownLockTimeout: false })
  // As a failover or an administrator would end it: the group's backend is terminated mid-group.
  const terminate: GroupWork<void> = async (tx) => {
    await tx.execute(sql`SELECT pg_terminate_backend(pg_backend_pid())`)
  }
  const outcomes = Promise.allSettled([group.run(insert('a'), { ownLockTimeout: false }), group.run(terminate, { ownLockTimeout: false }), group.run(insert('c'), { ownLockTimeout: false })])
  blocker.open()
  await first
  const settled = await outcomes
  t.same(settled.map((outcome) => outcome.status), ['rejected', 'rejected', 'rejected'], 'every work of the group answers an error')
  t.same(await stored(), [], 'nothing of the group is stored')
  t.equal(await group.run(insert('d'), { ownLockTimeout: false }), 'd', 'the next group commits')
  t.same((await stored()).map((row) => row.name), ['d'])
})

t.test("a work's lock is held until its group commits; a lock_timeout it set does not leak to the next work", async (t) => {
  const { db, group, gate, url } = await runnerOnTable(t)
  const other = new pg.Client({ connectionString: url })
  await other.connect()
  t.teardown(() => other.end())
  const blocker = gate()
  const first = group.run(blocker.work, { ownLockTimeout: false })
  const takesLock: GroupWork<void> = async (tx) => {
    await tx.execute(sql`SELECT set_config('lock_timeout', '50ms', true), pg_advisory_xact_lock(${ADVISORY_LOCK_CLASS.shipmentTransition}::int, 7)`)
  }
  const hold = gate()
  const lockTimeouts: string[] = []
  const readsTimeout: GroupWork<void> = async (tx) => {
    const { rows } = await tx.execute<{ lock_timeout: string }>(sql`SELECT current_setting('lock_timeout') AS lock_timeout`)
    lockTimeouts.push(rows[0].lock_timeout)
    await hold.work(tx, null)
  }
  const grouped = Promise.all([group.run(takesLock, { ownLockTimeout: true }), group.run(readsTimeout, { ownLockTimeout: false })])
  blocker.open()
  await first
  await sleep(100)
  const tried = await other.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, 7) AS locked', [ADVISORY_LOCK_CLASS.shipmentTransition])
  t.equal(tried.rows[0].locked, false, 'the lock is still held while a later work of the group runs')
  hold.open()
  await grouped
  t.same(lockTimeouts, ['0'], "the next work ran with the session's lock_timeout")
  const after = await other.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, 7) AS locked', [ADVISORY_LOCK_CLASS.shipmentTransition])
  t.equal(after.rows[0].locked, true, 'released by the commit')
  void db
})

t.test('a work that lost a deadlock runs again in the next group; a failed commit refuses only the works still in its group', async (t) => {
  const { db, group, insert, gate, stored } = await runnerOnTable(t)
  // Checked at COMMIT: a row naming a missing parent makes the group's commit fail.
  await db.$client.query('CREATE TABLE parents (name text PRIMARY KEY)')
  await db.$client.query('CREATE TABLE children (parent text REFERENCES parents (name) DEFERRABLE INITIALLY DEFERRED)')
  const blocker = gate()
  const first = group.run(blocker.work, { ownLockTimeout: false })
  let bRuns = 0
  const losesDeadlockOnce: GroupWork<string> = async (tx) => {
    bRuns++
    await tx.execute(sql`INSERT INTO items (name) VALUES ('b')`)
    if (bRuns === 1) throw Object.assign(new Error('deadlock detected'), { code: '40P01' })
    return 'b'
  }
  const failsAtCommit: GroupWork<string> = async (tx) => {
    await tx.execute(sql`INSERT INTO items (name) VALUES ('c')`)
    await tx.execute(sql`INSERT INTO children (parent) VALUES ('nobody')`)
    return 'c'
  }
  const outcomes = Promise.allSettled([
    group.run(insert('a'), { ownLockTimeout: false }),
    group.run(losesDeadlockOnce, { ownLockTimeout: false }),
    group.run(failsAtCommit, { ownLockTimeout: false }),
  ])
  blocker.open()
  await first
  const [a, b, c] = await outcomes
  t.equal(a.status, 'rejected', 'a shared the failed commit')
  t.equal(c.status, 'rejected', 'c shared the failed commit')
  t.same(b, { status: 'fulfilled', value: 'b' }, 'b, out of that group after its deadlock, ran again in the next one and committed')
  t.equal(bRuns, 2)
  t.same((await stored()).map((row) => row.name), ['b'], 'nothing of the failed group is stored; b is, once')
})

t.test("a work without its own lock_timeout gets the connection's, as the host set it, after one that set its own", async (t) => {
  const url = await testDatabase(t, 'group-timeout')
  const connectionTimeout = new URL(url)
  connectionTimeout.searchParams.set('options', '-c lock_timeout=7s')
  const db = openPostgres(connectionTimeout.toString(), () => {})
  t.teardown(() => db.$client.end())
  const group = createPostgresGroupCommit(db, { lanes: 1, maxGroup: 32 })
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  const first = group.run(async () => void (await opened), { ownLockTimeout: false })
  const seen: string[] = []
  const read: GroupWork<void> = async (tx) => {
    const { rows } = await tx.execute<{ value: string }>(sql`SELECT current_setting('lock_timeout') AS value`)
    seen.push(rows[0].value)
  }
  const grouped = Promise.all([
    group.run(async (tx) => void (await tx.execute(sql`SELECT set_config('lock_timeout', '50ms', true)`)), { ownLockTimeout: true }),
    group.run(read, { ownLockTimeout: false }),
  ])
  open()
  await first
  await grouped
  t.same(seen, ['7s'])
})

t.test('a change whose deadline passes while it waits for its group is refused as a lock wait that ran out, and writes nothing', async (t) => {
  const { group, insert, gate, stored } = await runnerOnTable(t)
  const blocker = gate()
  const first = group.run(blocker.work, { ownLockTimeout: false })
  const late = group.run(insert('late'), { ownLockTimeout: false, deadline: Date.now() + 50 }).then(
    () => null,
    (error: { code?: string }) => error.code,
  )
  const patient = group.run(insert('patient'), { ownLockTimeout: false })
  await sleep(150)
  blocker.open()
  await first
  t.equal(await late, '55P03', 'SQLSTATE lock_not_available, which the stores answer as a lock timeout')
  t.equal(await patient, 'patient')
  t.same((await stored()).map((row) => row.name), ['patient'])
})

/** The distinct transactions the shipments' history rows (but the creations') were committed in. */
async function commitsOfChanges(app: Awaited<ReturnType<typeof buildTestApp>>, ids: number[]) {
  const rows = await rawQuery(app, 'SELECT count(DISTINCT xmin::text)::int AS commits, count(*)::int AS changes FROM shipments_status_history WHERE shipment_id = ANY($1::int[]) AND from_status IS NOT NULL', [ids])
  return rows[0] as { commits: number; changes: number }
}

t.test('with groupCommit, concurrent status changes share commits; without it (the default) each has its own', async (t) => {
  for (const groupCommit of [true, undefined]) {
    const app = await buildTestApp(t, groupCommit ? { groupCommit } : {})
    const { shipmentIds } = await orderWithShipments(app, 40)
    const responses = await Promise.all(shipmentIds.map((id) => postUpdate(app, id, { status: 'in_progress' })))
    t.same([...new Set(responses.map((response) => response.statusCode))], [200], `groupCommit ${groupCommit}: every change answered 200`)
    const { commits, changes } = await commitsOfChanges(app, shipmentIds)
    t.equal(changes, 40, 'a history row for each change')
    if (groupCommit) t.ok(commits < 40, `40 changes in ${commits} commits`)
    else t.equal(commits, 40, 'one commit for each change')
    for (const id of shipmentIds) t.equal((await shipmentRow(app, id)).status, 'in_progress')
  }
})

t.test('two instances changing one shipment in groups keep one unbroken history', async (t) => {
  const database = await testDatabase(t, 'two-groups')
  const first = await buildTestApp(t, { groupCommit: true }, database)
  const second = await buildTestApp(t, { groupCommit: true }, database)
  const { shipmentIds } = await orderWithShipments(first, 4)
  const [contended] = shipmentIds
  const targets = Array.from({ length: 24 }, (_, index) => ['in_progress', 'on_hold'][index % 2])
  // Each instance's changes of the contended shipment go out with changes of the others, so they run in groups.
  const load = (app: typeof first, offset: number) =>
    Promise.all(targets.map((status, index) => postUpdate(app, index % 3 === 0 ? contended : shipmentIds[1 + ((index + offset) % 3)], { status })))
  const responses = (await Promise.all([load(first, 0), load(second, 1)])).flat()
  t.same([...new Set(responses.map((response) => response.statusCode))], [200], 'no change failed')
  const rows = await historyRows(first, contended)
  rows.forEach((row, index) => {
    if (index > 0) t.equal(row.fromStatus, rows[index - 1].toStatus, `row ${index} continues the chain`)
  })
  t.equal((await shipmentRow(first, contended)).status, rows.at(-1)!.toStatus, 'the row ends where its history does')
  const events = await rawQuery(first, "SELECT count(*)::int AS n FROM shipments_outbox WHERE kind = 'event' AND name = 'shipmentStatusChanged' AND ordering_key = $1", [`shipment:${contended}`])
  t.equal(events[0].n, rows.length - 1, 'one event for each change of the contended shipment')
})
