// The transactional outbox: events written with their change and delivered in commit order with their
// ids; a process killed between a commit and its delivery; a backlog behind a crashed instance's
// messages; two instances dispatching from one database; retention.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import Fastify from 'fastify'
import { eq } from 'drizzle-orm'
import { fastifyShipments } from '../src/index.js'
import { buildTestApp, insertOrder, orderRow, orderWithShipments, postUpdate, shipmentRow } from './fixtures/app.js'
import { eventually, sleep } from './fixtures/outbox.js'
import { rawQuery, tables, testDatabase } from './fixtures/database.js'
import { exited, lineMatching } from './fixtures/processes.js'

const workerPath = fileURLToPath(new URL('./fixtures/outbox-worker.ts', import.meta.url))
const spawnOutboxWorker = (args: string[]) => spawn(process.execPath, ['--import', 'tsx', workerPath, ...args], { stdio: ['pipe', 'pipe', 'inherit'] })

t.test('events are written with their change and delivered once, in commit order, each with its outbox id', async (t) => {
  const app = await buildTestApp(t)
  const seen: Array<{ name: string; eventId: string; status?: string }> = []
  app.shipments.events.on('shipmentCreated', (event) => void seen.push({ name: 'shipmentCreated', eventId: event.eventId }))
  app.shipments.events.on('shipmentStatusChanged', (event) => void seen.push({ name: 'shipmentStatusChanged', eventId: event.eventId, status: event.to }))
  app.shipments.events.on('orderAdvanced', (event) => void seen.push({ name: 'orderAdvanced', eventId: event.eventId }))

  const startedAt = Date.now()
  const { orderId, shipmentIds: [id] } = await orderWithShipments(app)
  for (const status of ['in_progress', 'fulfilled', 'shipped'] as const) t.equal((await postUpdate(app, id, { status })).statusCode, 200)
  // UUIDs version 7 (RFC 9562): the variant's bits, and the creation time in the first 48 bits.
  const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
  // (With a host's order store, orderAdvanced's id is its job's with ':advanced'; the reference store's
  // order advances in the change's own transaction, and the event is written with it.)
  t.ok(seen.every((event) => UUID_V7.test(event.eventId.replace(/:advanced$/, ''))), 'event ids are UUIDs version 7')
  const createdAt = seen.map((event) => parseInt(event.eventId.slice(0, 8) + event.eventId.slice(9, 13), 16))
  t.ok(createdAt.every((time, index) => time >= startedAt && time <= Date.now() && (index === 0 || time >= createdAt[index - 1])), 'in creation order, with their creation time')
  t.same(
    seen.map((event) => event.status ?? event.name),
    ['shipmentCreated', 'in_progress', 'fulfilled', 'shipped', 'orderAdvanced'],
    'every listener call, in commit order, before the service returned',
  )
  t.equal(new Set(seen.map((event) => event.eventId)).size, 5, 'each event has its own id')
  t.equal((await orderRow(app, orderId)).statusHandle, 'shipped')

  await eventually(app, async () => (await app.shipments.outbox.list({ kind: 'event', state: 'pending' })).length === 0)
  const stored = await app.shipments.outbox.list({ kind: 'event' })
  t.same(
    stored.map((message) => [message.id, message.name, message.state]),
    seen.map((event) => [event.eventId, event.name, 'done']),
    'the outbox holds the same events, in the same order, delivered',
  )
  t.ok(stored.every((message, index) => index === 0 || message.sequence > stored[index - 1].sequence), 'sequences increase in commit order')
  t.match(stored[3], { orderingKey: `shipment:${id}`, payload: { from: 'fulfilled', to: 'shipped', shipment: { id, status: 'shipped' } } })
  const jobs = await app.shipments.outbox.list({ kind: 'job' })
  t.same(jobs.filter((job) => job.name === 'orderAdvance'), [], "the reference store's order advanced in the change's transaction: no job")
  t.same(jobs.filter((job) => job.name !== 'orderAdvance').map((job) => [job.name, job.state]), [], "and the creation's attention row decided in its transaction: no job either")
  t.same(await app.shipments.outbox.list({ kind: 'event', afterSequence: stored[3].sequence }), [stored[4]], 'paging forward by sequence')
})

t.test('a failed change writes no event: the outbox is part of the change transaction', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const before = (await app.shipments.outbox.list()).length
  t.equal((await postUpdate(app, id, { status: 'shipped' }, 'editor')).statusCode, 403)
  t.equal((await postUpdate(app, id, { status: 'bogus' })).statusCode, 422)
  t.equal((await app.shipments.outbox.list()).length, before, 'nothing was written for the refused changes')
  t.match(await shipmentRow(app, id), { status: 'new' })
})

