// `npm run bench:size` (and the end of `npm run bench`): what a store admin's reads and a status change
// cost at 1,000,000 shipments against 10,000, on each engine, measured in one run. Each store is seeded
// through SQL (200 orders per 1,000 shipments, five shipments an order, one holding the order's line,
// a history row and a delivered outbox event each, 1 % of completed orders left uncovered for the
// attention list), then every read runs warm (the same read again) and cold (right after a status
// change, as in a live shop), the two stores taking turns run by run, median of BENCH_SIZE_RUNS. Prints
// ms per size, the ratio, and the longest event-loop stall seen during each store's reads.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { once } from 'node:events'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import type { DatabaseHandle } from 'fastify-shipments'
import { ENGINES, freshDatabase, loadAverage, median, openStore, positiveInteger, removeStore, SEED_TIME, settle, withSeedSession, type Engine } from './size-stores.js'

const RUNS = positiveInteger('BENCH_SIZE_RUNS', 7)
const SMALL = positiveInteger('BENCH_SIZE_SMALL', 10_000)
const LARGE = positiveInteger('BENCH_SIZE_LARGE', 1_000_000)

/**
 * The data statements (INSERT, UPDATE) of a PostgreSQL migration: its backfill, which gives the rows
 * its triggers keep to the rows already there. The seed runs them as the migration did, so the kept
 * rows of a seeded store are the migration's own numbers, not a second formula of them.
 */
function backfillOf(migration: string, engine: Engine = 'postgres', kind: RegExp = /^(INSERT|UPDATE)\b/i): string[] {
  const text = readFileSync(new URL(`../../../drizzle/${engine}/${migration}`, import.meta.url), 'utf8')
  const statements = text.split('--> statement-breakpoint').map((statement) => statement.replace(/^\s*(--[^\n]*\n\s*)*/, '').trim())
  const backfill = statements.filter((statement) => kind.test(statement))
  if (backfill.length === 0) throw new Error(`drizzle/${engine}/${migration} has no statement of ${kind}`)
  return backfill
}
// The export problem of every order (0003), the status and shipped-by-quarter-hour totals (0010).
const POSTGRES_BACKFILLS = ['0003_export_problem_triggers.sql', '0010_kept_counts.sql']

/**
 * How a seed keeps the rows the package maintains. `fast` (PostgreSQL): the bulk inserts run with the
 * per-row triggers off (`session_replication_role = replica`: the kept counts, the export problem, the
 * foreign-key checks), then the migrations' backfills compute the kept rows in one pass each, and the
 * attention rows are written by SQL. `reference`: every trigger fires row by row, and the package
 * builds the attention rows itself on the next start; the bench compares the two at the small size.
 * On SQLite the triggers are cheap (no row versions): it is always seeded with them, attention rows by SQL.
 */
type SeedMode = 'fast' | 'reference'

/**
 * The store, written by SQL in set operations: orders with one line each (quantity 1), five shipments
 * per order with the first holding the line (the others order-level), a history row per shipment, and
 * every 100th order left with its line unallocated (its row on the attention list, as the package keeps it).
 */
