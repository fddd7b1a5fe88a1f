// The day's manifest against the local EasyPost imitation: labels bought through the package, the day's
// eligible ones (voided, already manifested and other days' left out), a ScanForm made end to end with its
// form printed, one label in one manifest at most with two instances racing, the provider's refusal
// recorded, carriers and providers that need no manifest, the routes' statuses and the manifestCreated event.
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp, insertOrder } from './fixtures/app.js'
import { tables, testDatabase } from './fixtures/database.js'
import { adminClient, buildAdminApp } from './fixtures/admin.js'
import { easyPostImitation } from './fixtures/easypost-api.js'
import { eventually } from './fixtures/outbox.js'
import { defineProvider, Type, type ShipmentsPluginOptions } from '../src/index.js'
import { firstOperationIdFrom } from '../src/db/manifests.js'

const API_KEY = 'EZTK-manifest-test-key-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const API = '/shipments/api'
const JSON_BODY = { 'content-type': 'application/json' }
const DAY = 24 * 60 * 60 * 1000

type Imitation = Awaited<ReturnType<typeof easyPostImitation>>

/** The plugin's options of every app of a test: the ship-from, and the imitation's form host on loopback allowed. */
const pluginOptions = (extra: Partial<ShipmentsPluginOptions> = {}): Partial<ShipmentsPluginOptions> => ({
  deliveries: { shipFrom: SHIP_FROM },
  documents: { allowPrivateAddresses: ['127.0.0.1'], labelTimeoutMs: 5000 },
  ...extra,
})

