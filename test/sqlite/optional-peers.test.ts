// Pay for what you use: the packed package installed into a fresh host without any optional peer
// dependency (the PDF stack, chart.js, @fastify/swagger, OpenTelemetry's API, the drivers' types) is at
// most 35 MB of node_modules; such a host registers the plugin, serves the shipment API and the admin's
// overview (its numbers as a table), and a PDF route answers SHIPMENTS_DOCUMENT_PACKAGES_MISSING naming
// what to install. With the PDF and chart peers installed, the same host prints and draws. The sizes
// are printed (the bench records them too: bench/install-size.ts).
import t from 'tap'
import { packRepository } from '../fixtures/pack.js'
import { execFile } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

t.setTimeout(15 * 60 * 1000)

const execute = promisify(execFile)
// Without the test runner's loaders (see packed-package.test.ts): the host runs as a host's would.
const WITHOUT_LOADERS = ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"']
const run = (command: string, args: string[], cwd: string) => execute('/bin/sh', [...WITHOUT_LOADERS, command, ...args], { cwd, maxBuffer: 10 * 1024 * 1024 })
const repository = new URL('../../', import.meta.url).pathname

/** The bytes of the files under `directory` (what a registry's "install size" counts; links not followed). */
function installedSize(directory: string): number {
  let bytes = 0
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) bytes += lstatSync(join(entry.parentPath, entry.name)).size
  }
  return bytes
}

/** The target of issue 50: what `npm install fastify-shipments` puts in a fresh project's node_modules. */
const MAX_BYTES_WITHOUT_PEERS = 35_000_000
const PDF_AND_CHART_PEERS = ['pdfkit', 'fontkit', 'bwip-js', '@cantoo/pdf-lib', 'chart.js']

// A host in plain JavaScript (no compile step): an order and a shipment in the reference store, then
// every answer the test looks at, as JSON on stdout.
const HOST = `
import Fastify from 'fastify'
import { fastifyShipments, ShipmentsPermissions } from 'fastify-shipments'
const app = Fastify({ logger: false })
await app.register(fastifyShipments, {
  database: process.argv[2],
  resolveUser: () => ({ id: 1 }),
  hasPermission: () => true,
  admin: { csrfKey: 'k'.repeat(32) },
})
const orders = app.shipments.referenceOrders
await orders.saveStatus({ handle: 'processing', name: 'Processing', isDefault: true })
const orderId = await orders.createOrder({
  reference: '1001', isCompleted: true, email: 'jane@example.com', totalPrice: '10.00',
  shippingAddress: { name: 'Jane Doe', address1: 'Main St 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
  items: [{ name: 'Mug', sku: 'MUG-1', quantity: 1, price: '10.00', weight: 350, weightUnit: 'g' }],
})
const [shipment] = await app.shipments.shipments.create(orderId, { count: 1 })
const answer = async (url) => {
  const reply = await app.inject({ url })
  const type = String(reply.headers['content-type'] ?? '')
  return { status: reply.statusCode, type, body: type.startsWith('application/pdf') ? reply.rawPayload.subarray(0, 5).toString('latin1') : reply.body }
}
const results = {
  list: await answer('/shipments/api/shipments'),
  shipment: await answer('/shipments/api/shipments/' + shipment.id),
  slip: await answer('/shipments/api/shipments/' + shipment.id + '/packing-slip'),
  pickList: await answer('/shipments/api/documents/pick-list?ids=' + shipment.id),
  overview: await answer('/shipments/admin/overview'),
  chart: await answer('/shipments/admin/assets/chart.umd.js'),
  others: await Promise.all(['/shipments/api/boxes', '/shipments/api/shipments/' + shipment.id + '/parcels', '/shipments/admin/shipments', '/shipments/admin/shipments/' + shipment.id, '/shipments/admin/boxes'].map(async (url) => [url, (await answer(url)).status])),
  permissions: Object.keys(ShipmentsPermissions).length,
}
await app.close()
// The openapi option needs @fastify/swagger, another optional peer: without it, ready() names the install line.
const withDocument = Fastify({ logger: false })
results.openapi = await withDocument.register(fastifyShipments, { database: process.argv[2], openapi: { path: '/openapi.json' } }).ready().then(() => 'ready', (error) => error.code + ': ' + error.message)
await withDocument.close()
process.stdout.write(JSON.stringify(results))
`

interface Answer {
  status: number
  type: string
  body: string
}
interface HostResults {
  list: Answer
  shipment: Answer
  slip: Answer
  pickList: Answer
  overview: Answer
  chart: Answer
  others: Array<[string, number]>
  openapi: string
  permissions: number
}