async function seed(handle: DatabaseHandle, database: string, shipments: number, mode: SeedMode) {
  const orders = Math.max(1, Math.floor(shipments / 5))
  const sqlite = handle.engine === 'sqlite'
  const series = (count: number) => (sqlite ? `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count}) SELECT i FROM n` : `SELECT i FROM generate_series(1, ${count}) AS i`)
  const now = sqlite ? `${SEED_TIME.getTime()}` : `'${SEED_TIME.toISOString()}'::timestamptz`
  const bool = (value: boolean) => (sqlite ? (value ? '1' : '0') : String(value))
  const triggersOff = !sqlite && mode === 'fast'
  await withSeedSession(handle, database, async (sql) => {
    if (triggersOff) await sql('SET session_replication_role = replica')
    await sql(`INSERT INTO shipments_order_statuses (handle, name, is_default) VALUES ('processing', 'Processing', ${bool(true)}), ('shipped', 'Shipped', ${bool(false)})`)
    await sql(`INSERT INTO shipments_orders (number, reference, status_handle, is_completed) SELECT 'N' || i, 'R' || i, 'processing', ${bool(true)} FROM (${series(orders)}) s`)
    await sql(`INSERT INTO shipments_order_line_items (order_id, sku, name, quantity) SELECT i, 'SKU' || (i % 997), 'Part', 1 FROM (${series(orders)}) s`)
    const item = sqlite
      ? `json_array(json_object('lineItemId', o, 'quantity', 1, 'ordered', 1, 'sku', 'SKU' || (o % 997), 'name', 'Part'))`
      : `json_build_array(json_build_object('lineItemId', o, 'quantity', 1, 'ordered', 1, 'sku', 'SKU' || (o % 997), 'name', 'Part'))`
    const empty = sqlite ? `'[]'` : `'[]'::json`
    const statuses = `CASE i % 10 WHEN 0 THEN 'new' WHEN 1 THEN 'in_progress' WHEN 2 THEN 'on_hold' WHEN 3 THEN 'fulfilled' WHEN 4 THEN 'cancelled' ELSE 'shipped' END`
    await sql(
      `INSERT INTO shipments_shipments (reference, order_id, status, items, date_shipped)
       SELECT 'R' || o || '-s' || k, o, ${statuses},
              CASE WHEN k = 1 AND o % 100 <> 0 THEN ${item} ELSE ${empty} END,
              CASE WHEN i % 10 >= 5 THEN ${sqlite ? `${now} - (i % 90) * 86400000` : `${now} - (i % 90) * interval '1 day'`} END
       FROM (SELECT i, (i - 1) / 5 + 1 AS o, (i - 1) % 5 + 1 AS k FROM (${series(orders * 5)}) s) t`,
    )
    await sql(`INSERT INTO shipments_status_history (shipment_id, from_status, to_status) SELECT id, NULL, status FROM shipments_shipments`)
    // One delivered event per shipment, as the outbox keeps them for its retention (a day old: not yet pruned).
    await sql(
      sqlite
        ? `INSERT INTO shipments_outbox (message_id, kind, name, ordering_key, state, attempts, available_at, done_at)
           SELECT 'seed-' || id, 'event', 'shipmentCreated', 'shipment:' || id, 'done', 0, ${now} - 86400000, ${now} - 86400000 FROM shipments_shipments`
        : `INSERT INTO shipments_outbox (message_id, kind, name, ordering_key, state, attempts, available_at, done_at)
           SELECT 'seed-' || id, 'event', 'shipmentCreated', 'shipment:' || id, 'done', 0, ${now} - interval '1 day', ${now} - interval '1 day' FROM shipments_shipments`,
    )
    if (triggersOff) {
      await sql('SET session_replication_role = DEFAULT')
      for (const migration of POSTGRES_BACKFILLS) for (const statement of backfillOf(migration)) await sql(statement)
    }
    if (mode === 'reference' && !sqlite) {
      // Left to the package: it builds the attention rows on its next start.
      await sql(`DELETE FROM shipments_package_state WHERE key = 'attentionRowsBuilt'`)
    } else {
      await sql(
        `INSERT INTO shipments_attention_orders (order_id, reference, status_handle, lines_missing, units_missing)
         SELECT id, reference, status_handle, 1, 1 FROM shipments_orders WHERE id % 100 = 0`,
      )
      await sql(`INSERT INTO shipments_package_state (key, value) VALUES ('attentionRowsBuilt', 'seeded') ON CONFLICT (key) DO NOTHING`)
    }
    await settle(handle.engine, sql)
  })
}

