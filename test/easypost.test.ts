// The built-in EasyPost provider: tracker events signed as EasyPost signs them (the documented sample
// included), matching by tracking code, carrier and tracker id, dedupe and order, the default status
// map, pushes that create trackers and the connection check against a local fake of EasyPost's API.
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { EASYPOST_STATUS_MAP } from '../src/index.js'
import { buildTestApp, gatewayRefusalCode, historyRows, orderWithShipments, postUpdate, shipmentRow } from './fixtures/app.js'
import { adminClient, buildAdminApp } from './fixtures/admin.js'
import { testDatabase } from './fixtures/database.js'
import { eventually } from './fixtures/outbox.js'
import { fakeService, ledger, trackedShipment } from './fixtures/tracking.js'

const URL = '/actions/shipments/gateway/handle?integration=easypost'
const SECRET = 'easypost-webhook-secret-ﬁ-№1'
const API_KEY = 'EZTK-test-api-key-0123456789'
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const DOCUMENTED_EVENT = readFileSync(new globalThis.URL('./fixtures/tracking/easypost-tracker-updated.json', import.meta.url), 'utf8')

/** X-Hmac-Signature as EasyPost computes it (its client libraries' validate_webhook, in reverse). */
const easyPostSignature = (secret: string, raw: string) =>
  `hmac-sha256-hex=${createHmac('sha256', Buffer.from(secret.normalize('NFKD'), 'utf8')).update(raw, 'utf8').digest('hex')}`

let events = 0

/** A tracker event of EasyPost's shape. */
function trackerEvent(overrides: { id?: string; description?: string; createdAt?: string; tracker?: Record<string, unknown> } = {}) {
  return {
    id: overrides.id ?? `evt_${++events}`,
    object: 'Event',
    created_at: overrides.createdAt ?? new Date(NOW - 60_000).toISOString(),
    description: overrides.description ?? 'tracker.updated',
    mode: 'test',
    result: { id: 'trk_1', object: 'Tracker', tracking_code: '1Z999AA10123456784', carrier: 'UPS', status: 'in_transit', public_url: 'https://track.easypost.com/trk_1', ...overrides.tracker },
  }
}

async function setup(t: Test, settings: Record<string, unknown> = {}, logLines?: string[]) {
  const app = await buildTestApp(t, { clock: () => NOW, outbox: { pollIntervalMs: 20, retryDelaysMs: [20, 20] } }, await testDatabase(t, 'easypost'), logLines)
  // No status map given: the provider's default one is stored.
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: SECRET, ...settings } })
  const send = (body: unknown, signature?: string | null) => {
    const raw = typeof body === 'string' ? body : JSON.stringify(body)
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (signature !== null) headers['x-hmac-signature'] = signature ?? easyPostSignature(SECRET, raw)
    return app.inject({ method: 'POST', url: URL, headers, payload: raw })
  }
  return { app, send }
}

t.test("EasyPost's documented tracker.updated event moves the shipment with its tracking code, once", async (t) => {
  const { app, send } = await setup(t)
  t.same({ ...(await app.shipments.integrations.get('easypost'))!.statusMap }, EASYPOST_STATUS_MAP, 'a new integration has the default status map')
  const id = await trackedShipment(app, 'EZ4000000004', 'UPS')
  const other = await trackedShipment(app, 'EZ1000000001', 'USPS')

  const response = await send(DOCUMENTED_EVENT)
  t.equal(response.statusCode, 200)
  const shipment = await app.shipments.shipments.get(id)
  t.same(response.json(), { success: true, applied: true, deliveryId: 'evt_qatAiJDM', shipment: { id, reference: shipment!.reference, status: 'shipped' } })
  t.equal((await shipmentRow(app, id)).status, 'shipped')
  t.match((await historyRows(app, id)).at(-1), { fromStatus: 'new', toStatus: 'shipped', sourceIntegration: 'easypost', sourceExternalCode: 'delivered', userId: null })
  t.same(await ledger(app, 'easypost'), [{ deliveryId: 'evt_qatAiJDM', outcome: {} }], 'the event id is in the ledger (applied)')
  t.match(await app.shipments.integrations.externalReferences(id), [
    { integrationHandle: 'easypost', externalId: 'trk_Txyy1vaM', externalUrl: 'https://track.easypost.com/djE7...' },
  ])
  t.equal((await shipmentRow(app, other)).status, 'new', 'the other shipment is untouched')

  // EasyPost retries an event whose answer it did not get: the repeat is acknowledged and changes nothing.
  const repeat = await send(DOCUMENTED_EVENT)
  t.equal(repeat.statusCode, 200)
  t.same(repeat.json(), { success: true, applied: false, reason: 'duplicate', deliveryId: 'evt_qatAiJDM' })
  t.equal((await historyRows(app, id)).length, 2)
  t.equal((await ledger(app, 'easypost')).length, 1)
})

