// Events are emitted after the database commit, never inside it (README, Events). A listener reads the
// database through another connection, as another process or instance would, the moment it is
// called: the change it announces must already be committed there. The read is synchronous (the
// listener returns only once it has the answer), so nothing the emitting code does after the
// listener returns (a COMMIT, say) can make it pass. A failed change emits nothing.
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads'
import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import pg from 'pg'
import type { FastifyInstance } from 'fastify'
import { ADVISORY_LOCK_CLASS, type PostgresDatabase, type ShipmentsEventMap, type ShipmentsPluginOptions } from '../src/index.js'
import { buildTestApp, historyRows, insertOrder, orderRow, orderWithShipments, postUpdate, shipmentRow } from './fixtures/app.js'
import { otherConnection, TEST_ENGINE } from './fixtures/database.js'

type Row = Record<string, unknown>
type Reader = (text: string, values?: unknown[]) => Row[]

/**
 * A read-only view of the app's database through a connection of its own, answering synchronously.
 * SQLite: a second better-sqlite3 connection (it sees only committed data). PostgreSQL: a pg client
 * in a worker thread, waited for with Atomics.wait, so the caller blocks until the server answered.
 * `?` placeholders on both engines.
 */
async function committedReader(t: Test, app: FastifyInstance): Promise<Reader> {
  const handle = app.shipments.database
  if (handle.engine === 'sqlite') {
    const other = new Database(handle.db.$client.name, { readonly: true })
    t.teardown(() => other.close())
    return (text, values = []) => other.prepare(text).all(...values) as Row[]
  }
  const url = (handle.db as PostgresDatabase).$client.options.connectionString!
  const shared = new SharedArrayBuffer(4)
  const signal = new Int32Array(shared)
  const { port1, port2 } = new MessageChannel()
  const worker = new Worker(
    `
    const { workerData } = require('node:worker_threads')
    const pg = require('pg')
    const { url, shared, port } = workerData
    const signal = new Int32Array(shared)
    const answer = (message) => { port.postMessage(message); Atomics.store(signal, 0, 1); Atomics.notify(signal, 0) }
    const client = new pg.Client({ connectionString: url })
    client.on('error', () => {})
    client.connect().then(() => answer({ ready: true }), (error) => answer({ error: String(error) }))
    port.on('message', ({ text, values }) => {
      if (text === null) return client.end().then(() => answer({ ended: true }))
      client.query(text, values).then((result) => answer({ rows: result.rows }), (error) => answer({ error: String(error) }))
    })
    `,
    { eval: true, workerData: { url, shared, port: port2 }, transferList: [port2] },
  )
  const receive = () => {
    if (Atomics.wait(signal, 0, 0, 30_000) === 'timed-out') throw new Error('the reader thread did not answer')
    Atomics.store(signal, 0, 0)
    const { message } = receiveMessageOnPort(port1)!
    if (message.error) throw new Error(message.error)
    return message
  }
  receive()
  t.teardown(async () => {
    port1.postMessage({ text: null })
    receive()
    await worker.terminate()
  })
  return (text, values = []) => {
    let index = 0
    port1.postMessage({ text: text.replace(/\?/g, () => `$${++index}`), values })
    return receive().rows as Row[]
  }
}

interface Seen {
  event: keyof ShipmentsEventMap
  payload: unknown
  /** What the other connection showed when the listener ran. */
  committed: Row
}

/** Records every event with what another connection sees at that moment (`look` decides what to read). */
function recordEvents(app: FastifyInstance, look: (event: keyof ShipmentsEventMap, payload: unknown) => Row) {
  const seen: Seen[] = []
  const names: Array<keyof ShipmentsEventMap> = ['shipmentCreated', 'shipmentStatusChanged', 'shipmentDeleted', 'shipmentRestored', 'orderAdvanced', 'shipNotificationRecorded']
  for (const event of names) {
    const listener = (payload: unknown) => void seen.push({ event, payload, committed: look(event, payload) })
    app.shipments.events.on(event, listener as never)
  }
  return seen
}

const one = (rows: Row[]) => rows[0] ?? null