async function setup(t: Test, extra: Partial<ShipmentsPluginOptions> = {}) {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const database = await testDatabase(t, 'manifests', 'migrated')
  const app = await buildTestApp(t, pluginOptions(extra), database)
  await app.shipments.integrations.create({
    name: 'EasyPost',
    handle: 'easypost',
    providerId: 'easypost',
    settings: { webhookSecret: 'webhook-secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 2000 },
  })
  return { app, imitation, database }
}

/** A shipment with one parcel and a label bought through the package (`integration`, carrier and service). */
async function labelled(app: FastifyInstance, carrier = 'USPS', service = carrier === 'USPS' ? 'Priority' : 'Ground', integration = 'easypost') {
  const orderId = await insertOrder(app)
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Dr. Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', countryCode: 'US' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const parcel = await app.shipments.deliveries.addParcel(shipment!.id, { weight: { value: '1', unit: 'kg' } })
  const bought = await app.shipments.deliveries.buyLabel(shipment!.id, parcel.id, { integration, carrier, service })
  return { shipmentId: shipment!.id, parcelId: parcel.id, operationId: bought.operationId, trackingNumber: bought.parcel.trackingNumber!, externalId: (await operationOf(app, bought.operationId)).externalId! }
}

async function operationOf(app: FastifyInstance, operationId: string) {
  const { db, schema } = tables(app)
  const [row] = await db.select().from(schema.labelOperations).where(eq(schema.labelOperations.operationId, operationId))
  return row!
}

/** Moves a purchase to another day (as if bought then): only the first bought, so ids keep following time. */
async function boughtAt(app: FastifyInstance, operationId: string, at: Date) {
  const { db, schema } = tables(app)
  await db.update(schema.labelOperations).set({ createdAt: at }).where(eq(schema.labelOperations.operationId, operationId))
}

async function storedManifests(app: FastifyInstance) {
  const { db, schema } = tables(app)
  return { manifests: await db.select().from(schema.manifests).orderBy(schema.manifests.id), parcels: await db.select().from(schema.manifestParcels).orderBy(schema.manifestParcels.parcelId) }
}

const get = (app: FastifyInstance, url: string, user: Parameters<typeof as>[0] = 'admin') => app.inject({ url: `${API}${url}`, headers: as(user) })
const post = (app: FastifyInstance, url: string, body: unknown, user: Parameters<typeof as>[0] = 'admin') =>
  app.inject({ method: 'POST', url: `${API}${url}`, headers: { ...as(user), ...JSON_BODY }, payload: JSON.stringify(body) })

/** Today and yesterday as the shop's calendar (UTC here) names them. */
const dayText = (instant: number) => new Date(instant).toISOString().slice(0, 10)

t.test("the day's eligible labels by carrier: voided, manifested and other days' left out; a carrier without manifests needs none", async (t) => {
  const { app } = await setup(t)
  const yesterday = await labelled(app)
  await boughtAt(app, yesterday.operationId, new Date(Date.now() - DAY))
  const first = await labelled(app)
  const voided = await labelled(app)
  const second = await labelled(app)
  const ups = await labelled(app, 'UPS')
  await app.shipments.deliveries.voidLabel(voided.shipmentId, voided.parcelId)

  const response = await get(app, '/manifests/eligible?integration=easypost')
  t.equal(response.statusCode, 200, response.body)
  const body = response.json()
  t.equal(body.date, dayText(Date.now()))
  t.equal(body.truncated, false)
  const usps = body.groups.find((group: { carrier: string }) => group.carrier === 'USPS')
  t.match(usps, { shipFrom: 'Warehouse, 417 Montgomery Street, San Francisco, CA, 94104, US', needsManifest: true, reason: null, count: 2 })
  t.same(
    usps.labels.map((label: { parcelId: number }) => label.parcelId),
    [first.parcelId, second.parcelId],
    "today's USPS labels: the voided one and yesterday's left out",
  )
  t.match(usps.labels[0], { shipmentId: first.shipmentId, operationId: first.operationId, trackingNumber: first.trackingNumber, dateBought: String })
  const upsGroup = body.groups.find((group: { carrier: string }) => group.carrier === 'UPS')
  t.match(upsGroup, { count: 1, needsManifest: false, reason: 'UPS labels need no manifest: the integration easypost makes manifests for USPS only.' })
  t.equal(upsGroup.labels[0].parcelId, ups.parcelId)

  const before = await get(app, `/manifests/eligible?integration=easypost&date=${dayText(Date.now() - DAY)}`)
  t.same(
    before.json().groups.map((group: { carrier: string; labels: Array<{ parcelId: number }> }) => [group.carrier, group.labels.map((label) => label.parcelId)]),
    [['USPS', [yesterday.parcelId]]],
  )

  // Manifested labels leave the list.
  const made = await post(app, '/manifests', { integration: 'easypost', carrier: 'usps' })
  t.equal(made.statusCode, 201, made.body)
  const after = (await app.shipments.manifests.eligible({ integration: 'easypost' })).groups
  t.same(after.map((group) => group.carrier), ['UPS'], 'only the UPS label is left; it needs no manifest')
})

t.test('a manifest end to end: the ScanForm of the USPS labels, stored, listed, its form printed, a manifestCreated event', async (t) => {
  const { app, imitation, database } = await setup(t, { webhooks: { allowPrivateAddresses: true }, outbox: { pollIntervalMs: 20 } })
  const received: string[] = []
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push(Buffer.concat(chunks).toString())
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
  await app.shipments.webhooks.create({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, events: ['manifestCreated'] })
  const first = await labelled(app)
  const second = await labelled(app)
  await labelled(app, 'UPS')

  const response = await post(app, '/manifests', { integration: 'easypost', carrier: 'USPS' })
  t.equal(response.statusCode, 201, response.body)
  const manifest = response.json()
  t.match(manifest, { integration: 'easypost', carrier: 'USPS', state: 'created', externalId: /^sf_[0-9a-f]{32}$/, parcelCount: 2, error: null, userId: 'admin', formAvailable: true })
  t.same(manifest.labels.map((label: { parcelId: number }) => label.parcelId).sort(), [first.parcelId, second.parcelId].sort())
  t.notOk('formUrl' in manifest, "the form's URL stays inside")

  t.equal(imitation.stats.scanForms, 1)
  const call = imitation.calls.find((each) => each.step === 'scanForm')!
  t.same(call.body, { scan_form: { shipments: [{ id: first.externalId }, { id: second.externalId }] } }, "EasyPost's ScanForm of the two shipments, as the official client sends it")
  const form = imitation.scanForms.get(manifest.externalId)!
  t.same(form.tracking_codes, [first.trackingNumber, second.trackingNumber])

  const stored = await storedManifests(app)
  t.match(stored.manifests, [{ id: manifest.id, state: 'created', externalId: manifest.externalId, formUrl: /\/files\/scan_form\/sf_[0-9a-f]+\.pdf$/, parcelCount: 2, carrier: 'USPS' }])
  t.same(stored.parcels.map((row) => row.operationId).sort(), [first.operationId, second.operationId].sort())

  const events = (await app.shipments.outbox.list({ kind: 'event' })).filter((message) => message.name === 'manifestCreated')
  t.equal(events.length, 1)
  t.match(events[0]!.payload, {
    manifest: { id: manifest.id, integration: 'easypost', carrier: 'USPS', externalId: manifest.externalId, parcelCount: 2 },
    labels: [
      { shipmentId: first.shipmentId, parcelId: first.parcelId, trackingNumber: first.trackingNumber },
      { shipmentId: second.shipmentId, parcelId: second.parcelId, trackingNumber: second.trackingNumber },
    ],
    userId: 'admin',
  })

  await eventually(app, () => received.length === 1)
  t.match(JSON.parse(received[0]!), { type: 'manifestCreated', data: { manifest: { id: manifest.id, externalId: manifest.externalId }, labels: [{ parcelId: first.parcelId }, { parcelId: second.parcelId }] } }, 'the webhook')

  const list = await get(app, '/manifests')
  t.equal(list.statusCode, 200)
  t.match(list.json(), { manifests: [{ id: manifest.id, state: 'created', parcelCount: 2 }] })
  const one = await get(app, `/manifests/${manifest.id}`)
  t.equal(one.statusCode, 200)
  t.match(one.json(), { id: manifest.id, labels: [{ parcelId: Number }, { parcelId: Number }] })

  const printed = await get(app, `/manifests/${manifest.id}/form`)
  t.equal(printed.statusCode, 200, printed.body.slice(0, 200))
  t.equal(printed.headers['content-type'], 'application/pdf')
  // Not under t.testdir(): that makes the directory afresh, and the SQLite file of the test lives there.
  const path = join(mkdtempSync(join(tmpdir(), 'manifest-form-')), 'form.pdf')
  t.teardown(() => rmSync(dirname(path), { recursive: true, force: true }))
  writeFileSync(path, printed.rawPayload)
  t.match(execFileSync('pdftotext', [path, '-'], { encoding: 'utf8' }), `USPS SCAN FORM ${manifest.externalId}`)

  // The form is fetched under the outbound rules: a host that does not allow loopback refuses the URL; a file host that fails is a 502.
  const strict = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM } }, database)
  const refused = await get(strict, `/manifests/${manifest.id}/form`)
  t.equal(refused.statusCode, 502)
  t.match(refused.json(), { errorCode: 'SHIPMENTS_MANIFEST_FORM_UNAVAILABLE', message: `The form of manifest ${manifest.id} could not be fetched: its URL names a host that is not allowed: 127.0.0.1 is a private address` })
  imitation.scanForms.delete(manifest.externalId)
  const gone = await get(app, `/manifests/${manifest.id}/form`)
  t.equal(gone.statusCode, 502)
  t.match(gone.json(), { errorCode: 'SHIPMENTS_MANIFEST_FORM_UNAVAILABLE', message: `The form of manifest ${manifest.id} could not be fetched: the form's host answered 404` })

  // Nothing is left: a second manifest is refused before anything is written or asked.
  const again = await post(app, '/manifests', { integration: 'easypost', carrier: 'USPS' })
  t.equal(again.statusCode, 422)
  t.match(again.json(), { errorCode: 'SHIPMENTS_VALIDATION_FAILED', errors: { carrier: [/^No USPS labels bought through easypost on \d{4}-\d{2}-\d{2} are waiting for a manifest\.$/] } })
  t.equal(imitation.stats.scanForms, 1)
  t.equal((await storedManifests(app)).manifests.length, 1)
})