t.test('the webhook secret is NFKD-normalized as EasyPost does; forged, unsigned and malformed events are refused with 400', async (t) => {
  const { app, send } = await setup(t)
  const id = await trackedShipment(app, '1Z999AA10123456784', 'UPS')
  const before = await shipmentRow(app, id)
  const body = JSON.stringify(trackerEvent())
  const rawKeyed = `hmac-sha256-hex=${createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(body).digest('hex')}`
  const cases: Array<[string, unknown, string | null | undefined, string]> = [
    ['no signature', body, null, 'Missing X-Hmac-Signature header.'],
    ['keyed with the secret not normalized', body, rawKeyed, 'Webhook signature mismatch.'],
    ['another secret', body, easyPostSignature('another-secret', body), 'Webhook signature mismatch.'],
    ['the hex alone', body, easyPostSignature(SECRET, body).slice('hmac-sha256-hex='.length), 'Webhook signature mismatch.'],
    ['upper-case hex', body, 'hmac-sha256-hex=' + easyPostSignature(SECRET, body).slice('hmac-sha256-hex='.length).toUpperCase(), 'Webhook signature mismatch.'],
    ['a body changed after signing', body.replace('in_transit', 'delivered'), easyPostSignature(SECRET, body), 'Webhook signature mismatch.'],
    ['not JSON', '{"id": "evt_x",', undefined, 'Invalid webhook payload: the body is not JSON.'],
    ['no event id', { ...trackerEvent(), id: undefined }, undefined, 'Invalid webhook payload: id is required.'],
    ['no tracker', { ...trackerEvent(), result: 'trk_1' }, undefined, 'Invalid webhook payload: result must be an object.'],
    ['no tracking code', trackerEvent({ tracker: { tracking_code: null } }), undefined, 'Invalid webhook payload: result.tracking_code is required.'],
    ['a number for a status', trackerEvent({ tracker: { status: 3 } }), undefined, 'Invalid webhook payload: result.status must be a string.'],
    ['a NUL in the tracking code', trackerEvent({ tracker: { tracking_code: '1Z\u0000' } }), undefined, 'Invalid webhook payload: result.tracking_code contains characters that are not allowed (control characters, bidirectional overrides or unpaired surrogates).'],
    ['no date', trackerEvent({ createdAt: 'last week' }), undefined, 'Invalid webhook payload: created_at is not an ISO-8601 date-time.'],
    ['dated an hour ahead', trackerEvent({ createdAt: new Date(NOW + 3_600_000).toISOString() }), undefined, 'Invalid webhook payload: occurredAt: Occurred At must be a date at most 5 minutes in the future.'],
  ]
  for (const [name, payload, signature, message] of cases) {
    const response = await send(payload, signature)
    t.equal(response.statusCode, 400, name)
    t.same(response.json(), { name: 'Bad Request', message, code: 0, status: 400, errorCode: gatewayRefusalCode(message) }, name)
  }
  t.same(await shipmentRow(app, id), before, 'nothing changed')
  t.same(await ledger(app, 'easypost'), [], 'no refused event is remembered, so a fixed retry applies')

  const signed = await send(body)
  t.equal(signed.statusCode, 200, 'the same event, signed with the normalized secret, applies')
  t.equal((await shipmentRow(app, id)).status, 'shipped')
})

