// `npm run bench:size` (and the end of `npm run bench`): what a store admin's reads and a status change
// cost at 1,000,000 shipments against 10,000, on each engine, measured in one run. Each store is seeded
// through SQL (200 orders per 1,000 shipments, five shipments an order, one holding the order's line,
// a history row and a delivered outbox event each, 1 % of completed orders left uncovered for the
// attention list), then every read
// runs warm (the same read again) and cold (right after a status change, as in a live shop), median of
// BENCH_SIZE_RUNS. Prints ms per size, the ratio, and the longest event-loop stall seen during the reads.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import { fastifyShipments, type DatabaseHandle } from 'fastify-shipments'

function positiveInteger(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, not "${process.env[name]}"`)
  return value
}
const RUNS = positiveInteger('BENCH_SIZE_RUNS', 7)
const SMALL = positiveInteger('BENCH_SIZE_SMALL', 10_000)
const LARGE = positiveInteger('BENCH_SIZE_LARGE', 1_000_000)
const ENGINES = (process.env.BENCH_DATABASE ?? 'both') === 'both' ? (['sqlite', 'postgres'] as const) : ([process.env.BENCH_DATABASE as 'sqlite' | 'postgres'] as const)
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const workDirectory = mkdtempSync(join(tmpdir(), 'shipments-size-'))
type Engine = 'sqlite' | 'postgres'

async function adminQuery(text: string) {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

async function freshDatabase(engine: Engine, name: string): Promise<string> {
  if (engine === 'sqlite') return join(workDirectory, `${name}.sqlite`)
  const database = `shipments_size_${name}_${process.pid}`
  await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
  await adminQuery(`CREATE DATABASE "${database}"`)
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${database}`
  return url.toString()
}

async function sql(handle: DatabaseHandle, text: string): Promise<void> {
  if (handle.engine === 'sqlite') handle.db.$client.exec(text)
  else await handle.db.$client.query(text)
}

/**
 * The store, written by SQL in set operations: orders with one line each (quantity 1), five shipments
 * per order with the first holding the line (the others order-level), a history row per shipment, and
 * every 100th order left with its line unallocated (its row on the attention list, as the package keeps it).
 */
async function seed(handle: DatabaseHandle, shipments: number) {
  const orders = Math.max(1, Math.floor(shipments / 5))
  const sqlite = handle.engine === 'sqlite'
  const series = (count: number) => (sqlite ? `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count}) SELECT i FROM n` : `SELECT i FROM generate_series(1, ${count}) AS i`)
  const now = sqlite ? `(unixepoch('subsec') * 1000)` : 'now()'
  const bool = (value: boolean) => (sqlite ? (value ? '1' : '0') : String(value))
  await sql(handle, `INSERT INTO shipments_order_statuses (handle, name, is_default) VALUES ('processing', 'Processing', ${bool(true)}), ('shipped', 'Shipped', ${bool(false)})`)
  await sql(handle, `INSERT INTO shipments_orders (number, reference, status_handle, is_completed) SELECT 'N' || i, 'R' || i, 'processing', ${bool(true)} FROM (${series(orders)}) s`)
  await sql(handle, `INSERT INTO shipments_order_line_items (order_id, sku, name, quantity) SELECT i, 'SKU' || (i % 997), 'Part', 1 FROM (${series(orders)}) s`)
  const item = sqlite
    ? `json_array(json_object('lineItemId', o, 'quantity', 1, 'ordered', 1, 'sku', 'SKU' || (o % 997), 'name', 'Part'))`
    : `json_build_array(json_build_object('lineItemId', o, 'quantity', 1, 'ordered', 1, 'sku', 'SKU' || (o % 997), 'name', 'Part'))`
  const empty = sqlite ? `'[]'` : `'[]'::json`
  const statuses = `CASE i % 10 WHEN 0 THEN 'new' WHEN 1 THEN 'in_progress' WHEN 2 THEN 'on_hold' WHEN 3 THEN 'fulfilled' WHEN 4 THEN 'cancelled' ELSE 'shipped' END`
  await sql(
    handle,
    `INSERT INTO shipments_shipments (reference, order_id, status, items, date_shipped)
     SELECT 'R' || o || '-s' || k, o, ${statuses},
            CASE WHEN k = 1 AND o % 100 <> 0 THEN ${item} ELSE ${empty} END,
            CASE WHEN i % 10 >= 5 THEN ${sqlite ? `${now} - (i % 90) * 86400000` : `now() - (i % 90) * interval '1 day'`} END
     FROM (SELECT i, (i - 1) / 5 + 1 AS o, (i - 1) % 5 + 1 AS k FROM (${series(orders * 5)}) s) t`,
  )
  await sql(handle, `INSERT INTO shipments_status_history (shipment_id, from_status, to_status) SELECT id, NULL, status FROM shipments_shipments`)
  // One delivered event per shipment, as the outbox keeps them for its retention (a day old: not yet pruned).
  await sql(
    handle,
    sqlite
      ? `INSERT INTO shipments_outbox (message_id, kind, name, ordering_key, state, attempts, available_at, done_at)
         SELECT 'seed-' || id, 'event', 'shipmentCreated', 'shipment:' || id, 'done', 0, ${now} - 86400000, ${now} - 86400000 FROM shipments_shipments`
      : `INSERT INTO shipments_outbox (message_id, kind, name, ordering_key, state, attempts, available_at, done_at)
         SELECT 'seed-' || id, 'event', 'shipmentCreated', 'shipment:' || id, 'done', 0, now() - interval '1 day', now() - interval '1 day' FROM shipments_shipments`,
  )
  await sql(
    handle,
    `INSERT INTO shipments_attention_orders (order_id, reference, status_handle, lines_missing, units_missing)
     SELECT id, reference, status_handle, 1, 1 FROM shipments_orders WHERE id % 100 = 0`,
  )
  await sql(handle, `INSERT INTO shipments_package_state (key, value) VALUES ('attentionRowsBuilt', 'seeded') ON CONFLICT (key) DO NOTHING`)
  if (!sqlite) await sql(handle, 'VACUUM ANALYZE')
  else await sql(handle, 'ANALYZE')
}