t.test('a fresh host without the optional peers: at most 35 MB, every non-PDF route, a coded refusal for a PDF; with the peers, PDFs and the chart', async (t) => {
  // Outside the repository: a project inside it would find the repository's own node_modules (with every
  // peer, as devDependencies) by node's walk up the directories, and load what the host never installed.
  const root = mkdtempSync(join(tmpdir(), 'shipments-optional-peers-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  const stdout = await packRepository(run, repository, root)
  const [{ filename }] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string }>
  const project = join(root, 'host')
  mkdirSync(project)
  await run('npm', ['init', '-y'], project)
  await run('npm', ['pkg', 'set', 'type=module'], project)
  await run('npm', ['install', '--no-audit', '--no-fund', join(root, filename)], project)

  const modules = join(project, 'node_modules')
  for (const name of [...PDF_AND_CHART_PEERS, '@fastify/swagger', '@opentelemetry/api', '@types/better-sqlite3', '@types/pg', 'dejavu-fonts-ttf']) {
    t.notOk(existsSync(join(modules, name)), `${name} is not installed with the package`)
  }
  const withoutPeers = installedSize(modules)
  t.comment(`npm install fastify-shipments, no optional peer: ${(withoutPeers / 1e6).toFixed(1)} MB (${(withoutPeers / 2 ** 20).toFixed(1)} MiB)`)
  t.ok(withoutPeers <= MAX_BYTES_WITHOUT_PEERS, `at most 35 MB without the optional peers (${withoutPeers} bytes)`)
  t.ok(existsSync(join(modules, 'fastify-shipments/assets/fonts/DejaVuSans.ttf')) && existsSync(join(modules, 'fastify-shipments/assets/fonts/LICENSE-DejaVu')), "DejaVu Sans's faces ship in the package, with their licence")

  // The default engine's driver, as the README's install line has it.
  await run('npm', ['install', '--no-audit', '--no-fund', 'better-sqlite3'], project)
  writeFileSync(join(project, 'host.js'), HOST)
  const hostRun = async (database: string) => JSON.parse((await run(process.execPath, ['host.js', database], project)).stdout) as HostResults

  const bare = await hostRun('bare.sqlite')
  t.equal(bare.list.status, 200, 'the shipment list')
  t.match(JSON.parse(bare.list.body), { success: true, shipments: [{ reference: '1001-s001' }] })
  t.equal(bare.shipment.status, 200, 'a shipment')
  for (const [what, answer] of [['packing slip', bare.slip], ['pick list', bare.pickList]] as const) {
    t.equal(answer.status, 501, `the ${what}: 501`)
    t.match(JSON.parse(answer.body), {
      errorCode: 'SHIPMENTS_DOCUMENT_PACKAGES_MISSING',
      message: 'PDF documents need packages this host has not installed: npm install pdfkit fontkit bwip-js @cantoo/pdf-lib',
    })
  }
  t.equal(bare.overview.status, 200, "the admin's overview")
  t.match(bare.overview.body, /data-chart-missing>No chart: it is drawn with chart\.js, which this host has not installed \(npm install chart\.js\)/)
  t.notMatch(bare.overview.body, /chart\.umd\.js/, 'no chart script asked for')
  t.equal(bare.chart.status, 404, 'the chart script is not there to serve')
  for (const [url, status] of bare.others) t.equal(status, 200, url)
  t.equal(bare.openapi, 'SHIPMENTS_INVALID_OPTION: Invalid option "openapi": the OpenAPI document is built with @fastify/swagger, which this host has not installed: npm install @fastify/swagger')

  await run('npm', ['install', '--no-audit', '--no-fund', ...PDF_AND_CHART_PEERS], project)
  // The drivers' own install (better-sqlite3, a host's choice) is left out of the figure: the peers' bytes only.
  const withPeers = installedSize(modules) - installedSize(join(modules, 'better-sqlite3'))
  t.comment(`with the PDF and chart peers (${PDF_AND_CHART_PEERS.join(' ')}): ${(withPeers / 1e6).toFixed(1)} MB (${(withPeers / 2 ** 20).toFixed(1)} MiB)`)
  t.ok(withPeers > withoutPeers, 'the peers add their weight')
  const full = await hostRun('full.sqlite')
  t.equal(full.slip.status, 200, 'the packing slip, with the peers')
  t.match(full.slip, { type: /^application\/pdf/, body: '%PDF-' })
  t.equal(full.pickList.status, 200, 'the pick list')
  t.match(full.overview.body, /<canvas id="shipped-chart"/, 'the chart')
  t.notMatch(full.overview.body, /data-chart-missing/)
  t.equal(full.chart.status, 200)
  t.match(full.chart.body, /^\/\*!\n \* Chart\.js v4\./)
})
