// `npm run bench`: each figure is a ratio of two things measured in this run, under autocannon run as
// a separate process against servers on loopback. Prints a table and writes the figures as JSON.
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import pg from 'pg'
// The package by its name: the build in dist/ (tsc's output, what a host installs), not the sources
// through tsx, whose transform wraps every named function and closure in a naming call and made the
// hot paths measure slower than they run for users (see tsconfig.bench.json).
import { defineProvider, fastifyShipments, type DatabaseHandle, type ShipmentsPluginOptions } from 'fastify-shipments'
import EasyPost from '@easypost/api'
import type { LoadPlan, LoadResult } from './load.js'
import { easyPostImitation } from '../test/fixtures/easypost-api.js'

/** A positive integer from the environment: a typo must stop the run, not give rounds of nothing. */
function positiveInteger(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, not "${process.env[name]}"`)
  return value
}
const SECONDS = positiveInteger('BENCH_SECONDS', 3)
// Each figure alternates measured and ceiling this many times and keeps the median ratio: on a
// shared machine one pair of runs can be off by a third.
const ROUNDS = positiveInteger('BENCH_ROUNDS', 3)
const CONNECTIONS = positiveInteger('BENCH_CONNECTIONS', 10)
// bench/results beside the sources (this file runs compiled, from bench/build/bench).
const RESULTS_FILE = fileURLToPath(new URL('../../results/latest.json', import.meta.url))
const workDirectory = mkdtempSync(join(tmpdir(), 'shipments-bench-'))
// BENCH_DATABASE=sqlite|postgres|both (default both); PostgreSQL at BENCH_POSTGRES_URL.
const ENGINES = (process.env.BENCH_DATABASE ?? 'both') === 'both' ? (['sqlite', 'postgres'] as const) : ([process.env.BENCH_DATABASE as 'sqlite' | 'postgres'] as const)
if (!ENGINES.every((engine) => engine === 'sqlite' || engine === 'postgres')) throw new Error(`BENCH_DATABASE must be sqlite, postgres or both, not "${process.env.BENCH_DATABASE}"`)
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
type Engine = (typeof ENGINES)[number]
const createdDatabases: string[] = []

async function adminQuery(text: string) {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/** A fresh database for one host: a SQLite file, or a PostgreSQL database dropped at the end. */
async function benchDatabase(engine: Engine, name: string): Promise<string> {
  if (engine === 'sqlite') return join(workDirectory, `${name}.sqlite`)
  const database = `shipments_bench_${name.replace(/\W/g, '_')}_${process.pid}`
  await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
  await adminQuery(`CREATE DATABASE "${database}"`)
  createdDatabases.push(database)
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${database}`
  return url.toString()
}

const instantProvider = defineProvider({
  id: 'instant',
  settingsSchema: Type.Object({}),
  async handleGatewayRequest() {
    return { body: { ok: true } }
  },
})

const EXCHANGE = { username: 'bench', password: 'bench-password' }
const EXCHANGE_HEADERS = { authorization: `Basic ${Buffer.from(`${EXCHANGE.username}:${EXCHANGE.password}`).toString('base64')}` }
const EXPORT_URL = '/actions/shippingplatformconnect/orders/process?action=export&start_date=01%2f01%2f2020+00%3a00&end_date=01%2f01%2f2030+00%3a00'

/** A host with the plugin and bare ceiling routes beside it, seeded by `seed`, listening on loopback. */
async function startHost(
  engine: Engine,
  name: string,
  options: Partial<ShipmentsPluginOptions>,
  seed: (app: FastifyInstance) => Promise<void>,
  routes: (app: FastifyInstance) => void = () => {},
) {
  const app = Fastify({ logger: false })
  // A request with `x-bench-write` first writes to the store (see writeToStore), as a live shop does
  // between ShipStation's page requests. Added before the plugin, so its routes inherit the hook.
  app.addHook('onRequest', async (request) => {
    startWatchingStalls?.()
    if (request.headers['x-bench-write']) await writeToStore(app)
  })
  await app.register(fastifyShipments, {
    database: await benchDatabase(engine, name),
    providers: [instantProvider],
    resolveUser: (request) => (request.headers['x-bench-user'] === 'admin' ? { id: 'bench' } : null),
    hasPermission: () => true,
    orderExchange: EXCHANGE,
    ...options,
  })
  let precomputedXml = ''
  app.post('/bare/echo', async (request) => request.body)
  app.post('/bare/instant', async () => ({ ok: true }))
  app.get('/bare/xml', async (_request, reply) => reply.type('text/xml; charset=utf-8').send(precomputedXml))
  // Creates a shipment (with the body's items, or order-level) and drops it again at once, so the
  // order stays as seeded however long the load runs; both sides of the figure pay for the drop.
  app.post('/bench/create', async (request) => {
    const { orderId, items } = request.body as { orderId: number; items?: Array<{ lineItemId: number; quantity: number }> }
    const [shipment] = await app.shipments.shipments.create(orderId, items ? { items } : {})
    await rawStatement(app, 'DELETE FROM shipments_shipments WHERE id = $1', [shipment.id])
    return { id: shipment.id }
  })
  routes(app)
  await app.ready()
  await seed(app)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  hostsByBase.set(address, app)
  return {
    app,
    base: address,
    /** Fixes the bare route's document to what the export answers at `url` now. */
    async precompute(url: string) {
      const response = await app.inject({ url, headers: EXCHANGE_HEADERS })
      if (response.statusCode !== 200) throw new Error(`export answered ${response.statusCode}`)
      precomputedXml = response.body
      return response.body
    },
  }
}