t.test('a label lands in one manifest at most: two instances creating at once', async (t) => {
  const { app, imitation, database } = await setup(t)
  const other = await buildTestApp(t, pluginOptions(), database)
  const labels = [await labelled(app), await labelled(app), await labelled(app)]
  const answers = await Promise.all([post(app, '/manifests', { integration: 'easypost', carrier: 'USPS' }), post(other, '/manifests', { integration: 'easypost', carrier: 'USPS' })])
  const statuses = answers.map((answer) => answer.statusCode).sort()
  t.equal(statuses.filter((status) => status === 201).length, 1, `one manifest made (${statuses.join(', ')})`)
  const loser = answers.find((answer) => answer.statusCode !== 201)!
  // The loser saw the labels taken (409), or none left when it read them (422); either way it includes nothing.
  t.ok([409, 422].includes(loser.statusCode), loser.body)
  if (loser.statusCode === 409) t.match(loser.json(), { errorCode: 'SHIPMENTS_MANIFEST_LABELS_TAKEN', message: 'The USPS labels went into another manifest meanwhile: nothing is left to manifest.' })
  const stored = await storedManifests(app)
  t.same(stored.manifests.map((row) => row.state), ['created'], 'no pending or empty manifest is left behind')
  t.same(stored.parcels.map((row) => row.operationId).sort(), labels.map((label) => label.operationId).sort(), 'each label once')
  t.equal(imitation.stats.scanForms, 1, 'EasyPost was asked once')
})

