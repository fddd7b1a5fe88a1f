// PostgreSQL only: a host's pool, pool ownership, migrations racing, the advisory-lock keys, the export's
// fixed number of queries, and the export document byte for byte against SQLite for the same data.
import { join } from 'node:path'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import Fastify from 'fastify'
import pg from 'pg'
import { drizzle } from 'drizzle-orm/node-postgres'
import { ADVISORY_LOCK_CLASS, fastifyShipments, migrate, MIGRATIONS_TABLE, type PostgresDatabase } from '../../src/index.js'
import { buildTestApp, orderWithShipments, postUpdate, shipmentRow } from '../fixtures/app.js'
import { migrationCount, rawQuery, testDatabase } from '../fixtures/database.js'
import { basicAuth, buildExchangeApp, EXCHANGE_URL, exportedOrders, insertExportOrder, VALID_ADDRESS } from '../fixtures/exchange.js'

const MIGRATIONS = (
  JSON.parse(readFileSync(fileURLToPath(new URL('../../drizzle/postgres/meta/_journal.json', import.meta.url)), 'utf8')) as { entries: unknown[] }
).entries.length

async function hostPool(t: Parameters<typeof testDatabase>[0]) {
  const pool = new pg.Pool({ connectionString: await testDatabase(t, 'host'), max: 4 })
  t.teardown(() => pool.end())
  return pool
}

t.test("a host's Drizzle database over a pg Pool: migrated into the package's own table, left open on close", async (t) => {
  const pool = await hostPool(t)
  const db = drizzle({ client: pool })
  await migrate(db)
  await migrate(db)
  const { rows: tables } = await pool.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'")
  t.ok(tables.some((table) => table.name === MIGRATIONS_TABLE))
  t.notOk(tables.some((table) => table.name === '__drizzle_migrations'), "the host's migrations table is untouched")
  const { rows: applied } = await pool.query(`SELECT count(*)::int AS applied FROM public.${MIGRATIONS_TABLE}`)
  t.same(applied, [{ applied: migrationCount('postgres') }], 'each migration applied once')

  const app = Fastify({ logger: false })
  await app.register(fastifyShipments, { database: db, migrate: false })
  await app.ready()
  t.equal(app.shipments.database.engine, 'postgres')
  t.equal(app.shipments.database.db, db)
  await app.close()
  const { rows } = await pool.query('SELECT 1 AS alive')
  t.same(rows, [{ alive: 1 }], "the host's pool is still open")
})

t.test('a pool the package opened from a connection string is closed with the app', async (t) => {
  const app = await buildTestApp(t)
  const pool = (app.shipments.database.db as PostgresDatabase).$client
  t.equal(pool.ending, false)
  await app.close()
  t.equal(pool.ending, true)
})

t.test('a Drizzle database over a single pg Client is refused with a clear message', async (t) => {
  const client = new pg.Client({ connectionString: await testDatabase(t, 'client') })
  const app = Fastify({ logger: false })
  t.teardown(() => app.close())
  const register = async () => {
    await app.register(fastifyShipments, { database: drizzle({ client }) as never })
    await app.ready()
  }
  await t.rejects(register, { code: 'SHIPMENTS_INVALID_OPTION', message: /Invalid option "database": .*pg\.Pool/ })
})

t.test('instances migrating a fresh database at once take turns: every one succeeds, each migration is applied once', async (t) => {
  const url = await testDatabase(t, 'race')
  const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: url, max: 2 }))
  t.teardown(() => Promise.all(pools.map((pool) => pool.end())))
  await Promise.all(pools.map((pool) => migrate(drizzle({ client: pool }))))
  const { rows } = await pools[0].query(`SELECT count(*)::int AS applied FROM public.${MIGRATIONS_TABLE}`)
  t.same(rows, [{ applied: migrationCount('postgres') }])
})

