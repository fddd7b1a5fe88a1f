// The built-in AfterShip provider: tracking_update webhooks signed as AfterShip signs them (its
// documented example included), matching by tracking number and courier slug, dedupe and order, the
// default tag map, the connection check against a local fake of AfterShip's API.
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { Type } from '@sinclair/typebox'
import { AFTERSHIP_STATUS_MAP, defineProvider } from '../src/index.js'
import { buildTestApp, gatewayRefusalCode, historyRows, shipmentRow } from './fixtures/app.js'
import { adminClient, buildAdminApp } from './fixtures/admin.js'
import { testDatabase } from './fixtures/database.js'
import { fakeService, ledger, trackedShipment } from './fixtures/tracking.js'

const URL = '/actions/shipments/gateway/handle?integration=aftership'
const SECRET = 'aftership-webhook-secret-5d1f0c'
const API_KEY = 'asat_test_api_key_0123456789'
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const NOW_SECONDS = NOW / 1000
const DOCUMENTED_UPDATE = readFileSync(new globalThis.URL('./fixtures/tracking/aftership-tracking-update.json', import.meta.url), 'utf8')

/** aftership-hmac-sha256 as AfterShip computes it: base64 HMAC-SHA256 of the body with the webhook secret. */
const afterShipSignature = (secret: string, raw: string) => createHmac('sha256', secret).update(raw, 'utf8').digest('base64')

let events = 0

function trackingUpdate(overrides: { eventId?: string; event?: string; ts?: unknown; msg?: Record<string, unknown> } = {}) {
  return {
    event_id: overrides.eventId ?? `0b3f7c2e-0000-4000-8000-${String(++events).padStart(12, '0')}`,
    event: overrides.event ?? 'tracking_update',
    is_tracking_first_tag: true,
    msg: {
      id: 'as_tracking_1',
      tracking_number: '1Z999AA10123456784',
      slug: 'ups',
      tag: 'InTransit',
      subtag: 'InTransit_001',
      courier_tracking_link: 'https://www.ups.com/track?tracknum=1Z999AA10123456784',
      checkpoints: [],
      ...overrides.msg,
    },
    ts: 'ts' in overrides ? overrides.ts : NOW_SECONDS - 60,
  }
}

async function setup(t: Test, settings: Record<string, unknown> = {}, logLines?: string[]) {
  const app = await buildTestApp(t, { clock: () => NOW }, await testDatabase(t, 'aftership'), logLines)
  await app.shipments.integrations.create({ name: 'AfterShip', handle: 'aftership', providerId: 'aftership', settings: { webhookSecret: SECRET, ...settings } })
  const send = (body: unknown, signature?: string | null) => {
    const raw = typeof body === 'string' ? body : JSON.stringify(body)
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (signature !== null) headers['aftership-hmac-sha256'] = signature ?? afterShipSignature(SECRET, raw)
    return app.inject({ method: 'POST', url: URL, headers, payload: raw })
  }
  return { app, send }
}