/** The rows the package maintains (kept totals, export problems, attention rows), to compare two stores. */
async function maintainedRows(database: string): Promise<string> {
  const client = new pg.Client({ connectionString: database })
  await client.connect()
  try {
    const tables = [
      'SELECT status, slot, count FROM shipments_status_counts ORDER BY 1, 2',
      'SELECT quarter_hour, slot, count FROM shipments_shipped_counts ORDER BY 1, 2',
      'SELECT id, export_problem FROM shipments_orders ORDER BY id',
      'SELECT order_id, reference, status_handle, date_ordered, customer, lines_missing, units_missing FROM shipments_attention_orders ORDER BY order_id',
    ]
    const rows = []
    for (const text of tables) rows.push((await client.query(text)).rows)
    return JSON.stringify(rows)
  } finally {
    await client.end()
  }
}

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

/**
 * The longest event-loop stall while each window's work ran, by a 5 ms timer that runs throughout.
 * (monitorEventLoopDelay enabled again after a pause counts the pause as a stall: 320 ms for a 300 ms
 * pause between two reads.) A window ends a timer tick after its work, so a stall is counted in the
 * window whose work caused it.
 */
function stallMonitor() {
  const longest = new Map<string, number>()
  let window: string | null = null
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    if (window !== null) longest.set(window, Math.max(longest.get(window) ?? 0, now - last - 5))
    last = now
  }, 5)
  return {
    async during(name: string, work: () => Promise<void>) {
      window = name
      try {
        await work()
      } finally {
        await new Promise((resolve) => setTimeout(resolve, 6))
        window = null
      }
    },
    longest: (name: string) => longest.get(name) ?? 0,
    stop: () => clearInterval(timer),
  }
}

/**
 * The same timer in an idle process of its own, over the same time: on a loaded machine every process
 * waits for a core now and then, and a stall this one sees too is the machine's, not the reads'.
 */