t.test("the transition lock cannot collide with a host's advisory locks, and is the package's two-key lock on the shipment", async (t) => {
  const app = await buildTestApp(t, { lockTimeoutMs: 10_000 })
  const { shipmentIds: [id, other] } = await orderWithShipments(app, 2)
  const connectionString = (app.shipments.database.db as PostgresDatabase).$client.options.connectionString
  const transitionLocks = () =>
    rawQuery(
      app,
      `SELECT objid::int AS shipment, granted FROM pg_locks WHERE locktype = 'advisory' AND classid = ? AND objsubid = 2
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY granted DESC`,
      [ADVISORY_LOCK_CLASS.shipmentTransition],
    )
  // A host holding the one-key advisory lock with the shipment's id as its key blocks nothing.
  const host = new pg.Client({ connectionString })
  await host.connect()
  t.teardown(() => host.end())
  await host.query('SELECT pg_advisory_lock($1)', [id])
  const response = await postUpdate(app, id, { status: 'shipped' })
  t.equal(response.statusCode, 200)
  t.equal((await shipmentRow(app, id)).status, 'shipped')
  t.same(await transitionLocks(), [], 'nothing of the package held after the commit')

  // Whoever holds the package's class with the shipment's id (as another instance's transition
  // would) holds the transition: it is seen waiting for exactly that lock, and goes on when it is let go.
  const holder = new pg.Client({ connectionString })
  await holder.connect()
  t.teardown(() => holder.end())
  await holder.query('BEGIN')
  await holder.query('SELECT pg_advisory_xact_lock($1, $2)', [ADVISORY_LOCK_CLASS.shipmentTransition, id])
  let settled = false
  const pending = postUpdate(app, id, { status: 'on_hold' }).finally(() => (settled = true))
  while (!settled && (await transitionLocks()).length < 2) await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(await transitionLocks(), [{ shipment: id, granted: true }, { shipment: id, granted: false }], 'the transition waits on (SHIP, shipment id)')
  t.equal((await postUpdate(app, other, { status: 'on_hold' })).statusCode, 200, 'another shipment is not held up')
  t.equal((await shipmentRow(app, id)).status, 'shipped', 'nothing applied while waiting')
  await holder.query('COMMIT')
  const released = await pending
  t.equal(released.statusCode, 200)
  t.equal(released.json().shipment.status, 'on_hold')
  t.same(await transitionLocks(), [], 'and gone after')
})