async function eventsApp(t: Test, options: Partial<ShipmentsPluginOptions> = {}) {
  const app = await buildTestApp(t, { ...options, timezone: 'UTC' })
  const read = await committedReader(t, app)
  const seen = recordEvents(app, (event, payload) => {
    const data = payload as { shipment?: { id: number }; historyId?: number; orderId?: number }
    switch (event) {
      case 'shipmentCreated':
        return {
          shipment: one(read('SELECT id, reference, status FROM shipments_shipments WHERE id = ?', [data.shipment!.id])),
          history: read('SELECT from_status, to_status FROM shipments_status_history WHERE shipment_id = ? ORDER BY id', [data.shipment!.id]),
          ofOrder: read('SELECT id FROM shipments_shipments WHERE order_id = (SELECT order_id FROM shipments_shipments WHERE id = ?) ORDER BY id', [data.shipment!.id]).map((row) => row.id),
        }
      case 'shipmentStatusChanged':
        return {
          shipment: one(read('SELECT status, carrier FROM shipments_shipments WHERE id = ?', [data.shipment!.id])),
          history: one(read('SELECT shipment_id, from_status, to_status, message FROM shipments_status_history WHERE id = ?', [data.historyId])),
          advance: one(read('SELECT status FROM shipments_order_advances WHERE order_id = (SELECT order_id FROM shipments_shipments WHERE id = ?)', [data.shipment!.id])),
        }
      case 'orderAdvanced':
        return {
          order: one(read('SELECT status_handle FROM shipments_orders WHERE id = ?', [data.orderId])),
          advance: one(read('SELECT status FROM shipments_order_advances WHERE order_id = ?', [data.orderId])),
        }
      case 'shipmentDeleted':
      case 'shipmentRestored':
        return { deleted: one(read('SELECT date_deleted IS NOT NULL AS deleted FROM shipments_shipments WHERE id = ?', [data.shipment!.id]))!.deleted ? 'yes' : 'no' }
      default:
        return {}
    }
  })
  return { app, read, seen }
}

t.test('the reader sees committed data only (the premise of the tests below)', async (t) => {
  const { app, read } = await eventsApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const statusSeen = () => one(read('SELECT status FROM shipments_shipments WHERE id = ?', [id]))!.status
  const handle = app.shipments.database
  if (handle.engine === 'sqlite') {
    const client = handle.db.$client
    client.exec('BEGIN IMMEDIATE')
    client.prepare("UPDATE shipments_shipments SET status = 'on_hold' WHERE id = ?").run(id)
    t.equal(statusSeen(), 'new', 'an open transaction is not visible')
    client.exec('COMMIT')
  } else {
    const client = await handle.db.$client.connect()
    await client.query('BEGIN')
    await client.query("UPDATE shipments_shipments SET status = 'on_hold' WHERE id = $1", [id])
    t.equal(statusSeen(), 'new', 'an open transaction is not visible')
    await client.query('COMMIT')
    client.release()
  }
  t.equal(statusSeen(), 'on_hold', 'visible once committed')
})

t.test('shipmentCreated: every shipment of the creation, and its history row, are committed when the listener runs', async (t) => {
  const { app, seen } = await eventsApp(t)
  const orderId = await insertOrder(app)
  const created = await app.shipments.shipments.create(orderId, { count: 2, userId: 'creator' })
  const ids = created.map((shipment) => shipment.id)
  t.same(seen.map((entry) => entry.event), ['shipmentCreated', 'shipmentCreated'], 'one event per shipment')
  seen.forEach((entry, index) => {
    t.match(entry.payload, { shipment: { id: ids[index], status: 'new' }, userId: 'creator', sourceIntegration: null, externalCode: null })
    t.same(
      entry.committed,
      {
        shipment: { id: ids[index], reference: created[index].reference, status: 'new' },
        history: [{ from_status: null, to_status: 'new' }],
        ofOrder: ids,
      },
      `shipment ${ids[index]}: committed with its history row and with the whole creation when the listener runs`,
    )
  })
})

t.test('shipmentStatusChanged and orderAdvanced: the transition, its history row and the order advance are committed when the listeners run', async (t) => {
  const { app, seen } = await eventsApp(t)
  const { orderId, shipmentIds: [id] } = await orderWithShipments(app)
  seen.length = 0

  let response = await postUpdate(app, id, { status: 'in_progress', statusMessage: 'Picking', carrier: 'UPS' })
  t.equal(response.statusCode, 200)
  t.same(seen.map((entry) => entry.event), ['shipmentStatusChanged'])
  const historyId = (await historyRows(app, id)).at(-1)!.id
  t.match(seen[0].payload, { shipment: { id, status: 'in_progress' }, from: 'new', to: 'in_progress', historyId, message: 'Picking', userId: 'admin' })
  t.same(seen[0].committed, {
    shipment: { status: 'in_progress', carrier: 'UPS' },
    history: { shipment_id: id, from_status: 'new', to_status: 'in_progress', message: 'Picking' },
    advance: null,
  }, 'the new status, the other columns of the same update and the history row are committed')

  seen.length = 0
  response = await postUpdate(app, id, { status: 'shipped' })
  t.equal(response.statusCode, 200)
  t.same(seen.map((entry) => entry.event), ['shipmentStatusChanged', 'orderAdvanced'])
  t.same(seen[0].committed, {
    shipment: { status: 'shipped', carrier: 'UPS' },
    history: { shipment_id: id, from_status: 'in_progress', to_status: 'shipped', message: null },
    advance: { status: 'shipped' },
  }, 'the transition, committed together with the claim of the order advance')
  const { eventId } = seen[1].payload as { eventId: string }
  t.same(seen[1].payload, { orderId, status: 'shipped', shipmentId: id, eventId })
  // The reference store's order advanced in the change's transaction: the event is the change's own message.
  t.match(eventId, /^[0-9a-f-]{36}$/, 'the event carries its outbox id')
  t.same(seen[1].committed, { order: { status_handle: 'shipped' }, advance: { status: 'shipped' } }, 'the order status is committed when orderAdvanced runs')
  t.equal((await orderRow(app, orderId)).statusHandle, 'shipped')

  // The service path (as providers and ShipStation use it) emits the same way.
  seen.length = 0
  const result = await app.shipments.shipments.update(id, { status: 'on_hold', integrationHandle: 'acme', externalCode: 'HELD' })
  t.same(seen.map((entry) => entry.event), ['shipmentStatusChanged'])
  t.match(seen[0].payload, { historyId: result.transition!.historyId, sourceIntegration: 'acme', externalCode: 'HELD' })
  t.match(seen[0].committed, { shipment: { status: 'on_hold' }, history: { from_status: 'shipped', to_status: 'on_hold' } })
})