const hostsByBase = new Map<string, FastifyInstance>()

/** One statement with `$n` parameters on the host's own connection, either engine. */
async function rawStatement(app: FastifyInstance, text: string, values: unknown[]) {
  const handle = app.shipments.database
  if (handle.engine === 'postgres') await handle.db.$client.query(text, values)
  else handle.db.$client.prepare(text.replace(/\$\d+/g, '?')).run(...values)
}

/**
 * An order of 100 lines (each ordered a million times, so allocations never run out) with 20 shipments
 * of 50 lines each; `into` gets the order's id and the items a new shipment of 50 lines holds.
 */
async function seedLineItems(app: FastifyInstance, into: { orderId: number; items: Array<{ lineItemId: number; quantity: number }> }) {
  const orders = app.shipments.referenceOrders!
  into.orderId = await orders.createOrder({
    reference: 'ITEMS',
    isCompleted: true,
    items: Array.from({ length: 100 }, (_, index) => ({ name: `Line ${index + 1}`, sku: `LINE-${index + 1}`, quantity: 1_000_000 })),
  })
  const lines = (await app.shipments.orders.orderLines!(into.orderId))!
  for (let shipment = 0; shipment < 20; shipment++) {
    const offset = (shipment * 5) % 50
    await app.shipments.shipments.create(into.orderId, { items: lines.slice(offset, offset + 50).map((line) => ({ lineItemId: line.id, quantity: 1 })) })
  }
  into.items = lines.slice(25, 75).map((line) => ({ lineItemId: line.id, quantity: 1 }))
}

let writes = 0
/**
 * One write to the order tables that changes no exported order: a note on an open (not completed)
 * order, through the host's own connection. It invalidates every cache of the export, as any write does.
 */
async function writeToStore(app: FastifyInstance) {
  const handle = app.shipments.database
  const text = "UPDATE shipments_orders SET internal_notes = $1 WHERE number = 'bench-open'"
  writes++
  if (handle.engine === 'postgres') await handle.db.$client.query(text, [`write ${writes}`])
  else handle.db.$client.prepare(text.replace('$1', '?')).run(`write ${writes}`)
}

const EASYPOST_KEY = 'EZTK-bench-key-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const SHIP_TO = { name: 'Dr. Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', country: 'US' }
/**
 * Shipments seeded for the label figure (ten to an order), taking parcels in turn: a round of the
 * load gives each two or three, as a shop's shipments have (every parcel change rewrites the copy of
 * the shipment's parcels, so a shipment of dozens would measure that copy). A shipment holds at most 100.
 */
const LABEL_SHIPMENTS = 3_000
const LABEL_SHIPMENTS_PER_ORDER = 10
const PARCELS_PER_SHIPMENT = 100

/** The part of the official client the direct side calls. */
type OfficialClientClass = new (
  apiKey: string,
  options: { baseUrl: string },
) => {
  Shipment: {
    create(params: Record<string, unknown>): Promise<{ id: string; rates: Array<{ id: string; carrier: string; service: string }> }>
    buy(id: string, rateId: string): Promise<{ tracking_code: string | null }>
  }
}

/**
 * A host whose routes buy one label each on the local EasyPost imitation (the tests' own, with
 * EasyPost's shapes): `/bench/label` adds a parcel and buys its label through the package's services
 * (intent committed first, the provider's id committed, the label written with history and an event);
 * `/bench/label-direct` makes the same two calls (create the EasyPost shipment, buy its rate) with the
 * official client alone. PNG on both sides, EasyPost's own format, so neither converts.
 */