t.test('SIGKILL between a commit and its delivery: after a restart the event is delivered and the order advanced, once', async (t) => {
  const database = await testDatabase(t, 'crash')
  const setup = await buildTestApp(t, {}, database)
  const { orderId, shipmentIds: [id] } = await orderWithShipments(setup)
  await setup.close()

  const child = spawnOutboxWorker([database, 'ship-and-die', String(id)])
  const { signal } = await exited(child)
  t.equal(signal, 'SIGKILL', 'the process died inside the listener, right after the commit')

  const app = Fastify({ logger: false })
  await app.register(fastifyShipments, { database, outbox: { leaseMs: 1000, pollIntervalMs: 20 } })
  t.teardown(() => app.close())
  const changed: string[] = []
  const advanced: string[] = []
  app.shipments.events.on('shipmentStatusChanged', (event) => void changed.push(`${event.to} ${event.eventId}`))
  app.shipments.events.on('orderAdvanced', (event) => void advanced.push(event.eventId))
  t.match(await shipmentRow(app, id), { status: 'shipped' }, 'the change was committed')
  t.equal((await orderRow(app, orderId)).statusHandle, 'shipped', "the order advanced with the change's commit (the reference store, in its transaction)")
  const [left] = await app.shipments.outbox.list({ state: 'pending', kind: 'event' })
  t.match(left, { name: 'shipmentStatusChanged', payload: { to: 'shipped' } }, 'the event was left undelivered')

  await app.ready()
  await eventually(app, () => advanced.length > 0)
  await sleep(300)
  await app.shipments.outbox.sweep()
  t.same(changed, [`shipped ${left.id}`], 'the event was delivered after the restart, once, with the id it was written with')
  t.equal(advanced.length, 1, 'its orderAdvanced event was delivered once')
  t.equal((await orderRow(app, orderId)).statusHandle, 'shipped')
  t.same(await app.shipments.outbox.list({ state: 'pending' }), [], 'nothing is left pending')
})

t.test('two instances dispatching from one database: each event handled by one of them, once', async (t) => {
  const database = await testDatabase(t, 'instances')
  const app = await buildTestApp(t, { outbox: { pollIntervalMs: 3_600_000 } }, database)
  const orderId = await insertOrder(app)
  // Messages nobody holds, as a dead process leaves them: 10 shipments' events, 20 each.
  const { db, schema } = tables(app)
  const rows = Array.from({ length: 200 }, (_, index) => ({
    messageId: `left-${index}`,
    kind: 'event' as const,
    name: 'shipmentCreated',
    orderingKey: `shipment:${index % 10}`,
    payload: { shipment: { id: index % 10, orderId }, userId: null, sourceIntegration: null, externalCode: null },
    availableAt: new Date(Date.now() - 1000),
  }))
  await db.insert(schema.outbox).values(rows)

  const workers = [spawnOutboxWorker([database, 'dispatch']), spawnOutboxWorker([database, 'dispatch'])]
  const delivered: string[][] = [[], []]
  workers.forEach((worker, index) => {
    let buffered = ''
    worker.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop()!
      for (const line of lines) if (line.startsWith('delivered ')) delivered[index].push(line.split(' ')[2])
    })
  })
  await Promise.all(workers.map((worker) => lineMatching(worker, (line) => line === 'ready')))
  for (const started = Date.now(); delivered[0].length + delivered[1].length < 200 && Date.now() - started < 60_000; ) await sleep(50)
  await sleep(300)
  for (const worker of workers) worker.stdin!.end()
  await Promise.all(workers.map(exited))

  const all = [...delivered[0], ...delivered[1]]
  t.equal(all.length, 200, 'every event was handled')
  t.equal(new Set(all).size, 200, 'none twice')
  t.same(await app.shipments.outbox.list({ state: 'pending' }), [], 'all are marked delivered')
  for (const list of delivered) {
    // Within one instance, a shipment's events came in commit order.
    const byKey = new Map<number, number[]>()
    for (const id of list) {
      const index = Number(id.slice('left-'.length))
      byKey.set(index % 10, [...(byKey.get(index % 10) ?? []), index])
    }
    for (const indexes of byKey.values()) t.same(indexes, [...indexes].sort((a, b) => a - b))
  }
})

