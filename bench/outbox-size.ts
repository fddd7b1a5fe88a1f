// `npm run bench:outbox` (and the end of `npm run bench`): the outbox at a sustained load keeps its
// delivered rows for the retention (7 days: on the order of 100 million at 13,000 rows a minute). This
// measures, on each engine, with 10,000 against 10,000,000 delivered rows seeded through SQL: the
// dispatcher's claim of due messages (the package's outbox store, as its sweep calls it), a status
// change (which writes its event to the outbox), and one batch of the pruning of expired rows, median
// of BENCH_OUTBOX_RUNS. Target: the claim and the status change within 1.5x; a prune batch stays short
// at any size (each batch is a statement of its own, so no commit waits longer than one batch).
import type { DatabaseHandle } from 'fastify-shipments'
import { ENGINES, freshDatabase, loadAverage, median, openStore, positiveInteger, removeStore, SEED_TIME, settle, withSeedSession, type Engine } from './size-stores.js'

const RUNS = positiveInteger('BENCH_OUTBOX_RUNS', 7)
const SMALL = positiveInteger('BENCH_OUTBOX_SMALL', 10_000)
const LARGE = positiveInteger('BENCH_OUTBOX_LARGE', 10_000_000)
/** What the dispatcher takes a round (SWEEP_BATCH) and deletes a statement (PRUNE_BATCH). */
const CLAIM_BATCH = 100
const PRUNE_BATCH = 1000
const DAY_MS = 24 * 60 * 60 * 1000
const RETENTION_MS = 7 * DAY_MS
/** The first claim, change and prune batch of each store only warm it up (statements prepared, pages read): not counted. */
const ROUNDS = RUNS + 1

/**
 * The package's data layer over its own connection, as a second instance of the host has it: the
 * outbox store the dispatcher claims and prunes through. Not public API: loaded from the build.
 */
interface OutboxDataLayer {
  outbox: { claimDue(instanceId: string, leaseMs: number, limit: number): Promise<unknown[]>; prune(before: Date, limit: number): Promise<number> }
  close(): Promise<void>
}
const { openDatabase } = (await import(new URL('../../../dist/db/open.js', import.meta.url).href)) as {
  openDatabase(database: string, migrate: boolean, options: { onPoolError: (error: Error) => void }): Promise<{ data: OutboxDataLayer }>
}

/**
 * `rows` delivered events, in id order as the outbox writes them: the first PRUNE_BATCH * ROUNDS done 8
 * days ago (past the retention: the prune's batches), the rest within the last 6 days; then
 * CLAIM_BATCH * ROUNDS events due and unclaimed (what a dead instance left), one key each, for the claims;
 * and an order with five shipments for the status changes.
 */
async function seed(handle: DatabaseHandle, database: string, rows: number) {
  const sqlite = handle.engine === 'sqlite'
  const expired = PRUNE_BATCH * ROUNDS
  const claims = CLAIM_BATCH * ROUNDS
  if (rows <= expired) throw new Error(`BENCH_OUTBOX_SMALL and _LARGE must be above ${expired} (the expired rows the prune deletes: PRUNE_BATCH * (BENCH_OUTBOX_RUNS + 1))`)
  const series = (count: number) => (sqlite ? `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count}) SELECT i FROM n` : `SELECT i FROM generate_series(1, ${count}) AS i`)
  const seedTime = SEED_TIME.getTime()
  // Milliseconds on SQLite, timestamptz on PostgreSQL: 40 ms between two events (10 million in 4.6 days).
  const doneAt = `CASE WHEN i <= ${expired} THEN ${seedTime - 8 * DAY_MS} - (${expired} - i) * 40 ELSE ${seedTime - DAY_MS} - (${rows} - i) * 40 END`
  const time = (ms: string) => (sqlite ? ms : `to_timestamp((${ms}) / 1000.0)`)
  const now = sqlite ? `${seedTime}` : `'${SEED_TIME.toISOString()}'::timestamptz`
  await withSeedSession(handle, database, async (sql) => {
    await sql(`INSERT INTO shipments_order_statuses (handle, name, is_default) VALUES ('processing', 'Processing', ${sqlite ? 1 : true})`)
    await sql(`INSERT INTO shipments_orders (number, reference, status_handle) VALUES ('N1', 'R1', 'processing')`)
    await sql(`INSERT INTO shipments_shipments (reference, order_id, status) SELECT 'R1-s' || i, 1, 'in_progress' FROM (${series(5)}) s`)
    await sql(
      `INSERT INTO shipments_outbox (message_id, kind, name, ordering_key, payload, state, attempts, available_at, created_at, done_at)
       SELECT 'seed-' || ${sqlite ? `printf('%09d', i)` : `lpad(i::text, 9, '0')`}, 'event', 'shipmentStatusChanged', 'shipment:' || (i % 100000 + 1),
              ${sqlite ? 'json_object' : 'json_build_object'}('shipmentId', i % 100000 + 1, 'status', 'shipped'), 'done', 0, ${time('d')}, ${time('d')}, ${time('d')}
       FROM (SELECT i, ${doneAt} AS d FROM (${series(rows)}) s) t`,
    )
    await sql(
      `INSERT INTO shipments_outbox (message_id, kind, name, ordering_key, payload, state, attempts, available_at, created_at)
       SELECT 'claim-' || i, 'event', 'shipmentStatusChanged', 'shipment:' || (200000 + i), ${sqlite ? `'{}'` : `'{}'::json`}, 'pending', 0, ${now}, ${now}
       FROM (${series(claims)}) s`,
    )
    await settle(handle.engine, sql)
  })
}