t.test('an older event changes nothing; unmapped statuses are recorded; the status map is the admin’s to edit', async (t) => {
  const { app, send } = await setup(t)
  const id = await trackedShipment(app, '1Z999AA10123456784', 'UPS')
  const later = await send(trackerEvent({ id: 'evt_later', createdAt: new Date(NOW - 60_000).toISOString(), tracker: { status: 'out_for_delivery' } }))
  t.match(later.json(), { applied: true, shipment: { id, status: 'shipped' } })
  const earlier = await send(trackerEvent({ id: 'evt_earlier', createdAt: new Date(NOW - 3_600_000).toISOString(), tracker: { status: 'pre_transit' } }))
  t.equal(earlier.statusCode, 200)
  t.match(earlier.json(), { success: true, applied: false, reason: 'stale-event', deliveryId: 'evt_earlier', shipment: { id, status: 'shipped' } })
  t.equal((await shipmentRow(app, id)).status, 'shipped', 'a late pre_transit does not move the shipment back')

  const unknown = await send(trackerEvent({ id: 'evt_unknown', tracker: { status: 'unknown' } }))
  t.equal(unknown.statusCode, 200)
  t.same(unknown.json(), { success: true, applied: false, reason: 'unmapped-status', externalCode: 'unknown', deliveryId: 'evt_unknown' })
  t.same(await ledger(app, 'easypost'), [
    { deliveryId: 'evt_earlier', outcome: { outcome: 'stale' } },
    { deliveryId: 'evt_later', outcome: {} },
    { deliveryId: 'evt_unknown', outcome: { outcome: 'unmapped-status', reason: 'Unmapped status unknown' } },
  ])

  await app.shipments.integrations.update('easypost', { statusMap: { ...EASYPOST_STATUS_MAP, error: 'on_hold', delivered: 'fulfilled' } })
  const failing = await send(trackerEvent({ id: 'evt_error', tracker: { status: 'error' } }))
  t.match(failing.json(), { applied: true, shipment: { id, status: 'on_hold' } }, 'a code the admin added applies')
  t.match((await historyRows(app, id)).at(-1), { toStatus: 'on_hold', sourceIntegration: 'easypost', sourceExternalCode: 'error' })
})

t.test('matching: an unknown code is a 200 without effect; carriers tell shared numbers apart; the tracker id decides the rest', async (t) => {
  const { app, send } = await setup(t)
  const unmatched = await send(trackerEvent({ id: 'evt_none', tracker: { tracking_code: 'NOBODY123', id: 'trk_none' } }))
  t.equal(unmatched.statusCode, 200, 'EasyPost stops retrying')
  t.same(unmatched.json(), { success: true, applied: false, reason: 'unmatched', trackingNumber: 'NOBODY123', deliveryId: 'evt_none' })
  t.match(await app.shipments.integrations.recentDeliveries('easypost'), [{ deliveryId: 'evt_none', outcome: 'unmatched', reason: 'No shipment has tracking number NOBODY123' }])
  const again = await send(trackerEvent({ id: 'evt_none', tracker: { tracking_code: 'NOBODY123', id: 'trk_none' } }))
  t.same(again.json(), { success: true, applied: false, reason: 'duplicate', deliveryId: 'evt_none' })

  const noCarrier = await trackedShipment(app, 'SHARED-1', null)
  const ups = await trackedShipment(app, 'SHARED-1', 'UPS')
  const fedex = await trackedShipment(app, 'SHARED-1', 'Fed Ex')
  const byCarrier = await send(trackerEvent({ tracker: { tracking_code: 'SHARED-1', carrier: 'FedEx', id: 'trk_shared' } }))
  t.match(byCarrier.json(), { applied: true, shipment: { id: fedex, status: 'shipped' } }, '"FedEx" is "Fed Ex"')
  t.equal((await shipmentRow(app, ups)).status, 'new')
  t.equal((await shipmentRow(app, noCarrier)).status, 'new')

  const first = await trackedShipment(app, 'TWICE-1', 'USPS')
  const second = await trackedShipment(app, 'TWICE-1', 'USPS')
  const ambiguous = await send(trackerEvent({ id: 'evt_twice', tracker: { tracking_code: 'TWICE-1', carrier: 'USPS', id: 'trk_twice' } }))
  t.equal(ambiguous.statusCode, 200)
  t.same(ambiguous.json(), { success: true, applied: false, reason: 'ambiguous', trackingNumber: 'TWICE-1', deliveryId: 'evt_twice' })
  t.equal((await shipmentRow(app, first)).status, 'new')
  t.equal((await shipmentRow(app, second)).status, 'new')
  await app.shipments.integrations.setExternalReference(second, 'easypost', { externalId: 'trk_twice' })
  const named = await send(trackerEvent({ tracker: { tracking_code: 'TWICE-1', carrier: 'USPS', id: 'trk_twice' } }))
  t.match(named.json(), { applied: true, shipment: { id: second } }, 'the shipment whose external reference is the tracker')
  t.equal((await shipmentRow(app, first)).status, 'new')

  // The shop corrected the number after the tracker was made: the tracker id still finds the shipment.
  const renumbered = await trackedShipment(app, 'NEW-NUMBER', 'UPS')
  await app.shipments.integrations.setExternalReference(renumbered, 'easypost', { externalId: 'trk_old' })
  const byTracker = await send(trackerEvent({ tracker: { tracking_code: 'OLD-NUMBER', id: 'trk_old', status: 'delivered' } }))
  t.match(byTracker.json(), { applied: true, shipment: { id: renumbered, status: 'shipped' } })
  t.match((await historyRows(app, renumbered)).at(-1), { sourceIntegration: 'easypost', sourceExternalCode: 'delivered' })
  t.match(await app.shipments.integrations.externalReferences(renumbered), [{ externalId: 'trk_old', externalUrl: 'https://track.easypost.com/trk_1' }])
  // Two shipments naming one tracker, neither with its number: nothing to choose between.
  for (const number of ['A-1', 'B-1']) await app.shipments.integrations.setExternalReference(await trackedShipment(app, number, 'UPS'), 'easypost', { externalId: 'trk_both' })
  const both = await send(trackerEvent({ id: 'evt_both', tracker: { tracking_code: 'C-1', id: 'trk_both', public_url: 'not a url' } }))
  t.same(both.json(), { success: true, applied: false, reason: 'ambiguous', trackingNumber: 'C-1', deliveryId: 'evt_both' })
  t.match(await app.shipments.integrations.recentDeliveries('easypost'), [{ deliveryId: 'evt_both', outcome: 'ambiguous', reason: '2 shipments match tracking number C-1' }])
})

