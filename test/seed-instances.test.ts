// Several instances starting at once on a fresh database: the demo seed (examples/seed.ts, the README's
// host does the same) used to check for an order and then create it, so the second instance crashed on
// `duplicate key value violates unique constraint "shipments_orders_reference_unique"`. createOrder's
// race now ends in a ReferenceOrderError marked `duplicate`, which the seed takes as "already done".
import t from 'tap'
import { ReferenceOrderError } from '../src/index.js'
import { buildTestApp } from './fixtures/app.js'
import { tables, testDatabase } from './fixtures/database.js'
import { exited, firstLine, lineMatching, spawnWorker } from './fixtures/processes.js'
import { acmeThreePlProvider } from '../examples/custom-provider.js'
import { ensureDemoIntegrations } from '../examples/demo-integrations.js'
import { seedDemoData } from '../examples/seed.js'

const DEMO_ORDER_COUNT = 5
const DEMO_SHIPMENTS = { 1001: 1, 1002: 2, 1003: 1, 1004: 1, 1005: 0 }

t.test('two processes seeding one fresh database at once both succeed, and every order exists once with its shipments', async (t) => {
  const database = await testDatabase(t, 'fresh')
  const workers = [spawnWorker([database, 'seed']), spawnWorker([database, 'seed'])]
  t.teardown(() => workers.forEach((worker) => worker.exitCode === null && worker.kill('SIGKILL')))
  t.same(await Promise.all(workers.map((worker) => firstLine(worker))), ['ready', 'ready'], 'both started and wait')
  const outcomes = Promise.all(workers.map((worker) => lineMatching(worker, (line) => line !== 'ready')))
  for (const worker of workers) worker.stdin!.write('go\n')
  const printed = await outcomes
  t.same(await Promise.all(workers.map(exited)), [{ code: 0, signal: null }, { code: 0, signal: null }], 'both exited cleanly')
  t.match(printed, [/^seeded \d$/, /^seeded \d$/], `no error in either (${printed.join(', ')})`)
  t.equal(printed.reduce((sum, line) => sum + Number(line.slice('seeded '.length)), 0), DEMO_ORDER_COUNT, 'each order created by exactly one of them')

  const app = await buildTestApp(t, {}, database)
  const { db, schema } = tables(app)
  const orders = await db.select({ id: schema.orders.id, reference: schema.orders.reference }).from(schema.orders)
  t.same(orders.map((order) => order.reference).sort(), Object.keys(DEMO_SHIPMENTS), 'the five demo orders, once each')
  for (const order of orders) {
    const { shipments } = await app.shipments.shipments.list({ orderId: order.id })
    t.equal(shipments.length, DEMO_SHIPMENTS[order.reference as unknown as keyof typeof DEMO_SHIPMENTS], `order ${order.reference}: its shipments, made once`)
  }
  t.same((await app.shipments.referenceOrders!.listStatuses()).map((status) => status.handle), ['new', 'processing', 'shipped'])
})