t.test("AfterShip's documented tracking_update moves the shipment with its tracking number and slug, once", async (t) => {
  const logLines: string[] = []
  const { app, send } = await setup(t, {}, logLines)
  t.same({ ...(await app.shipments.integrations.get('aftership'))!.statusMap }, AFTERSHIP_STATUS_MAP, 'a new integration has the default tag map')
  const id = await trackedShipment(app, '9361289676091361892011', 'USPS')

  const response = await send(DOCUMENTED_UPDATE)
  t.equal(response.statusCode, 200)
  const shipment = await app.shipments.shipments.get(id)
  t.same(response.json(), { success: true, applied: true, deliveryId: '3f645f5e-530b-4062-8695-db6a64420af8', shipment: { id, reference: shipment!.reference, status: 'shipped' } })
  t.equal((await shipmentRow(app, id)).status, 'shipped')
  t.match((await historyRows(app, id)).at(-1), { fromStatus: 'new', toStatus: 'shipped', sourceIntegration: 'aftership', sourceExternalCode: 'Delivered', userId: null })
  t.same(await ledger(app, 'aftership'), [{ deliveryId: '3f645f5e-530b-4062-8695-db6a64420af8', outcome: {} }])
  t.match(await app.shipments.integrations.externalReferences(id), [
    { integrationHandle: 'aftership', externalId: 'grhrexm6t3hiwkjwq37jd003', externalUrl: 'https://tools.usps.com/go/TrackConfirmAction?tLabels=9361289676091361892011' },
  ])

  const repeat = await send(DOCUMENTED_UPDATE)
  t.equal(repeat.statusCode, 200, 'a redelivery is acknowledged, so AfterShip stops retrying')
  t.same(repeat.json(), { success: true, applied: false, reason: 'duplicate', deliveryId: '3f645f5e-530b-4062-8695-db6a64420af8' })
  t.equal((await historyRows(app, id)).length, 2)
  t.notMatch(logLines.join('\n'), SECRET, 'the webhook secret is never logged')
})

t.test('forged, unsigned and malformed webhooks are refused with 400 and change nothing', async (t) => {
  const logLines: string[] = []
  const { app, send } = await setup(t, {}, logLines)
  const id = await trackedShipment(app, '1Z999AA10123456784', 'UPS')
  const before = await shipmentRow(app, id)
  const body = JSON.stringify(trackingUpdate())
  const hex = createHmac('sha256', SECRET).update(body).digest('hex')
  const cases: Array<[string, unknown, string | null | undefined, string]> = [
    ['no signature', body, null, 'Missing aftership-hmac-sha256 header.'],
    ['another secret', body, afterShipSignature('another-secret', body), 'Webhook signature mismatch.'],
    ['hex instead of base64', body, hex, 'Webhook signature mismatch.'],
    ['a body changed after signing', body.replace('InTransit"', 'Delivered"'), afterShipSignature(SECRET, body), 'Webhook signature mismatch.'],
    ['not JSON', '[', undefined, 'Invalid webhook payload: the body is not JSON.'],
    ['an array', '[]', undefined, 'Invalid webhook payload: the body must be a JSON object.'],
    ['no event id', { ...trackingUpdate(), event_id: undefined }, undefined, 'Invalid webhook payload: event_id is required.'],
    ['no tracking', { ...trackingUpdate(), msg: [] }, undefined, 'Invalid webhook payload: msg must be an object.'],
    ['no tag', trackingUpdate({ msg: { tag: '' } }), undefined, 'Invalid webhook payload: msg.tag is required.'],
    ['no tracking number', trackingUpdate({ msg: { tracking_number: undefined } }), undefined, 'Invalid webhook payload: msg.tracking_number is required.'],
    ['a date for ts', trackingUpdate({ ts: '2026-11-22T12:00:00Z' }), undefined, 'Invalid webhook payload: ts must be a Unix time in seconds.'],
    ['milliseconds for ts', trackingUpdate({ ts: NOW }), undefined, 'Invalid webhook payload: ts must be a Unix time in seconds.'],
    ['an hour ahead', trackingUpdate({ ts: NOW_SECONDS + 3600 }), undefined, 'Invalid webhook payload: occurredAt: Occurred At must be a date at most 5 minutes in the future.'],
  ]
  for (const [name, payload, signature, message] of cases) {
    const response = await send(payload, signature)
    t.equal(response.statusCode, 400, name)
    t.same(response.json(), { name: 'Bad Request', message, code: 0, status: 400, errorCode: gatewayRefusalCode(message) }, name)
  }
  t.same(await shipmentRow(app, id), before, 'nothing changed')
  t.same(await ledger(app, 'aftership'), [], 'no refused webhook is remembered')
  t.match(logLines.join('\n'), /Integration request refused/)
  t.notMatch(logLines.join('\n'), SECRET)
  t.equal((await send(body)).statusCode, 200, 'signed as AfterShip signs it, the same body applies')
})