async function openStore(database: string): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  await app.register(fastifyShipments, {
    database,
    resolveUser: (request) => (request.headers['x-bench-user'] === 'admin' ? { id: 'bench' } : null),
    hasPermission: () => true,
    admin: {},
  })
  await app.ready()
  return app
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

interface Read {
  name: string
  url: (app: FastifyInstance, size: number) => Promise<string>
}

const READS: Read[] = [
  { name: 'admin overview', url: async () => '/shipments/admin/overview' },
  { name: 'admin shipments list', url: async () => '/shipments/admin/shipments' },
  { name: 'admin list by status', url: async () => '/shipments/admin/shipments?status=in_progress' },
  // Halfway through the store, by key: the page a store admin reaches by Next, Next, Next...
  { name: 'admin list, halfway by key', url: async (app, size) => `/shipments/admin/shipments?page=${Math.floor(size / 100)}&after=${(await app.shipments.shipments.list({ perPage: 1 })).shipments[0]!.id + Math.floor(size / 2)}` },
  // A search reads an index range (the start of a reference) or the tracking-number index, never every reference.
  { name: 'admin search by reference', url: async (_app, size) => `/shipments/admin/shipments?q=r${Math.floor(size / 10)}-s` },
  { name: 'API list by tracking number', url: async () => '/shipments/api/shipments?trackingNumber=1Z999AA10123456784' },
  { name: 'admin attention', url: async () => '/shipments/admin/attention' },
  { name: 'admin order page', url: async () => '/shipments/admin/orders/1' },
  { name: 'API list by status', url: async () => '/shipments/api/shipments?status=on_hold&perPage=50' },
  { name: 'API shipment by id', url: async () => '/shipments/api/shipments/5' },
]

/** Milliseconds of each read (warm and cold), of a status change, and the longest stall during the reads. */
async function measure(app: FastifyInstance, size: number) {
  const headers = { 'x-bench-user': 'admin' }
  const results: Record<string, number> = {}
  let flip = 0
  const change = async () => {
    const started = performance.now()
    await app.shipments.shipments.update(3, { status: flip++ % 2 === 0 ? 'on_hold' : 'in_progress' })
    return performance.now() - started
  }
  const stalls = monitorEventLoopDelay({ resolution: 5 })
  for (const read of READS) {
    const url = await read.url(app, size)
    const get = async () => {
      const started = performance.now()
      const response = await app.inject({ url, headers })
      if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}: ${response.body.slice(0, 200)}`)
      return performance.now() - started
    }
    await get()
    const warm: number[] = []
    const cold: number[] = []
    const stallsOfRead = monitorEventLoopDelay({ resolution: 5 })
    stalls.enable()
    stallsOfRead.enable()
    for (let run = 0; run < RUNS; run++) {
      warm.push(await get())
      await change()
      cold.push(await get())
    }
    stalls.disable()
    stallsOfRead.disable()
    if (process.env.BENCH_SIZE_STALLS) console.log(`  ${read.name}: longest stall ${(stallsOfRead.max / 1e6).toFixed(1)} ms`)
    results[`${read.name}, warm`] = median(warm)
    results[`${read.name}, cold`] = median(cold)
  }
  const changes: number[] = []
  for (let run = 0; run < RUNS * 3; run++) changes.push(await change())
  results['status change'] = median(changes)
  return { results, longestStallMs: stalls.max / 1e6 }
}

for (const engine of ENGINES) {
  const figures: Array<{ size: number; results: Record<string, number>; longestStallMs: number; seedSeconds: number }> = []
  for (const size of [SMALL, LARGE]) {
    const database = await freshDatabase(engine, `${engine}_${size}`)
    let app = await openStore(database)
    const started = performance.now()
    await seed(app.shipments.database, size)
    const seedSeconds = (performance.now() - started) / 1000
    await app.close()
    app = await openStore(database)
    figures.push({ size, ...(await measure(app, size)), seedSeconds })
    await app.close()
    if (engine === 'postgres') await adminQuery(`DROP DATABASE IF EXISTS "${new URL(database).pathname.slice(1)}" WITH (FORCE)`)
  }
  const [small, large] = figures as [(typeof figures)[0], (typeof figures)[0]]
  console.log(`\n${engine}: ${small.size.toLocaleString('en')} against ${large.size.toLocaleString('en')} shipments (seeded in ${small.seedSeconds.toFixed(1)} s and ${large.seedSeconds.toFixed(1)} s; median of ${RUNS})`)
  console.log('| read | small ms | large ms | ratio (target: reads <= 2, status change <= 1.2) |')
  console.log('|---|---|---|---|')
  for (const name of Object.keys(small.results)) {
    const ratio = large.results[name]! / small.results[name]!
    console.log(`| ${name} | ${small.results[name]!.toFixed(2)} | ${large.results[name]!.toFixed(2)} | ${ratio.toFixed(2)} |`)
  }
  console.log(`longest event-loop stall during the reads: ${small.longestStallMs.toFixed(1)} ms and ${large.longestStallMs.toFixed(1)} ms (target < 50 ms)`)
}