async function startLabelHost(engine: Engine) {
  const closers: Array<() => unknown> = []
  const imitation = await easyPostImitation({ teardown: (close) => void closers.push(close) }, { apiKey: EASYPOST_KEY })
  // The CommonJS module's export is the client class (its bundled types do not say so to NodeNext).
  const client = new (EasyPost as unknown as OfficialClientClass)(EASYPOST_KEY, { baseUrl: `${imitation.baseUrl}/` })
  // The shipments are seeded before the rounds and taken in turn, so a request pays for its parcel and
  // its label only (creating shipments on one growing order would measure that order's ledger).
  const shipmentIds: number[] = []
  let purchases = 0
  const nextShipment = () => {
    const shipmentId = shipmentIds[purchases % shipmentIds.length]!
    if (++purchases > shipmentIds.length * PARCELS_PER_SHIPMENT) throw new Error('the label bench ran out of seeded shipments')
    return shipmentId
  }
  const host = await startHost(
    engine,
    'labels',
    { deliveries: { shipFrom: SHIP_FROM } },
    async (app) => {
      const seedOrder = async (order: number) => {
        const orderId = await app.shipments.referenceOrders!.createOrder({ reference: `LABELS-${order}`, isCompleted: true, shippingAddress: SHIP_TO })
        for (let index = 0; index < LABEL_SHIPMENTS_PER_ORDER; index++) shipmentIds.push((await app.shipments.shipments.create(orderId))[0]!.id)
      }
      // Ten orders at a time, as ten connections would.
      for (let order = 0; order < LABEL_SHIPMENTS / LABEL_SHIPMENTS_PER_ORDER; order += 10) {
        await Promise.all(Array.from({ length: 10 }, (_, index) => seedOrder(order + index)))
      }
      await app.shipments.integrations.create({
        name: 'EasyPost',
        handle: 'easypost',
        providerId: 'easypost',
        settings: { webhookSecret: 'bench-webhook-secret', apiKey: EASYPOST_KEY, apiBaseUrl: imitation.baseUrl },
      })
    },
    (app) => {
      app.post('/bench/label', async () => {
        const shipmentId = nextShipment()
        const parcel = await app.shipments.deliveries.addParcel(shipmentId, { weight: { value: '1.5', unit: 'kg' } })
        const bought = await app.shipments.deliveries.buyLabel(shipmentId, parcel.id, { integration: 'easypost', carrier: 'USPS', service: 'Priority', labelFormat: 'PNG' })
        return { trackingNumber: bought.parcel.trackingNumber }
      })
      app.post('/bench/label-direct', async () => {
        const created = await client.Shipment.create({
          to_address: { name: SHIP_TO.name, street1: SHIP_TO.address1, city: SHIP_TO.city, state: SHIP_TO.state, zip: SHIP_TO.postalCode, country: SHIP_TO.country },
          from_address: { name: SHIP_FROM.name, street1: SHIP_FROM.street1, city: SHIP_FROM.city, state: SHIP_FROM.state, zip: SHIP_FROM.postalCode, country: SHIP_FROM.country },
          parcel: { weight: 52.9 },
          reference: `direct-${randomUUID()}`,
          options: { label_format: 'PNG' },
        })
        const rate = created.rates.find((each) => each.carrier === 'USPS' && each.service === 'Priority')
        const bought = await client.Shipment.buy(created.id, rate!.id)
        return { trackingNumber: bought.tracking_code }
      })
    },
  )
  return {
    ...host,
    async close() {
      await host.app.close()
      for (const close of closers) await close()
    },
  }
}

/** Ten orders with 100 shipments each, for the shipment API. */
async function seedShipments(app: FastifyInstance, into: number[]) {
  await app.shipments.integrations.create({ name: 'Instant', handle: 'instant', providerId: 'instant' })
  for (let order = 1; order <= 10; order++) {
    // Awaited Drizzle calls work on both engines; the SQLite types stand for both here.
    const { db, schema } = app.shipments.database as Extract<DatabaseHandle, { engine: 'sqlite' }>
    const [{ id }] = await db.insert(schema.orders).values({ number: `bench-${order}`, reference: `B${order}`, isCompleted: true }).returning()
    for (const shipment of await app.shipments.shipments.create(id, { count: 100 })) into.push(shipment.id)
  }
}

