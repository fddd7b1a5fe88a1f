import Fastify from 'fastify'
import pg from 'pg'
import { fastifyShipments } from '../../src/index.js'
const COUNT = Number(process.env.N ?? 200000)
const name = `perf_scratch_${COUNT}`
const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' })
await admin.connect()
const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount
if (!exists || process.env.RESEED) { await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); await admin.query(`CREATE DATABASE ${name}`) }
await admin.end()
const app = Fastify()
await app.register(fastifyShipments, { database: `postgres://postgres@127.0.0.1:5432/${name}`, orderExchange: { username: 'u', password: 'p', pageSize: 25 } })
await app.ready()
const pool = (app.shipments.database as any).db.$client as pg.Pool
if (!exists || process.env.RESEED) {
  const t0 = performance.now()
  const start = Date.UTC(2024, 0, 1)
  await pool.query(`INSERT INTO shipments_orders (number, reference, email, customer_id, status_handle, is_completed, total_price, date_updated, fields)
    SELECT 'b-' || i, (100000 + i)::text, 'x@example.com', i, 'processing', true, '64.90', to_timestamp(($1::bigint + i::bigint * 60000) / 1000.0), '{}' FROM generate_series(1, $2::int) AS i`, [start, COUNT])
  console.log('orders', (performance.now() - t0).toFixed(0))
  await pool.query(`INSERT INTO shipments_order_line_items (order_id, sku, name, quantity, price) SELECT o.id, 'SKU', 'Tee', 1, '19.95' FROM shipments_orders o CROSS JOIN generate_series(1, 3)`)
  console.log('items', (performance.now() - t0).toFixed(0))
  await pool.query(`INSERT INTO shipments_order_addresses (order_id, kind, full_name, address1, city, postal_code, country_code) SELECT o.id, k.kind, 'Zoe', '1 Street', 'Portland', '97201', 'US' FROM shipments_orders o CROSS JOIN (VALUES ('billing'), ('shipping')) AS k(kind)`)
  await pool.query(`INSERT INTO shipments_orders (number, reference, is_completed) VALUES ('bench-open', 'open', false)`)
  await pool.query('VACUUM ANALYZE')
  console.log('seeded in', (performance.now() - t0).toFixed(0), 'ms')
}
const w = "o.is_completed AND o.export_problem IS NULL AND o.date_updated < '2030-01-01' AND o.date_updated >= '2020-01-01'"
for (const q of [`SELECT count(*) FROM shipments_orders o WHERE ${w}`, `SELECT o.date_updated, o.id FROM shipments_orders o WHERE ${w} ORDER BY o.date_updated DESC, o.id DESC LIMIT 1 OFFSET 10`]) {
  console.log((await pool.query('EXPLAIN (ANALYZE, BUFFERS) ' + q)).rows.map((r) => r['QUERY PLAN']).join('\n'))
}
const url = '/actions/shippingplatformconnect/orders/process?action=export&start_date=01%2f01%2f2020+00%3a00&end_date=01%2f01%2f2030+00%3a00'
const headers = { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` }
const last = Math.ceil(COUNT / 25)
for (const [label, page, cold] of [['page 1 warm', 1, false], ['page 1 cold', 1, true], ['last warm', last, false], ['last cold', last, true]] as const) {
  const times: number[] = []
  for (let i = 0; i < 15; i++) {
    if (cold) await pool.query("UPDATE shipments_orders SET internal_notes = $1 WHERE number = 'bench-open'", [String(Math.random())])
    const t0 = performance.now()
    const r = await app.inject({ url: `${url}&page=${page}`, headers })
    times.push(performance.now() - t0)
    if (r.statusCode !== 200) throw new Error(r.body)
  }
  times.sort((a, b) => a - b)
  console.log(COUNT, label, 'median ms', times[7].toFixed(2), 'min', times[0].toFixed(2))
}
await app.close()
