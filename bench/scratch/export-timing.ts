import Fastify from 'fastify'
import { existsSync } from 'node:fs'
import { fastifyShipments } from '../../src/index.js'
const COUNT = Number(process.env.N ?? 200000)
const file = `/tmp/perf-scratch-${COUNT}.sqlite`
const fresh = !existsSync(file)
const app = Fastify()
await app.register(fastifyShipments, { database: file, orderExchange: { username: 'u', password: 'p', pageSize: 25 } })
await app.ready()
const client = (app.shipments.database as any).db.$client
if (fresh) {
  const t0 = performance.now()
  const insertOrder = client.prepare(`INSERT INTO shipments_orders (number, reference, email, customer_id, status_handle, is_completed, total_price, date_updated, fields) VALUES (?, ?, 'x@example.com', ?, 'processing', 1, '64.90', ?, '{}')`)
  const insertItem = client.prepare(`INSERT INTO shipments_order_line_items (order_id, sku, name, quantity, price) VALUES (?, 'SKU', 'Tee', 1, '19.95')`)
  const insertAddress = client.prepare(`INSERT INTO shipments_order_addresses (order_id, kind, full_name, address1, city, postal_code, country_code) VALUES (?, ?, 'Zoe', '1 Street', 'Portland', '97201', 'US')`)
  client.transaction(() => {
    for (let i = 1; i <= COUNT; i++) {
      const { lastInsertRowid } = insertOrder.run(`b-${i}`, String(100000 + i), i, Date.UTC(2024, 0, 1) + i * 60000)
      for (let k = 0; k < 3; k++) insertItem.run(lastInsertRowid)
      for (const kind of ['billing', 'shipping']) insertAddress.run(lastInsertRowid, kind)
    }
    client.prepare(`INSERT INTO shipments_orders (number, reference, is_completed) VALUES ('bench-open', 'open', 0)`).run()
  })()
  console.log('seeded in', (performance.now() - t0).toFixed(0), 'ms')
}
const url = '/actions/shippingplatformconnect/orders/process?action=export&start_date=01%2f01%2f2020+00%3a00&end_date=01%2f01%2f2030+00%3a00'
const headers = { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` }
const write = client.prepare("UPDATE shipments_orders SET internal_notes = ? WHERE number = 'bench-open'")
const last = Math.ceil(COUNT / 25)
for (const [label, page, cold] of [['page 1 warm', 1, false], ['page 1 cold', 1, true], ['last warm', last, false], ['last cold', last, true]] as const) {
  const times: number[] = []
  for (let i = 0; i < 15; i++) {
    if (cold) write.run(String(Math.random()))
    const t0 = performance.now()
    const r = await app.inject({ url: `${url}&page=${page}`, headers })
    times.push(performance.now() - t0)
    if (r.statusCode !== 200) throw new Error(r.body)
  }
  times.sort((a, b) => a - b)
  console.log(COUNT, label, 'median ms', times[7].toFixed(2), 'min', times[0].toFixed(2))
}
await app.close()
