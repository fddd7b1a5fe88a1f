// The bench's hosts: each a Fastify app with the plugin on a fresh database of its own and the bare
// ceiling routes beside it, listening on loopback in this process; and the databases' removal at the end.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
// The package by its name: the build in dist/ (tsc's output, what a host installs), not the sources
// through tsx, whose transform wraps every named function and closure in a naming call and made the
// hot paths measure slower than they run for users (see tsconfig.bench.json).
import { defineProvider, fastifyShipments, type ShipmentsPluginOptions } from 'fastify-shipments'
import { addCaptureHook } from './sql-capture.js'
import { adminQuery, emptyPostgresDatabase } from './postgres-admin.js'
import type { Engine } from './settings.js'

const workDirectory = mkdtempSync(join(tmpdir(), 'shipments-bench-'))
const createdDatabases: string[] = []

/** A fresh database for one host: a SQLite file, or a PostgreSQL database dropped at the end. */
export async function benchDatabase(engine: Engine, name: string): Promise<string> {
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

export const EXCHANGE = { username: 'bench', password: 'bench-password' }
export const EXCHANGE_HEADERS = { authorization: `Basic ${Buffer.from(`${EXCHANGE.username}:${EXCHANGE.password}`).toString('base64')}` }
/** Where the label and document figures' orders ship to. */
export const SHIP_TO = { name: 'Dr. Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', country: 'US' }

/**
 * Set by the runner while it watches a round's event-loop stalls: every host calls it as a request
 * starts, so the watch begins at the round's first request (see runWatched in runner.ts).
 */
export const stallWatch: { start?: () => void } = {}

/** A host with the plugin and bare ceiling routes beside it, seeded by `seed`, listening on loopback. */
export async function startHost(
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
    stallWatch.start?.()
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

/** A started host: its app, its address (`base`), its database, and the export's precomputation. */
export type BenchHost = Awaited<ReturnType<typeof startHost>>

export const hostsByBase = new Map<string, FastifyInstance>()

/** One statement with `$n` parameters on the host's own connection, either engine. */
export async function rawStatement(app: FastifyInstance, text: string, values: unknown[]) {
  const handle = app.shipments.database
  if (handle.engine === 'postgres') await handle.db.$client.query(text, values)
  else handle.db.$client.prepare(text.replace(/\$\d+/g, '?')).run(...values)
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

/** Removes the SQLite files and drops the PostgreSQL databases the hosts (and pgbench) used. */
export async function removeBenchDatabases() {
  rmSync(workDirectory, { recursive: true, force: true })
  // BENCH_KEEP_DATABASES=1 leaves the PostgreSQL databases (the replay's, pgbench's) for a look afterwards.
  if (process.env.BENCH_KEEP_DATABASES !== '1') for (const database of createdDatabases) await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
  else console.log(`\nKept: ${createdDatabases.join(', ')}`)
}