t.test("the provider's refusal is recorded as failed with its words; the labels are free again", async (t) => {
  const { app, imitation } = await setup(t)
  const kept = await labelled(app)
  const refunded = await labelled(app)
  // Refunded at EasyPost behind the package's back: EasyPost refuses it on a ScanForm.
  imitation.shipments.get(refunded.externalId)!.refund_status = 'submitted'
  const response = await post(app, '/manifests', { integration: 'easypost', carrier: 'USPS' })
  t.equal(response.statusCode, 422, response.body)
  const [row] = (await storedManifests(app)).manifests
  const words = `The carrier refused: EasyPost refused the scan form: Shipment ${refunded.externalId} has been refunded and cannot be added to a ScanForm. (SCAN_FORM.SHIPMENT.REFUNDED).`
  t.match(response.json(), { status: 422, errorCode: 'SHIPMENTS_MANIFEST_REFUSED', message: `Manifest ${row!.id} failed: ${words}` })
  t.match(row, { state: 'failed', error: words, externalId: null, parcelCount: 2 })
  t.same((await storedManifests(app)).parcels, [], 'the labels are let go')
  const listed = await get(app, `/manifests/${row!.id}`)
  t.match(listed.json(), { state: 'failed', error: words, formAvailable: false, labels: [] })
  const form = await get(app, `/manifests/${row!.id}/form`)
  t.equal(form.statusCode, 409)
  t.match(form.json(), { errorCode: 'SHIPMENTS_MANIFEST_FORM_NOT_READY', message: `Manifest ${row!.id} has no form to print: it failed` })
  t.same((await app.shipments.outbox.list({ kind: 'event' })).filter((message) => message.name === 'manifestCreated'), [], 'no event for a failure')

  // Voided through the package, the label leaves the list; the rest make a manifest.
  await app.shipments.deliveries.voidLabel(refunded.shipmentId, refunded.parcelId).catch(() => undefined)
  const { db, schema } = tables(app)
  await db.update(schema.labelOperations).set({ state: 'voided' }).where(eq(schema.labelOperations.operationId, refunded.operationId))
  const retried = await post(app, '/manifests', { integration: 'easypost', carrier: 'USPS' })
  t.equal(retried.statusCode, 201, retried.body)
  t.match(retried.json(), { parcelCount: 1, labels: [{ parcelId: kept.parcelId }] })
})