t.test('an export page takes the same number of queries whatever its size', async (t) => {
  const pool = await hostPool(t)
  let queries = 0
  const query = pool.query.bind(pool)
  pool.query = ((...args: Parameters<typeof pool.query>) => {
    queries++
    return query(...args)
  }) as typeof pool.query
  // No timer of the package's may query in the window counted: the outbox's sweep and the label batches' poll parked.
  const app = await buildTestApp(t, { database: drizzle({ client: pool }), orderExchange: { username: 'u', password: 'p', pageSize: 200 }, outbox: { pollIntervalMs: 3_600_000 }, batches: { worker: false } })
  const url = `${EXCHANGE_URL}?action=export&start_date=01/01/2020 00:00&end_date=01/01/2030 00:00`
  const countFor = async (orders: number) => {
    await rawQuery(app, 'DELETE FROM shipments_orders')
    for (let index = 0; index < orders; index++) {
      await insertExportOrder(app, {}, { items: [{ name: 'a', quantity: 1, price: '1' }, { name: 'b', quantity: 1, price: '1' }, { name: 'c', quantity: 1, price: '1' }] })
    }
    queries = 0
    const response = await app.inject({ url, headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` } })
    t.equal(exportedOrders(response.body).orders.length, orders)
    return queries
  }
  const forThree = await countFor(3)
  const forHundred = await countFor(150)
  t.equal(forHundred, forThree, `${forThree} queries for 3 orders and for 150`)
  t.ok(forThree <= 6, 'the change stamp, the count, the page start, the page, its items and the activity log row')
})

t.test('the export document is the same, byte for byte, on SQLite and on PostgreSQL for the same data', async (t) => {
  const sqlite = await buildExchangeApp(t, {}, { database: join(t.testdir(), 'same.sqlite') })
  const postgres = await buildExchangeApp(t)
  for (const app of [sqlite, postgres]) {
    for (let index = 1; index <= 4; index++) {
      await insertExportOrder(
        app,
        {
          number: `same-${index}`,
          reference: `S-${index}`,
          customerId: index % 2 ? index : null,
          email: `buyer${index}@example.com`,
          totalDiscount: index === 2 ? '-5.00' : '0',
          couponCode: index === 2 ? 'SAVE5' : null,
          isGift: index === 3,
          giftMessage: index === 3 ? 'Für dich ]]> 🎁' : null,
          customerNotes: 'Zoë & <Co> "q"',
          fields: { store: index % 2 ? 'retail' : 'wholesale' },
          dateOrdered: new Date(Date.UTC(2026, 0, index, 9, 30, 15, 250)),
          dateUpdated: new Date(Date.UTC(2026, 0, index, 10, 0, 0, 500)),
        },
        {
          items: [
            { sku: `SKU-${index}`, name: 'Tea set <Kyūsu> & cups 🍵', weight: 0.35, weightUnit: 'kg', quantity: 2, price: '19.95', imageUrl: '/images/tea.jpg', options: { Size: 'M', 'Glaze & <b>': 'Ōbori' } },
            { sku: null, name: 'Card', weight: 12.5, weightUnit: 'g', quantity: 1, price: '0' },
          ],
          shipping: { ...VALID_ADDRESS, company: 'Müller & Söhne' },
          billing: index === 4 ? { ...VALID_ADDRESS, fullName: 'Bill Payer', countryCode: 'de' } : null,
        },
      )
    }
  }
  for (const query of ['', '&store=retail', '&start_date=01/02/2026 09:59&end_date=01/04/2026 10:00', '&page=2']) {
    const [fromSqlite, fromPostgres] = await Promise.all(
      [sqlite, postgres].map((app) => app.inject({ url: `${EXCHANGE_URL}?action=export${query}`, headers: basicAuth() })),
    )
    t.equal(fromSqlite.statusCode, 200)
    t.ok(exportedOrders(fromSqlite.body).orders.length > 0 || query === '&page=2', `orders exported for "${query}"`)
    t.equal(fromPostgres.body, fromSqlite.body, `the same document for "${query}"`)
  }
})

t.test("the host's permission check runs before the transition's transaction: no lock or connection is held while it runs", async (t) => {
  const url = await testDatabase(t, 'authorize')
  const observer = new pg.Client({ connectionString: url })
  await observer.connect()
  t.teardown(() => observer.end())
  const seen: unknown[] = []
  const app = await buildTestApp(
    t,
    {
      hasPermission: async (_user, permission) => {
        if (permission === 'shipments-transitionShipments') {
          const { rows } = await observer.query(
            "SELECT count(*)::int AS held FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            [0x53484950],
          )
          seen.push(rows[0].held)
        }
        return true
      },
    },
    url,
  )
  const { shipmentIds: [id] } = await orderWithShipments(app)
  // One after another: requests at once would each ask up front (before the service) while another one
  // holds its transition's lock, which is no lock of theirs.
  const responses = []
  for (const status of ['shipped', 'on_hold', 'shipped']) responses.push(await postUpdate(app, id, { status }))
  t.same(responses.map((response) => response.statusCode), [200, 200, 200])
  t.ok(seen.length >= 3, 'asked for each transition')
  t.same([...new Set(seen)], [0], 'no transition lock held while the host decided')
})

t.test("a host's pool of one connection runs the work that holds a named lock (a ShipStation notice with items, under the order's lock)", async (t) => {
  const pool = new pg.Pool({ connectionString: await testDatabase(t, 'one'), max: 1, connectionTimeoutMillis: 5000 })
  pool.on('error', () => {})
  t.teardown(() => pool.end())
  // The notice's writes go through the pool while the order's lock is held: on a pool connection,
  // the lock took the only one and the writes waited for the pool's timeout.
  const app = await buildExchangeApp(t, { updateShipments: true }, { database: drizzle({ client: pool }) })
  const orderId = await insertExportOrder(app, { reference: 'ONE-1' }, { items: [{ sku: 'MUG', name: 'Mug', quantity: 2, price: '8.00' }] })
  const [line] = (await app.shipments.orders.orderLines!(orderId))!
  const notice =
    '<?xml version="1.0" encoding="utf-8"?><ShipNotice><OrderNumber>ONE-1</OrderNumber><Carrier>UPS</Carrier><Service>Ground</Service>' +
    `<TrackingNumber>T-ONE</TrackingNumber><Items><Item><SKU>MUG</SKU><Name>Mug</Name><Quantity>2</Quantity><LineItemID>${line!.id}</LineItemID></Item></Items></ShipNotice>`
  const response = await app.inject({
    method: 'POST',
    url: `${EXCHANGE_URL}?action=shipnotify`,
    headers: { ...basicAuth(), 'content-type': 'text/xml', accept: 'application/json' },
    payload: notice,
  })
  t.equal(response.statusCode, 200, response.body)
  t.same(response.json(), { success: true })
  const { shipments } = await app.shipments.shipments.list({ orderId })
  t.same(
    shipments.map(({ status, trackingNumber, items }) => ({ status, trackingNumber, items: items.map(({ lineItemId, quantity }) => ({ lineItemId, quantity })) })),
    [{ status: 'shipped', trackingNumber: 'T-ONE', items: [{ lineItemId: line!.id, quantity: 2 }] }],
  )
})

t.test('the kept totals never deadlock: shipments of one slot moving both ways at once, and the totals stay exact', async (t) => {
  const url = await testDatabase(t, 'kept')
  const app = await buildTestApp(t, {}, url)
  const { shipmentIds } = await orderWithShipments(app, 64)
  // One slot (id % 8) for all of them: the rows of the kept totals every change takes are the same.
  const sameSlot = shipmentIds.filter((id) => id % 8 === shipmentIds[0]! % 8)
  const pool = new pg.Pool({ connectionString: url, max: sameSlot.length })
  // The database is dropped at the end, closing idle connections: heard here, never an uncaught error.
  pool.on('error', () => {})
  t.teardown(() => pool.end())
  await pool.query(`UPDATE shipments_shipments SET status = CASE WHEN id % 16 < 8 THEN 'shipped' ELSE 'on_hold' END WHERE id = ANY($1)`, [sameSlot])
  // Each client flips its own shipment between shipped and on hold, opposite to its neighbour, as
  // carriers' events do: each change takes two status rows, in opposite orders before the fix.
  const deadlocks: string[] = []
  await Promise.all(
    sameSlot.map(async (id) => {
      for (let round = 0; round < 40; round++) {
        try {
          await pool.query(`UPDATE shipments_shipments SET status = CASE status WHEN 'shipped' THEN 'on_hold' ELSE 'shipped' END WHERE id = $1`, [id])
        } catch (error) {
          deadlocks.push((error as { code?: string }).code ?? String(error))
        }
      }
    }),
  )
  t.same(deadlocks, [], 'no transaction was chosen as a deadlock victim')
  const { rows: kept } = await pool.query(`SELECT status, sum(count)::int AS count FROM shipments_status_counts GROUP BY status HAVING sum(count) <> 0 ORDER BY status`)
  const { rows: counted } = await pool.query(`SELECT status, count(*)::int AS count FROM shipments_shipments WHERE date_deleted IS NULL GROUP BY status ORDER BY status`)
  t.same(kept, counted, 'the kept totals equal a count of the shipments')
})