t.test('events other than tracker events are acknowledged and not recorded', async (t) => {
  const { app, send } = await setup(t)
  const response = await send({ id: 'evt_batch', object: 'Event', description: 'batch.created', result: { id: 'batch_1', object: 'Batch' } })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { success: true, applied: false, reason: 'ignored-event', event: 'batch.created', deliveryId: 'evt_batch' })
  t.same(await ledger(app, 'easypost'), [])
})

t.test('push: reaching a pushOn status creates an EasyPost tracker for the tracking number; check connection; secrets stay masked and out of the logs', async (t) => {
  let refuse: number | null = null
  const easyPost = await fakeService(t, '/v2', (call) => {
    if (call.headers.authorization !== `Basic ${Buffer.from(`${API_KEY}:`).toString('base64')}`) return { status: 401, body: { error: { code: 'APIKEY.INACTIVE', message: 'Unauthorized' } } }
    if (call.method === 'GET' && call.url === '/trackers?page_size=1') return { status: refuse ?? 200, body: refuse === 502 ? undefined : { trackers: [], has_more: false } }
    if (refuse === 502) return { status: 502, body: '<html>Bad gateway</html>' }
    if (refuse) return { status: refuse, body: { error: { code: 'TRACKER.TRACKING_CODE.INVALID', message: 'Invalid tracking code.' } } }
    const code = (call.body as { tracker: { tracking_code: string } }).tracker.tracking_code
    if (code === 'BARE-1') return { status: 200, body: { object: 'Tracker', id: 'trk\u0000', public_url: 'javascript:alert(1)' } }
    return { status: 201, body: { id: `trk_${code}`, object: 'Tracker', tracking_code: code, status: 'pre_transit', public_url: `https://track.easypost.com/${code}` } }
  })
  process.env.SHIPMENTS_TEST_EASYPOST_KEY = API_KEY
  t.teardown(() => delete process.env.SHIPMENTS_TEST_EASYPOST_KEY)
  const logLines: string[] = []
  const { app, send } = await setup(t, { apiKey: '$SHIPMENTS_TEST_EASYPOST_KEY', apiBaseUrl: easyPost.baseUrl }, logLines)
  await app.shipments.integrations.update('easypost', { pushOn: ['shipped'] })
  t.match((await app.shipments.integrations.get('easypost'))!.settings, { webhookSecret: '********', apiKey: '$SHIPMENTS_TEST_EASYPOST_KEY' }, 'the secret is masked, the reference shown')

  const id = await trackedShipment(app, '9400100000000000000001', 'USPS')
  t.equal((await postUpdate(app, id, { status: 'shipped' })).statusCode, 200)
  // Done as a job too, not only recorded: a push asked for meanwhile would wait behind it.
  await eventually(app, async () => (await app.shipments.outbox.list({ kind: 'job', name: 'integrationPush' })).some((job) => job.state === 'done'))
  t.match(easyPost.calls, [{ method: 'POST', url: '/trackers', body: { tracker: { tracking_code: '9400100000000000000001' } } }])
  t.match(await app.shipments.integrations.externalReferences(id), [
    { integrationHandle: 'easypost', externalId: 'trk_9400100000000000000001', externalUrl: 'https://track.easypost.com/9400100000000000000001', lastPushError: null, pushAttempts: 1 },
  ])
  // The tracker's events then find the shipment, and are not pushed back.
  const event = await send(trackerEvent({ tracker: { tracking_code: '9400100000000000000001', id: 'trk_9400100000000000000001', status: 'delivered' } }))
  t.match(event.json(), { applied: true, shipment: { id, status: 'shipped' } })

  refuse = 422
  const refused = await app.shipments.pushes.push('easypost', id)
  t.same(refused, { state: 'failed', error: 'EasyPost refused to create the tracker (422): Invalid tracking code.', nextAttemptAt: null, attempts: 1 })
  refuse = 503
  const busy = await app.shipments.pushes.push('easypost', id)
  t.match(busy, { state: 'pending', error: 'EasyPost refused to create the tracker (503): Invalid tracking code.', attempts: 1 }, 'a 503 is retried')
  refuse = 502
  const another = await trackedShipment(app, '9400100000000000000002', 'USPS')
  t.match(await app.shipments.pushes.push('easypost', another), { state: 'pending', error: 'EasyPost refused to create the tracker (502).' }, "a proxy's error page")
  t.same(await app.shipments.integrations.checkConnection('easypost'), { ok: false, message: 'EasyPost answered 502.' })
  refuse = null
  const bare = await trackedShipment(app, 'BARE-1', 'UPS')
  t.match(await app.shipments.pushes.push('easypost', bare), { state: 'done', error: null })
  t.match(await app.shipments.integrations.externalReferences(bare), [{ externalId: null, externalUrl: null, lastPushError: null }], 'an id or page not fit to keep is not kept')
  const { shipmentIds: [untracked] } = await orderWithShipments(app)
  t.match(await app.shipments.pushes.push('easypost', untracked), { state: 'failed', error: /has no tracking number to track\.$/ })

  t.same(await app.shipments.integrations.checkConnection('easypost'), { ok: true, message: 'EasyPost accepted the API key.' })
  process.env.SHIPMENTS_TEST_EASYPOST_KEY = 'EZTK-revoked'
  t.same(await app.shipments.integrations.checkConnection('easypost'), { ok: false, message: 'EasyPost refused the API key (401).' })
  process.env.SHIPMENTS_TEST_EASYPOST_KEY = API_KEY

  await send(trackerEvent(), 'hmac-sha256-hex=00')
  const logged = logLines.join('\n')
  t.match(logged, /Integration request refused/)
  t.notMatch(logged, SECRET, 'the webhook secret is never logged')
  t.notMatch(logged, API_KEY, 'the API key is never logged')
  t.notMatch(logged, Buffer.from(`${API_KEY}:`).toString('base64'), 'nor its basic authorization')
})

