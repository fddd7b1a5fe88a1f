// `npm run bench:cpu`: the Node process's CPU per status change, as round 4 measured it (CONTRIBUTING,
// "Above 1.0 on PostgreSQL?"): status changes through `app.inject` (the HTTP route, its schema and
// hooks included), ten in flight, on 1,000 shipments alternating in_progress and on_hold, in one process
// on each engine; `process.cpuUsage()` over BENCH_CPU_CHANGES changes (default 4,000) after a warm-up of
// a tenth of them. Target (issue 51): <= 200 µs on PostgreSQL. Read it on a quiet machine: the CPU of the
// process is its own, but a busy machine slows its caches and scheduler too.
import Fastify from 'fastify'
import { fastifyShipments } from 'fastify-shipments'
import { benchDatabase, removeBenchDatabases } from './hosts.js'
import { ENGINES } from './settings.js'
import { positiveInteger } from './size-stores.js'

const CHANGES = positiveInteger('BENCH_CPU_CHANGES', 4_000)
const IN_FLIGHT = 10

for (const engine of ENGINES) {
  const app = Fastify({ logger: false })
  await app.register(fastifyShipments, {
    database: await benchDatabase(engine, 'cpu'),
    resolveUser: () => ({ id: 'bench' }),
    hasPermission: () => true,
    outbox: { pollIntervalMs: 3_600_000 },
    batches: { worker: false },
  })
  // The machine's own yardstick: a bare route's answer through the same inject, in the same process.
  app.post('/bare/echo', async (request) => request.body)
  await app.ready()
  const orders = app.shipments.referenceOrders!
  const ids: number[] = []
  for (let order = 0; order < 10; order++) {
    const orderId = await orders.createOrder({ reference: `CPU-${order}`, isCompleted: true })
    for (const shipment of await app.shipments.shipments.create(orderId, { count: 100 })) ids.push(shipment.id)
  }
  let sent = 0
  const change = async () => {
    const index = sent++
    const id = ids[index % ids.length]!
    const status = Math.floor(index / ids.length) % 2 === 0 ? 'in_progress' : 'on_hold'
    const response = await app.inject({ method: 'POST', url: `/shipments/api/shipments/${id}`, payload: { status } })
    if (response.statusCode !== 200) throw new Error(`a status change answered ${response.statusCode}: ${response.body}`)
  }
  const run = async (count: number) => {
    const until = sent + count
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (sent < until) await change()
    }))
  }
  await run(Math.ceil(CHANGES / 10))
  const before = process.cpuUsage()
  const started = performance.now()
  await run(CHANGES)
  const used = process.cpuUsage(before)
  const seconds = (performance.now() - started) / 1000
  const bareBefore = process.cpuUsage()
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    for (let index = 0; index < CHANGES / IN_FLIGHT; index++) await app.inject({ method: 'POST', url: '/bare/echo', payload: { status: 'on_hold' } })
  }))
  const bare = process.cpuUsage(bareBefore)
  console.log(
    `${engine}: ${CHANGES} status changes, ${IN_FLIGHT} in flight, through app.inject: ${((used.user + used.system) / CHANGES).toFixed(0)} µs of the process's CPU each ` +
      `(${(used.user / CHANGES).toFixed(0)} user, ${(used.system / CHANGES).toFixed(0)} system), ${Math.round(CHANGES / seconds)} a second${engine === 'postgres' ? '; target <= 200 µs' : ''}; a bare JSON route's inject: ${((bare.user + bare.system) / CHANGES).toFixed(0)} µs`,
  )
  await app.close()
}
await removeBenchDatabases()
