// PostgreSQL only: a backend terminated (pg_terminate_backend, as a failover or an administrator would)
// in the middle of an allocation or an order completion, while it waits for the order's lock. The call
// fails cleanly, nothing is half-written, the pool replaces the dead connection, and doing it again
// allocates exactly once.
import t from 'tap'
import pg from 'pg'
import { ADVISORY_LOCK_CLASS } from '../../src/index.js'
import { buildTestApp } from '../fixtures/app.js'
import { testDatabase } from '../fixtures/database.js'
import { sleep } from '../fixtures/outbox.js'

async function setup(t: Parameters<typeof testDatabase>[0]) {
  const database = await testDatabase(t, 'terminate')
  const app = await buildTestApp(t, {}, database)
  const orderId = await app.shipments.referenceOrders!.createOrder({ reference: 'K100', isCompleted: true, items: [{ name: 'Mug', sku: 'MUG', quantity: 2 }, { name: 'Tea', sku: 'TEA', quantity: 3 }] })
  const lines = (await app.shipments.orders.orderLines!(orderId))!
  // Another session holds the order's lock, so the app's transaction waits inside it.
  const holder = new pg.Client({ connectionString: database })
  await holder.connect()
  t.teardown(() => holder.end())
  await holder.query('BEGIN')
  await holder.query('SELECT pg_advisory_xact_lock($1, $2)', [ADVISORY_LOCK_CLASS.orderShipments, orderId])
  /**
   * Terminates the backend that waits for this order's lock (once it waits), and returns its pid. Only
   * a waiter for this lock: a background job waiting for another advisory lock is not the call under test.
   */
  const terminateWaiter = async () => {
    for (let tries = 0; tries < 200; tries++) {
      // A lock of two int4 keys is objsubid 2, its keys classid and objid (oids: compared as bigint).
      const { rows } = await holder.query<{ pid: number }>(
        `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 2
            AND classid::bigint = $1 AND objid::bigint = $2 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [ADVISORY_LOCK_CLASS.orderShipments, orderId],
      )
      if (rows.length > 0) {
        await holder.query('SELECT pg_terminate_backend($1)', [rows[0].pid])
        return rows[0].pid
      }
      await sleep(25)
    }
    const { rows: all } = await holder.query("SELECT pid, state, wait_event_type, wait_event, left(query, 80) AS query FROM pg_stat_activity WHERE datname = current_database()")
    throw new Error(`no backend waited for the lock: ${JSON.stringify(all)}`)
  }
  const release = async () => {
    await holder.query('COMMIT')
  }
  const holderPid = async () => (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid
  const count = async () => (await app.shipments.shipments.list({ orderId, includeDeleted: true })).total
  return { app, orderId, lines, terminateWaiter, release, count, holderPid }
}

t.test('an allocation whose backend is terminated while it waits for the order lock fails cleanly; done again, it allocates once', async (t) => {
  const { app, orderId, lines, terminateWaiter, release, count } = await setup(t)
  const creating = app.shipments.shipments.create(orderId, { items: [{ lineItemId: lines[1].id, quantity: 3 }] }).then(() => null, (error: Error) => error)
  await terminateWaiter()
  const error = await creating
  t.ok(error instanceof Error, 'the call failed')
  await release()
  t.equal(await count(), 0, 'nothing half-written')
  const [created] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: lines[1].id, quantity: 3 }] })
  t.same(created.items.map((item) => item.quantity), [3], 'done again on a new connection, it succeeds')
  await t.rejects(app.shipments.shipments.create(orderId, { items: [{ lineItemId: lines[1].id, quantity: 1 }] }), { name: 'ShipmentValidationError' }, 'and the line is not over-allocated')
  t.equal(await count(), 1)
})

t.test('an order completion whose backend is terminated while it waits fails cleanly; completed again, its shipments are created once', async (t) => {
  const { app, orderId, terminateWaiter, release, count } = await setup(t)
  const completing = app.shipments.shipments.orderCompleted(orderId).then(() => null, (error: Error) => error)
  await terminateWaiter()
  t.ok((await completing) instanceof Error, 'the call failed')
  await release()
  t.equal(await count(), 0, 'nothing half-written')
  t.equal((await app.shipments.shipments.orderCompleted(orderId)).length, 1)
  t.same(await app.shipments.shipments.orderCompleted(orderId), [], 'once')
  const allocation = await app.shipments.shipments.allocation(orderId)
  t.ok(allocation.lines!.every((line) => line.unallocated === 0 && line.allocated === line.quantity), 'every unit allocated once')
})

t.test("the app's idle connections terminated: the process lives on, and the next calls use new connections", async (t) => {
  const { app, orderId, release, holderPid } = await setup(t)
  await release()
  const keep = await holderPid()
  const admin = new pg.Client({ connectionString: (app.shipments.database.db.$client as pg.Pool).options.connectionString })
  await admin.connect()
  t.teardown(() => admin.end())
  const { rows } = await admin.query<{ terminated: boolean }>(
    'SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> $1',
    [keep],
  )
  t.ok(rows.length > 0 && rows.every((row) => row.terminated), `${rows.length} backends terminated`)
  await sleep(100)
  const created = await app.shipments.shipments.orderCompleted(orderId)
  t.equal(created.length, 1, 'the next call works')
  t.equal((await app.shipments.shipments.update(created[0].id, { status: 'fulfilled' })).shipment.status, 'fulfilled')
})