function idleProcessStalls() {
  const child = spawn(
    process.execPath,
    ['-e', `let last = performance.now(), longest = 0; setInterval(() => { const now = performance.now(); longest = Math.max(longest, now - last - 5); last = now }, 5); process.stdin.on('data', () => process.stdout.write(longest.toFixed(1) + '\\n')); process.stdin.on('end', () => process.exit(0))`],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  return {
    async longestMs(): Promise<number> {
      child.stdin.write('?')
      const [answer] = (await once(child.stdout, 'data')) as [Buffer]
      child.stdin.end()
      return Number(answer.toString().trim())
    },
  }
}

interface Store {
  size: number
  app: FastifyInstance
}

interface Figures {
  size: number
  /** Milliseconds by read (warm, cold) and for the status change. */
  results: Record<string, number>
  longestStallMs: number
}

/**
 * Milliseconds of each read (warm and cold), of a status change, and the longest stall during the reads,
 * per store. The stores take turns run by run, so a change of the machine's load (another process's
 * bench) falls on both sizes alike and their ratio holds.
 */
async function measure(stores: Store[]): Promise<{ figures: Figures[]; idleProcessStallMs: number }> {
  const headers = { 'x-bench-user': 'admin' }
  const results = stores.map(() => ({} as Record<string, number>))
  const longestStallMs = stores.map(() => 0)
  const flips = stores.map(() => 0)
  const change = async (index: number) => {
    const started = performance.now()
    await stores[index]!.app.shipments.shipments.update(3, { status: flips[index]!++ % 2 === 0 ? 'on_hold' : 'in_progress' })
    return performance.now() - started
  }
  const stalls = stallMonitor()
  const idle = idleProcessStalls()
  for (const read of READS) {
    const gets = await Promise.all(
      stores.map(async ({ app, size }) => {
        const url = await read.url(app, size)
        return async () => {
          const started = performance.now()
          const response = await app.inject({ url, headers })
          if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}: ${response.body.slice(0, 200)}`)
          return performance.now() - started
        }
      }),
    )
    // A run of each, not counted: the first response of a shape compiles its serializer's union
    // validators (fast-json-stringify's anyOf, by Ajv, on first use: 65 to 150 ms the first time in a
    // process, about 20 ms for a further route's, at any store size), and the run after a status change
    // shows shapes the seed has not.
    for (const [index, get] of gets.entries()) {
      await get()
      await change(index)
      await get()
    }
    const warm = stores.map((): number[] => [])
    const cold = stores.map((): number[] => [])
    for (let run = 0; run < RUNS; run++) {
      for (const [index, get] of gets.entries()) {
        await stalls.during(`${read.name} ${index}`, async () => {
          warm[index]!.push(await get())
          await change(index)
          cold[index]!.push(await get())
        })
      }
    }
    for (const [index, store] of stores.entries()) {
      const longest = stalls.longest(`${read.name} ${index}`)
      longestStallMs[index] = Math.max(longestStallMs[index]!, longest)
      if (process.env.BENCH_SIZE_STALLS) console.log(`  ${read.name}, ${store.size.toLocaleString('en')}: longest stall ${longest.toFixed(1)} ms`)
      results[index]![`${read.name}, warm`] = median(warm[index]!)
      results[index]![`${read.name}, cold`] = median(cold[index]!)
    }
  }
  stalls.stop()
  const idleProcessStallMs = await idle.longestMs()
  const changes = stores.map((): number[] => [])
  // Ten a run: a change takes a fraction of a millisecond on SQLite, where 21 of them moved the ratio
  // by a third from one run to the next on a loaded machine.
  for (let run = 0; run < RUNS * 10; run++) for (const index of stores.keys()) changes[index]!.push(await change(index))
  const figures = stores.map((store, index) => ({ size: store.size, results: { ...results[index]!, 'status change': median(changes[index]!) }, longestStallMs: longestStallMs[index]! }))
  return { figures, idleProcessStallMs }
}

/** A fresh store of `size` shipments, seeded; the seed's seconds. */
async function seededStore(engine: Engine, name: string, size: number, mode: SeedMode) {
  const database = await freshDatabase(engine, name)
  const app = await openStore(database)
  const started = performance.now()
  await seed(app.shipments.database, database, size, mode)
  const seedSeconds = (performance.now() - started) / 1000
  await app.close()
  return { database, seedSeconds }
}

/**
 * The fast seed keeps exactly what the triggers and the package would: the small store is seeded a
 * second time with every trigger firing row by row and the attention rows built by the package itself
 * (on a start), and the two stores' maintained rows must be the same.
 */
async function checkFastSeed(fast: string, size: number) {
  const reference = await seededStore('postgres', `reference_${size}`, size, 'reference')
  await (await openStore(reference.database)).close() // a start builds the attention rows; the close waits for it
  const [expected, seeded] = [await maintainedRows(reference.database), await maintainedRows(fast)]
  await removeStore('postgres', reference.database)
  if (expected !== seeded) throw new Error(`The fast PostgreSQL seed of ${size} shipments differs from what the triggers and the package keep:\n${expected.slice(0, 2000)}\n${seeded.slice(0, 2000)}`)
  console.log(`postgres: the fast seed's kept rows equal the triggers' and the package's at ${size.toLocaleString('en')} shipments (the reference seeded in ${reference.seedSeconds.toFixed(1)} s)`)
}

/**
 * What the migrations that add kept rows or an index to a store cost at its size (issue 32: "within a
 * documented time without blocking the host for more than a moment"): the kept totals' backfill (SQLite
 * 0009, PostgreSQL 0010) and the search index (0016), each run again as its migration runs it. A
 * migration runs in one transaction, which holds other writers of the shipments for its length (SQLite's
 * write lock; PostgreSQL's lock of CREATE TRIGGER or CREATE INDEX), so these are the waits too. The
 * totals are checked to come back the same.
 */
async function migrationCosts(engine: Engine, database: string): Promise<{ keptTotalsMs: number; searchIndexMs: number }> {
  const run = await (async () => {
    if (engine === 'sqlite') {
      const { default: Database } = await import('better-sqlite3')
      const client = new Database(database)
      return { query: async (text: string) => client.prepare(text).all(), exec: async (text: string) => void client.exec(text), close: async () => client.close() }
    }
    const client = new pg.Client({ connectionString: database })
    await client.connect()
    return { query: async (text: string) => (await client.query(text)).rows, exec: async (text: string) => void (await client.query(text)), close: () => client.end() }
  })()
  try {
    // Rows the triggers brought down to zero are kept; a backfill writes none for them.
    const totals = async () => JSON.stringify([await run.query('SELECT status, slot, count FROM shipments_status_counts WHERE count <> 0 ORDER BY 1, 2'), await run.query('SELECT quarter_hour, slot, count FROM shipments_shipped_counts WHERE count <> 0 ORDER BY 1, 2')])
    const timed = async (statements: string[]) => {
      const started = performance.now()
      await run.exec('BEGIN')
      for (const statement of statements) await run.exec(statement)
      await run.exec('COMMIT')
      return performance.now() - started
    }
    const before = await totals()
    await run.exec('DELETE FROM shipments_status_counts')
    await run.exec('DELETE FROM shipments_shipped_counts')
    const keptTotalsMs = await timed(backfillOf(engine === 'sqlite' ? '0009_kept_counts.sql' : '0010_kept_counts.sql', engine, /^INSERT\b/i))
    if ((await totals()) !== before) throw new Error(`${engine}: the kept totals' backfill gave other totals than the triggers kept`)
    await run.exec('DROP INDEX shipments_shipments_reference_search_idx')
    const searchIndexMs = await timed(backfillOf('0016_reference_search.sql', engine, /^CREATE INDEX\b/i))
    return { keptTotalsMs, searchIndexMs }
  } finally {
    await run.close()
  }
}

for (const engine of ENGINES) {
  const seeded: Array<{ size: number; database: string; seedSeconds: number }> = []
  for (const size of [SMALL, LARGE]) {
    const { database, seedSeconds } = await seededStore(engine, `${engine}_${size}`, size, 'fast')
    console.log(`${engine}: ${size.toLocaleString('en')} shipments seeded in ${seedSeconds.toFixed(1)} s (load average ${loadAverage()})`)
    if (engine === 'postgres' && size === SMALL) await checkFastSeed(database, size)
    seeded.push({ size, database, seedSeconds })
  }
  const stores = await Promise.all(seeded.map(async ({ size, database }) => ({ size, app: await openStore(database) })))
  const loadBefore = loadAverage()
  const { figures, idleProcessStallMs } = await measure(stores)
  const [small, large] = figures as [Figures, Figures]
  for (const { app } of stores) await app.close()
  const migrations = []
  for (const { size, database } of seeded) migrations.push({ size, ...(await migrationCosts(engine, database)) })
  for (const { database } of seeded) await removeStore(engine, database)
  console.log(
    `\n${engine}: ${small.size.toLocaleString('en')} against ${large.size.toLocaleString('en')} shipments (seeded in ${seeded[0]!.seedSeconds.toFixed(1)} s and ${seeded[1]!.seedSeconds.toFixed(1)} s; median of ${RUNS}, the two stores taking turns; load average before and after: ${loadBefore} and ${loadAverage()})`,
  )
  console.log('| read | small ms | large ms | ratio (target: reads <= 2, status change <= 1.2) |')
  console.log('|---|---|---|---|')
  for (const name of Object.keys(small.results)) {
    const ratio = large.results[name]! / small.results[name]!
    console.log(`| ${name} | ${small.results[name]!.toFixed(2)} | ${large.results[name]!.toFixed(2)} | ${ratio.toFixed(2)} |`)
  }
  console.log(
    `longest event-loop stall during the reads: ${small.longestStallMs.toFixed(1)} ms and ${large.longestStallMs.toFixed(1)} ms (target < 50 ms); an idle process's meanwhile: ${idleProcessStallMs.toFixed(1)} ms`,
  )
  for (const { size, keptTotalsMs, searchIndexMs } of migrations) {
    console.log(
      `migrations at ${size.toLocaleString('en')} shipments (each holds other writers of the shipments this long): the kept totals' backfill ${keptTotalsMs.toFixed(0)} ms, the search index ${searchIndexMs.toFixed(0)} ms`,
    )
  }
}
