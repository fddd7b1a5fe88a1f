// `npm run bench`: each figure is a ratio of two things measured in this run, under autocannon run as
// a separate process against servers on loopback. Prints a table and writes the figures as JSON.
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
// The package by its name: the build in dist/ (tsc's output, what a host installs), not the sources
// through tsx, whose transform wraps every named function and closure in a naming call and made the
// hot paths measure slower than they run for users (see tsconfig.bench.json).
import { defineProvider, fastifyShipments, type DatabaseHandle, type ShipmentsPluginOptions } from 'fastify-shipments'
import EasyPost from '@easypost/api'
import type { LoadPlan, LoadResult } from './load.js'
import { easyPostImitation } from '../test/fixtures/easypost-api.js'
import { addCaptureHook, captureRequest } from './sql-capture.js'
import { signedTrackerEvent } from './easypost-event.js'
import { pgbenchScript, type ScriptRequest } from './pgbench-script.js'
import { adminQuery, emptyPostgresDatabase } from './postgres-admin.js'

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
type Engine = (typeof ENGINES)[number]
const createdDatabases: string[] = []

/** A fresh database for one host: a SQLite file, or a PostgreSQL database dropped at the end. */
async function benchDatabase(engine: Engine, name: string): Promise<string> {
  if (engine === 'sqlite') return join(workDirectory, `${name}.sqlite`)
  const database = `shipments_bench_${name.replace(/\W/g, '_')}_${process.pid}`
  const url = await emptyPostgresDatabase(database)
  createdDatabases.push(database)
  return url
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
  const database = await benchDatabase(engine, name)
  // Marks the requests the PostgreSQL replay captures the statements of (see sql-capture.ts).
  addCaptureHook(app)
  // A request with `x-bench-write` first writes to the store (see writeToStore), as a live shop does
  // between ShipStation's page requests. Added before the plugin, so its routes inherit the hook.
  app.addHook('onRequest', async (request) => {
    startWatchingStalls?.()
    if (request.headers['x-bench-write']) await writeToStore(app)
  })
  await app.register(fastifyShipments, {
    database,
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
    /** The host's database: a SQLite file, or the PostgreSQL URL. */
    database,
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
 * Shipments seeded for the label figure, ten to an order, each with one parcel (a shop's usual
 * shipment), so a request buys a label and nothing else: the first label of a shipment also gives the
 * shipment its tracking number, through the update path. A purchase takes the next parcel; the counts
 * cover a full run at the rates each engine reaches with room to spare.
 */
const LABEL_SHIPMENTS: Record<Engine, number> = { sqlite: 12_000, postgres: 4_000 }
const LABEL_SHIPMENTS_PER_ORDER = 10

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
 * EasyPost's shapes): `/bench/label` buys a seeded parcel's label through the package's services
 * (intent committed first, the provider's id committed, the label written with history and an event);
 * `/bench/label-direct` makes the same two calls (create the EasyPost shipment, buy its rate) with the
 * official client alone. PNG on both sides, EasyPost's own format, so neither converts.
 */
async function startLabelHost(engine: Engine) {
  const closers: Array<() => unknown> = []
  const imitation = await easyPostImitation({ teardown: (close) => void closers.push(close) }, { apiKey: EASYPOST_KEY })
  // The CommonJS module's export is the client class (its bundled types do not say so to NodeNext).
  const client = new (EasyPost as unknown as OfficialClientClass)(EASYPOST_KEY, { baseUrl: `${imitation.baseUrl}/` })
  // The parcels are seeded before the rounds and taken in turn, so a request pays for its label only
  // (creating shipments on one growing order would measure that order's ledger).
  const parcels: Array<{ shipmentId: number; parcelId: number }> = []
  let purchases = 0
  const nextParcel = () => {
    const parcel = parcels[purchases++]
    if (!parcel) throw new Error(`the label bench ran out of seeded parcels (${parcels.length}): raise LABEL_SHIPMENTS.${engine}`)
    return parcel
  }
  const host = await startHost(
    engine,
    'labels',
    { deliveries: { shipFrom: SHIP_FROM } },
    async (app) => {
      const seedOrder = async (order: number) => {
        const orderId = await app.shipments.referenceOrders!.createOrder({ reference: `LABELS-${order}`, isCompleted: true, shippingAddress: SHIP_TO })
        for (let index = 0; index < LABEL_SHIPMENTS_PER_ORDER; index++) {
          const shipmentId = (await app.shipments.shipments.create(orderId))[0]!.id
          const parcel = await app.shipments.deliveries.addParcel(shipmentId, { weight: { value: '1.5', unit: 'kg' } })
          parcels.push({ shipmentId, parcelId: parcel.id })
        }
      }
      // Ten orders at a time, as ten connections would.
      for (let order = 0; order < LABEL_SHIPMENTS[engine] / LABEL_SHIPMENTS_PER_ORDER; order += 10) {
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
        const { shipmentId, parcelId } = nextParcel()
        const bought = await app.shipments.deliveries.buyLabel(shipmentId, parcelId, { integration: 'easypost', carrier: 'USPS', service: 'Priority', labelFormat: 'PNG' })
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

/** Orders the return requests rotate over (each gathers about ten returns in a run on SQLite). */
const RETURNABLE_ORDERS = 2_000

const EASYPOST_WEBHOOK_SECRET = 'bench-webhook-secret'
/** The tracking number of a tracked shipment: its id inside, so the PostgreSQL replay can make it of `:id`. */
const trackingCode = (id: number) => `BENCHTRK${id}`

/**
 * Ten orders with 100 shipments each, for the shipment API (`into`), and 1,000 orders of one shipment
 * with a tracking number, shipped, for EasyPost's events (`tracked`; the integration `easypost`, without
 * API key): one order each, as a shop's parcels are, so events for different shipments take different
 * order locks when they move an order.
 */
async function seedShipments(app: FastifyInstance, into: number[], tracked: number[] = []) {
  await app.shipments.integrations.create({ name: 'Instant', handle: 'instant', providerId: 'instant' })
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: EASYPOST_WEBHOOK_SECRET } })
  // Awaited Drizzle calls work on both engines; the SQLite types stand for both here.
  const { db, schema } = app.shipments.database as Extract<DatabaseHandle, { engine: 'sqlite' }>
  // The order status a shipped shipment's order moves to (shippedOrderStatus) must exist.
  await db
    .insert(schema.orderStatuses)
    .values([
      { handle: 'processing', name: 'Processing', isDefault: true },
      { handle: 'shipped', name: 'Shipped' },
    ])
    .onConflictDoNothing()
  for (let order = 1; order <= 10; order++) {
    const [{ id }] = await db.insert(schema.orders).values({ number: `bench-${order}`, reference: `B${order}`, isCompleted: true }).returning()
    for (const shipment of await app.shipments.shipments.create(id, { count: 100 })) into.push(shipment.id)
  }
  const trackedOrders = await db
    .insert(schema.orders)
    .values(Array.from({ length: 1_000 }, (_, index) => ({ number: `tracked-${index + 1}`, reference: `T${index + 1}`, isCompleted: true })))
    .returning({ id: schema.orders.id })
  for (const { id } of trackedOrders) tracked.push((await app.shipments.shipments.create(id, { count: 1 }))[0].id)
  for (const id of tracked) await app.shipments.shipments.update(id, { trackingNumber: trackingCode(id), carrier: 'UPS', status: 'shipped' })
}

/** A signed EasyPost tracker.updated event for a tracked shipment (as load.ts sends them). */
function easyPostEvent(id: number, status: string, eventId: string) {
  const { body, signature } = signedTrackerEvent(EASYPOST_WEBHOOK_SECRET, { id: eventId, trackingCode: trackingCode(id), carrier: 'UPS', status })
  return { body, headers: { 'content-type': 'application/json', 'x-hmac-signature': signature } }
}

/** `count` orders of three lines (of 60 SKUs) with one shipment of all of them, for the slip and the pick list. */
async function seedPickOrders(app: FastifyInstance, count: number, into: number[]) {
  for (let index = 0; index < count; index++) {
    const items = [0, 1, 2].map((line) => {
      const sku = (index * 7 + line * 13) % 60
      return { name: `Organic T-shirt ${sku} “Größe M” 🍵`, sku: `SKU-${sku}`, quantity: 1 + line }
    })
    const orderId = await app.shipments.referenceOrders!.createOrder({ reference: `PICK-${index}`, isCompleted: true, shippingAddress: SHIP_TO, items })
    const lines = (await app.shipments.orders.orderLines!(orderId))!
    const [shipment] = await app.shipments.shipments.create(orderId, { items: lines.map((line) => ({ lineItemId: line.id, quantity: line.quantity })) })
    into.push(shipment.id)
  }
}

/**
 * Orders whose one shipment shipped 1,000,000 units of one line, so return requests never run out;
 * `[orderId, lineItemId]`. Enough of them that an order gathers a few returns in a run, not hundreds
 * (the ledger reads every return of its order, which a real order has one or two of). Ten at a time.
 */
async function seedReturnableOrders(app: FastifyInstance, count: number, into: Array<[number, number]>) {
  for (let start = 0; start < count; start += 10) {
    const seeded = await Promise.all(Array.from({ length: Math.min(10, count - start) }, (_, offset) => seedReturnableOrder(app, start + offset)))
    into.push(...seeded)
  }
}

async function seedReturnableOrder(app: FastifyInstance, index: number): Promise<[number, number]> {
  const orderId = await app.shipments.referenceOrders!.createOrder({ reference: `RET-${index}`, isCompleted: true, items: [{ name: 'Tee', sku: 'TEE', quantity: 1_000_000 }] })
  const [line] = (await app.shipments.orders.orderLines!(orderId))!
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: line.id, quantity: 1_000_000 }] })
  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  return [orderId, line.id]
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
  const app = hostsByBase.get(new URL(plan.url).origin)
  if (plan.easyPost) {
    if (!app) throw new Error(`no bench host at ${plan.url}`)
    // The first pass sends in_transit (shipped) to even positions and return_to_sender (on hold) to odd ones.
    const tracked = trackedShipmentsOf(plan)
    for (const [status, parity] of [['on_hold', 0], ['shipped', 1]] as const) {
      const ids = tracked.filter((_, index) => index % 2 === parity)
      await rawStatement(app, `UPDATE shipments_shipments SET status = $1, status_before_order_cancel = NULL WHERE id IN (${ids.map((_, index) => `$${index + 2}`).join(', ')})`, [status, ...ids])
    }
    return
  }
  const reset = plan.transitions
  if (!reset) return
  if (!app) throw new Error(`no bench host at ${plan.url}`)
  const { shipmentIds, statuses } = reset
  const placeholders = shipmentIds.map((_, index) => `$${index + 2}`).join(', ')
  await rawStatement(app, `UPDATE shipments_shipments SET status = $1, status_before_order_cancel = NULL WHERE id IN (${placeholders})`, [statuses[1], ...shipmentIds])
}

/** The shipments a carrier-event load tracks (their ids are in their tracking codes). */
const trackedShipmentsOf = (plan: LoadPlan) => plan.easyPost!.trackingCodes.map((code) => Number(code.slice('BENCHTRK'.length)))

function runLoad(plan: LoadPlan): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL('./load.js', import.meta.url))], {
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    child.stdin.on('error', reject)
    child.stdin.end(JSON.stringify(plan))
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk))
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(output)) : reject(new Error(`autocannon exited with ${code}`))))
  })
}