t.test('a backlog behind messages a crashed instance left drains in one sweep once their lease is over (it drained one event per shipment per poll)', async (t) => {
  // Only the sweeps this test makes (and the one at start-up).
  const app = await buildTestApp(t, { outbox: { pollIntervalMs: 3_600_000 } })
  const { shipmentIds } = await orderWithShipments(app, 10)
  const pending = async () => Number((await rawQuery(app, `SELECT count(*) AS n FROM shipments_outbox WHERE state = 'pending'`))[0].n)
  // The creation's events are marked done in a batch a moment after their delivery: wait for it, or on
  // a fast machine the count below finds them still pending (1,010 instead of 1,000).
  for (const started = Date.now(); (await pending()) > 0 && Date.now() - started < 10_000; ) await sleep(20)
  t.equal(await pending(), 0, 'the creation\'s events delivered and marked done first')
  const delivered: Array<{ eventId: string; shipmentId: number }> = []
  app.shipments.events.on('shipmentStatusChanged', (event) => void delivered.push({ eventId: event.eventId, shipmentId: event.shipment.id }))

  // Each shipment's event that a dead instance held when it crashed, and 98 more written behind it,
  // interleaved across the shipments: 990 rows.
  const { db, schema } = tables(app)
  const event = (index: number) => {
    const id = shipmentIds[index % 10]
    return {
      messageId: `left-${index}`,
      kind: 'event' as const,
      name: 'shipmentStatusChanged',
      orderingKey: `shipment:${id}`,
      payload: { shipment: { id }, from: 'new', to: 'new', message: null, historyId: 0, userId: null, sourceIntegration: null, externalCode: null },
      availableAt: new Date(Date.now() - 1000),
      ...(index < 10 && { claimedBy: 'a-crashed-instance', claimedUntil: new Date(Date.now() + 3_600_000) }),
    }
  }
  await db.insert(schema.outbox).values(Array.from({ length: 990 }, (_, index) => event(index)))
  // And a change on each shipment now: its event waits behind them. 1,000 pending in all.
  for (const id of shipmentIds) {
    const response = await postUpdate(app, id, { status: 'in_progress' })
    t.equal(response.statusCode, 200)
    t.equal(response.json().shipment.status, 'in_progress')
  }
  t.same(delivered, [], 'nothing is delivered ahead of the crashed instance\'s messages')
  await app.shipments.outbox.sweep()
  t.same(delivered, [], 'nor while its lease runs')
  t.equal(await pending(), 1000)

  // The lease runs out (set back rather than waited for: no timing in the test).
  await db.update(schema.outbox).set({ claimedUntil: new Date(Date.now() - 1) }).where(eq(schema.outbox.claimedBy, 'a-crashed-instance'))
  await app.shipments.outbox.sweep()
  t.equal(delivered.length, 1000, 'one sweep delivered the whole backlog')
  t.equal(new Set(delivered.map((entry) => entry.eventId)).size, 1000, 'each event once')
  const order = await rawQuery(app, `SELECT message_id, ordering_key FROM shipments_outbox WHERE name = 'shipmentStatusChanged' ORDER BY id`)
  for (const id of shipmentIds) {
    t.same(
      delivered.filter((entry) => entry.shipmentId === id).map((entry) => entry.eventId),
      order.filter((row) => row.ordering_key === `shipment:${id}`).map((row) => row.message_id),
      `shipment ${id}: in commit order`,
    )
  }
  // Marked delivered in the background, without another sweep.
  for (const started = Date.now(); (await pending()) > 0 && Date.now() - started < 10_000; ) await sleep(20)
  t.equal(await pending(), 0, 'all marked delivered')
})