t.test('a provider without manifests: its labels are said to need none, and a manifest is refused', async (t) => {
  let bought = 0
  const plain = defineProvider({
    id: 'plain-labels',
    settingsSchema: Type.Object({}),
    async handleGatewayRequest() {
      return { status: 204 }
    },
    deliveries: {
      async purchaseLabel(request, _context, journal) {
        bought++
        await journal.externalIdKnown(`plain-${bought}`)
        return { externalId: `plain-${bought}`, trackingNumber: `PL${bought}`, carrier: request.carrier, service: request.service, labelUrl: `https://labels.example/${bought}.pdf`, labelFormat: 'PDF', cost: '4.00', currency: 'USD', trackingUrl: null }
      },
      async recoverLabel() {
        return { state: 'not-purchased' as const }
      },
      async voidLabel() {
        return { refundStatus: 'submitted' }
      },
    },
  })
  const { app } = await setup(t, { providers: [plain] })
  await app.shipments.integrations.create({ name: 'Plain', handle: 'plain', providerId: 'plain-labels', settings: {} })
  const label = await labelled(app, 'DHL', 'Express', 'plain')
  const eligible = await get(app, '/manifests/eligible?integration=plain')
  t.equal(eligible.statusCode, 200)
  t.match(eligible.json().groups, [{ carrier: 'DHL', needsManifest: false, reason: 'The integration plain makes no manifests: its DHL labels need none.', count: 1, labels: [{ parcelId: label.parcelId }] }])
  const refused = await post(app, '/manifests', { integration: 'plain', carrier: 'DHL' })
  t.equal(refused.statusCode, 422)
  t.match(refused.json(), { status: 422, errorCode: 'SHIPMENTS_MANIFEST_NOT_NEEDED', message: 'The integration plain makes no manifests: its DHL labels need none.' })
  const ups = await post(app, '/manifests', { integration: 'easypost', carrier: 'UPS' })
  t.match(ups.json(), { errorCode: 'SHIPMENTS_MANIFEST_NOT_NEEDED', message: 'UPS labels need no manifest: the integration easypost makes manifests for USPS only.' })
  t.same((await storedManifests(app)).manifests, [], 'nothing written')
})

t.test("routes: who may, what is refused, and nothing changes on a refusal", async (t) => {
  const { app } = await setup(t)
  await labelled(app)
  const cases: Array<[string, Awaited<ReturnType<typeof get>>, number, Record<string, unknown>]> = [
    ['anonymous', await app.inject({ url: `${API}/manifests` }), 401, { errorCode: 'SHIPMENTS_UNAUTHORIZED' }],
    ['no buyLabels', await get(app, '/manifests', 'editor'), 403, { errorCode: 'SHIPMENTS_FORBIDDEN', message: /buyLabels|labels/i }],
    ['eligible without integration', await get(app, '/manifests/eligible'), 422, { errorCode: 'SHIPMENTS_VALIDATION_FAILED', errors: { integration: [String] } }],
    ['a date that is not one', await get(app, '/manifests/eligible?integration=easypost&date=2026-02-30'), 422, { errors: { date: ['must be a date written YYYY-MM-DD'] } }],
    ['a date in another shape', await get(app, '/manifests/eligible?integration=easypost&date=yesterday'), 422, { errors: { date: [String] } }],
    ['an unknown integration', await get(app, '/manifests/eligible?integration=nope'), 422, { errors: { integration: ['no integration has the handle "nope"'] } }],
    ['no carrier', await post(app, '/manifests', { integration: 'easypost' }), 422, { errors: { carrier: [String] } }],
    ['an unknown manifest', await get(app, '/manifests/999999'), 404, { errorCode: 'SHIPMENTS_MANIFEST_NOT_FOUND', message: 'Manifest 999999 not found.' }],
    ['a path id that is none', await get(app, '/manifests/abc/form'), 404, { errorCode: 'SHIPMENTS_MANIFEST_NOT_FOUND' }],
    ['the form of an unknown manifest', await get(app, '/manifests/12345/form'), 404, { errorCode: 'SHIPMENTS_MANIFEST_NOT_FOUND' }],
  ]
  for (const [what, response, status, body] of cases) {
    t.equal(response.statusCode, status, `${what}: ${response.body.slice(0, 200)}`)
    t.match(response.json(), body, what)
  }
  t.same((await storedManifests(app)).manifests, [], 'no refusal wrote a manifest')
  const list = await get(app, '/manifests?limit=5')
  t.same(list.json(), { manifests: [] })
})

