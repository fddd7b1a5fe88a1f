// `npm run bench:statements` (and the end of `npm run bench`): the statements and transactions one
// operation sends to PostgreSQL, counted at the driver (node-postgres' Client.prototype.query, which the
// package's pool shares), with the outbox's follow-up work included: the count runs from the call until
// every outbox message it wrote is delivered (order advance, attention refresh, events), the outbox's
// timer parked (pollIntervalMs an hour) and the label batch worker off, so no poll falls in the window. Transactions are the
// explicit ones (BEGIN) plus each write sent outside one; reads outside a transaction are listed too.
// Each operation runs five times on its own shipments, the counts the median.
import pg from 'pg'
import type { FastifyInstance } from 'fastify'
import { easyPostEvent } from './figures/requests.js'
import { benchDatabase, removeBenchDatabases, SHIP_TO } from './hosts.js'
import Fastify from 'fastify'
import { fastifyShipments } from 'fastify-shipments'

interface Count {
  statements: number
  transactions: number
  readsOutside: number
}
const counting: { on: boolean; count: Count } = { on: false, count: { statements: 0, transactions: 0, readsOutside: 0 } }
const inTransaction = new WeakSet<object>()

const original = pg.Client.prototype.query as (...args: unknown[]) => unknown
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string } | undefined
  const text = (typeof first === 'string' ? first : (first?.text ?? '')).trim().toLowerCase()
  if (counting.on && text !== '') {
    // BENCH_STATEMENTS_SHOW=1 prints each statement counted (its first line), to see what to fold.
    if (process.env.BENCH_STATEMENTS_SHOW) console.log(`    ${inTransaction.has(this) ? 'tx ' : '   '}${text.replace(/\s+/g, ' ').slice(0, 150)}`)
    const count = counting.count
    if (/^(begin|start transaction)/.test(text)) {
      count.transactions++
      inTransaction.add(this)
    } else if (/^(commit|rollback|end)\b/.test(text)) {
      inTransaction.delete(this)
    } else if (!/^(savepoint|release|rollback to)/.test(text)) {
      count.statements++
      if (!inTransaction.has(this)) {
        if (/^(select|with\b(?![\s\S]*\b(insert|update|delete)\b))/.test(text)) count.readsOutside++
        else count.transactions++
      }
    }
  }
  return original.apply(this, args)
} as typeof pg.Client.prototype.query

/** Messages of the outbox not delivered yet, read on a connection of its own (not counted). */
async function undelivered(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return Number((await client.query(`SELECT count(*) AS n FROM shipments_outbox WHERE state = 'pending'`)).rows[0].n)
  } finally {
    await client.end()
  }
}

async function counted(url: string, operation: () => Promise<unknown>): Promise<Count> {
  counting.count = { statements: 0, transactions: 0, readsOutside: 0 }
  counting.on = true
  await operation()
  // The follow-up jobs run in this process right after the commit; wait until none is left.
  for (let waited = 0; waited < 100; waited++) {
    counting.on = false
    const left = await undelivered(url)
    counting.on = true
    if (left === 0) break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await new Promise((resolve) => setTimeout(resolve, 50))
  counting.on = false
  return counting.count
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

async function host(): Promise<{ app: FastifyInstance; url: string }> {
  const url = await benchDatabase('postgres', 'statements')
  const app = Fastify({ logger: false })
  await app.register(fastifyShipments, {
    database: url,
    resolveUser: () => ({ id: 'bench' }),
    hasPermission: () => true,
    shippedOrderStatus: 'shipped',
    outbox: { pollIntervalMs: 3_600_000 },
    // No label batch worker: its poll for a batch to work on would fall in the windows counted.
    batches: { worker: false },
  })
  await app.ready()
  return { app, url }
}

const { app, url } = await host()
const orders = app.shipments.referenceOrders!
await orders.saveStatus({ handle: 'processing', name: 'Processing', isDefault: true })
await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
// The integration the tracker events come through (its webhook secret is the bench's, see easyPostEvent).
await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'bench-webhook-secret' } })
const rows: Array<{ name: string; counts: Count[] }> = []
const run = async (name: string, times: number, operation: (index: number) => Promise<unknown>) => {
  const counts: Count[] = []
  if (process.env.BENCH_STATEMENTS_SHOW) console.log(name)
  for (let index = 0; index < times; index++) counts.push(await counted(url, () => operation(index)))
  rows.push({ name, counts })
}

