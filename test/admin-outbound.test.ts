// The admin pages for the outbound direction: an integration's outbound status map and pushOn, and the
// outbound webhook subscriptions with their deliveries. Status, page content, stored effect, permission
// and CSRF refusals, as test/admin.test.ts does for the other pages.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { eq } from 'drizzle-orm'
import { defineProvider } from '../src/index.js'
import { tables } from './fixtures/database.js'
import { ADMIN, adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'

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
  await app.shipments.integrations.create({ name: 'Hook', handle: 'hook', providerId: 'signed-webhook', settings: { secret: 'whsec_c2VjcmV0' } })
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