/**
 * pgbench against a database: its built-in TPC-B-like script, or `script` (a custom script file,
 * `-f`, sent with prepared statements as the package sends its own; `-n`: no pgbench tables to vacuum).
 */
interface PgbenchPlan {
  pgbench: { url: string; clients: number; threads: number; durationSeconds: number; script?: { files: string[]; describe: string } }
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

/** Creates and fills a scratch database for pgbench's TPC-B-like script at `scale` (dropped with the bench's other databases). */
async function pgbenchDatabase(scale: number): Promise<string> {
  const url = await benchDatabase('postgres', `pgbench_${scale}`)
  await runPgbench(['-i', '-q', '-s', String(scale), url])
  return url
}

/** One pgbench run, in the shape of a load result: transactions for requests, failed transactions for errors. */
async function runPgbenchLoad({ pgbench }: PgbenchPlan): Promise<LoadResult & { output: string }> {
  // A replay's transaction that meets a deadlock is tried again, as the package tries its change again
  // after a lock timeout; one that still fails counts as an error and stops the run.
  const custom = pgbench.script ? ['-n', '-M', 'prepared', '--max-tries=10', ...pgbench.script.files.flatMap((file) => ['-f', file])] : []
  const output = await runPgbench([...custom, '-c', String(pgbench.clients), '-j', String(pgbench.threads), '-T', String(pgbench.durationSeconds), pgbench.url])
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
    ? `pgbench ${load.pgbench.script ? load.pgbench.script.describe : 'TPC-B-like'}, ${load.pgbench.clients} clients, ${load.pgbench.threads} threads`
    : `${load.method} ${load.transitions ? `${load.transitions.pathPrefix}/:id` : load.rotate ? `${load.rotate.pathPrefix}/:id${load.rotate.pathSuffix ?? ''}` : new URL(load.url).pathname}`

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

/**
 * A figure in absolute terms, with no ceiling beside it (a document's pages a second, the longest
 * stall of the event loop while serving it): the median of the rounds, each after the same warm-up.
 * `pagesPerRequest` turns requests into pages; with `stallTarget`, a second figure of the same rounds.
 */
async function measureDocument(name: string, load: LoadPlan, pagesPerRequest: number, pagesTarget: number, stallTarget?: number) {
  if (!wanted(name)) return
  await runLoad({ ...load, durationSeconds: 1 })
  const rounds: Figure['rounds'] = []
  for (let round = 0; round < ROUNDS; round++) {
    const result = await runWatched(load, stallTarget !== undefined)
    if (result.errors > 0 || result.non2xx > 0) throw new Error(`${name}: ${result.errors} errors, ${result.non2xx} non-2xx answers`)
    if (result.requests === 0) throw new Error(`${name}: no request completed within ${SECONDS} s`)
    rounds.push({ measured: result, against: result })
  }
  const add = (figureName: string, values: number[], unit: string, target: { min?: number; max?: number }) => {
    for (const value of values) if (!(Number.isFinite(value) && value > 0)) throw new Error(`${figureName}: ${value} ${unit}`)
    const value = median(values)
    const met = (target.min === undefined || value >= target.min) && (target.max === undefined || value <= target.max)
    const targetText = target.min !== undefined ? `>= ${target.min} ${unit}` : `<= ${target.max} ${unit}`
    figures.push({ name: figureName, measured: describe(load), against: '(absolute)', medians: `${value.toFixed(1)} ${unit}`, ratio: value, ratios: values, target: targetText, met, rounds })
    console.log(`  ${figureName}: ${value.toFixed(1)} ${unit} (${met ? 'met' : 'MISSED'}; target ${targetText}; rounds ${values.map((each) => each.toFixed(1)).join(', ')})`)
  }
  add(name, rounds.map((round) => round.measured.requestsPerSecond * pagesPerRequest), 'pages/s', { min: pagesTarget })
  if (stallTarget !== undefined) add(`${name}: longest event-loop stall`, rounds.map((round) => round.measured.maxStallMs!), 'ms', { max: stallTarget })
}

/** A context line (no target): pgbench's TPC-B-like transactions a second, the median of the rounds. */
const contexts: Array<{ name: string; median: number; rounds: number[] }> = []
async function contextLine(name: string, load: PgbenchPlan) {
  if (!wanted(name)) return
  await runPgbenchLoad({ pgbench: { ...load.pgbench, durationSeconds: 1 } })
  const rounds: number[] = []
  for (let round = 0; round < ROUNDS; round++) rounds.push((await runPgbenchLoad(load)).requestsPerSecond)
  contexts.push({ name, median: median(rounds), rounds })
  console.log(`  (context) ${name}: ${median(rounds).toFixed(0)} per s (rounds ${rounds.map((each) => each.toFixed(0)).join(', ')})`)
}

/**
 * Statements the package sends in a request's async context that are not the request's own work: an
 * outbox delivery's done mark (one statement for a batch of delivered events, started by an earlier
 * commit) and the read of the change stamp (at most every 250 ms, whatever the load).
 */
const NOT_PER_REQUEST = [/^\s*UPDATE shipments_outbox SET state = 'done'/, /FROM shipments_change_seq\s*$/]

/**
 * Sends two requests of one kind through `host` (for `ids[0]` and `ids[1]`), captures the statements
 * the package sent for each, and writes them as a pgbench script over the shipments `first`..`last`.
 * The host is the replay's own (its database the one the script runs against), not the measured one.
 */
async function replayScript(app: FastifyInstance, kind: string, request: (id: number, index: number) => { url: string; body: string; headers?: Record<string, string> }, ids: number[]) {
  const send = async (id: number, index: number) => {
    const { url, body, headers } = request(id, index)
    const { response, statements } = await captureRequest(app, { method: 'POST', url, payload: body, headers: { 'content-type': 'application/json', 'x-bench-user': 'admin', ...headers } })
    if (response.statusCode !== 200) throw new Error(`capturing ${kind}: ${url} answered ${response.statusCode} ${response.body}`)
    return { id, statements: statements.filter((statement) => !NOT_PER_REQUEST.some((pattern) => pattern.test(statement.text))) }
  }
  // The first request fills the caches (the integration, the change stamp): a warm request is what the load sends.
  await send(ids.at(-1)!, 0)
  // Two requests for other shipments that sent the same statements: a delivery's done mark can fall
  // inside either (it is filtered out above, but a cache refresh may not be), so up to five tries.
  let requests: ScriptRequest[] = []
  for (let attempt = 0; attempt < 5; attempt++) {
    // Shipments far apart in the set, so of different orders, written by different transactions: their
    // row versions differ, which tells the generator the version is per request (carried, not a literal).
    const half = Math.floor(ids.length / 2)
    requests = [await send(ids[attempt], 1), await send(ids[half + attempt], 2)]
    if (JSON.stringify(requests[0].statements.map((each) => each.text)) === JSON.stringify(requests[1].statements.map((each) => each.text))) break
  }
  // The script's `\set id random(first, last)` stands for the set: it must hold every id between.
  const sorted = [...ids].sort((a, b) => a - b)
  if (sorted.some((id, index) => id !== sorted[0] + index)) throw new Error(`${kind}: the shipments of the replay are not consecutive ids`)
  const script = pgbenchScript(requests, { first: sorted[0], last: sorted.at(-1)! })
  // Beside the results (kept after the run, to read what was replayed).
  const file = join(RESULTS_FILE, '..', `replay-${kind}.sql`)
  mkdirSync(join(RESULTS_FILE, '..'), { recursive: true })
  writeFileSync(file, script)
  console.log(`  (replay of ${kind}: ${requests[0].statements.length} statements a request, script ${file})`)
  return { file, script, statements: requests[0].statements.length }
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
  `fastify-shipments bench: autocannon ${CONNECTIONS} connections, ${SECONDS} s per measurement, median of ${ROUNDS} rounds, ${cpus().length} cores, Node ${process.version}, load average ${loadavg().map((each) => each.toFixed(2)).join(' ')}`,
)
async function measureEngine(engine: Engine) {
  console.log(`\n${engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'}:`)
  const label = (name: string) => `${engine}: ${name}`
  const shipmentIds: number[] = []
  const trackedIds: number[] = []
  const inProcessShipmentIds: number[] = []
  const returnable: Array<[number, number]> = []
  const pickShipments: number[] = []
  const wantReturns = wanted(label('return request'))
  const wantDocuments = wanted(label('packing slip')) || wanted(label('pick list'))
  const host = await startHost(engine, 'main', {}, async (app) => {
    await seedShipments(app, shipmentIds, trackedIds)
    if (wantReturns) await seedReturnableOrders(app, RETURNABLE_ORDERS, returnable)
    if (wantDocuments) await seedPickOrders(app, 200, pickShipments)
  })
  // The lock figure compares the default lock directory with none: transitions take no lock file any
  // more (the IMMEDIATE transaction is the cross-process half), so the two should cost the same.
  const inProcessLockHost = engine === 'sqlite' ? await startHost(engine, 'in-process-lock', { lockDirectory: null }, (app) => seedShipments(app, inProcessShipmentIds)) : null
  // Seeding 200,000 orders takes a while: the export hosts start only when an export figure is wanted.
  // (every export figure's name starts with "export").
  const itemsOrder = { orderId: 0, items: [] as Array<{ lineItemId: number; quantity: number }> }
  const itemsHost = await startHost(engine, 'items', {}, (app) => seedLineItems(app, itemsOrder))
  const wantExport = !process.env.BENCH_ONLY || process.env.BENCH_ONLY.startsWith('export')
  const labelHost = !process.env.BENCH_ONLY || 'buy a parcel\'s label'.includes(process.env.BENCH_ONLY) || process.env.BENCH_ONLY.includes('label') ? await startLabelHost(engine) : null
  const noSeed = async () => {}
  const exportLarge = await startHost(engine, 'export-500', { orderExchange: { ...EXCHANGE, pageSize: 500 } }, (app) => (wantExport ? seedExportOrders(app, 2_000) : noSeed()))
  const exportSmall = await startHost(engine, 'export-2k', { orderExchange: { ...EXCHANGE, pageSize: 25 } }, (app) => (wantExport ? seedExportOrders(app, 2_000) : noSeed()))
  const exportHuge = await startHost(engine, 'export-200k', { orderExchange: { ...EXCHANGE, pageSize: 25 } }, (app) => (wantExport ? seedExportOrders(app, 200_000) : noSeed()))
  const get = (url: string): LoadPlan => ({ url, method: 'GET', headers: EXCHANGE_HEADERS, durationSeconds: SECONDS, connections: CONNECTIONS })

  try {
    const fieldsBody = JSON.stringify({ carrier: 'UPS', trackingNumber: '1Z999AA10123456784', service: 'Ground' })
    const statusChanges = plan(host.base, { transitions: { pathPrefix: '/shipments/api/shipments', shipmentIds, statuses: ['in_progress', 'on_hold'] } })
    // Every request to another shipment of the thousand, as the status changes do (one shipment for
    // every connection measured the queue on its row, on PostgreSQL about 1,000 a second whatever the package did).
    const fieldUpdates = plan(host.base, { body: fieldsBody, rotate: { pathPrefix: '/shipments/api/shipments', ids: shipmentIds } })
    const carrierEvents = plan(`${host.base}/actions/shipments/gateway/handle?integration=easypost`, {
      headers: { 'content-type': 'application/json' },
      easyPost: { secret: EASYPOST_WEBHOOK_SECRET, trackingCodes: trackedIds.map(trackingCode), carrier: 'UPS', statuses: ['in_transit', 'return_to_sender'] },
    })
    const echo = (body: string) => plan(`${host.base}/bare/echo`, { body })
    await compare(label('update, no status change / bare JSON echo'), { min: 0.4 }, fieldUpdates, echo(fieldsBody))
    await compare(label('update with a status change / bare JSON echo'), { min: 0.3 }, statusChanges, echo(JSON.stringify({ status: 'in_progress' })))
    // Every event changes the shipment's status (in_transit: shipped, return_to_sender: on hold, in turn).
    await compare(label('EasyPost tracker.updated events applied through the gateway / bare JSON echo'), { min: 0.3 }, carrierEvents, echo(easyPostEvent(trackedIds[0], 'in_transit', 'evt_echo').body))
    if (engine === 'postgres') {
      // The ceiling on PostgreSQL: the package's own statements for the same work, captured from a
      // replay host (a database seeded alike) and replayed by pgbench with as many clients as the load
      // has connections, for random shipments of the same set, against the same server.
      const names = {
        status: label("status changes per second / pgbench replaying the package's own statements (same server, same clients)"),
        update: label("updates without a status change per second / pgbench replaying the package's own statements"),
        events: label("EasyPost events applied per second / pgbench replaying the package's own statements"),
      }
      if (Object.values(names).some(wanted)) {
        const replayShipments: number[] = []
        const replayTracked: number[] = []
        const replay = await startHost(engine, 'replay', {}, (app) => seedShipments(app, replayShipments, replayTracked))
        if (JSON.stringify(replayShipments) !== JSON.stringify(shipmentIds)) throw new Error('the replay database holds other shipment ids than the measured one')
        const apiUrl = (id: number) => `/shipments/api/shipments/${id}`
        const eventRequest = (id: number, status: string) => {
          // A UUID for the event id: the script makes a new one for every transaction (the ledger's key).
          const { body, headers } = easyPostEvent(id, status, randomUUID())
          return { url: '/actions/shipments/gateway/handle?integration=easypost', body, headers }
        }
        const scripts = {
          status: await replayScript(replay.app, 'status-change', (id) => ({ url: apiUrl(id), body: JSON.stringify({ status: 'in_progress' }) }), replayShipments),
          update: await replayScript(replay.app, 'update', (id) => ({ url: apiUrl(id), body: fieldsBody }), replayShipments),
          // The load alternates the two (each pass over the shipments moves them all one way), so the
          // replay runs both scripts with equal weight: to on hold, and back to shipped (the order moved too).
          events: await replayScript(replay.app, 'easypost-event-on-hold', (id) => eventRequest(id, 'return_to_sender'), replayTracked),
          eventsShipped: await (async () => {
            await rawStatement(replay.app, `UPDATE shipments_shipments SET status = 'on_hold' WHERE id BETWEEN $1 AND $2`, [replayTracked[0], replayTracked.at(-1)])
            return replayScript(replay.app, 'easypost-event-shipped', (id) => eventRequest(id, 'in_transit'), replayTracked)
          })(),
        }
        const url = replay.database
        await replay.app.close()
        const replayPlan = (...kinds: Array<keyof typeof scripts>): PgbenchPlan => ({
          pgbench: {
            url,
            clients: CONNECTIONS,
            threads: Math.min(2, CONNECTIONS),
            durationSeconds: SECONDS,
            script: { files: kinds.map((kind) => scripts[kind].file), describe: `replay of the package's statements (${kinds.map((kind) => `${kind}: ${scripts[kind].statements}`).join(', ')})` },
          },
        })
        await compare(names.status, { min: 0.8 }, statusChanges, replayPlan('status'))
        await compare(names.update, { min: 0.8 }, fieldUpdates, replayPlan('update'))
        await compare(names.events, { min: 0.8 }, carrierEvents, replayPlan('events', 'eventsShipped'))
      }
      // What the server does with pgbench's own TPC-B-like transactions (BEGIN, three UPDATEs, a
      // SELECT, an INSERT, END), with as many clients: context, not a target. At scale 1 all clients
      // update one pgbench_branches row and queue behind each other; at scale 10 they spread over ten.
      for (const scale of [1, 10]) {
        const name = label(`pgbench TPC-B-like, scale ${scale}, ${CONNECTIONS} clients`)
        if (wanted(name)) await contextLine(name, { pgbench: { url: await pgbenchDatabase(scale), clients: CONNECTIONS, threads: Math.min(2, CONNECTIONS), durationSeconds: SECONDS } })
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
        label("buy a parcel's label through the package / the same purchase with the official client alone"),
        { min: 0.5 },
        plan(`${labelHost.base}/bench/label`, { body: '{}' }),
        plan(`${labelHost.base}/bench/label-direct`, { body: '{}' }),
      )
    }
    // Return requests: one unit of an order's shipped line, for the returnable orders in turn.
    await compare(
      label('return request (one line, one unit) / bare JSON echo'),
      { min: 0.2 },
      plan(host.base, {
        rotate: {
          pathPrefix: '/shipments/api/orders',
          pathSuffix: '/returns',
          ids: returnable.map(([orderId]) => orderId),
          bodies: returnable.map(([, lineItemId]) => JSON.stringify({ lines: [{ lineItemId, quantity: 1, reason: 'damaged' }] })),
        },
      }),
      echo(JSON.stringify({ lines: [{ lineItemId: 1, quantity: 1, reason: 'damaged' }] })),
    )
    const slipName = label('packing slip of a shipment of 3 lines')
    const pickName = label('pick list of 200 shipments')
    if (wanted(slipName) || wanted(pickName)) {
      const documentGet = (url: string, connections = CONNECTIONS): LoadPlan => ({ url, method: 'GET', headers: { 'x-bench-user': 'admin' }, durationSeconds: SECONDS, connections })
      const pagesOf = async (url: string) => {
        const response = await host.app.inject({ url, headers: { 'x-bench-user': 'admin' } })
        if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}: ${response.body.slice(0, 500)}`)
        const pages = (response.rawPayload.toString('latin1').match(/\/Type\s*\/Page(?![s\w])/g) ?? []).length
        if (pages === 0) throw new Error(`${url}: no page in the PDF`)
        return pages
      }
      const slipUrl = `/shipments/api/shipments/${pickShipments[0]}/packing-slip`
      const pickUrl = `/shipments/api/documents/pick-list?ids=${pickShipments.join(',')}`
      await measureDocument(slipName, documentGet(`${host.base}${slipUrl}`), await pagesOf(slipUrl), 20)
      // One connection and rounds of at least 10 s: a pick list of 200 shipments takes seconds on a busy machine.
      await measureDocument(pickName, { ...documentGet(`${host.base}${pickUrl}`, 1), durationSeconds: Math.max(SECONDS, 10) }, await pagesOf(pickUrl), 5, 50)
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
  // BENCH_KEEP_DATABASES=1 leaves the PostgreSQL databases (the replay's, pgbench's) for a look afterwards.
  if (process.env.BENCH_KEEP_DATABASES !== '1') for (const database of createdDatabases) await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
  else console.log(`\nKept: ${createdDatabases.join(', ')}`)
}

// BENCH_ONLY naming no figure measured nothing: that is a mistake to report, not an empty table to write.
if (figures.length === 0 && contexts.length === 0) throw new Error(`no figure measured${process.env.BENCH_ONLY ? `: BENCH_ONLY="${process.env.BENCH_ONLY}" names none` : ''}`)

console.log("\n| figure | measured | against | median ratio | rounds | medians (measured / against) | target | met |\n|---|---|---|---|---|---|---|---|")
for (const figure of figures) {
  const rounds = figure.ratios.map((each) => each.toFixed(3)).join(', ')
  console.log(`| ${figure.name} | ${figure.measured} | ${figure.against} | ${figure.ratio.toFixed(3)} | ${rounds} | ${figure.medians} | ${figure.target} | ${figure.met ? 'yes' : 'no'} |`)
}
if (contexts.length > 0) {
  console.log('\n| context (no target) | median per s | rounds |\n|---|---|---|')
  for (const context of contexts) console.log(`| ${context.name} | ${context.median.toFixed(0)} | ${context.rounds.map((each) => each.toFixed(0)).join(', ')} |`)
}
mkdirSync(join(RESULTS_FILE, '..'), { recursive: true })
writeFileSync(
  RESULTS_FILE,
  JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: cpus().length, cpu: cpus()[0]?.model, loadGenerator: 'autocannon (separate process)', secondsPerMeasurement: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, only: process.env.BENCH_ONLY ?? null, loadAverage: loadavg(), figures, contexts }, null, 2),
)
console.log(`\nFigures written to ${RESULTS_FILE}`)