t.test('an older update changes nothing; Pending and Expired change nothing until the map says so', async (t) => {
  const { app, send } = await setup(t)
  const id = await trackedShipment(app, '1Z999AA10123456784', 'UPS')
  t.match((await send(trackingUpdate({ eventId: 'e-2', ts: NOW_SECONDS - 60, msg: { tag: 'OutForDelivery' } }))).json(), { applied: true, shipment: { id, status: 'shipped' } })
  const older = await send(trackingUpdate({ eventId: 'e-1', ts: NOW_SECONDS - 7200, msg: { tag: 'InfoReceived' } }))
  t.same(older.json(), { success: true, applied: false, reason: 'stale-event', deliveryId: 'e-1', shipment: { id, reference: (await shipmentRow(app, id)).reference, status: 'shipped' } })
  const pending = await send(trackingUpdate({ eventId: 'e-3', msg: { tag: 'Pending' } }))
  t.same(pending.json(), { success: true, applied: false, reason: 'unmapped-status', externalCode: 'Pending', deliveryId: 'e-3' })
  t.same(await ledger(app, 'aftership'), [
    { deliveryId: 'e-1', outcome: { outcome: 'stale' } },
    { deliveryId: 'e-2', outcome: {} },
    { deliveryId: 'e-3', outcome: { outcome: 'unmapped-status', reason: 'Unmapped status Pending' } },
  ])

  await app.shipments.integrations.update('aftership', { statusMap: { ...AFTERSHIP_STATUS_MAP, Expired: 'on_hold' } })
  const expired = await send(trackingUpdate({ eventId: 'e-4', msg: { tag: 'Expired' } }))
  t.match(expired.json(), { applied: true, shipment: { id, status: 'on_hold' } })
  t.match((await historyRows(app, id)).at(-1), { toStatus: 'on_hold', sourceIntegration: 'aftership', sourceExternalCode: 'Expired' })
})

t.test('matching: an unknown number is a 200 without effect; the slug tells shared numbers apart; other events are acknowledged', async (t) => {
  const { app, send } = await setup(t)
  const unmatched = await send(trackingUpdate({ eventId: 'e-none', msg: { tracking_number: 'NOBODY123', id: 'as_none' } }))
  t.equal(unmatched.statusCode, 200)
  t.same(unmatched.json(), { success: true, applied: false, reason: 'unmatched', trackingNumber: 'NOBODY123', deliveryId: 'e-none' })
  t.match(await app.shipments.integrations.recentDeliveries('aftership'), [{ deliveryId: 'e-none', outcome: 'unmatched' }])

  const dhl = await trackedShipment(app, 'JD014600003828', 'DHL')
  const royalMail = await trackedShipment(app, 'JD014600003828', 'Royal Mail')
  t.match((await send(trackingUpdate({ msg: { tracking_number: 'JD014600003828', slug: 'royal-mail', tag: 'Delivered' } }))).json(), { applied: true, shipment: { id: royalMail } })
  t.equal((await shipmentRow(app, dhl)).status, 'new')
  const ambiguous = await send(trackingUpdate({ eventId: 'e-amb', msg: { tracking_number: 'JD014600003828', slug: 'dhl-express', id: 'as_amb' } }))
  t.same(ambiguous.json(), { success: true, applied: false, reason: 'ambiguous', trackingNumber: 'JD014600003828', deliveryId: 'e-amb' })

  const edd = await send(trackingUpdate({ eventId: 'e-edd', event: 'edd_revise' }))
  t.equal(edd.statusCode, 200)
  t.same(edd.json(), { success: true, applied: false, reason: 'ignored-event', event: 'edd_revise', deliveryId: 'e-edd' })
  t.notOk((await ledger(app, 'aftership')).some((entry) => entry.deliveryId === 'e-edd'), 'not recorded')
})

