// `npm run bench:size` (and the end of `npm run bench`): a host importing its history in one statement.
// On each engine, a migrated empty store takes BENCH_IMPORT_LARGE shipments (default 1,000,000) in one
// INSERT ... SELECT with every trigger on, as a host's import would, and BENCH_IMPORT_SMALL (100,000)
// the same way; the kept totals are checked against a count of the rows. Prints the seconds, the rows a
// second, and the cost of a row at the large size against the small one (target <= 1.5: a statement of
// N rows costs in proportion to N). Before migration 0023 the PostgreSQL import of a million rows ran
// for more than 14 minutes without finishing: its per-row triggers made it cost the square of the rows.
import pg from 'pg'
import { ENGINES, freshDatabase, loadAverage, openStore, positiveInteger, removeStore, withSeedSession, type Engine } from './size-stores.js'

const SMALL = positiveInteger('BENCH_IMPORT_SMALL', 100_000)
const LARGE = positiveInteger('BENCH_IMPORT_LARGE', 1_000_000)

/** Seconds for one statement inserting `rows` shipments (a tenth of them shipped, over 90 days) into a fresh store. */
async function importSeconds(engine: Engine, rows: number): Promise<number> {
  const database = await freshDatabase(engine, `import_${rows}`)
  const app = await openStore(database)
  try {
    const orderId = await app.shipments.referenceOrders!.createOrder({ reference: 'IMPORT', isCompleted: true })
    const sqlite = engine === 'sqlite'
    const series = sqlite ? `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows}) SELECT i FROM n` : `SELECT i FROM generate_series(1, ${rows}) AS i`
    const shippedAt = sqlite ? `${Date.now()} - (i % 90) * 86400000` : `now() - (i % 90) * interval '1 day'`
    let seconds = 0
    await withSeedSession(app.shipments.database, database, async (sql) => {
      const started = performance.now()
      await sql(
        `INSERT INTO shipments_shipments (reference, order_id, status, date_shipped)
         SELECT 'IMPORT-' || i, ${orderId}, CASE WHEN i % 10 = 0 THEN 'shipped' ELSE 'new' END, CASE WHEN i % 10 = 0 THEN ${shippedAt} END
         FROM (${series}) s`,
      )
      seconds = (performance.now() - started) / 1000
    })
    await checkTotals(engine, database, app)
    return seconds
  } finally {
    await app.close()
    await removeStore(engine, database)
  }
}

/** The kept totals after the import equal a count of the rows, or the figure means nothing. */
async function checkTotals(engine: Engine, database: string, app: Awaited<ReturnType<typeof openStore>>) {
  const query = async (text: string): Promise<Array<Record<string, unknown>>> => {
    const handle = app.shipments.database
    if (handle.engine === 'sqlite') return handle.db.$client.prepare(text).all() as Array<Record<string, unknown>>
    const client = new pg.Client({ connectionString: database })
    await client.connect()
    try {
      return (await client.query(text)).rows
    } finally {
      await client.end()
    }
  }
  const kept = JSON.stringify(await query('SELECT status, sum(count) AS n FROM shipments_status_counts GROUP BY status HAVING sum(count) <> 0 ORDER BY status'))
  const counted = JSON.stringify(await query('SELECT status, count(*) AS n FROM shipments_shipments WHERE date_deleted IS NULL GROUP BY status ORDER BY status'))
  if (kept.replaceAll('"', '') !== counted.replaceAll('"', '')) throw new Error(`${engine}: the kept totals after the import (${kept}) are not the rows' (${counted})`)
}

for (const engine of ENGINES) {
  const small = await importSeconds(engine, SMALL)
  const large = await importSeconds(engine, LARGE)
  const perRow = large / LARGE / (small / SMALL)
  console.log(
    `\n${engine}: a bulk import in one statement, every trigger on (load average ${loadAverage()}): ${SMALL.toLocaleString('en')} shipments in ${small.toFixed(1)} s, ` +
      `${LARGE.toLocaleString('en')} in ${large.toFixed(1)} s (${Math.round(LARGE / large).toLocaleString('en')} rows/s); a row's cost at the large size / at the small: ${perRow.toFixed(2)} (target <= 1.5)`,
  )
}
