// The store admins' pages: every route's status, page content and stored effect; login, permission and
// CSRF refusals; escaping; the activity log the order exchange keeps.
import t from 'tap'
import Fastify from 'fastify'
import { eq } from 'drizzle-orm'
import { ADMIN_CONTENT_SECURITY_POLICY, fastifyShipments, signWebhook, type AdminPage } from '../src/index.js'
import { openDatabase } from '../src/db/open.js'
import { as, historyRows, insertOrder, orderWithShipments, shipmentRow } from './fixtures/app.js'
import { tables, testDatabase } from './fixtures/database.js'
import { basicAuth, buildExchangeApp, EXCHANGE_URL, EXCHANGE_USER, EXCHANGE_PASSWORD, insertExportOrder } from './fixtures/exchange.js'
import { ADMIN, adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'

const XSS = '<script>alert(1)</script>'

t.test('a request without a user is sent to the login URL with the page to return to; nothing changes', async (t) => {
  const app = await buildAdminApp(t, { admin: { loginUrl: '/account/login?next=admin' } })
  const { shipmentIds } = await orderWithShipments(app)
  const page = await app.inject({ url: `${ADMIN}/shipments?status=new` })
  t.equal(page.statusCode, 303)
  t.equal(page.headers.location, `/account/login?next=admin&returnTo=${encodeURIComponent(`${ADMIN}/shipments?status=new`)}`)
  const post = await app.inject({ method: 'POST', url: `${ADMIN}/shipments/${shipmentIds[0]}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'carrier=UPS' })
  t.equal(post.statusCode, 303)
  t.equal(post.headers.location, `/account/login?next=admin&returnTo=${encodeURIComponent(ADMIN)}`)
  t.equal((await shipmentRow(app, shipmentIds[0])).carrier, null, 'the post changed nothing')
})

t.test('pages need their permission, checked on the server for every page and action', async (t) => {
  const app = await buildAdminApp(t)
  const { orderId, shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]

  const nobody = adminClient(app, 'nobody')
  const refused = await nobody.get('/shipments')
  t.equal(refused.statusCode, 403)
  t.match(refused.body, /shipments-viewShipments/)
  t.match(refused.headers['content-type'], /text\/html/)

  const viewer = adminClient(app, 'viewer')
  const list = await viewer.get('/shipments')
  t.equal(list.statusCode, 200)
  t.notMatch(list.body, /id="bulk-status"|>Change status<\/button>/, 'no bulk change without the transition permission')
  t.match(list.body, /name="ids"/, 'but shipments to print can be selected (issue 35: the print buttons need only view)')
  t.notMatch(list.body, /href="\/shipments\/admin\/integrations"/, 'no integrations link without its permission')
  const shipment = await viewer.get(`/shipments/${id}`)
  t.equal(shipment.statusCode, 200)
  t.match(shipment.body, /You may view this shipment, not edit it/)
  t.notMatch(shipment.body, /Change status/)
  const edit = await viewer.post(`/shipments/${id}`, { carrier: 'UPS' })
  t.equal(edit.statusCode, 403)
  t.match(edit.body, /shipments-editShipments/)
  t.equal((await viewer.post(`/shipments/${id}/delete`, {})).statusCode, 403)
  t.equal((await viewer.post(`/orders/${orderId}/shipments`, { count: '2' })).statusCode, 403)
  t.equal((await viewer.get('/integrations')).statusCode, 403)
  t.equal((await viewer.get('/shipstation')).statusCode, 403)

  const editor = adminClient(app, 'editor')
  await editor.get(`/shipments/${id}`)
  const transition = await editor.post(`/shipments/${id}/transition`, { status: 'shipped' })
  t.equal(transition.statusCode, 403)
  t.match(transition.body, /shipments-transitionShipments/)
  t.equal((await editor.post('/shipments/bulk-status', { ids: String(id), status: 'shipped' })).statusCode, 403)

  const row = await shipmentRow(app, id)
  t.equal(row.status, 'new')
  t.equal(row.carrier, null)
  t.equal(row.dateDeleted, null)
  t.equal((await app.shipments.shipments.list({ orderId })).total, 1, 'no shipment was created')
})

t.test('every page has the CSP without inline script, and the package serves its stylesheet and script', async (t) => {
  const app = await buildAdminApp(t)
  const admin = adminClient(app, 'admin')
  const page = await admin.get('/shipments')
  t.equal(page.headers['content-security-policy'], ADMIN_CONTENT_SECURITY_POLICY)
  t.notMatch(ADMIN_CONTENT_SECURITY_POLICY, /unsafe-inline/)
  t.equal(page.headers['x-content-type-options'], 'nosniff')
  t.notMatch(page.body, /<script>|<script [^>]*>[^<]/, 'no inline script')
  t.match(page.body, /<script src="\/shipments\/admin\/assets\/admin.js" defer><\/script>/)
  const css = await app.inject({ url: `${ADMIN}/assets/admin.css` })
  t.equal(css.statusCode, 200)
  t.match(css.headers['content-type'], /text\/css/)
  t.match(css.body, /\.badge-shipped/)
  const js = await app.inject({ url: `${ADMIN}/assets/admin.js` })
  t.equal(js.statusCode, 200)
  t.match(js.headers['content-type'], /text\/javascript/)
  t.equal((await app.inject({ url: `${ADMIN}/assets/other.js` })).statusCode, 404)
  const missing = await admin.get('/no-such-page')
  t.equal(missing.statusCode, 404)
  t.match(missing.body, /No admin page at this address/)
})

t.test('the list filters by status, order and reference, pages, and shows status badges', async (t) => {
  const app = await buildAdminApp(t)
  const first = await orderWithShipments(app, 3)
  const second = await orderWithShipments(app, 1)
  await app.shipments.shipments.update(first.shipmentIds[1], { status: 'on_hold' })
  const admin = adminClient(app, 'admin')

  const all = await admin.get('/shipments')
  t.equal(all.statusCode, 200)
  t.equal(all.body.match(/<tr data-shipment=/g)?.length, 4)
  t.match(all.body, /class="badge badge-on_hold" data-status="on_hold">On hold</)
  t.match(all.body, /class="badge badge-new" data-status="new">New</)

  const held = await admin.get('/shipments?status=on_hold')
  t.equal(held.body.match(/<tr data-shipment=/g)?.length, 1)
  t.match(held.body, new RegExp(`data-shipment="${first.shipmentIds[1]}"`))

  const order = await admin.get(`/shipments?order=${encodeURIComponent((await shipmentRow(app, second.shipmentIds[0])).reference.split('-')[0])}`)
  t.equal(order.body.match(/<tr data-shipment=/g)?.length, 1, 'the order reference finds its shipment')
  const byId = await admin.get(`/shipments?order=${second.orderId}`)
  t.match(byId.body, new RegExp(`data-shipment="${second.shipmentIds[0]}"`))
  const unknownOrder = await admin.get('/shipments?order=NO-SUCH-ORDER')
  t.match(unknownOrder.body, /No order matches “NO-SUCH-ORDER”/)
  t.equal(unknownOrder.body.match(/<tr data-shipment=/g), null)

  const reference = (await shipmentRow(app, first.shipmentIds[2])).reference
  const search = await admin.get(`/shipments?q=${encodeURIComponent(reference.slice(0, -1).toLowerCase())}`)
  t.match(search.body, new RegExp(`data-shipment="${first.shipmentIds[2]}"`))
  const wildcard = await admin.get('/shipments?q=%25')
  t.equal(wildcard.body.match(/<tr data-shipment=/g), null, 'a % is searched for, not a wildcard')

  const bad = await admin.get('/shipments?status=lost')
  t.equal(bad.statusCode, 400)
  t.match(bad.body, /&quot;lost&quot; is not a shipment status/)

  for (let index = 0; index < 50; index++) await app.shipments.shipments.create(second.orderId)
  const pageOne = await admin.get('/shipments')
  t.match(pageOne.body, /Page 1 of 2 · 54 shipments/)
  t.match(pageOne.body, /rel="next"/)
  const pageTwo = await admin.get('/shipments?page=2')
  t.equal(pageTwo.body.match(/<tr data-shipment=/g)?.length, 4)
  t.match(pageTwo.body, /rel="prev"/)
  // Next is a key: the shipments after the last one shown, the same page as by its number.
  const lastShown = [...pageOne.body.matchAll(/<tr data-shipment="(\d+)"/g)].at(-1)![1]
  const next = new RegExp(`<a href="/shipments/admin/shipments\\?page=2&amp;after=${lastShown}" rel="next">Next</a>`)
  t.match(pageOne.body, next, 'the next link names the last shipment shown')
  const byKey = await admin.get(`/shipments?page=2&after=${lastShown}`)
  t.same([...byKey.body.matchAll(/<tr data-shipment="(\d+)"/g)].map((match) => match[1]), [...pageTwo.body.matchAll(/<tr data-shipment="(\d+)"/g)].map((match) => match[1]))
  t.match(byKey.body, /Page 2 of 2 · 54 shipments/)
})

t.test('values are escaped everywhere: a carrier or note of <script> shows as text', async (t) => {
  const app = await buildAdminApp(t)
  const { orderId, shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]
  await app.shipments.shipments.update(id, { carrier: XSS, fulfillmentNotes: `"><img src=x onerror=alert(1)>`, status: 'on_hold', statusMessage: XSS })
  await app.shipments.integrations.create({ name: XSS, handle: 'xss', providerId: 'signed-webhook', settings: { secret: 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=' } })
  await app.shipments.integrations.setExternalReference(id, 'xss', { externalId: XSS, externalUrl: 'https://carrier.example/track?a=1&b=<2>' })
  const admin = adminClient(app, 'admin')
  for (const url of ['/shipments', `/shipments/${id}`, `/orders/${orderId}`, `/orders/${orderId}/panel`, '/integrations', '/integrations/xss']) {
    const page = await admin.get(url)
    t.equal(page.statusCode, 200, url)
    t.notOk(page.body.includes(XSS), `${url}: no raw script`)
    t.notOk(page.body.includes('<img src=x'), `${url}: no raw tag`)
  }
  const shipment = await admin.get(`/shipments/${id}`)
  t.ok(shipment.body.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), 'the value shows as text')
  t.ok(shipment.body.includes('href="https://carrier.example/track?a=1&amp;b=&lt;2&gt;"'), 'a link is escaped too')
})

t.test('a shipment page shows every field, the site timezone, the history and the external references', async (t) => {
  const app = await buildAdminApp(t)
  const { shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]
  await app.shipments.shipments.update(
    id,
    { carrier: 'UPS', trackingUrl: 'ups.com/t/1', dateScheduledShip: { date: '2026-12-01', time: '14:30' }, fields: { packageCount: 2, giftWrapped: true, dimensions: { w: 1 } } },
    { userId: 'admin' },
  )
  await app.shipments.shipments.update(id, { status: 'in_progress', statusMessage: 'Picking started', integrationHandle: 'wms', externalCode: 'PICK' }, { userId: 'admin' })
  await app.shipments.integrations.create({ name: 'Carrier', handle: 'carrier', providerId: 'signed-webhook', settings: { secret: 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=' } })
  await app.shipments.integrations.setExternalReference(id, 'carrier', { externalId: 'C-77', externalUrl: 'javascript:alert(1)' })
  const page = await adminClient(app, 'admin').get(`/shipments/${id}`)
  t.equal(page.statusCode, 200)
  t.match(page.body, /Date Scheduled Ship \(Europe\/Berlin\)/)
  t.match(page.body, /name="dateScheduledShip.date" value="2026-12-01"/)
  t.match(page.body, /name="dateScheduledShip.time" value="14:30"/)
  t.match(page.body, /name="carrier" value="UPS"/)
  t.match(page.body, /name="trackingUrl" value="https:\/\/ups.com\/t\/1"/)
  t.match(page.body, /<option value="true" selected>Yes<\/option>/)
  t.match(page.body, /name="fields.packageCount" value="2"/)
  t.match(page.body, /Picking started/)
  t.match(page.body, /by user admin · via wms · code PICK/)
  t.match(page.body, /<strong>carrier<\/strong>: C-77/, 'a reference whose URL is not http(s) is not a link')
  t.notMatch(page.body, /href="javascript:/)
  const missing = await adminClient(app, 'admin').get('/shipments/999999')
  t.equal(missing.statusCode, 404)
  t.match(missing.body, /Shipment 999999 not found/)
  t.equal((await adminClient(app, 'admin').get('/shipments/abc')).statusCode, 404)
})

t.test('editing saves only what changed, through the service, with the user on record', async (t) => {
  const app = await buildAdminApp(t)
  const { shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]
  await app.shipments.shipments.update(id, { shippingNotes: 'fragile\nthis side up' })
  const admin = adminClient(app, 'admin')
  const page = await admin.get(`/shipments/${id}`)
  const before = await shipmentRow(app, id)
  const form: Record<string, string> = {}
  for (const match of page.body.matchAll(/<(?:input|textarea|select)[^>]*name="([^"]+)"/g)) form[match[1]] = ''
  delete form._csrf
  delete form.status
  delete form.statusMessage
  const saved = await admin.post(`/shipments/${id}`, {
    ...form,
    shippingNotes: 'fragile\r\nthis side up',
    carrier: 'DHL',
    trackingNumber: 'JD0146',
    'dateScheduledShip.date': '2026-12-24',
    'dateScheduledShip.time': '09:15',
    'fields.packageCount': '3',
    'fields.giftWrapped': 'false',
    'fields.dimensions': '{"w": 10, "h": 5}',
    'fields.packedOn': '2026-12-20',
    'fields.warehouse': 'North',
  })
  t.equal(saved.statusCode, 303)
  t.equal(saved.headers.location, `${ADMIN}/shipments/${id}?notice=saved`)
  const row = await shipmentRow(app, id)
  t.equal(row.carrier, 'DHL')
  t.equal(row.trackingNumber, 'JD0146')
  t.equal(row.shippingNotes, 'fragile\nthis side up', 'CRLF from the browser is read as the line break it is')
  t.equal(row.dateScheduledShip?.toISOString(), '2026-12-24T08:15:00.000Z', 'the date is read in the site timezone')
  t.same(row.fields, { packageCount: 3, giftWrapped: false, warehouse: 'North', dimensions: { w: 10, h: 5 }, packedOn: '2026-12-19T23:00:00.000Z' })
  t.ok(row.updatedAt.getTime() >= before.updatedAt.getTime())
  const after = await admin.get(`/shipments/${id}?notice=saved`)
  t.match(after.body, /Saved\./)

  // The same form again changes nothing and says so.
  const again = await admin.post(`/shipments/${id}`, { ...form, carrier: 'DHL', trackingNumber: 'JD0146', shippingNotes: 'fragile\nthis side up', 'dateScheduledShip.date': '2026-12-24', 'dateScheduledShip.time': '09:15', 'fields.packageCount': '3', 'fields.giftWrapped': 'false', 'fields.dimensions': JSON.stringify({ w: 10, h: 5 }, null, 2), 'fields.packedOn': '2026-12-20', 'fields.warehouse': 'North' })
  t.equal(again.headers.location, `${ADMIN}/shipments/${id}?notice=unchanged`)
  t.equal((await shipmentRow(app, id)).updatedAt.getTime(), row.updatedAt.getTime(), 'nothing was written')

  // An emptied field clears the value.
  const cleared = await admin.post(`/shipments/${id}`, { carrier: '' , 'fields.packageCount': '' })
  t.equal(cleared.statusCode, 303)
  const clearedRow = await shipmentRow(app, id)
  t.equal(clearedRow.carrier, null)
  t.notOk('packageCount' in clearedRow.fields)
})

t.test('a 422 shows each message beside the field it names, keeps what was typed, and changes nothing', async (t) => {
  const app = await buildAdminApp(t)
  const { shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]
  const admin = adminClient(app, 'admin')
  await admin.get(`/shipments/${id}`)
  const before = await shipmentRow(app, id)
  const refused = await admin.post(`/shipments/${id}`, { carrier: 'UPS', trackingUrl: 'not a url', 'fields.packageCount': 'three', 'dateScheduledShip.date': '2026-02-30' })
  t.equal(refused.statusCode, 422)
  t.match(fieldMarkup(refused.body, 'trackingUrl'), /class="field-error"[^>]*>Tracking Url is not a valid URL\./)
  t.match(fieldMarkup(refused.body, 'fields.packageCount'), /Package Count must be a number\./)
  t.match(fieldMarkup(refused.body, 'dateScheduledShip.date'), /Date Scheduled Ship is not a valid date\./)
  t.match(fieldMarkup(refused.body, 'trackingUrl'), /aria-invalid="true"/)
  t.match(refused.body, /name="carrier" value="UPS"/, 'what was typed stays in the form')
  t.notMatch(fieldMarkup(refused.body, 'carrier'), /field-error/)
  const json = await admin.post(`/shipments/${id}`, { 'fields.dimensions': '{not json' })
  t.equal(json.statusCode, 422)
  t.match(fieldMarkup(json.body, 'fields.dimensions'), /Dimensions is not valid JSON\./)
  const row = await shipmentRow(app, id)
  t.same(row, before, 'nothing was stored')
  t.equal((await adminClient(app, 'admin').post('/shipments/999999', {})).statusCode, 403, 'no token: refused before anything')
  const unknown = await admin.post('/shipments/999999', { carrier: 'x' })
  t.equal(unknown.statusCode, 404)
})

t.test('a form without its CSRF token, or with another user\'s, is refused and changes nothing', async (t) => {
  const app = await buildAdminApp(t)
  const { shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]
  const admin = adminClient(app, 'admin')
  await admin.get(`/shipments/${id}`)
  const missing = await admin.post(`/shipments/${id}/transition`, { status: 'shipped' }, { withToken: false })
  t.equal(missing.statusCode, 403)
  t.match(missing.body, /This form has expired or was not sent from this site/)
  const wrong = await admin.post(`/shipments/${id}`, { carrier: 'UPS', _csrf: 'forged-token' })
  t.equal(wrong.statusCode, 403)
  const editor = adminClient(app, 'editor')
  await editor.get(`/shipments/${id}`)
  const stolen = await app.inject({
    method: 'POST',
    url: `${ADMIN}/shipments/${id}`,
    headers: { ...as('admin'), cookie: editor.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: editor.token, carrier: 'UPS' }).toString(),
  })
  t.equal(stolen.statusCode, 403, 'a token is bound to its user')
  const noCookie = await app.inject({
    method: 'POST',
    url: `${ADMIN}/shipments/${id}/delete`,
    headers: { ...as('admin'), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: admin.token }).toString(),
  })
  t.equal(noCookie.statusCode, 403, 'a token without its cookie secret is refused')
  const row = await shipmentRow(app, id)
  t.equal(row.status, 'new')
  t.equal(row.carrier, null)
  t.equal(row.dateDeleted, null)
  t.equal((await historyRows(app, id)).length, 1, 'only the creation row')
})

t.test('with csrfSession a token dies with its login session: the same user in a new session is refused, nothing changes', async (t) => {
  const app = await buildAdminApp(t, { admin: { csrfSession: (request) => (request.headers['x-test-session'] as string | undefined) ?? null } })
  const { shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]
  const inSession = (session: string) => ({ ...as('admin'), 'x-test-session': session, 'content-type': 'application/x-www-form-urlencoded' })
  const page = await app.inject({ url: `${ADMIN}/shipments/${id}`, headers: inSession('first') })
  t.equal(page.statusCode, 200)
  const cookie = page.cookies.filter((entry) => entry.name === 'shipments_admin_csrf').map((entry) => `${entry.name}=${entry.value}`).join('')
  const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]
  const post = (session: string, carrier: string) =>
    app.inject({ method: 'POST', url: `${ADMIN}/shipments/${id}`, headers: { ...inSession(session), cookie }, payload: new URLSearchParams({ _csrf: token, carrier }).toString() })

  const later = await post('second', 'DHL')
  t.equal(later.statusCode, 403, "the first session's token in the second session")
  t.match(later.body, /This form has expired or was not sent from this site/)
  t.equal((await shipmentRow(app, id)).carrier, null, 'the refused form changed nothing')
  t.equal((await post('', 'DHL')).statusCode, 403, 'nor without a session')
  const same = await post('first', 'UPS')
  t.equal(same.statusCode, 303, 'the token works in the session it was made in')
  t.equal((await shipmentRow(app, id)).carrier, 'UPS')
})

t.test('the status transition goes through the service: history row with user and message, one per change', async (t) => {
  const app = await buildAdminApp(t)
  const { shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]
  const admin = adminClient(app, 'admin')
  const page = await admin.get(`/shipments/${id}`)
  t.notMatch(page.body.slice(page.body.indexOf('Change status')), /<option value="new"/, 'the current status is not offered')
  const moved = await admin.post(`/shipments/${id}/transition`, { status: 'in_progress', statusMessage: 'Picking <now>' })
  t.equal(moved.statusCode, 303)
  t.equal(moved.headers.location, `${ADMIN}/shipments/${id}?notice=transitioned`)
  t.equal((await shipmentRow(app, id)).status, 'in_progress')
  const history = await historyRows(app, id)
  t.equal(history.length, 2)
  t.match(history[1], { fromStatus: 'new', toStatus: 'in_progress', message: 'Picking <now>', userId: 'admin' })
  const shown = await admin.get(`/shipments/${id}?notice=transitioned`)
  t.match(shown.body, /Status changed\./)
  t.match(shown.body, /Picking &lt;now&gt;/)
  const same = await admin.post(`/shipments/${id}/transition`, { status: 'in_progress' })
  t.equal(same.headers.location, `${ADMIN}/shipments/${id}?notice=unchanged`)
  t.equal((await historyRows(app, id)).length, 2)
  const invalid = await admin.post(`/shipments/${id}/transition`, { status: 'lost' })
  t.equal(invalid.statusCode, 422)
  t.match(fieldMarkup(invalid.body, 'status'), /Target Status Code is invalid\./)
  const empty = await admin.post(`/shipments/${id}/transition`, { status: '' })
  t.equal(empty.statusCode, 422)
  t.match(fieldMarkup(empty.body, 'status'), /Choose the new status\./)
  t.equal((await shipmentRow(app, id)).status, 'in_progress')
})

t.test('the bulk status change reports per shipment what happened', async (t) => {
  const app = await buildAdminApp(t)
  const { shipmentIds } = await orderWithShipments(app, 3)
  await app.shipments.shipments.update(shipmentIds[1], { status: 'fulfilled' })
  const admin = adminClient(app, 'admin')
  await admin.get('/shipments')
  const report = await admin.post('/shipments/bulk-status', { ids: [...shipmentIds.map(String), '999999'], status: 'fulfilled', statusMessage: 'Packed' })
  t.equal(report.statusCode, 200)
  t.match(report.body, /Status change: 3 done, 1 refused\./)
  t.equal(report.body.match(/data-outcome="moved"/g)?.length, 2)
  t.equal(report.body.match(/data-outcome="unchanged"/g)?.length, 1)
  t.match(report.body, /#999999: Shipment 999999 not found\./)
  for (const id of shipmentIds) t.equal((await shipmentRow(app, id)).status, 'fulfilled')
  t.match((await historyRows(app, shipmentIds[0]))[1], { toStatus: 'fulfilled', message: 'Packed', userId: 'admin' })
  t.equal((await historyRows(app, shipmentIds[1])).length, 2, 'the unchanged one got no second row')
  const none = await admin.post('/shipments/bulk-status', { status: 'shipped' })
  t.equal(none.statusCode, 400)
  t.match(none.body, /Select at least one shipment/)
  const noStatus = await admin.post('/shipments/bulk-status', { ids: String(shipmentIds[0]), status: '' })
  t.equal(noStatus.statusCode, 400)
  t.equal((await shipmentRow(app, shipmentIds[0])).status, 'fulfilled')
})

t.test('soft delete and restore', async (t) => {
  const app = await buildAdminApp(t)
  const { shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]
  const admin = adminClient(app, 'admin')
  await admin.get(`/shipments/${id}`)
  const deleted = await admin.post(`/shipments/${id}/delete`, {})
  t.equal(deleted.statusCode, 303)
  t.ok((await shipmentRow(app, id)).dateDeleted)
  const page = await admin.get(`/shipments/${id}?notice=deleted`)
  t.match(page.body, /This shipment was deleted on/)
  t.match(page.body, /\/restore/)
  t.equal((await admin.get('/shipments')).body.match(/<tr data-shipment=/g), null, 'deleted shipments leave the list')
  const restored = await admin.post(`/shipments/${id}/restore`, {})
  t.equal(restored.headers.location, `${ADMIN}/shipments/${id}?notice=restored`)
  t.equal((await shipmentRow(app, id)).dateDeleted, null)
  t.equal((await admin.post('/shipments/999999/delete', {})).statusCode, 404)
})

t.test('the order panel: a page and a fragment, and "create N shipments"', async (t) => {
  const app = await buildAdminApp(t)
  const orderId = await insertOrder(app, { reference: 'ORD-PANEL' })
  const admin = adminClient(app, 'admin')
  const page = await admin.get(`/orders/${orderId}`)
  t.equal(page.statusCode, 200)
  t.match(page.body, /<h1>Order ORD-PANEL<\/h1>/)
  t.match(page.body, /No shipments yet/)
  const fragment = await admin.get(`/orders/${orderId}/panel`)
  t.equal(fragment.statusCode, 200)
  t.match(fragment.headers['content-type'], /text\/html/)
  t.notMatch(fragment.body, /<html|<!DOCTYPE/)
  t.match(fragment.body, /^<section class="shipments-admin shipments-order-panel"/)
  const created = await admin.post(`/orders/${orderId}/shipments`, { count: '2' })
  t.equal(created.statusCode, 303)
  t.equal(created.headers.location, `${ADMIN}/orders/${orderId}?notice=created`)
  const list = await app.shipments.shipments.list({ orderId })
  t.equal(list.total, 2)
  t.match((await historyRows(app, list.shipments[0].id))[0], { toStatus: 'new', userId: 'admin' })
  const after = await admin.get(`/orders/${orderId}/panel`)
  t.equal(after.body.match(/<tr data-shipment=/g)?.length, 2)
  for (const count of ['0', '101', 'two', '']) {
    const refused = await admin.post(`/orders/${orderId}/shipments`, { count })
    t.equal(refused.statusCode, 422, `count ${JSON.stringify(count)}`)
    t.match(fieldMarkup(refused.body, 'count'), /Enter a number of shipments from 1 to 100\./)
  }
  t.equal((await app.shipments.shipments.list({ orderId })).total, 2, 'nothing more was created')
  t.equal((await admin.get('/orders/999999')).statusCode, 404)
  t.equal((await admin.post('/orders/999999/shipments', { count: '1' })).statusCode, 404)
})

t.test('integrations: create from the provider schema, secrets masked and kept, status map, enable and disable', async (t) => {
  const app = await buildAdminApp(t)
  const admin = adminClient(app, 'admin')
  const list = await admin.get('/integrations')
  t.equal(list.statusCode, 200)
  t.match(list.body, /No integrations yet/)
  t.match(list.body, /<option value="signed-webhook"/)
  const form = await admin.get('/integrations/new?provider=signed-webhook')
  t.equal(form.statusCode, 200)
  t.match(form.body, /name="settings.secret"[^>]*|type="password" id="input-settings.secret"/)
  t.match(form.body, /id="input-settings.toleranceSeconds"/)
  t.match(form.body, /<template>/, 'the status map editor has a row template')
  t.equal((await admin.get('/integrations/new?provider=nope')).statusCode, 400)

  const invalid = await admin.post('/integrations', { providerId: 'signed-webhook', name: 'Carrier', handle: 'Not Valid', enabled: 'true', 'settings.secret': 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=' })
  t.equal(invalid.statusCode, 422)
  t.match(fieldMarkup(invalid.body, 'handle'), /lowercase letters, digits/)
  t.match(invalid.body, /name="name" value="Carrier"/)
  const badSetting = await admin.post('/integrations', { providerId: 'signed-webhook', name: 'Carrier', handle: 'carrier', enabled: 'true', 'settings.secret': 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=', 'settings.toleranceSeconds': 'soon' })
  t.equal(badSetting.statusCode, 422)
  t.match(fieldMarkup(badSetting.body, 'settings.toleranceSeconds'), /field-error/)
  t.same(await app.shipments.integrations.list(), [], 'nothing was created')

  const created = await admin.post('/integrations', {
    providerId: 'signed-webhook',
    name: 'Carrier',
    handle: 'carrier',
    enabled: 'true',
    'settings.secret': 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=',
    'settings.toleranceSeconds': '600',
    'statusMap.code': ['in_transit', 'delivered', ''],
    'statusMap.status': ['shipped', 'shipped', ''],
  })
  t.equal(created.statusCode, 303)
  t.equal(created.headers.location, `${ADMIN}/integrations/carrier?notice=created`)
  const { db, schema } = tables(app)
  const [row] = await db.select().from(schema.integrations).where(eq(schema.integrations.handle, 'carrier'))
  t.same(row.settings, { secret: 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=', toleranceSeconds: 600 })
  t.same(row.statusMap, { in_transit: 'shipped', delivered: 'shipped' })

  const edit = await admin.get('/integrations/carrier')
  t.equal(edit.statusCode, 200)
  t.match(edit.body, /value="\*\*\*\*\*\*\*\*"/, 'the secret is masked')
  t.notMatch(edit.body, /YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3Rz/, 'the secret never reaches the page')
  const saved = await admin.post('/integrations/carrier', {
    name: 'Carrier (EU)',
    handle: 'carrier',
    enabled: 'true',
    'settings.secret': '********',
    'settings.toleranceSeconds': '300',
    'statusMap.code': ['in_transit', 'exception'],
    'statusMap.status': ['shipped', 'on_hold'],
  })
  t.equal(saved.statusCode, 303)
  const [updated] = await db.select().from(schema.integrations).where(eq(schema.integrations.handle, 'carrier'))
  t.equal(updated.name, 'Carrier (EU)')
  t.same(updated.settings, { secret: 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=', toleranceSeconds: 300 }, 'the masked secret kept its value')
  t.same(updated.statusMap, { in_transit: 'shipped', exception: 'on_hold' })
  const badMap = await admin.post('/integrations/carrier', { name: 'Carrier', handle: 'carrier', enabled: 'true', 'statusMap.code': ['x'], 'statusMap.status': [''] })
  t.equal(badMap.statusCode, 422)
  t.match(badMap.body, /statusMap.x: &quot;&quot; is not a shipment status/)

  const disabled = await admin.post('/integrations/carrier/disable', {})
  t.equal(disabled.headers.location, `${ADMIN}/integrations/carrier?notice=disabled`)
  t.equal((await db.select().from(schema.integrations).where(eq(schema.integrations.handle, 'carrier')))[0].enabled, 'false')
  t.match((await admin.get('/integrations')).body, /badge-muted">Disabled/)
  await admin.post('/integrations/carrier/enable', {})
  t.equal((await db.select().from(schema.integrations).where(eq(schema.integrations.handle, 'carrier')))[0].enabled, 'true')
  t.equal((await admin.get('/integrations/nope')).statusCode, 404)
  t.equal((await admin.post('/integrations/nope/disable', {})).statusCode, 404)
})

t.test('integrations: environment references shown as such, the connection check, recent deliveries', async (t) => {
  process.env.ADMIN_TEST_SECRET = 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE='
  const app = await buildAdminApp(t)
  await app.shipments.integrations.create({ name: 'Env', handle: 'env', providerId: 'signed-webhook', settings: { secret: '$ADMIN_TEST_SECRET' }, enabled: '$ADMIN_TEST_ENABLED', statusMap: { in_transit: 'shipped' } })
  const admin = adminClient(app, 'admin')
  const page = await admin.get('/integrations/env')
  t.match(page.body, /Read from the environment variable <code>ADMIN_TEST_SECRET<\/code>|Read from the environment variable <code>\$ADMIN_TEST_SECRET<\/code>/)
  t.match(page.body, /name="enabled" value="\$ADMIN_TEST_ENABLED"/)
  const check = await admin.post('/integrations/env/check', {})
  t.equal(check.statusCode, 200)
  t.match(check.body, /Connection check: OK\.<\/strong> The provider has no connection check\./)

  // A delivery through the gateway is listed on the integration's page.
  process.env.ADMIN_TEST_ENABLED = 'true'
  const orderId = await insertOrder(app, { reference: 'ORD-HOOK' })
  await app.shipments.shipments.create(orderId)
  const body = JSON.stringify({ orderNumber: 'ORD-HOOK', status: 'in_transit', occurredAt: new Date().toISOString() })
  const timestamp = Math.floor(Date.now() / 1000)
  const headers = { 'webhook-id': 'msg_admin_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook('whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=', 'msg_admin_1', timestamp, body) }
  const delivered = await app.inject({ method: 'POST', url: '/actions/shipments/gateway/handle?integration=env', headers: { ...headers, 'content-type': 'application/json' }, payload: body })
  t.equal(delivered.statusCode, 200, delivered.body)
  const withDelivery = await admin.get('/integrations/env')
  t.match(withDelivery.body, /<code>msg_admin_1<\/code><\/td><td><span class="badge badge-ok">applied<\/span>/)
})

t.test('ShipStation: what to paste (never the password), the settings in force, the activity log', async (t) => {
  const app = await buildAdminApp(t)
  await insertExportOrder(app, { reference: 'SS-1' })
  const admin = adminClient(app, 'admin')
  const empty = await admin.get('/shipstation')
  t.equal(empty.statusCode, 200)
  t.match(empty.body, /No requests yet: ShipStation has not called this site\./)
  t.match(empty.body, new RegExp(`<code data-copy="url">http://localhost:80${EXCHANGE_URL}</code>`))
  t.match(empty.body, new RegExp(`<code data-copy="username">${EXCHANGE_USER}</code>`))
  t.notOk(empty.body.includes(EXCHANGE_PASSWORD), 'the password is never shown')
  t.match(empty.body, /<th>Page Size for Orders<\/th><td>25<\/td>/)

  const wrong = await app.inject({ url: `${EXCHANGE_URL}?action=export&page=1`, headers: basicAuth(EXCHANGE_USER, 'wrong') })
  t.equal(wrong.statusCode, 401)
  const exported = await app.inject({ url: `${EXCHANGE_URL}?action=export&page=1`, headers: basicAuth() })
  t.equal(exported.statusCode, 200)
  const badDate = await app.inject({ url: `${EXCHANGE_URL}?action=export&start_date=soon&end_date=later`, headers: basicAuth() })
  t.equal(badDate.statusCode, 400)
  const notify = await app.inject({ method: 'POST', url: `${EXCHANGE_URL}?action=shipnotify&order_number=NOPE%00${XSS}`, headers: basicAuth() })
  t.equal(notify.statusCode, 400)

  const rows = await app.shipments.orderExchange!.activity.recent(10)
  t.same(
    rows.map(({ action, page, orderNumber, ordersExported, statusCode, reason }) => ({ action, page, orderNumber, ordersExported, statusCode, reason })),
    [
      { action: 'shipnotify', page: null, orderNumber: `NOPE${XSS}`, ordersExported: null, statusCode: 400, reason: 'order_number contains characters that are not allowed (control characters, bidirectional overrides or unpaired surrogates).' },
      { action: 'export', page: 1, orderNumber: null, ordersExported: null, statusCode: 400, reason: 'start_date is not a date.' },
      { action: 'export', page: 1, orderNumber: null, ordersExported: 1, statusCode: 200, reason: null },
      { action: 'export', page: 1, orderNumber: null, ordersExported: null, statusCode: 401, reason: 'Invalid username or password.' },
    ],
    'every request is recorded, newest first, with control characters dropped',
  )
  const page = await admin.get('/shipstation')
  t.equal(page.body.match(/<tr data-status-code=/g)?.length, 4)
  t.match(page.body, /<tr data-status-code="401">[^]*?Invalid username or password\./)
  t.match(page.body, /<td>page 1<\/td><td>1<\/td>/)
  t.notOk(page.body.includes(XSS), 'a hostile order number shows as text')

  const bare = await buildAdminApp(t, { orderExchange: undefined })
  const none = await adminClient(bare, 'admin').get('/shipstation')
  t.equal(none.statusCode, 200)
  t.match(none.body, /The order exchange is not configured/)
})

t.test('the activity log keeps only the newest rows, pruned every so many writes', async (t) => {
  const { data } = await openDatabase(await testDatabase(t, 'activity'), true, { lockDirectory: null, onLockCompromised: () => {}, onPoolError: () => {} })
  t.teardown(() => data.close())
  const record = (page: number) =>
    data.recordExchangeActivity({ action: 'export', page, orderNumber: null, ordersExported: 0, statusCode: 200, reason: null, createdAt: new Date() }, { keep: 3, keepRefused: 3, every: 5 })
  const pages = async () => (await data.exchangeActivity(100)).map((row) => row.page)
  for (let page = 1; page <= 9; page++) await record(page)
  t.same(await pages(), [9, 8, 7, 6, 5, 4, 3], 'the 5th write dropped all but its newest 3')
  await record(10)
  t.same(await pages(), [10, 9, 8], 'the 10th write too')
})

t.test('the admin option is checked at registration, naming the bad setting', async (t) => {
  const cases: Array<[unknown, RegExp]> = [
    ['yes', /Invalid option "admin": must be an object/],
    [{ prefix: 'admin' }, /Invalid option "admin.prefix"/],
    [{ loginUrl: '//evil.example/login' }, /Invalid option "admin.loginUrl"/],
    [{ layout: 'chrome' }, /Invalid option "admin.layout"/],
    [{ csrfKey: 'short' }, /Invalid option "admin.csrfKey": must be a string of at least 32 characters/],
    [{ csrfSession: 'session-id' }, /Invalid option "admin.csrfSession": must be a function/],
    [{ theme: 'dark' }, /Invalid option "admin.theme": is not an option of the admin pages/],
  ]
  for (const [admin, message] of cases) {
    const app = Fastify({ logger: false })
    app.register(fastifyShipments, { database: await testDatabase(t, 'options'), admin: admin as never })
    await t.rejects(async () => {
      await app.ready()
    }, message, JSON.stringify(admin))
    await app.close()
  }
})

t.test('a host layout wraps every page, error pages included, with the host user and navigation', async (t) => {
  const seen: AdminPage[] = []
  const app = await buildAdminApp(t, {
    admin: {
      prefix: '/panel/shipping',
      csrfKey: 'k'.repeat(40),
      layout: (page) => {
        seen.push(page)
        return `<!DOCTYPE html><html><head>${page.head}<title>Host: ${page.title}</title></head><body><nav id="host-nav">${page.navigation.map((link) => link.label).join('|')}</nav>${page.content}</body></html>`
      },
    },
  })
  const { shipmentIds } = await orderWithShipments(app)
  const page = await app.inject({ url: `/panel/shipping/shipments/${shipmentIds[0]}`, headers: as('admin') })
  t.equal(page.statusCode, 200)
  t.match(page.body, /<nav id="host-nav">Overview\|Shipments\|Attention\|Returns\|Boxes\|Pack station\|Shipping rules\|Customs\|Manifests\|Label batches\|Integrations\|Webhooks\|Notifications\|ShipStation\|System<\/nav>/)
  t.match(page.body, /<link rel="stylesheet" href="\/panel\/shipping\/assets\/admin.css">/)
  t.match(page.body, /action="\/panel\/shipping\/shipments\/\d+"/)
  t.equal(seen[0].user.id, 'admin')
  t.match(seen[0].navigation[0], { label: 'Overview', href: '/panel/shipping/overview', current: false })
  t.match(seen[0].navigation[1], { label: 'Shipments', href: '/panel/shipping/shipments', current: true })
  t.match(seen[0].navigation[2], { label: 'Attention', href: '/panel/shipping/attention', current: false, count: 0 }, 'the attention list with its count, for the host to show')
  const forbidden = await app.inject({ url: '/panel/shipping/integrations', headers: as('viewer') })
  t.equal(forbidden.statusCode, 403)
  t.match(forbidden.body, /<nav id="host-nav">Overview\|Shipments\|Attention\|Returns\|Boxes\|Shipping rules\|Customs<\/nav>/)
  t.equal((await app.inject({ url: '/shipments/admin/shipments', headers: as('admin') })).statusCode, 404, 'only the prefix given')
  const root = await app.inject({ url: '/panel/shipping/', headers: as('admin') })
  t.equal(root.statusCode, 303)
  t.equal(root.headers.location, '/panel/shipping/overview', 'the landing page is the overview')
})

t.test('the html template escapes every value and joins arrays; only http(s) URLs become links', async (t) => {
  const { html, escapeHtml, safeHref, unsafeRaw } = await import('../src/html.js')
  t.equal(html`<p title="${'"x"'}">${XSS}</p>`.value, '<p title="&quot;x&quot;">&lt;script&gt;alert(1)&lt;/script&gt;</p>')
  t.equal(html`${['<a>', html`<b>`, 1, null, undefined, false, true]}`.value, '&lt;a&gt;<b>1')
  t.equal(html`${unsafeRaw('<i>')}`.value, '<i>')
  t.equal(escapeHtml("&'`"), '&amp;&#39;&#96;')
  t.equal(String(html`x`), 'x')
  t.equal(safeHref('https://example.com/a'), 'https://example.com/a')
  t.equal(safeHref('HTTP://example.com'), 'HTTP://example.com')
  t.equal(safeHref('javascript:alert(1)'), null)
  t.equal(safeHref('//example.com'), null)
  t.equal(safeHref(null), null)
})

t.test('a host that registered cookies and a form parser for every route: the pages use them', async (t) => {
  const { default: cookie } = await import('@fastify/cookie')
  const { default: formbody } = await import('@fastify/formbody')
  const app = Fastify({ logger: false })
  await app.register(cookie, { secret: 'host-cookie-secret' })
  await app.register(formbody)
  await app.register(fastifyShipments, {
    database: await testDatabase(t, 'host-plugins'),
    lockDirectory: null,
    admin: {},
    resolveUser: (request) => (request.headers['x-test-user'] === 'admin' ? { id: 'admin' } : null),
    hasPermission: () => true,
  })
  t.teardown(() => app.close())
  await app.ready()
  const { shipmentIds } = await orderWithShipments(app)
  const admin = adminClient(app, 'admin')
  t.equal((await admin.get(`/shipments/${shipmentIds[0]}`)).statusCode, 200)
  const saved = await admin.post(`/shipments/${shipmentIds[0]}`, { carrier: 'UPS' })
  t.equal(saved.statusCode, 303)
  t.equal((await shipmentRow(app, shipmentIds[0])).carrier, 'UPS')
  t.equal((await admin.post(`/shipments/${shipmentIds[0]}`, { carrier: 'DHL' }, { withToken: false })).statusCode, 403)
  t.equal((await shipmentRow(app, shipmentIds[0])).carrier, 'UPS')
})

t.test('the integration form follows the provider schema: enums and booleans as choices, numbers typed, optional left out', async (t) => {
  const { Type } = await import('@sinclair/typebox')
  const { defineProvider } = await import('../src/index.js')
  const typed = defineProvider({
    id: 'typed',
    name: 'Typed provider',
    settingsSchema: Type.Object(
      {
        mode: Type.Union([Type.Literal('live'), Type.Literal('sandbox')], { description: 'Which account to use.' }),
        region: Type.String({ enum: ['eu', 'us'] }),
        verbose: Type.Boolean(),
        retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 })),
        apiKey: Type.String({ minLength: 8 }),
      },
      { additionalProperties: false },
    ),
    secretSettings: ['apiKey'],
    handleGatewayRequest: async () => ({ status: 204 }),
    checkConnection: async () => {
      throw new Error('socket hang up at 10.0.0.1')
    },
  })
  const app = await buildAdminApp(t, { providers: [typed] })
  const admin = adminClient(app, 'admin')
  const form = await admin.get('/integrations/new?provider=typed')
  t.equal(form.statusCode, 200)
  t.match(fieldMarkup(form.body, 'settings.mode'), /<select[^>]*name="settings.mode"[^]*<option value="live">live<\/option><option value="sandbox">sandbox<\/option>/)
  t.match(fieldMarkup(form.body, 'settings.mode'), /Which account to use\./)
  t.match(fieldMarkup(form.body, 'settings.region'), /<option value="eu">eu<\/option>/)
  t.match(fieldMarkup(form.body, 'settings.verbose'), /<option value="true">Yes<\/option><option value="false">No<\/option>/)
  t.match(fieldMarkup(form.body, 'settings.retries'), /retries \(optional\)/)
  t.match(fieldMarkup(form.body, 'settings.apiKey'), /type="password"/)

  const refused = await admin.post('/integrations', { providerId: 'typed', name: 'Typed', handle: 'typed', enabled: 'true', 'settings.mode': 'live', 'settings.region': 'eu', 'settings.verbose': 'true', 'settings.retries': '9', 'settings.apiKey': 'key-12345678' })
  t.equal(refused.statusCode, 422)
  t.match(fieldMarkup(refused.body, 'settings.retries'), /class="field-error"/)
  t.same(await app.shipments.integrations.list(), [])

  const created = await admin.post('/integrations', { providerId: 'typed', name: 'Typed', handle: 'typed', enabled: 'false', 'settings.mode': 'sandbox', 'settings.region': 'us', 'settings.verbose': 'false', 'settings.retries': '', 'settings.apiKey': '$TYPED_API_KEY' })
  t.equal(created.statusCode, 422, 'an unset environment variable is refused')
  t.match(created.body, /TYPED_API_KEY/)
  process.env.TYPED_API_KEY = 'key-12345678'
  const saved = await admin.post('/integrations', { providerId: 'typed', name: 'Typed', handle: 'typed', enabled: 'false', 'settings.mode': 'sandbox', 'settings.region': 'us', 'settings.verbose': 'false', 'settings.retries': '', 'settings.apiKey': '$TYPED_API_KEY' })
  t.equal(saved.statusCode, 303)
  const { db, schema } = tables(app)
  const [row] = await db.select().from(schema.integrations).where(eq(schema.integrations.handle, 'typed'))
  t.same(row.settings, { mode: 'sandbox', region: 'us', verbose: false, apiKey: '$TYPED_API_KEY' })
  t.equal(row.enabled, 'false')
  const page = await admin.get('/integrations/typed')
  t.match(fieldMarkup(page.body, 'settings.apiKey'), /value="\$TYPED_API_KEY"[^]*Read from the environment variable/)
  t.match(page.body, />Enable<\/button>/)
  const withRetries = { name: 'Typed', handle: 'typed', enabled: 'false', 'settings.mode': 'sandbox', 'settings.region': 'us', 'settings.verbose': 'false', 'settings.apiKey': '$TYPED_API_KEY' }
  t.equal((await admin.post('/integrations/typed', { ...withRetries, 'settings.retries': '3' })).statusCode, 303)
  t.same((await db.select().from(schema.integrations).where(eq(schema.integrations.handle, 'typed')))[0].settings, { mode: 'sandbox', region: 'us', verbose: false, apiKey: '$TYPED_API_KEY', retries: 3 })
  t.equal((await admin.post('/integrations/typed', { ...withRetries, 'settings.retries': '' })).statusCode, 303)
  t.same((await db.select().from(schema.integrations).where(eq(schema.integrations.handle, 'typed')))[0].settings, { mode: 'sandbox', region: 'us', verbose: false, apiKey: '$TYPED_API_KEY' }, 'a setting emptied is dropped')
  const blankRequired = await admin.post('/integrations/typed', { ...withRetries, 'settings.region': '' })
  t.equal(blankRequired.statusCode, 422)
  t.match(fieldMarkup(blankRequired.body, 'settings.region'), /class="field-error"/)
  const check = await admin.post('/integrations/typed/check', {})
  t.equal(check.statusCode, 200)
  t.match(check.body, /Connection check: failed\.<\/strong> The check could not run; the log has the details\./)
  t.notMatch(check.body, /10\.0\.0\.1/, 'an unexpected error is not shown')
})

t.test('a refusal of the service shows above the form; an unexpected failure is a 500 page without details', async (t) => {
  const logLines: string[] = []
  const app = await buildExchangeAppWithLog(t, logLines)
  const { shipmentIds } = await orderWithShipments(app, 2)
  const admin = adminClient(app, 'admin')
  await admin.get(`/shipments/${shipmentIds[0]}`)
  const refused = await admin.post(`/shipments/${shipmentIds[0]}/transition`, { status: 'shipped' })
  t.equal(refused.statusCode, 422)
  t.match(refused.body, /aria-label="Change status">[^]*?notice-error[^]*?the order status &quot;delivered-to-customer&quot; \(shippedOrderStatus\) does not exist/)
  const bulk = await admin.post('/shipments/bulk-status', { ids: shipmentIds.map(String), status: 'shipped' })
  t.match(bulk.body, /Status change: 0 done, 2 refused\./)
  for (const id of shipmentIds) t.equal((await shipmentRow(app, id)).status, 'new')

  app.shipments.shipments.get = async () => {
    throw new Error('connection reset by peer at 10.0.0.7')
  }
  const failed = await admin.get(`/shipments/${shipmentIds[0]}`)
  t.equal(failed.statusCode, 500)
  t.match(failed.body, /An internal error occurred\./)
  t.notMatch(failed.body, /10\.0\.0\.7|at \//)
  t.ok(logLines.some((line) => line.includes('Admin page failed') && line.includes('10.0.0.7')), 'the cause is logged')
})

function buildExchangeAppWithLog(t: Parameters<typeof buildAdminApp>[0], logLines: string[]) {
  return buildExchangeApp(t, {}, { admin: {}, shippedOrderStatus: 'delivered-to-customer' }, logLines)
}