t.test('a backlog is claimed in time linear in its size when the statistics saw no pending message (PostgreSQL took each pending message against every other)', async (t) => {
  // Only the sweep this test makes (and the one at start-up).
  const app = await buildTestApp(t, { outbox: { pollIntervalMs: 3_600_000 } })
  const delivered = new Set<string>()
  app.shipments.events.on('shipmentCreated', (event) => void delivered.add(event.eventId))
  // A large outbox's statistics: ANALYZE read delivered messages only (on a table of millions its
  // sample holds few pending ones or none), and nothing analyzes the table again during the test.
  const { db, schema } = tables(app)
  const old = new Date(Date.now() - 86_400_000)
  for (let start = 0; start < 20_000; start += 1000) {
    await db.insert(schema.outbox).values(
      Array.from({ length: 1000 }, (_, index) => ({ messageId: `done-${start + index}`, kind: 'event' as const, name: 'shipmentCreated', orderingKey: `shipment:${start + index}`, payload: {}, state: 'done' as const, availableAt: old, doneAt: old })),
    )
  }
  if (app.shipments.database.engine === 'postgres') await rawQuery(app, 'ALTER TABLE shipments_outbox SET (autovacuum_enabled = false)')
  await rawQuery(app, 'ANALYZE shipments_outbox')
  // Then a backlog: 3,000 due events, one key each (what a dead instance left, or an outage).
  const due = new Date(Date.now() - 1000)
  for (let start = 0; start < 3000; start += 500) {
    await db.insert(schema.outbox).values(
      Array.from({ length: 500 }, (_, index) => ({ messageId: `backlog-${start + index}`, kind: 'event' as const, name: 'shipmentCreated', orderingKey: `backlog:${start + index}`, payload: {}, availableAt: due })),
    )
  }

  const started = performance.now()
  await app.shipments.outbox.sweep()
  const sweepMs = performance.now() - started
  // Thirty claims of 100: under half a second on a loaded machine; with the nested loop, PostgreSQL
  // took 2.6 s for half this backlog (quadratic: four times that for this one).
  t.ok(sweepMs < 2000, `the sweep claimed the backlog in ${sweepMs.toFixed(0)} ms`)
  t.equal(delivered.size, 3000, 'every event of the backlog delivered, once')
  t.ok([...delivered].every((id) => id.startsWith('backlog-')), 'the backlog\'s events, none delivered before')
  const pending = async () => Number((await rawQuery(app, `SELECT count(*) AS n FROM shipments_outbox WHERE state = 'pending'`))[0].n)
  for (const waited = performance.now(); (await pending()) > 0 && performance.now() - waited < 10_000; ) await sleep(20)
  t.equal(await pending(), 0, 'all marked delivered')
})

t.test('delivered messages are pruned after the retention age; pending ones never', async (t) => {
  const database = await testDatabase(t, 'retention')
  const first = await buildTestApp(t, {}, database)
  const { shipmentIds: [id] } = await orderWithShipments(first)
  await postUpdate(first, id, { status: 'in_progress' })
  const { db, schema } = tables(first)
  await db.insert(schema.outbox).values({ messageId: 'not-yet', kind: 'event', name: 'shipmentCreated', orderingKey: 'later', payload: {}, availableAt: new Date(Date.now() + 3_600_000) })
  // Everything but the message not yet due delivered and marked done (the creation's and the change's
  // events, and the jobs they made).
  const onlyNotYetPending = async () => (await first.shipments.outbox.list({ state: 'pending' })).map((message) => message.id).join() === 'not-yet'
  await eventually(first, onlyNotYetPending)
  t.ok(await onlyNotYetPending(), 'the delivered messages are marked done')
  t.ok((await first.shipments.outbox.list({ state: 'done' })).length >= 2)
  // A backlog bigger than one prune batch (1000): deleted batch after batch, none left behind.
  const old = new Date(Date.now() - 86_400_000)
  for (let start = 0; start < 2500; start += 500) {
    await db.insert(schema.outbox).values(
      Array.from({ length: 500 }, (_, index) => ({ messageId: `old-${start + index}`, kind: 'job' as const, name: 'webhookDelivery', orderingKey: `old:${start + index}`, payload: {}, state: 'done' as const, availableAt: old, doneAt: old })),
    )
  }
  await first.close()

  const app = await buildTestApp(t, { outbox: { retentionMs: 0 } }, database)
  await eventually(app, async () => (await app.shipments.outbox.list({ state: 'done' })).length === 0)
  t.same((await app.shipments.outbox.list()).map((message) => message.id), ['not-yet'], 'only the pending message is left')
  t.same(await rawQuery(app, "SELECT count(*) AS n FROM shipments_outbox WHERE message_id LIKE 'old-%'").then((rows) => Number(rows[0].n)), 0, 'the whole backlog, in batches')
})

t.test('outbox options are checked at registration', async (t) => {
  for (const [outbox, message] of [
    [{ leaseMs: 10 }, /outbox\.leaseMs/],
    [{ retryDelaysMs: [-1] }, /outbox\.retryDelaysMs/],
    [{ nope: 1 }, /outbox/],
  ] as const) {
    const app = Fastify({ logger: false })
    app.register(fastifyShipments, { database: await testDatabase(t, 'options'), outbox: outbox as never })
    await t.rejects(async () => app.ready(), message)
    await app.close()
  }
})