t.test('check connection: no API key, an unreachable API', async (t) => {
  const { app } = await setup(t)
  t.same(await app.shipments.integrations.checkConnection('easypost'), {
    ok: true,
    message: 'No apiKey is set: events need only the webhook secret. Set one to push and to check the connection.',
  })
  const closed = await fakeService(t, '/v2', () => ({ status: 200 }))
  await closed.close()
  await app.shipments.integrations.update('easypost', { settings: { apiKey: API_KEY, apiBaseUrl: closed.baseUrl } })
  t.match(await app.shipments.integrations.checkConnection('easypost'), { ok: false, message: /^EasyPost could not be reached: ECONNREFUSED\.$/ })
  // fetch refuses some ports outright: the reason is its cause's message.
  await app.shipments.integrations.update('easypost', { settings: { apiKey: API_KEY, apiBaseUrl: 'http://127.0.0.1:1/v2' } })
  t.same(await app.shipments.integrations.checkConnection('easypost'), { ok: false, message: 'EasyPost could not be reached: bad port.' })
  const id = await trackedShipment(app, '1Z999AA10123456784', 'UPS')
  t.match(await app.shipments.pushes.push('easypost', id), { state: 'pending', error: 'EasyPost could not be reached: bad port.' }, 'retried')
  await app.shipments.integrations.update('easypost', { settings: { apiKey: undefined } })
  const keyless = await trackedShipment(app, '1Z999AA10123456785', 'UPS')
  t.match(await app.shipments.pushes.push('easypost', keyless), { state: 'failed', error: 'EasyPost: no apiKey is set, so no tracker can be created.' })
  await t.rejects(app.shipments.integrations.update('easypost', { settings: { apiBaseUrl: 'http://api.easypost.example/v2' } }), /settings\.apiBaseUrl/, 'plain http only on loopback')
})

