// The admin pages for the outbound direction: an integration's outbound status map and pushOn, and the
// outbound webhook subscriptions with their deliveries. Status, page content, stored effect, permission
// and CSRF refusals, as test/admin.test.ts does for the other pages.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { eq } from 'drizzle-orm'
import { defineProvider, WEBHOOK_EVENT_NAMES } from '../src/index.js'
import { as, orderWithShipments } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { ADMIN, adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'
import { eventually } from './fixtures/outbox.js'

const XSS = '<script>alert(1)</script>'

/** A provider that pushes but cannot cancel: pushOn "cancelled" is refused by the service. */
const warehouse = defineProvider({
  id: 'warehouse',
  name: 'Warehouse',
  settingsSchema: Type.Object({}),
  handleGatewayRequest: async () => ({ status: 204 }),
  pushShipment: async () => undefined,
})

const integrationForm = (extra: Record<string, string | string[]> = {}) => ({
  name: 'Warehouse',
  handle: 'wh',
  enabled: 'true',
  ...extra,
})

t.test('integrations: the outbound status map and pushOn are edited, saved through the service and shown', async (t) => {
  const app = await buildAdminApp(t, { providers: [warehouse] })
  const admin = adminClient(app, 'admin')
  const form = await admin.get('/integrations/new?provider=warehouse')
  t.equal(form.statusCode, 200)
  for (const status of ['new', 'in_progress', 'on_hold', 'fulfilled', 'shipped', 'cancelled']) {
    t.match(form.body, new RegExp(`<input type="text" id="input-outboundStatusMap.${status}" name="outboundStatusMap.${status}" value=""`))
    t.match(form.body, new RegExp(`<input type="checkbox" id="input-pushOn-${status}" name="pushOn" value="${status}"`))
  }
  t.notMatch(form.body, /name="pushOn" value="[a-z_]+"[^>]* checked/, 'nothing pushes by default')

  const { db, schema } = tables(app)
  const stored = async () => (await db.select().from(schema.integrations).where(eq(schema.integrations.handle, 'wh')))[0]

  // Refused by the service: the message sits beside the pushOn field, the form keeps what was typed.
  const cannotCancel = await admin.post('/integrations', {
    providerId: 'warehouse',
    ...integrationForm({ 'outboundStatusMap.shipped': 'SHIPPED', pushOn: ['shipped', 'cancelled'] }),
  })
  t.equal(cannotCancel.statusCode, 422)
  t.match(fieldMarkup(cannotCancel.body, 'pushOn'), /class="field-error"[^>]*>the provider &quot;warehouse&quot; has no cancelShipment\(\)/)
  t.match(cannotCancel.body, /name="outboundStatusMap.shipped" value="SHIPPED"/)
  t.match(cannotCancel.body, /name="pushOn" value="shipped"[^>]* checked/)
  t.match(cannotCancel.body, /name="pushOn" value="cancelled"[^>]* checked/)
  t.same(await app.shipments.integrations.list(), [], 'nothing was created')

  const tooLong = await admin.post('/integrations', { providerId: 'warehouse', ...integrationForm({ 'outboundStatusMap.on_hold': 'x'.repeat(300) }) })
  t.equal(tooLong.statusCode, 422)
  t.match(fieldMarkup(tooLong.body, 'outboundStatusMap.on_hold'), /class="field-error" id="error-outboundStatusMap.on_hold"/)
  t.match(fieldMarkup(tooLong.body, 'outboundStatusMap.on_hold'), /aria-invalid="true"/)
  t.same(await app.shipments.integrations.list(), [], 'nothing was created')

  const created = await admin.post('/integrations', {
    providerId: 'warehouse',
    ...integrationForm({ 'outboundStatusMap.shipped': ' SHIPPED ', 'outboundStatusMap.on_hold': 'HOLD', 'outboundStatusMap.new': '', pushOn: ['shipped', 'on_hold'] }),
  })
  t.equal(created.statusCode, 303)
  t.equal(created.headers.location, `${ADMIN}/integrations/wh?notice=created`)
  let row = await stored()
  t.same(row.outboundStatusMap, { on_hold: 'HOLD', shipped: 'SHIPPED' }, 'blank inputs store no code; codes are trimmed')
  t.same([...row.pushOn].sort(), ['on_hold', 'shipped'])

  const page = await admin.get('/integrations/wh')
  t.equal(page.statusCode, 200)
  t.match(page.body, /name="outboundStatusMap.shipped" value="SHIPPED"/)
  t.match(page.body, /name="outboundStatusMap.on_hold" value="HOLD"/)
  t.match(page.body, /name="outboundStatusMap.new" value=""/)
  t.match(page.body, /name="pushOn" value="shipped"[^>]* checked/)
  t.notMatch(page.body, /name="pushOn" value="new"[^>]* checked/)

  // Edit: a code cleared and a box unchecked are removed; a refusal changes nothing.
  const refused = await admin.post('/integrations/wh', integrationForm({ 'outboundStatusMap.shipped': 'SHIPPED', pushOn: ['cancelled'] }))
  t.equal(refused.statusCode, 422)
  t.match(fieldMarkup(refused.body, 'pushOn'), /has no cancelShipment\(\)/)
  const unknownStatus = await admin.post('/integrations/wh', integrationForm({ pushOn: ['lost'] }))
  t.equal(unknownStatus.statusCode, 422)
  t.match(fieldMarkup(unknownStatus.body, 'pushOn'), /&quot;lost&quot; is not a shipment status/)
  row = await stored()
  t.same(row.outboundStatusMap, { on_hold: 'HOLD', shipped: 'SHIPPED' }, 'the refusals changed nothing')
  t.same([...row.pushOn].sort(), ['on_hold', 'shipped'])

  const saved = await admin.post('/integrations/wh', integrationForm({ 'outboundStatusMap.shipped': 'DISPATCHED', 'outboundStatusMap.on_hold': '', pushOn: 'shipped' }))
  t.equal(saved.statusCode, 303)
  t.equal(saved.headers.location, `${ADMIN}/integrations/wh?notice=saved`)
  row = await stored()
  t.same(row.outboundStatusMap, { shipped: 'DISPATCHED' })
  t.same(row.pushOn, ['shipped'])

  // A provider that cannot push: the page says so, and a pushOn is refused beside the field.
  await app.shipments.integrations.create({ name: 'Hook', handle: 'hook', providerId: 'signed-webhook', settings: { secret: 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=' } })
  const hook = await admin.get('/integrations/hook')
  t.match(hook.body, /This provider can neither push nor cancel shipments\./)
  const noPush = await admin.post('/integrations/hook', { name: 'Hook', handle: 'hook', enabled: 'true', 'settings.secret': '********', pushOn: 'shipped' })
  t.equal(noPush.statusCode, 422)
  t.match(fieldMarkup(noPush.body, 'pushOn'), /has no pushShipment\(\)/)
  t.same((await app.shipments.integrations.get('hook'))!.pushOn, [])

  // Escaped: a stored code of <script> shows as text.
  await app.shipments.integrations.update('wh', { outboundStatusMap: { shipped: XSS } })
  const escaped = await admin.get('/integrations/wh')
  t.notMatch(escaped.body, /<script>alert/)
  t.match(escaped.body, /value="&lt;script&gt;alert\(1\)&lt;\/script&gt;"/)
})

t.test('integrations: outbound edits need the permission and the CSRF token', async (t) => {
  const app = await buildAdminApp(t, { providers: [warehouse] })
  await app.shipments.integrations.create({ name: 'Warehouse', handle: 'wh', providerId: 'warehouse', outboundStatusMap: { shipped: 'S' }, pushOn: ['shipped'] })
  const viewer = adminClient(app, 'viewer')
  await viewer.get('/shipments')
  const forbidden = await viewer.post('/integrations/wh', integrationForm({ pushOn: [] }))
  t.equal(forbidden.statusCode, 403)
  t.match(forbidden.body, /shipments-manageIntegrations/)
  const admin = adminClient(app, 'admin')
  await admin.get('/integrations/wh')
  const noToken = await admin.post('/integrations/wh', integrationForm({ pushOn: [] }), { withToken: false })
  t.equal(noToken.statusCode, 403)
  t.match(noToken.body, /This form has expired/)
  const integration = (await app.shipments.integrations.get('wh'))!
  t.same(integration.pushOn, ['shipped'])
  t.same(integration.outboundStatusMap, { shipped: 'S' })
})

/**
 * A subscription whose deliveries fail at once, with a message, without a connection being made: one on
 * a private address, stored as a row from before such addresses were refused at create.
 */
async function failingSubscription(app: Awaited<ReturnType<typeof buildAdminApp>>, url = 'http://10.1.2.3/hooks') {
  const subscription = await app.shipments.webhooks.create({ url: 'https://93.184.216.34/hooks', events: ['shipmentCreated'] })
  const { db, schema } = tables(app)
  await db.update(schema.webhookSubscriptions).set({ url }).where(eq(schema.webhookSubscriptions.id, subscription.id))
  return { ...subscription, url }
}

t.test('webhooks: list, create with the secret shown once, refusals beside the field, enable, disable, delete', async (t) => {
  const app = await buildAdminApp(t)
  const admin = adminClient(app, 'admin')
  const { db, schema } = tables(app)
  const rows = () => db.select().from(schema.webhookSubscriptions)

  const empty = await admin.get('/webhooks')
  t.equal(empty.statusCode, 200)
  t.match(empty.body, /No webhook subscriptions yet\./)
  t.match(empty.body, /<a href="\/shipments\/admin\/webhooks" aria-current="page">Webhooks<\/a>/, 'linked in the navigation')
  for (const name of ['*', ...WEBHOOK_EVENT_NAMES]) t.ok(empty.body.includes(`<input type="checkbox" name="events" value="${name}">`), name)
  t.match(empty.body, /name="_csrf" value="[^"]+"/)

  const badUrl = await admin.post('/webhooks', { url: 'ftp://example.com/x', events: 'shipmentCreated', description: 'Kept' })
  t.equal(badUrl.statusCode, 422)
  t.match(fieldMarkup(badUrl.body, 'url'), /class="field-error"[^>]*>must be an absolute http or https URL/)
  t.match(badUrl.body, /name="url" value="ftp:\/\/example.com\/x"/, 'what was typed is kept')
  t.match(badUrl.body, /name="events" value="shipmentCreated" checked/)
  t.match(badUrl.body, /name="description" value="Kept"/)
  const noEvents = await admin.post('/webhooks', { url: 'https://example.com/hooks' })
  t.equal(noEvents.statusCode, 422)
  t.match(fieldMarkup(noEvents.body, 'events'), /class="field-error"[^>]*>name at least one event, or &quot;\*&quot;/)
  const unknownEvent = await admin.post('/webhooks', { url: 'https://example.com/hooks', events: ['shipmentCreated', 'bogus'] })
  t.equal(unknownEvent.statusCode, 422)
  t.match(fieldMarkup(unknownEvent.body, 'events'), /&quot;bogus&quot; is not an event/)
  t.same(await rows(), [], 'nothing was stored')

  const created = await admin.post('/webhooks', { url: ' https://example.com/hooks?a=1&b=2 ', events: ['shipmentCreated', 'shipmentStatusChanged'], description: XSS })
  t.equal(created.statusCode, 201)
  t.equal(created.headers['cache-control'], 'no-store')
  const [row] = await rows()
  t.equal(row.url, 'https://example.com/hooks?a=1&b=2')
  t.same(row.events, ['shipmentCreated', 'shipmentStatusChanged'])
  t.equal(row.description, XSS)
  t.equal(row.enabled, true)
  const shown = /data-webhook-secret>([^<]+)<\/code>/.exec(created.body)
  t.equal(shown?.[1], row.secret, 'the new secret is shown')
  t.match(row.secret, /^whsec_/)
  t.notMatch(created.body, /<script>alert/, 'the description is escaped')
  t.match(created.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/)

  const list = await admin.get('/webhooks')
  t.equal(list.statusCode, 200)
  t.notOk(list.body.includes(row.secret), 'the secret is never shown again')
  t.match(list.body, new RegExp(`<tr data-webhook="${row.id}"><td><a href="/shipments/admin/webhooks/${row.id}">https://example.com/hooks\\?a=1&amp;b=2</a>`))
  t.match(list.body, /<code>shipmentCreated<\/code>, <code>shipmentStatusChanged<\/code>/)
  t.match(list.body, /badge-ok">Enabled<\/span><\/td><td>0<\/td><td><\/td>/)

  const all = await admin.post('/webhooks', { url: 'https://example.com/all', events: '*' })
  t.equal(all.statusCode, 201)
  t.same((await rows()).find((entry) => entry.url === 'https://example.com/all')?.events, ['*'])

  const disabled = await admin.post(`/webhooks/${row.id}/disable`, {})
  t.equal(disabled.statusCode, 303)
  t.equal(disabled.headers.location, `${ADMIN}/webhooks/${row.id}?notice=webhookDisabled`)
  t.equal((await app.shipments.webhooks.get(row.id))!.enabled, false)
  const page = await admin.get(`/webhooks/${row.id}?notice=webhookDisabled`)
  t.match(page.body, /Subscription disabled\./)
  t.match(page.body, /badge-muted">Disabled/)
  t.match(page.body, new RegExp(`action="/shipments/admin/webhooks/${row.id}/enable"`))
  const enabled = await admin.post(`/webhooks/${row.id}/enable`, {})
  t.equal(enabled.headers.location, `${ADMIN}/webhooks/${row.id}?notice=webhookEnabled`)
  t.equal((await app.shipments.webhooks.get(row.id))!.enabled, true)

  const deleted = await admin.post(`/webhooks/${row.id}/delete`, {})
  t.equal(deleted.statusCode, 303)
  t.equal(deleted.headers.location, `${ADMIN}/webhooks?notice=webhookDeleted`)
  t.equal(await app.shipments.webhooks.get(row.id), null)
  t.match((await admin.get('/webhooks?notice=webhookDeleted')).body, /Subscription deleted\./)
  t.equal((await admin.get(`/webhooks/${row.id}`)).statusCode, 404)
  t.equal((await admin.post(`/webhooks/${row.id}/enable`, {})).statusCode, 404)
  t.equal((await admin.get('/webhooks/abc')).statusCode, 404)
})

t.test('webhooks: a subscription\'s recent deliveries with their state and error, and redelivery', async (t) => {
  const app = await buildAdminApp(t, { outbox: { pollIntervalMs: 20 } })
  const subscription = await failingSubscription(app)
  const other = await failingSubscription(app, 'http://10.9.9.9/')
  const admin = adminClient(app, 'admin')
  t.match((await admin.get(`/webhooks/${subscription.id}`)).body, /No deliveries yet\./)

  await orderWithShipments(app)
  const failedOf = async (id: number) => (await app.shipments.webhooks.deliveries(id)).some((delivery) => delivery.state === 'failed')
  await eventually(app, () => failedOf(subscription.id))
  await eventually(app, () => failedOf(other.id))
  const [delivery] = await app.shipments.webhooks.deliveries(subscription.id)
  const [otherDelivery] = await app.shipments.webhooks.deliveries(other.id)

  const page = await admin.get(`/webhooks/${subscription.id}`)
  t.equal(page.statusCode, 200)
  const row = new RegExp(`<tr data-delivery="${delivery.deliveryId}">[^]*?</tr>`).exec(page.body)?.[0] ?? ''
  t.match(row, delivery.dateCreated)
  t.match(row, /<code>shipmentCreated<\/code>/)
  t.match(row, /badge-error">failed<\/span>/)
  t.match(row, /<td>1<\/td><td>[^<]*private address[^<]*<\/td>/)
  t.match(row, new RegExp(`<input type="hidden" name="deliveryId" value="${delivery.deliveryId}"><button type="submit">Redeliver</button>`))
  t.notOk(page.body.includes(otherDelivery.deliveryId), 'another subscription\'s deliveries are not listed')
  const list = await admin.get('/webhooks')
  t.match(list.body, new RegExp(`<tr data-webhook="${subscription.id}">[^]*?badge-ok">Enabled</span></td><td>1</td><td></td>`), 'the list shows the failure count')

  // Another subscription's delivery, or an unknown one: nothing is queued.
  const foreign = await admin.post(`/webhooks/${subscription.id}/redeliver`, { deliveryId: otherDelivery.deliveryId })
  t.equal(foreign.statusCode, 404)
  t.equal((await admin.post(`/webhooks/${subscription.id}/redeliver`, { deliveryId: 'no-such-delivery' })).statusCode, 404)
  t.equal((await admin.post(`/webhooks/${subscription.id}/redeliver`, { deliveryId: `no-such-event:webhook:${subscription.id}` })).statusCode, 404)
  t.match(await app.shipments.webhooks.deliveries(other.id), [{ state: 'failed', attempts: 1 }])

  const redelivered = await admin.post(`/webhooks/${subscription.id}/redeliver`, { deliveryId: delivery.deliveryId })
  t.equal(redelivered.statusCode, 303)
  t.equal(redelivered.headers.location, `${ADMIN}/webhooks/${subscription.id}?notice=redelivered`)
  await eventually(app, async () => (await app.shipments.webhooks.deliveries(subscription.id))[0].attemptLog.length === 2)
  t.match(await app.shipments.webhooks.deliveries(subscription.id), [{ deliveryId: delivery.deliveryId, state: 'failed', attempts: 1 }])
  t.equal((await app.shipments.webhooks.deliveries(subscription.id))[0].attemptLog.length, 2, 'it was sent again')
  t.match((await admin.get(`/webhooks/${subscription.id}?notice=redelivered`)).body, /Delivery queued again\./)

  // The newest delivery is listed first.
  await orderWithShipments(app)
  await eventually(app, async () => (await app.shipments.webhooks.deliveries(subscription.id)).filter((entry) => entry.state === 'failed').length === 2)
  const [oldest, newest] = await app.shipments.webhooks.deliveries(subscription.id)
  t.same((await app.shipments.webhooks.deliveries(subscription.id, { newestFirst: true })).map((entry) => entry.deliveryId), [newest.deliveryId, oldest.deliveryId])
  const both = await admin.get(`/webhooks/${subscription.id}`)
  const listed = [...both.body.matchAll(/<tr data-delivery="([^"]+)">/g)].map((match) => match[1])
  t.same(listed, [newest.deliveryId, oldest.deliveryId], 'newest first')
})

t.test('webhooks: every page and action needs shipments-manageIntegrations and the CSRF token; refusals change nothing', async (t) => {
  const app = await buildAdminApp(t, { outbox: { pollIntervalMs: 20 }, webhooks: { disableAfterFailures: 1 } })
  const subscription = await failingSubscription(app)
  await orderWithShipments(app)
  await eventually(app, async () => (await app.shipments.webhooks.deliveries(subscription.id)).some((delivery) => delivery.state === 'failed'))
  const [delivery] = await app.shipments.webhooks.deliveries(subscription.id)
  const { db, schema } = tables(app)

  // A subscription disabled after its failures: the list shows why.
  await eventually(app, async () => !(await app.shipments.webhooks.get(subscription.id))!.enabled)
  const reason = (await app.shipments.webhooks.get(subscription.id))!.disabledReason!
  t.match(reason, /^Disabled after 1 failed attempt/)
  const listed = await adminClient(app, 'admin').get('/webhooks')
  t.match(listed.body, new RegExp(`<tr data-webhook="${subscription.id}">[^]*?badge-muted">Disabled</span></td><td>1</td><td>Disabled after 1 failed attempt`))
  const before = await db.select().from(schema.webhookSubscriptions)

  const editor = adminClient(app, 'editor')
  const shipments = await editor.get('/shipments')
  t.notMatch(shipments.body, /href="\/shipments\/admin\/webhooks"/, 'no webhooks link without the permission')
  for (const url of ['/webhooks', `/webhooks/${subscription.id}`]) {
    const page = await editor.get(url)
    t.equal(page.statusCode, 403, url)
    t.match(page.body, /shipments-manageIntegrations/)
  }
  const posts: Array<[string, Record<string, string>]> = [
    ['/webhooks', { url: 'https://example.com/x', events: 'shipmentCreated' }],
    [`/webhooks/${subscription.id}/disable`, {}],
    [`/webhooks/${subscription.id}/delete`, {}],
    [`/webhooks/${subscription.id}/redeliver`, { deliveryId: delivery.deliveryId }],
  ]
  for (const [url, fields] of posts) t.equal((await editor.post(url, fields)).statusCode, 403, `${url}: no permission`)

  const admin = adminClient(app, 'admin')
  await admin.get('/webhooks')
  for (const [url, fields] of posts) {
    const missing = await admin.post(url, fields, { withToken: false })
    t.equal(missing.statusCode, 403, `${url}: no token`)
    t.match(missing.body, /This form has expired or was not sent from this site/)
    t.equal((await admin.post(url, { ...fields, _csrf: 'forged-token' })).statusCode, 403, `${url}: a forged token`)
  }
  const noCookie = await app.inject({
    method: 'POST',
    url: `${ADMIN}/webhooks/${subscription.id}/delete`,
    headers: { ...as('admin'), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: admin.token }).toString(),
  })
  t.equal(noCookie.statusCode, 403, 'a token without its cookie secret is refused')
  t.same(await db.select().from(schema.webhookSubscriptions), before, 'no subscription was created, changed or deleted')
  t.match(await app.shipments.webhooks.deliveries(subscription.id), [{ state: 'failed', attempts: 1, attemptLog: [{}] }], 'nothing was redelivered')

  // With the token: enabling again starts afresh, as the service does.
  await admin.get(`/webhooks/${subscription.id}`)
  const enabled = await admin.post(`/webhooks/${subscription.id}/enable`, {})
  t.equal(enabled.statusCode, 303)
  t.match(await app.shipments.webhooks.get(subscription.id), { enabled: true, failureCount: 0, disabledReason: null })
  const page = await admin.get(`/webhooks/${subscription.id}?notice=webhookEnabled`)
  t.match(page.body, /notice-ok" role="status">Subscription enabled\./)
  t.notMatch(page.body, /Disabled because/)
  t.match((await admin.get(`/webhooks/${subscription.id}?notice=notRedelivered`)).body, /notice-error" role="alert">Not redelivered: the delivery is still pending\./)
  t.notMatch((await admin.get(`/webhooks/${subscription.id}?notice=${encodeURIComponent(XSS)}`)).body, /<script>alert/, 'no text is taken from the query')
})
