// `npm run bench`: each figure is a ratio of two things measured in this run, under autocannon run as
// a separate process against servers on loopback. Prints a table and writes the figures as JSON.
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { defineProvider, fastifyShipments, schema, type ShipmentsPluginOptions } from '../src/index.js'
import type { LoadPlan, LoadResult } from './load.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const RESULTS_FILE = fileURLToPath(new URL('./results/latest.json', import.meta.url))
const workDirectory = mkdtempSync(join(tmpdir(), 'shipments-bench-'))

const instantProvider = defineProvider({
  id: 'instant',
  settingsSchema: Type.Object({}),
  async handleGatewayRequest() {
    return { body: { ok: true } }
  },
})

/** A host with the plugin, bare ceiling routes beside it, and shipments to work on. */
async function startHost(name: string, options: Partial<ShipmentsPluginOptions> = {}) {
  const app = Fastify({ logger: false })
  await app.register(fastifyShipments, {
    database: join(workDirectory, `${name}.sqlite`),
    providers: [instantProvider],
    resolveUser: (request) => (request.headers['x-bench-user'] === 'admin' ? { id: 'bench' } : null),
    hasPermission: () => true,
    ...options,
  })
  app.post('/bare/echo', async (request) => request.body)
  app.post('/bare/instant', async () => ({ ok: true }))
  await app.ready()

  await app.shipments.integrations.create({ name: 'Instant', handle: 'instant', providerId: 'instant' })
  const shipmentIds: number[] = []
  for (let order = 1; order <= 10; order++) {
    const { id } = app.shipments.db.insert(schema.orders).values({ number: `bench-${order}`, reference: `B${order}`, isCompleted: true }).returning().get()
    for (const shipment of await app.shipments.shipments.create(id, { count: 100 })) shipmentIds.push(shipment.id)
  }
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  return { app, base: address, shipmentIds }
}

function runLoad(plan: LoadPlan): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./load.ts', import.meta.url)), JSON.stringify(plan)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk))
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(output)) : reject(new Error(`autocannon exited with ${code}`))))
  })
}

interface Figure {
  name: string
  measured: string
  against: string
  ratio: number
  target: string
  met: boolean
  detail: { measured: LoadResult; against: LoadResult }
}

const figures: Figure[] = []

async function compare(name: string, target: { min?: number; max?: number }, measured: LoadPlan, against: LoadPlan, ratioOf: 'throughput' | 'latency' = 'throughput') {
  // BENCH_ONLY=<text> runs the figures whose name contains it (for profiling one path).
  if (process.env.BENCH_ONLY && !name.includes(process.env.BENCH_ONLY)) return
  const measuredResult = await runLoad(measured)
  const againstResult = await runLoad(against)
  for (const [label, result] of [['measured', measuredResult], ['ceiling', againstResult]] as const) {
    if (result.errors > 0 || result.non2xx > 0) throw new Error(`${name} (${label}): ${result.errors} errors, ${result.non2xx} non-2xx answers`)
  }
  const ratio =
    ratioOf === 'throughput'
      ? measuredResult.requestsPerSecond / againstResult.requestsPerSecond
      : measuredResult.latencyMeanMs / againstResult.latencyMeanMs
  const met = (target.min === undefined || ratio >= target.min) && (target.max === undefined || ratio <= target.max)
  figures.push({
    name,
    measured: `${measured.method} ${new URL(measured.url).pathname}`,
    against: `${against.method} ${new URL(against.url).pathname}`,
    ratio,
    target: target.min !== undefined ? `>= ${target.min}` : `<= ${target.max}`,
    met,
    detail: { measured: measuredResult, against: againstResult },
  })
  console.log(`  ${name}: ${ratio.toFixed(3)} (${met ? 'met' : 'MISSED'})`)
}

const plan = (url: string, extra: Partial<LoadPlan> = {}): LoadPlan => ({
  url,
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-bench-user': 'admin' },
  durationSeconds: SECONDS,
  connections: CONNECTIONS,
  ...extra,
})

console.log(`fastify-shipments bench: autocannon ${CONNECTIONS} connections, ${SECONDS} s per measurement, ${cpus().length} cores, Node ${process.version}`)
const host = await startHost('main')
const inProcessLockHost = await startHost('in-process-lock', { lockDirectory: null })

try {
  const fieldsBody = JSON.stringify({ carrier: 'UPS', trackingNumber: '1Z999AA10123456784', service: 'Ground' })
  await compare(
    'update, no status change / bare JSON echo',
    { min: 0.4 },
    plan(`${host.base}/shipments/api/shipments/${host.shipmentIds[0]}`, { body: fieldsBody }),
    plan(`${host.base}/bare/echo`, { body: fieldsBody }),
  )
  await compare(
    'update with a status change / bare JSON echo',
    { min: 0.2 },
    plan(host.base, { transitions: { pathPrefix: '/shipments/api/shipments', shipmentIds: host.shipmentIds, statuses: ['in_progress', 'on_hold'] } }),
    plan(`${host.base}/bare/echo`, { body: JSON.stringify({ status: 'in_progress' }) }),
  )
  await compare(
    'gateway dispatch to an instant provider / bare route',
    { min: 0.8 },
    plan(`${host.base}/actions/shipments/gateway/handle?integration=instant`, { body: '{}' }),
    plan(`${host.base}/bare/instant`, { body: '{}' }),
  )
  await compare(
    'transition latency: cross-process lock / in-process lock only',
    { max: 1.5 },
    plan(host.base, { transitions: { pathPrefix: '/shipments/api/shipments', shipmentIds: host.shipmentIds, statuses: ['fulfilled', 'new'] } }),
    plan(inProcessLockHost.base, { transitions: { pathPrefix: '/shipments/api/shipments', shipmentIds: inProcessLockHost.shipmentIds, statuses: ['fulfilled', 'new'] } }),
    'latency',
  )
} finally {
  await host.app.close()
  await inProcessLockHost.app.close()
  rmSync(workDirectory, { recursive: true, force: true })
}

console.log('\n| figure | measured | against | ratio | target | met |\n|---|---|---|---|---|---|')
for (const figure of figures) {
  console.log(`| ${figure.name} | ${figure.measured} | ${figure.against} | ${figure.ratio.toFixed(3)} | ${figure.target} | ${figure.met ? 'yes' : 'no'} |`)
}
mkdirSync(join(RESULTS_FILE, '..'), { recursive: true })
writeFileSync(
  RESULTS_FILE,
  JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: cpus().length, cpu: cpus()[0]?.model, loadGenerator: 'autocannon (separate process)', secondsPerMeasurement: SECONDS, connections: CONNECTIONS, figures }, null, 2),
)
console.log(`\nFigures written to ${RESULTS_FILE}`)