t.test('the admin screen: today\'s labels per carrier with Create manifest, one that needs none said so, the list with its form to print', async (t) => {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const app = await buildAdminApp(t, pluginOptions())
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'webhook-secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 2000 } })
  const first = await labelled(app)
  await labelled(app, 'UPS')
  const admin = adminClient(app, 'admin')
  const page = await admin.get('/manifests')
  t.equal(page.statusCode, 200, page.body.slice(0, 300))
  t.match(page.body, /<a href="\/shipments\/admin\/manifests"[^>]*>Manifests<\/a>/, "in the navigation")
  t.match(page.body, /<tr data-carrier="USPS"><td>USPS<\/td><td>Warehouse, 417 Montgomery Street, San Francisco, CA, 94104, US<\/td><td>1<\/td>[\s\S]*?Create manifest/)
  t.match(page.body, /<tr data-carrier="UPS">[\s\S]*?UPS labels need no manifest: the integration easypost makes manifests for USPS only\./)
  t.match(page.body, /No manifests yet\./)
  const editor = await adminClient(app, 'editor').get('/manifests')
  t.equal(editor.statusCode, 403, 'who may not buy labels may not make manifests')
  t.notMatch((await adminClient(app, 'editor').get('/boxes')).body, /\/manifests"/, "nor sees the screen's link")

  const created = await admin.post('/manifests', { integration: 'easypost', carrier: 'USPS' })
  t.equal(created.statusCode, 303, created.body.slice(0, 300))
  t.equal(created.headers.location, '/shipments/admin/manifests?notice=manifestCreated')
  const [manifest] = await app.shipments.manifests.list()
  t.match(manifest, { state: 'created', parcelCount: 1, userId: 'admin' })
  t.same((await app.shipments.manifests.get(manifest!.id))!.labels.map((label) => label.parcelId), [first.parcelId])
  const after = await admin.get('/manifests?notice=manifestCreated')
  t.match(after.body, /Manifest created: print its form below\./)
  t.match(after.body, new RegExp(`<tr data-manifest="${manifest!.id}">[\\s\\S]*?data-state="created"[\\s\\S]*?<a href="/shipments/admin/manifests/${manifest!.id}/form">Print form ${manifest!.id}</a>`))
  const form = await admin.get(`/manifests/${manifest!.id}/form`)
  t.equal(form.statusCode, 200)
  t.equal(form.headers['content-type'], 'application/pdf')

  // Nothing left: the refusal shows at the top of the page, nothing is made.
  const again = await admin.post('/manifests', { integration: 'easypost', carrier: 'USPS' })
  t.equal(again.statusCode, 422)
  t.match(again.body, /There is a problem[\s\S]*?carrier: No USPS labels bought through easypost on/)
  const forged = await admin.post('/manifests', { integration: 'easypost', carrier: 'USPS', _csrf: 'forged' })
  t.equal(forged.statusCode, 403, 'the CSRF token is checked')
  t.equal((await app.shipments.manifests.list()).length, 1)
})

t.test("a day's first operation id is found by halving the ids, gaps included, one key lookup a step", async (t) => {
  const rows = [
    { id: 3, at: 100 },
    { id: 4, at: 150 },
    { id: 9, at: 200 },
    { id: 10, at: 200 },
    { id: 17, at: 300 },
    { id: 40, at: 420 },
  ]
  let probes = 0
  const probe = async (id: number) => {
    probes++
    const row = rows.find((each) => each.id >= id)
    return row && { id: row.id, createdAt: new Date(row.at) }
  }
  const bounds = { min: 3, max: 40 }
  const times = [0, 99, 100, 101, 150, 199, 200, 201, 300, 419, 420, 421]
  for (const at of times) {
    const from = await firstOperationIdFrom(probe, bounds, new Date(at))
    // The id bound splits the operations exactly: from it on, those begun at or after the time.
    t.same(rows.filter((row) => row.id >= from).map((row) => row.id), rows.filter((row) => row.at >= at).map((row) => row.id), `from ${at}: id ${from}`)
  }
  t.ok(probes <= times.length * 7, `${probes} probes for ${times.length} searches over 38 ids`)
})