t.test('shipmentDeleted and shipmentRestored: committed when the listener runs', async (t) => {
  const { app, seen } = await eventsApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  seen.length = 0
  await app.shipments.shipments.softDelete(id)
  await app.shipments.shipments.restore(id)
  t.same(seen.map((entry) => [entry.event, entry.committed]), [
    ['shipmentDeleted', { deleted: 'yes' }],
    ['shipmentRestored', { deleted: 'no' }],
  ])
})

t.test('a failing update (422) emits nothing and changes nothing', async (t) => {
  const { app, seen } = await eventsApp(t, { lockTimeoutMs: 300 })
  const { orderId, shipmentIds: [id] } = await orderWithShipments(app)
  seen.length = 0
  const before = await shipmentRow(app, id)

  // Validation: a status change with an invalid field.
  let response = await postUpdate(app, id, { status: 'shipped', trackingUrl: 'ftp://example.com' })
  t.equal(response.statusCode, 422)
  t.same(response.json(), { success: false, errors: { trackingUrl: ['Tracking Url is not a valid URL.'] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' })

  // The mutex is held elsewhere beyond lockTimeoutMs.
  const lockTimeout = { success: false, error: `Couldn't update shipment ${id} right now because another update is in progress. Please try again.`, errorCode: 'SHIPMENTS_UPDATE_REJECTED' }
  const handle = app.shipments.database
  if (handle.engine === 'sqlite') {
    // Across processes the database's write lock is the mutex: another connection holds it open.
    const holder = new Database(handle.db.$client.name)
    t.teardown(() => holder.close())
    holder.exec('BEGIN IMMEDIATE')
    response = await postUpdate(app, id, { status: 'shipped' })
    holder.exec('ROLLBACK')
  } else {
    const holder = new pg.Client({ connectionString: handle.db.$client.options.connectionString })
    await holder.connect()
    t.teardown(() => holder.end())
    await holder.query('BEGIN')
    await holder.query('SELECT pg_advisory_xact_lock($1, $2)', [ADVISORY_LOCK_CLASS.shipmentTransition, id])
    response = await postUpdate(app, id, { status: 'shipped' })
    await holder.query('COMMIT')
  }
  t.equal(response.statusCode, 422)
  t.same(response.json(), lockTimeout)

  // The save fails inside the transaction (a trigger refuses the history row): rolled back, no event.
  const other = await otherConnection(t, app)
  if (TEST_ENGINE === 'sqlite') {
    await other(`CREATE TRIGGER refuse_history BEFORE INSERT ON shipments_status_history WHEN NEW.to_status = 'shipped'
                 BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
  } else {
    await other(`CREATE FUNCTION refuse_history() RETURNS trigger LANGUAGE plpgsql AS $$
                 BEGIN IF NEW.to_status = 'shipped' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`)
    await other('CREATE TRIGGER refuse_history BEFORE INSERT ON shipments_status_history FOR EACH ROW EXECUTE FUNCTION refuse_history()')
  }
  response = await postUpdate(app, id, { status: 'shipped', carrier: 'DHL' })
  t.equal(response.statusCode, 422)
  t.same(response.json(), { success: false, error: `Couldn't update shipment ${id}: the change could not be saved.`, errorCode: 'SHIPMENTS_UPDATE_REJECTED' })

  // The transition permission is missing (403): nothing either.
  response = await postUpdate(app, id, { status: 'cancelled' }, 'editor')
  t.equal(response.statusCode, 403)

  t.same(seen, [], 'no event for any failed update')
  t.same(await shipmentRow(app, id), before, 'the shipment is unchanged (carrier included: the failed save was rolled back)')
  t.same((await historyRows(app, id)).map((row) => row.toStatus), ['new'], 'no history row')
  t.equal((await orderRow(app, orderId)).statusHandle, 'processing', 'the order did not advance')

  // A change that does go through afterwards emits as usual: the listeners were there all along.
  response = await postUpdate(app, id, { status: 'fulfilled' })
  t.equal(response.statusCode, 200)
  t.same(seen.map((entry) => entry.event), ['shipmentStatusChanged'])
})