t.test('the admin form is generated from the schema and starts from the default status map', async (t) => {
  const app = await buildAdminApp(t)
  const admin = adminClient(app, 'admin')
  t.match((await admin.get('/integrations')).body, /<option value="easypost">EasyPost tracking<\/option>/)
  const form = await admin.get('/integrations/new?provider=easypost')
  t.equal(form.statusCode, 200)
  t.match(form.body, /type="password"[^>]*name="settings.webhookSecret"|name="settings.webhookSecret"[^>]*type="password"/)
  t.match(form.body, /type="password"[^>]*name="settings.apiKey"|name="settings.apiKey"[^>]*type="password"/)
  t.match(form.body, /name="settings.apiBaseUrl"/)
  for (const code of Object.keys(EASYPOST_STATUS_MAP)) t.match(form.body, new RegExp(`name="statusMap.code" value="${code}"`), code)

  const rows = Object.entries(EASYPOST_STATUS_MAP)
  const created = await admin.post('/integrations', {
    providerId: 'easypost',
    name: 'EasyPost',
    handle: 'easypost',
    enabled: 'true',
    'settings.webhookSecret': '$EASYPOST_WEBHOOK_SECRET_UNSET_IN_TESTS',
    'statusMap.code': rows.map(([code]) => code),
    'statusMap.status': rows.map(([, status]) => status),
  })
  t.equal(created.statusCode, 422, 'an unset environment reference is refused')
  t.match(created.body, /EASYPOST_WEBHOOK_SECRET_UNSET_IN_TESTS/)
  const saved = await admin.post('/integrations', {
    providerId: 'easypost',
    name: 'EasyPost',
    handle: 'easypost',
    enabled: 'true',
    'settings.webhookSecret': 'whsec-from-easypost',
    'statusMap.code': [...rows.map(([code]) => code), 'unknown'],
    'statusMap.status': [...rows.map(([, status]) => status), 'in_progress'],
  })
  t.equal(saved.statusCode, 303)
  const integration = await app.shipments.integrations.get('easypost')
  t.same({ ...integration!.statusMap }, { ...EASYPOST_STATUS_MAP, unknown: 'in_progress' })
  const edit = await admin.get('/integrations/easypost')
  t.notMatch(edit.body, /whsec-from-easypost/, 'the secret never reaches the page')
})

t.test('tracking numbers match whatever their case, spaces and dashes: an event, the API list and the admin search', async (t) => {
  const { app, send } = await setup(t)
  // Typed by the shop as it reads on the label; the event carries the carrier's form.
  const { shipmentIds: [id] } = await orderWithShipments(app)
  await app.shipments.shipments.update(id, { trackingNumber: '1z 999-aa1 0123 4567 84', carrier: 'UPS' })
  const response = await send(trackerEvent({ id: 'evt_format' }))
  t.equal(response.statusCode, 200)
  t.match(response.json(), { success: true, applied: true, shipment: { id } }, 'the event found the shipment')
  t.equal((await shipmentRow(app, id)).status, 'shipped')

  const listed = await app.inject({ url: '/shipments/api/shipments?trackingNumber=1Z999AA10123456784', headers: { 'x-test-user': 'viewer' } })
  t.same(listed.json<{ shipments: Array<{ id: number }> }>().shipments.map((shipment) => shipment.id), [id], 'the API list by tracking number')
  t.same((await app.shipments.shipments.list({ trackingNumber: '1Z999 AA1-0123456784' })).shipments.map((shipment) => shipment.id), [id], 'the service')
  t.same((await app.shipments.shipments.list({ trackingNumber: '1Z999AA10123456785' })).shipments, [], 'another number finds nothing')
  t.same((await app.shipments.shipments.list({ search: '1Z999AA10123456784' })).shipments.map((shipment) => shipment.id), [id], 'the search box finds it by tracking number too')
})