/** `count` completed orders, each with a billing and a shipping address and three line items, in one transaction. */
async function seedExportOrders(app: FastifyInstance, count: number) {
  const handle = app.shipments.database
  const start = Date.UTC(2024, 0, 1)
  if (handle.engine === 'postgres') {
    // The same rows as the SQLite path below, generated by the server in three statements.
    const pool = handle.db.$client
    await pool.query(
      `INSERT INTO shipments_orders (number, reference, email, customer_id, status_handle, is_completed, total_price, total_tax,
         total_shipping, total_discount, coupon_code, payment_method, shipping_method, customer_notes, date_ordered, date_updated, fields)
       SELECT 'bench-' || i, (100000 + i)::text, 'customer' || i || '@example.com', i, 'processing', true, '64.90', '5.90', '4.95',
              CASE WHEN i % 5 = 0 THEN '-5.00' ELSE '0' END, CASE WHEN i % 5 = 0 THEN 'SAVE5' END, 'Credit card', 'Standard Ground',
              CASE WHEN i % 7 = 0 THEN 'Leave at the back door <please> & thanks' END,
              to_timestamp(($1::bigint + i::bigint * 60000 - 3600000) / 1000.0), to_timestamp(($1::bigint + i::bigint * 60000) / 1000.0), '{"store":"retail"}'
         FROM generate_series(1, $2::int) AS i`,
      [start, count],
    )
    await pool.query(
      `INSERT INTO shipments_order_line_items (order_id, sku, name, weight, weight_unit, quantity, price, image_url, options)
       SELECT o.id, 'SKU-' || (o.customer_id) || '-' || p.position, 'Organic T-shirt “' || p.position || '” 🍵', 180 + p.position, p.unit,
              1 + p.position, '19.95', '/images/tee.jpg', '{"Size":"M","Colour":"Black"}'
         FROM shipments_orders o CROSS JOIN (VALUES (0, 'g'), (1, 'kg'), (2, 'lb')) AS p(position, unit)
        ORDER BY o.id, p.position`,
    )
    await pool.query(
      `INSERT INTO shipments_order_addresses (order_id, kind, full_name, company, address1, address2, city, state, postal_code, country_code, phone, email)
       SELECT o.id, k.kind, 'Zoë Customer ' || o.customer_id, 'Müller & Söhne', o.customer_id || ' Harbour Street', 'Suite 9', 'Portland', 'OR',
              '97201', 'US', '+1 503 555 0101', o.email
         FROM shipments_orders o CROSS JOIN (VALUES ('billing'), ('shipping')) AS k(kind)`,
    )
    await pool.query(`INSERT INTO shipments_orders (number, reference, is_completed) VALUES ('bench-open', 'open', false)`)
    // What autovacuum does on a live database a little later: statistics, and the visibility map that
    // lets the count read the index alone. Measuring right after a bulk load would measure the load.
    await pool.query('VACUUM ANALYZE')
    return
  }
  const client = handle.db.$client
  const insertOrder = client.prepare(
    `INSERT INTO shipments_orders (number, reference, email, customer_id, status_handle, is_completed, total_price, total_tax,
       total_shipping, total_discount, coupon_code, payment_method, shipping_method, customer_notes, date_ordered, date_updated, fields)
     VALUES (?, ?, ?, ?, 'processing', 1, '64.90', '5.90', '4.95', ?, ?, 'Credit card', 'Standard Ground', ?, ?, ?, '{"store":"retail"}')`,
  )
  const insertItem = client.prepare(
    `INSERT INTO shipments_order_line_items (order_id, sku, name, weight, weight_unit, quantity, price, image_url, options) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const insertAddress = client.prepare(
    `INSERT INTO shipments_order_addresses (order_id, kind, full_name, company, address1, address2, city, state, postal_code, country_code, phone, email)
     VALUES (?, ?, ?, 'Müller & Söhne', ?, 'Suite 9', 'Portland', 'OR', '97201', 'US', '+1 503 555 0101', ?)`,
  )
  client.transaction(() => {
    for (let index = 1; index <= count; index++) {
      const reference = String(100000 + index)
      const updated = start + index * 60_000
      const { lastInsertRowid } = insertOrder.run(`bench-${index}`, reference, `customer${index}@example.com`, index, index % 5 === 0 ? '-5.00' : '0', index % 5 === 0 ? 'SAVE5' : null, index % 7 === 0 ? 'Leave at the back door <please> & thanks' : null, updated - 3_600_000, updated)
      for (const [position, unit] of (['g', 'kg', 'lb'] as const).entries()) {
        insertItem.run(lastInsertRowid, `SKU-${index}-${position}`, `Organic T-shirt “${position}” 🍵`, 180 + position, unit, 1 + position, '19.95', '/images/tee.jpg', '{"Size":"M","Colour":"Black"}')
      }
      for (const kind of ['billing', 'shipping']) insertAddress.run(lastInsertRowid, kind, `Zoë Customer ${index}`, `${index} Harbour Street`, `customer${index}@example.com`)
    }
    client.prepare(`INSERT INTO shipments_orders (number, reference, is_completed) VALUES ('bench-open', 'open', 0)`).run()
  })()
}

/**
 * Sets the shipments of a transitions load to the second of its two statuses (directly, no history), so
 * the load's first pass moves every one of them: otherwise a run starting where the last one stopped
 * halfway would send "changes" to the status a shipment already has, which change nothing.
 */
async function resetTransitions(plan: LoadPlan) {
  if (!plan.transitions) return
  const app = hostsByBase.get(new URL(plan.url).origin)
  if (!app) throw new Error(`no bench host at ${plan.url}`)
  const { shipmentIds, statuses } = plan.transitions
  const placeholders = shipmentIds.map((_, index) => `$${index + 2}`).join(', ')
  await rawStatement(app, `UPDATE shipments_shipments SET status = $1, status_before_order_cancel = NULL WHERE id IN (${placeholders})`, [statuses[1], ...shipmentIds])
}

function runLoad(plan: LoadPlan): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL('./load.js', import.meta.url)), JSON.stringify(plan)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk))
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(output)) : reject(new Error(`autocannon exited with ${code}`))))
  })
}

/** pgbench's built-in TPC-B-like script against a scratch database (initialized once, at scale 1). */
interface PgbenchPlan {
  pgbench: { url: string; clients: number; threads: number; durationSeconds: number }
}
type Measurement = LoadPlan | PgbenchPlan
const isPgbench = (plan: Measurement): plan is PgbenchPlan => 'pgbench' in plan

/** The pgbench binary: BENCH_PGBENCH, on the PATH, or beside a Debian PostgreSQL server; an error when there is none. */
function findPgbench(): string {
  const executable = (file: string) => {
    try {
      accessSync(file, constants.X_OK)
      return true
    } catch {
      return false
    }
  }
  if (process.env.BENCH_PGBENCH) {
    if (!executable(process.env.BENCH_PGBENCH)) throw new Error(`BENCH_PGBENCH=${process.env.BENCH_PGBENCH} is not an executable`)
    return process.env.BENCH_PGBENCH
  }
  const onPath = (process.env.PATH ?? '').split(delimiter).map((directory) => join(directory, 'pgbench'))
  let serverVersions: string[] = []
  try {
    serverVersions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))
  } catch {
    // No Debian server layout: the PATH is all there is.
  }
  const found = [...onPath, ...serverVersions.map((version) => `/usr/lib/postgresql/${version}/bin/pgbench`)].find(executable)
  if (!found) throw new Error('pgbench not found (PATH, /usr/lib/postgresql/*/bin): it comes with the PostgreSQL server; or set BENCH_PGBENCH')
  return found
}

/** Runs pgbench to its end with its output; rejects when it is missing or exits with an error. */
function runPgbench(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(findPgbench(), args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk))
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`pgbench ${args.join(' ')} exited with ${code}:\n${output}`))))
  })
}

/** Creates and fills a scratch database for pgbench (dropped with the bench's other databases). */
async function pgbenchDatabase(): Promise<string> {
  const url = await benchDatabase('postgres', 'pgbench')
  await runPgbench(['-i', '-q', '-s', '1', url])
  return url
}

/** One pgbench run, in the shape of a load result: transactions for requests, failed transactions for errors. */
async function runPgbenchLoad({ pgbench }: PgbenchPlan): Promise<LoadResult & { output: string }> {
  const output = await runPgbench(['-c', String(pgbench.clients), '-j', String(pgbench.threads), '-T', String(pgbench.durationSeconds), pgbench.url])
  const figure = (pattern: RegExp) => {
    const match = pattern.exec(output)
    if (!match) throw new Error(`pgbench printed no ${pattern.source}:\n${output}`)
    return Number(match[1])
  }
  const tps = figure(/^tps = ([\d.]+)/m)
  return {
    requestsPerSecond: tps,
    latencyMeanMs: figure(/^latency average = ([\d.]+) ms/m),
    latencyP99Ms: Number.NaN,
    requests: figure(/^number of transactions actually processed: (\d+)/m),
    errors: /^number of failed transactions: (\d+)/m.test(output) ? figure(/^number of failed transactions: (\d+)/m) : 0,
    non2xx: 0,
    output: output.trim(),
  }
}

interface Figure {
  name: string
  measured: string
  against: string
  /** The medians of both sides in absolute terms, with their unit. */
  medians: string
  /** The median of the rounds' ratios. */
  ratio: number
  ratios: number[]
  target: string
  met: boolean
  rounds: Array<{ measured: LoadResult & { maxStallMs?: number }; against: LoadResult & { maxStallMs?: number } }>
}

const figures: Figure[] = []
const describe = (load: Measurement) =>
  isPgbench(load)
    ? `pgbench TPC-B-like, scale 1, ${load.pgbench.clients} clients, ${load.pgbench.threads} threads`
    : `${load.method} ${load.transitions ? `${load.transitions.pathPrefix}/:id` : new URL(load.url).pathname}`

/**
 * Runs the load; with `watchStalls`, also the longest the host's event loop (this process: every host
 * lives here) was blocked meanwhile, from perf_hooks' event-loop delay histogram.
 */
async function runWatched(plan: Measurement, watchStalls: boolean): Promise<LoadResult & { maxStallMs?: number }> {
  if (isPgbench(plan)) return runPgbenchLoad(plan)
  await resetTransitions(plan)
  if (!watchStalls) return runLoad(plan)
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  // From the first request on: starting the load generator (a fork of this large process) stalls the
  // loop too, and that is the bench's cost, not the host's.
  startWatchingStalls = () => {
    startWatchingStalls = undefined
    histogram.enable()
  }
  try {
    const result = await runLoad(plan)
    // No sample: the hook never started the histogram, and a stall of 0 would pass any bound.
    if (histogram.count === 0) throw new Error(`no event-loop delay was recorded while loading ${plan.url}`)
    return { ...result, maxStallMs: histogram.max / 1e6 }
  } finally {
    startWatchingStalls = undefined
    histogram.disable()
  }
}
let startWatchingStalls: (() => void) | undefined

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function compare(
  name: string,
  target: { min?: number; max?: number },
  measured: Measurement,
  against: Measurement,
  ratioOf: 'throughput' | 'latency' | 'stall' = 'throughput',
) {
  // BENCH_ONLY=<text> runs the figures whose name contains it (for profiling one path).
  if (!wanted(name)) return
  // A second of each first, so caches, JIT and the load generator are warm for every round.
  for (const load of [measured, against]) {
    if (isPgbench(load)) await runPgbenchLoad({ pgbench: { ...load.pgbench, durationSeconds: 1 } })
    else await runLoad({ ...load, durationSeconds: 1 })
  }
  const rounds: Figure['rounds'] = []
  for (let round = 0; round < ROUNDS; round++) {
    const measuredResult = await runWatched(measured, ratioOf === 'stall')
    const againstResult = await runWatched(against, ratioOf === 'stall')
    for (const [label, result] of [['measured', measuredResult], ['ceiling', againstResult]] as const) {
      if (result.errors > 0 || result.non2xx > 0) throw new Error(`${name} (${label}): ${result.errors} errors, ${result.non2xx} non-2xx answers`)
      // A round in which no request completed has no latency or throughput: it is a fault, never a 0.
      if (result.requests === 0) throw new Error(`${name} (${label}): no request completed within ${SECONDS} s`)
    }
    rounds.push({ measured: measuredResult, against: againstResult })
  }
  if (rounds.length === 0) throw new Error(`${name}: no round was measured`)
  // What each side measured in absolute terms, for the table beside the ratio.
  const absolute = (result: LoadResult & { maxStallMs?: number }) =>
    ratioOf === 'throughput' ? result.requestsPerSecond : ratioOf === 'latency' ? result.latencyMeanMs : result.maxStallMs!
  const ratios = rounds.map(({ measured: m, against: a }) => absolute(m) / absolute(a))
  // A side that measured nothing (0, NaN, infinite) gives no ratio; it must stop the run, not print one.
  for (const [index, round] of rounds.entries()) {
    for (const [label, value] of [['measured', absolute(round.measured)], ['ceiling', absolute(round.against)]] as const) {
      if (!(Number.isFinite(value) && value > 0)) throw new Error(`${name} (${label}), round ${index + 1}: ${value} ${ratioOf}`)
    }
  }
  const ratio = median(ratios)
  const unit = ratioOf === 'throughput' ? 'req/s' : ratioOf === 'latency' ? 'ms mean latency' : 'ms longest stall'
  const medians = `${median(rounds.map((round) => absolute(round.measured))).toFixed(1)} / ${median(rounds.map((round) => absolute(round.against))).toFixed(1)} ${unit}`
  const met = (target.min === undefined || ratio >= target.min) && (target.max === undefined || ratio <= target.max)
  figures.push({
    name,
    measured: describe(measured),
    against: describe(against),
    medians,
    ratio,
    ratios,
    target: target.min !== undefined ? `>= ${target.min}` : `<= ${target.max}`,
    met,
    rounds,
  })
  console.log(`  ${name}: ${ratio.toFixed(3)} (${met ? 'met' : 'MISSED'}; rounds ${ratios.map((each) => each.toFixed(3)).join(', ')}; ${medians})`)
}

// BENCH_ONLY=<text>: only the figures whose name contains it; a text that names none is an error at the end.
const wanted = (name: string) => !process.env.BENCH_ONLY || name.includes(process.env.BENCH_ONLY)

const plan = (url: string, extra: Partial<LoadPlan> = {}): LoadPlan => ({
  url,
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-bench-user': 'admin' },
  durationSeconds: SECONDS,
  connections: CONNECTIONS,
  ...extra,
})

console.log(
  `fastify-shipments bench: autocannon ${CONNECTIONS} connections, ${SECONDS} s per measurement, median of ${ROUNDS} rounds, ${cpus().length} cores, Node ${process.version}`,
)
async function measureEngine(engine: Engine) {
  console.log(`\n${engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'}:`)
  const label = (name: string) => `${engine}: ${name}`
  const shipmentIds: number[] = []
  const inProcessShipmentIds: number[] = []
  const host = await startHost(engine, 'main', {}, (app) => seedShipments(app, shipmentIds))
  // The lock figure compares the default lock directory with none: transitions take no lock file any
  // more (the IMMEDIATE transaction is the cross-process half), so the two should cost the same.
  const inProcessLockHost = engine === 'sqlite' ? await startHost(engine, 'in-process-lock', { lockDirectory: null }, (app) => seedShipments(app, inProcessShipmentIds)) : null
  // Seeding 200,000 orders takes a while: the export hosts start only when an export figure is wanted.
  // (every export figure's name starts with "export").
  const itemsOrder = { orderId: 0, items: [] as Array<{ lineItemId: number; quantity: number }> }
  const itemsHost = await startHost(engine, 'items', {}, (app) => seedLineItems(app, itemsOrder))
  const wantExport = !process.env.BENCH_ONLY || process.env.BENCH_ONLY.startsWith('export')
  const labelHost = !process.env.BENCH_ONLY || 'add a parcel and buy its label'.includes(process.env.BENCH_ONLY) || process.env.BENCH_ONLY.includes('label') ? await startLabelHost(engine) : null
  const noSeed = async () => {}
  const exportLarge = await startHost(engine, 'export-500', { orderExchange: { ...EXCHANGE, pageSize: 500 } }, (app) => (wantExport ? seedExportOrders(app, 2_000) : noSeed()))
  const exportSmall = await startHost(engine, 'export-2k', { orderExchange: { ...EXCHANGE, pageSize: 25 } }, (app) => (wantExport ? seedExportOrders(app, 2_000) : noSeed()))
  const exportHuge = await startHost(engine, 'export-200k', { orderExchange: { ...EXCHANGE, pageSize: 25 } }, (app) => (wantExport ? seedExportOrders(app, 200_000) : noSeed()))
  const get = (url: string): LoadPlan => ({ url, method: 'GET', headers: EXCHANGE_HEADERS, durationSeconds: SECONDS, connections: CONNECTIONS })

  try {
    const fieldsBody = JSON.stringify({ carrier: 'UPS', trackingNumber: '1Z999AA10123456784', service: 'Ground' })
    await compare(
      label('update, no status change / bare JSON echo'),
      { min: 0.4 },
      plan(`${host.base}/shipments/api/shipments/${shipmentIds[0]}`, { body: fieldsBody }),
      plan(`${host.base}/bare/echo`, { body: fieldsBody }),
    )
    await compare(
      label('update with a status change / bare JSON echo'),
      { min: 0.2 },
      plan(host.base, { transitions: { pathPrefix: '/shipments/api/shipments', shipmentIds, statuses: ['in_progress', 'on_hold'] } }),
      plan(`${host.base}/bare/echo`, { body: JSON.stringify({ status: 'in_progress' }) }),
    )
    if (engine === 'postgres') {
      // What the server itself does with transactions of a like size (pgbench's TPC-B-like one: BEGIN,
      // three UPDATEs, a SELECT, an INSERT, END), with as many clients as the load has connections.
      const name = label('status changes per second / pgbench TPC-B-like transactions per second (same server, same clients)')
      if (wanted(name)) {
        const url = await pgbenchDatabase()
        await compare(
          name,
          { min: 0.5 },
          plan(host.base, { transitions: { pathPrefix: '/shipments/api/shipments', shipmentIds, statuses: ['in_progress', 'on_hold'] } }),
          { pgbench: { url, clients: CONNECTIONS, threads: Math.min(2, CONNECTIONS), durationSeconds: SECONDS } },
        )
      }
    }
    await compare(
      label('gateway dispatch to an instant provider / bare route'),
      { min: 0.8 },
      plan(`${host.base}/actions/shipments/gateway/handle?integration=instant`, { body: '{}' }),
      plan(`${host.base}/bare/instant`, { body: '{}' }),
    )
    // One connection: creations of one order are serialized anyway, and the drop after each keeps the
    // numbering free of races between a creation and the drop of the one before.
    await compare(
      label('create a shipment of 50 items (order of 100 lines, 20 shipments) / create one without items'),
      { min: 0.5 },
      plan(`${itemsHost.base}/bench/create`, { body: JSON.stringify(itemsOrder), connections: 1 }),
      plan(`${itemsHost.base}/bench/create`, { body: JSON.stringify({ orderId: itemsOrder.orderId }), connections: 1 }),
    )
    if (labelHost) {
      await compare(
        label('add a parcel and buy its label through the package / the same purchase with the official client alone'),
        { min: 0.5 },
        plan(`${labelHost.base}/bench/label`, { body: '{}' }),
        plan(`${labelHost.base}/bench/label-direct`, { body: '{}' }),
      )
    }
    if (inProcessLockHost) {
      await compare(
        label('transition latency: default lockDirectory / lockDirectory null'),
        { max: 1.5 },
        plan(host.base, { transitions: { pathPrefix: '/shipments/api/shipments', shipmentIds, statuses: ['fulfilled', 'new'] } }),
        plan(inProcessLockHost.base, { transitions: { pathPrefix: '/shipments/api/shipments', shipmentIds: inProcessShipmentIds, statuses: ['fulfilled', 'new'] } }),
        'latency',
      )
    }

    if (wantExport) {
      const document = await exportLarge.precompute(EXPORT_URL)
      console.log(`  (export page of 500: ${(Buffer.byteLength(document) / 1024).toFixed(0)} KiB)`)
      await compare(label('export, 500 orders x 3 items / bare route sending the same XML'), { min: 0.1 }, get(`${exportLarge.base}${EXPORT_URL}`), get(`${exportLarge.base}/bare/xml`))
      await exportSmall.precompute(EXPORT_URL)
      await compare(label('export, 25 orders x 3 items / bare route sending the same XML'), { min: 0.1 }, get(`${exportSmall.base}${EXPORT_URL}`), get(`${exportSmall.base}/bare/xml`))
      await compare(label('export page 1 latency: 200,000 orders / 2,000 orders'), { max: 1.5 }, get(`${exportHuge.base}${EXPORT_URL}`), get(`${exportSmall.base}${EXPORT_URL}`), 'latency')
      await compare(
        label('export last page latency: 200,000 orders (page 8000) / 2,000 orders (page 80)'),
        { max: 1.5 },
        get(`${exportHuge.base}${EXPORT_URL}&page=8000`),
        get(`${exportSmall.base}${EXPORT_URL}&page=80`),
        'latency',
      )
      // Cold: a write to the store before every request, so nothing cached about the orders survives.
      const cold = (url: string): LoadPlan => ({ ...get(url), headers: { ...EXCHANGE_HEADERS, 'x-bench-write': '1' } })
      await compare(
        label('export page 1 latency, cold (a write before every request): 200,000 orders / 2,000 orders'),
        { max: 10 },
        cold(`${exportHuge.base}${EXPORT_URL}`),
        cold(`${exportSmall.base}${EXPORT_URL}`),
        'latency',
      )
      await compare(
        label('export last page latency, cold: 200,000 orders (page 8000) / 2,000 orders (page 80)'),
        { max: 10 },
        cold(`${exportHuge.base}${EXPORT_URL}&page=8000`),
        cold(`${exportSmall.base}${EXPORT_URL}&page=80`),
        'latency',
      )
      await compare(
        label("export last page, cold: the host event loop's longest stall, 200,000 orders / 2,000 orders"),
        { max: 10 },
        cold(`${exportHuge.base}${EXPORT_URL}&page=8000`),
        cold(`${exportSmall.base}${EXPORT_URL}&page=80`),
        'stall',
      )
    }
  } finally {
    for (const started of [host, inProcessLockHost, itemsHost, exportLarge, exportSmall, exportHuge]) await started?.app.close()
    await labelHost?.close()
  }
}

try {
  for (const engine of ENGINES) await measureEngine(engine)
} finally {
  rmSync(workDirectory, { recursive: true, force: true })
  for (const database of createdDatabases) await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
}

// BENCH_ONLY naming no figure measured nothing: that is a mistake to report, not an empty table to write.
if (figures.length === 0) throw new Error(`no figure measured${process.env.BENCH_ONLY ? `: BENCH_ONLY="${process.env.BENCH_ONLY}" names none` : ''}`)

console.log("\n| figure | measured | against | median ratio | rounds | medians (measured / against) | target | met |\n|---|---|---|---|---|---|---|---|")
for (const figure of figures) {
  const rounds = figure.ratios.map((each) => each.toFixed(3)).join(', ')
  console.log(`| ${figure.name} | ${figure.measured} | ${figure.against} | ${figure.ratio.toFixed(3)} | ${rounds} | ${figure.medians} | ${figure.target} | ${figure.met ? 'yes' : 'no'} |`)
}
mkdirSync(join(RESULTS_FILE, '..'), { recursive: true })
writeFileSync(
  RESULTS_FILE,
  JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: cpus().length, cpu: cpus()[0]?.model, loadGenerator: 'autocannon (separate process)', secondsPerMeasurement: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, only: process.env.BENCH_ONLY ?? null, figures }, null, 2),
)
console.log(`\nFigures written to ${RESULTS_FILE}`)