/** A store of `rows` delivered outbox rows, seeded, with the data layer of a second instance. */
async function seededStore(engine: Engine, rows: number) {
  const database = await freshDatabase(engine, `outbox_${engine}_${rows}`)
  // The store's own sweep runs at its start only and keeps every row (a year's retention): the claims
  // and prunes measured are the bench's.
  const app = await openStore(database, { outbox: { pollIntervalMs: 3_600_000, retentionMs: 365 * DAY_MS } })
  await app.shipments.outbox.sweep()
  const seedStarted = performance.now()
  await seed(app.shipments.database, database, rows)
  const seedSeconds = (performance.now() - seedStarted) / 1000
  console.log(`${engine}: ${rows.toLocaleString('en')} delivered outbox rows seeded in ${seedSeconds.toFixed(1)} s (load average ${loadAverage()})`)
  const { data } = await openDatabase(database, false, { onPoolError: (error) => console.error(error) })
  return {
    rows,
    seedSeconds,
    app,
    data,
    async close() {
      await data.close()
      await app.close()
      await removeStore(engine, database)
    },
  }
}

/**
 * Each figure's rounds alternate between the stores (a change of the machine's load falls on both
 * alike); the first round of each only warms up.
 */
async function measure(stores: Array<Awaited<ReturnType<typeof seededStore>>>) {
  const rounds = async (count: number, work: (store: (typeof stores)[0], round: number) => Promise<void>) => {
    const times = stores.map((): number[] => [])
    for (let round = 0; round < count; round++) {
      for (const [index, store] of stores.entries()) {
        const started = performance.now()
        await work(store, round)
        times[index]!.push(performance.now() - started)
      }
    }
    return times.map((values) => values.slice(1))
  }
  const claims = await rounds(ROUNDS, async ({ data }) => {
    const claimed = (await data.outbox.claimDue('bench-instance', 60_000, CLAIM_BATCH)).length
    if (claimed !== CLAIM_BATCH) throw new Error(`A claim took ${claimed} messages, not ${CLAIM_BATCH}`)
  })
  // Ten changes a run: each takes a few milliseconds (a commit), and the machine's load moves a median
  // of a few of them by half.
  const changes = await rounds(RUNS * 10 + 1, async ({ app }, round) => {
    await app.shipments.shipments.update(3, { status: round % 2 === 0 ? 'on_hold' : 'in_progress' })
  })
  const before = new Date(SEED_TIME.getTime() - RETENTION_MS)
  const prunes = await rounds(ROUNDS, async ({ data }) => {
    const pruned = await data.outbox.prune(before, PRUNE_BATCH)
    if (pruned !== PRUNE_BATCH) throw new Error(`A prune batch deleted ${pruned} messages, not ${PRUNE_BATCH}`)
  })
  for (const { data } of stores) {
    // The next batch finds nothing past the retention: the kept rows are not touched.
    if ((await data.outbox.prune(before, PRUNE_BATCH)) !== 0) throw new Error('The prune deleted a message within the retention')
  }
  return stores.map((_, index) => ({ claim: median(claims[index]!), change: median(changes[index]!), prune: median(prunes[index]!), longestPrune: Math.max(...prunes[index]!) }))
}

for (const engine of ENGINES) {
  const stores = [await seededStore(engine, SMALL), await seededStore(engine, LARGE)]
  const loadBefore = loadAverage()
  try {
    const [small, large] = (await measure(stores)) as [Awaited<ReturnType<typeof measure>>[0], Awaited<ReturnType<typeof measure>>[0]]
    console.log(
      `\n${engine}: the outbox with ${SMALL.toLocaleString('en')} against ${LARGE.toLocaleString('en')} delivered rows (median of ${RUNS}, the stores taking turns; load average before and after: ${loadBefore} and ${loadAverage()})`,
    )
    console.log('| figure | small ms | large ms | ratio (target: claim and status change <= 1.5) |')
    console.log('|---|---|---|---|')
    const line = (name: string, a: number, b: number) => console.log(`| ${name} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(2)} |`)
    line(`claim of ${CLAIM_BATCH} due messages`, small.claim, large.claim)
    line('status change', small.change, large.change)
    line(`prune batch of ${PRUNE_BATCH} (median)`, small.prune, large.prune)
    line(`prune batch of ${PRUNE_BATCH} (longest)`, small.longestPrune, large.longestPrune)
  } finally {
    for (const store of stores) await store.close()
  }
}