const lineOrder = async (reference: string) => {
  const orderId = await orders.createOrder({ reference, isCompleted: true, shippingAddress: SHIP_TO, items: [{ name: 'Mug', sku: 'MUG', quantity: 1 }] })
  const [line] = (await app.shipments.orders.orderLines?.(orderId)) ?? []
  return { orderId, lineItemId: line!.id }
}

await run('a creation with items', 5, async (index) => {
  const { orderId, lineItemId } = await (async () => {
    counting.on = false
    const made = await lineOrder(`CREATE-${index}`)
    counting.on = true
    return made
  })()
  await app.shipments.shipments.create(orderId, { items: [{ lineItemId, quantity: 1 }] })
})

const shippable: number[] = []
const plain: number[] = []
for (let index = 0; index < 5; index++) {
  const { orderId, lineItemId } = await lineOrder(`SHIP-${index}`)
  shippable.push((await app.shipments.shipments.create(orderId, { items: [{ lineItemId, quantity: 1 }] }))[0]!.id)
  const other = await lineOrder(`PLAIN-${index}`)
  plain.push((await app.shipments.shipments.create(other.orderId, { items: [{ lineItemId: other.lineItemId, quantity: 1 }] }))[0]!.id)
}
await run('a status change that ships an order', 5, (index) => app.shipments.shipments.update(shippable[index]!, { status: 'shipped' }))
await run('a status change that does not', 5, (index) => app.shipments.shipments.update(plain[index]!, { status: 'in_progress' }))
await run('an update without a status change', 5, (index) => app.shipments.shipments.update(plain[index]!, { carrier: 'UPS', trackingNumber: `1Z999AA1012345678${index}` }))

const tracked: number[] = []
for (let index = 0; index < 5; index++) {
  const { orderId, lineItemId } = await lineOrder(`TRACKED-${index}`)
  const id = (await app.shipments.shipments.create(orderId, { items: [{ lineItemId, quantity: 1 }] }))[0]!.id
  await app.shipments.shipments.update(id, { carrier: 'UPS', trackingNumber: `BENCHTRK${id}` })
  tracked.push(id)
}
await run('a carrier event (EasyPost, ships it)', 5, async (index) => {
  const event = easyPostEvent(tracked[index]!, 'in_transit', `evt_count_${index}`)
  const response = await app.inject({ method: 'POST', url: '/actions/shipments/gateway/handle?integration=easypost', payload: event.body, headers: event.headers })
  if (response.statusCode !== 200) throw new Error(`the event answered ${response.statusCode}: ${response.body}`)
})
await run('a return request', 5, async (index) => {
  const orderId = (await app.shipments.shipments.get(shippable[index]!))!.orderId
  const [line] = (await app.shipments.orders.orderLines?.(orderId)) ?? []
  await app.shipments.returns.request(orderId, { lines: [{ lineItemId: line!.id, quantity: 1, reason: 'damaged' }] }, { userId: 'bench' })
})
await app.close()
await removeBenchDatabases()

console.log('\nPostgreSQL: statements and transactions per operation, the outbox\'s follow-up work included (median of 5)')
console.log('| operation | statements | transactions | reads outside a transaction |')
console.log('|---|---|---|---|')
for (const { name, counts } of rows) {
  console.log(`| ${name} | ${median(counts.map((each) => each.statements))} | ${median(counts.map((each) => each.transactions))} | ${median(counts.map((each) => each.readsOutside))} |`)
}