t.test('check connection with the API key against the API base; without one, nothing to check', async (t) => {
  const afterShip = await fakeService(t, '/tracking/2024-04', (call) =>
    call.headers['as-api-key'] === API_KEY ? { status: 200, body: { meta: { code: 200 }, data: { couriers: [] } } } : { status: 401, body: { meta: { code: 401, message: 'Invalid API key.' } } },
  )
  const logLines: string[] = []
  const { app } = await setup(t, {}, logLines)
  t.same(await app.shipments.integrations.checkConnection('aftership'), {
    ok: true,
    message: 'No apiKey is set: webhooks need only the webhook secret. Set one to check the connection.',
  })
  await app.shipments.integrations.update('aftership', { settings: { apiKey: API_KEY, apiBaseUrl: afterShip.baseUrl } })
  t.same(await app.shipments.integrations.checkConnection('aftership'), { ok: true, message: 'AfterShip accepted the API key.' })
  t.match(afterShip.calls, [{ method: 'GET', url: '/couriers' }])
  t.match((await app.shipments.integrations.get('aftership'))!.settings, { webhookSecret: '********', apiKey: '********' }, 'both secrets masked')
  await app.shipments.integrations.update('aftership', { settings: { webhookSecret: '********', apiKey: 'asat_wrong' } })
  t.same(await app.shipments.integrations.checkConnection('aftership'), { ok: false, message: 'AfterShip refused the API key (401).' })
  t.notMatch(logLines.join('\n'), API_KEY)
})

t.test('a host provider cannot take a built-in id', async (t) => {
  const impostor = defineProvider({ id: 'aftership', settingsSchema: Type.Object({}), handleGatewayRequest: async () => ({ status: 204 }) })
  await t.rejects(buildTestApp(t, { providers: [impostor] }), { message: /providers\.0.*the provider id "aftership" is already registered/ })
})

t.test('the admin form is generated from the schema and starts from the default tag map', async (t) => {
  const app = await buildAdminApp(t)
  const admin = adminClient(app, 'admin')
  t.match((await admin.get('/integrations')).body, /<option value="aftership">AfterShip tracking<\/option>/)
  const form = await admin.get('/integrations/new?provider=aftership')
  t.equal(form.statusCode, 200)
  t.match(form.body, /type="password"[^>]*name="settings.webhookSecret"|name="settings.webhookSecret"[^>]*type="password"/)
  t.match(form.body, /type="password"[^>]*name="settings.apiKey"|name="settings.apiKey"[^>]*type="password"/)
  t.match(form.body, /name="settings.apiBaseUrl"/)
  for (const code of Object.keys(AFTERSHIP_STATUS_MAP)) t.match(form.body, new RegExp(`name="statusMap.code" value="${code}"`), code)
  const rows = Object.entries(AFTERSHIP_STATUS_MAP).filter(([code]) => code !== 'AttemptFail')
  const created = await admin.post('/integrations', {
    providerId: 'aftership',
    name: 'AfterShip',
    handle: 'aftership',
    enabled: 'true',
    'settings.webhookSecret': 'secret-from-aftership',
    'settings.apiBaseUrl': 'ftp://api.aftership.com',
    'statusMap.code': rows.map(([code]) => code),
    'statusMap.status': rows.map(([, status]) => status),
  })
  t.equal(created.statusCode, 422, 'the API base must be an https URL')
  t.match(created.body, /data-field="settings.apiBaseUrl"/)
  const saved = await admin.post('/integrations', {
    providerId: 'aftership',
    name: 'AfterShip',
    handle: 'aftership',
    enabled: 'true',
    'settings.webhookSecret': 'secret-from-aftership',
    'statusMap.code': rows.map(([code]) => code),
    'statusMap.status': rows.map(([, status]) => status),
  })
  t.equal(saved.statusCode, 303)
  const { AttemptFail: _removed, ...edited } = AFTERSHIP_STATUS_MAP
  t.same({ ...(await app.shipments.integrations.get('aftership'))!.statusMap }, edited, 'a row the admin removed stays removed')
  t.notMatch((await admin.get('/integrations/aftership')).body, /secret-from-aftership/)
})