t.test('createOrder racing itself: one order is created, every other call gets a ReferenceOrderError marked duplicate', async (t) => {
  const app = await buildTestApp(t)
  const orders = app.shipments.referenceOrders!
  const input = (index: number) => ({
    reference: 'RACE-1',
    number: `n-${index}`,
    shippingAddress: { name: 'Jane Doe', country: 'DE' },
    items: [{ name: 'Mug', quantity: 1 }],
  })
  const attempts = await Promise.allSettled(Array.from({ length: 6 }, (_, index) => orders.createOrder(input(index))))
  const created = attempts.filter((attempt) => attempt.status === 'fulfilled')
  const refused = attempts.flatMap((attempt) => (attempt.status === 'rejected' ? [attempt.reason as unknown] : []))
  t.equal(created.length, 1, 'one winner')
  t.equal(refused.length, 5)
  for (const error of refused) {
    t.ok(error instanceof ReferenceOrderError, 'a ReferenceOrderError, not a database error')
    t.match(error, { field: 'reference', duplicate: true, code: 'SHIPMENTS_REFERENCE_ORDER_INVALID', message: /^reference: an order with the reference "RACE-1" or the number "n-\d" exists$/ })
  }
  // The number is unique too: another reference with a taken number is the same refusal.
  const numberRace = await Promise.allSettled([orders.createOrder({ reference: 'RACE-2', number: 'n-shared' }), orders.createOrder({ reference: 'RACE-3', number: 'n-shared' })])
  t.same(numberRace.map((result) => result.status).sort(), ['fulfilled', 'rejected'])
  t.match(numberRace.find((result) => result.status === 'rejected'), { reason: { name: 'ReferenceOrderError', duplicate: true } })

  const { db, schema } = tables(app)
  const rows = await db.select({ reference: schema.orders.reference, number: schema.orders.number }).from(schema.orders)
  t.equal(rows.filter((row) => row.reference === 'RACE-1').length, 1, 'one RACE-1')
  t.equal(rows.filter((row) => row.number === 'n-shared').length, 1, 'one order with the shared number')
  t.equal(rows.length, 2)
  t.equal((await db.select().from(schema.orderAddresses)).length, 1, "the losers wrote no address")
  t.equal((await db.select().from(schema.orderLineItems)).length, 1, 'nor an item')

  // Any other refusal is not a duplicate.
  await t.rejects(orders.createOrder({ reference: '' }), { name: 'ReferenceOrderError', duplicate: false })
})

t.test('updateOrder racing itself: two orders given one reference at once, one takes it, the other gets a ReferenceOrderError marked duplicate', async (t) => {
  const app = await buildTestApp(t)
  const orders = app.shipments.referenceOrders!
  const { db, schema } = tables(app)
  // Several rounds: the race (both checks before either write) is what the unique key must decide.
  for (let round = 0; round < 5; round++) {
    const ids = await Promise.all([0, 1, 2].map((index) => orders.createOrder({ reference: `U${round}-${index}` })))
    const attempts = await Promise.allSettled(ids.map((id) => orders.updateOrder(id, { reference: `TAKEN-${round}` })))
    t.equal(attempts.filter((attempt) => attempt.status === 'fulfilled').length, 1, `round ${round}: one winner`)
    for (const attempt of attempts) {
      if (attempt.status === 'rejected') t.match(attempt.reason, { name: 'ReferenceOrderError', field: 'reference', duplicate: true, message: 'reference: another order has this reference or number' })
    }
    const rows = await db.select({ reference: schema.orders.reference }).from(schema.orders)
    t.equal(rows.filter((row) => row.reference === `TAKEN-${round}`).length, 1, `round ${round}: one order holds the reference`)
    t.equal(rows.filter((row) => row.reference.startsWith(`U${round}-`)).length, 2, `round ${round}: the losers kept theirs`)
  }
})

t.test("the demo's integrations ensured by two instances at once: both succeed, each integration once", async (t) => {
  const app = await buildTestApp(t, { providers: [acmeThreePlProvider] })
  await Promise.all([ensureDemoIntegrations(app), ensureDemoIntegrations(app), ensureDemoIntegrations(app)])
  t.same((await app.shipments.integrations.list()).map((integration) => integration.handle).sort(), ['acme-3pl', 'demo-webhooks'])
  // A failure that leaves nothing made is still an error.
  const failing = { shipments: { integrations: { get: async () => null, create: async () => Promise.reject(new Error('database down')) } } }
  await t.rejects(ensureDemoIntegrations(failing as unknown as typeof app), { message: 'database down' })
})

t.test('the demo seed run twice at once in one process: every order once, and a later start creates nothing', async (t) => {
  const app = await buildTestApp(t)
  const created = await Promise.all([seedDemoData(app), seedDemoData(app)])
  t.equal(created[0] + created[1], DEMO_ORDER_COUNT, `each order created by one call (${created.join(' + ')})`)
  t.equal(await seedDemoData(app), 0, 'the next start finds the data')
  t.equal((await app.shipments.shipments.list()).total, Object.values(DEMO_SHIPMENTS).reduce((sum, count) => sum + count, 0), 'shipments made once per order')
})
