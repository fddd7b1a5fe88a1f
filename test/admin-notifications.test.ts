// The admin pages for customer notifications (list, create, edit, delete, deliveries with their attempt
// log, test sends) and the public tracking link on a shipment's page (copy, revoke): status, page and
// stored effect of every route.
import t, { type Test } from 'tap'
import type { MailMessage, ShipmentsPluginOptions } from '../src/index.js'
import { escapeHtml } from '../src/html.js'
import { shipmentRow } from './fixtures/app.js'
import { rawQuery } from './fixtures/database.js'
import { ADMIN, adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'
import { eventually } from './fixtures/outbox.js'

const TRACKING = { secret: 'an-admin-tracking-page-secret-of-32-chars-or-more', baseUrl: 'https://shop.example' }

/** A host with a capturing transport (it fails `failNext` times first), the tracking page and one order with a shipment. */
async function setup(t: Test, options: Partial<ShipmentsPluginOptions> = {}) {
  const sent: MailMessage[] = []
  let failures = 0
  const app = await buildAdminApp(t, {
    notifications: {
      sendMail: async (message) => {
        if (failures > 0) {
          failures--
          throw new Error('SMTP 451 mailbox busy')
        }
        sent.push(message)
      },
    },
    trackingPage: TRACKING,
    ...options,
  })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'A200', isCompleted: true, email: 'kim@example.com', items: [{ name: 'Teapot <Blue>', sku: 'POT', quantity: 1 }] })
  const lines = (await app.shipments.orders.orderLines!(orderId))!
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: lines[0].id, quantity: 1 }] })
  return { app, sent, shipment, failNext: (count: number) => (failures = count) }
}

/** The form of a definition as a browser posts it. */
const form = (changes: Record<string, string | string[]> = {}) => ({
  name: 'Shipped',
  statuses: ['shipped'],
  recipient: 'customer',
  addresses: '',
  subject: 'Order {{ order.reference }}: {{ toStatusLabel }}',
  html: '<p>{{ items.size }} item(s): {% for item in items %}{{ item.name }}{% endfor %}</p><a href="{{ trackingLink }}">Track</a>',
  text: 'Track it: {{ trackingLink }}',
  language: 'en',
  enabled: 'true',
  ...changes,
})

t.test('the notification pages need manageIntegrations; the navigation links them for those who have it', async (t) => {
  const { app } = await setup(t)
  const editor = adminClient(app, 'editor')
  const refused = await editor.get('/notifications')
  t.equal(refused.statusCode, 403)
  t.match(refused.body, /shipments-manageIntegrations/)
  t.equal((await editor.post('/notifications', form())).statusCode, 403)
  t.notMatch((await editor.get('/shipments')).body, `href="${ADMIN}/notifications"`)
  t.same(await app.shipments.notifications.list(), [], 'nothing stored')

  const admin = adminClient(app, 'admin')
  const list = await admin.get('/notifications')
  t.equal(list.statusCode, 200)
  t.match(list.body, `<a href="${ADMIN}/notifications" aria-current="page">Notifications</a>`)
  t.match(list.body, /No notifications yet\./)
  t.notMatch(list.body, /No mail transport is configured/, 'a transport is configured')
  t.match(list.body, `href="${ADMIN}/notifications/new"`)
})

t.test('create: a bad template is refused beside its field, what was typed kept, 422 and nothing stored; then created', async (t) => {
  const { app } = await setup(t)
  const admin = adminClient(app, 'admin')
  const blank = await admin.get('/notifications/new')
  t.equal(blank.statusCode, 200)
  t.match(blank.body, /<input type="checkbox" name="statuses" value="shipped" checked>/, 'a new definition starts on shipped')

  const broken = '<p>{% for item in items %}{{ item.name }}</p>'
  const refused = await admin.post('/notifications', form({ name: 'Shipped "mail"', html: broken }))
  t.equal(refused.statusCode, 422)
  t.match(fieldMarkup(refused.body, 'html'), /class="field-error" id="error-html" role="alert">is not a valid template: /)
  t.match(fieldMarkup(refused.body, 'html'), /aria-invalid="true"/)
  t.match(fieldMarkup(refused.body, 'html'), `>${escapeHtml(broken)}</textarea>`, 'the template typed stays')
  t.match(refused.body, `name="name" value="${escapeHtml('Shipped "mail"')}"`)
  t.notMatch(fieldMarkup(refused.body, 'subject'), /field-error/)
  t.same(await app.shipments.notifications.list(), [], 'nothing stored')

  const noStatus = await admin.post('/notifications', form({ statuses: [] }))
  t.equal(noStatus.statusCode, 422)
  t.match(fieldMarkup(noStatus.body, 'statuses'), /must list at least one of new, /)
  const noAddress = await admin.post('/notifications', form({ recipient: 'addresses', addresses: 'ops@example.com\r\nnot an address' }))
  t.equal(noAddress.statusCode, 422)
  t.match(fieldMarkup(noAddress.body, 'addresses'), /&quot;not an address&quot; is not an email address/)
  t.match(fieldMarkup(noAddress.body, 'addresses'), />ops@example.com\nnot an address<\/textarea>/, 'the lines typed stay')
  t.match(fieldMarkup(noAddress.body, 'recipient'), /<option value="addresses" selected>/)
  t.same(await app.shipments.notifications.list(), [])

  const created = await admin.post('/notifications', form({ statuses: ['fulfilled', 'shipped'], enabled: [] }))
  t.equal(created.statusCode, 303)
  const [stored] = await app.shipments.notifications.list()
  t.equal(created.headers.location, `${ADMIN}/notifications/${stored.id}?notice=created`)
  t.match(stored, { name: 'Shipped', statuses: ['fulfilled', 'shipped'], recipient: 'customer', addresses: [], language: 'en', enabled: false, subject: form().subject, html: form().html, text: form().text })
  const page = await admin.get(`/notifications/${stored.id}?notice=created`)
  t.equal(page.statusCode, 200)
  t.match(page.body, /<div class="notice notice-ok" role="status">Created\.<\/div>/)
  t.match(page.body, /<input type="checkbox" name="enabled" value="true"> Enabled/, 'shown disabled, as saved')
  const list = await admin.get('/notifications')
  t.match(list.body, new RegExp(`<tr data-notification="${stored.id}"><td><a href="${ADMIN}/notifications/${stored.id}">Shipped</a></td>`))
  t.match(list.body, /data-status="fulfilled">Fulfilled<\/span> <span class="badge badge-shipped" data-status="shipped">Shipped<\/span>/)
  t.match(list.body, /The order&#39;s customer<\/td><td><span class="badge badge-muted">Disabled<\/span>/)
})

t.test('edit: saved through the service; a refusal shows beside its field and keeps the stored definition', async (t) => {
  const { app } = await setup(t)
  const admin = adminClient(app, 'admin')
  const { id } = await app.shipments.notifications.create({ name: 'Shipped', statuses: ['shipped'], recipient: 'customer', subject: 's', html: 'h', text: 't' })
  await admin.get(`/notifications/${id}`)

  const saved = await admin.post(`/notifications/${id}`, form({ name: 'Ops copy', recipient: 'addresses', addresses: 'ops@example.com\r\nboss@example.com\r\n', language: '' }))
  t.equal(saved.statusCode, 303)
  t.equal(saved.headers.location, `${ADMIN}/notifications/${id}?notice=saved`)
  t.match(await app.shipments.notifications.get(id), { name: 'Ops copy', recipient: 'addresses', addresses: ['ops@example.com', 'boss@example.com'], language: null, enabled: true })
  const page = await admin.get(`/notifications/${id}`)
  t.match(page.body, />ops@example.com\nboss@example.com<\/textarea>/, 'one address per line')
  t.match((await admin.get('/notifications')).body, /<td>ops@example.com, boss@example.com<\/td>/)

  const before = await app.shipments.notifications.get(id)
  const refused = await admin.post(`/notifications/${id}`, form({ subject: 'Order {{ order.reference ', language: 'english please' }))
  t.equal(refused.statusCode, 422)
  t.match(fieldMarkup(refused.body, 'language'), /must be a language tag/, 'the first refusal the service names')
  t.match(refused.body, /name="language" value="english please"/)
  t.same(await app.shipments.notifications.get(id), before, 'nothing stored')
  const subject = await admin.post(`/notifications/${id}`, form({ subject: 'Order {{ order.reference ' }))
  t.equal(subject.statusCode, 422)
  t.match(fieldMarkup(subject.body, 'subject'), /is not a valid template/)
  t.same(await app.shipments.notifications.get(id), before)

  t.equal((await admin.get('/notifications/999999')).statusCode, 404)
  t.equal((await admin.get('/notifications/abc')).statusCode, 404)
  t.equal((await admin.post('/notifications/999999', form())).statusCode, 404)
  const noToken = await admin.post(`/notifications/${id}`, form({ name: 'Forged' }), { withToken: false })
  t.equal(noToken.statusCode, 403)
  t.equal((await app.shipments.notifications.get(id))!.name, 'Ops copy', 'no token, no change')
})

t.test('send test: renders against the shipment (by id or reference), shows subject, HTML and text, says it was sent', async (t) => {
  const { app, sent, shipment } = await setup(t)
  const admin = adminClient(app, 'admin')
  const { id } = await app.shipments.notifications.create({ name: 'Shipped', statuses: ['shipped'], recipient: 'customer', subject: form().subject, html: form().html, text: form().text })
  await admin.get(`/notifications/${id}`)
  const link = await app.shipments.trackingLinks!.url(shipment.id)

  const byId = await admin.post(`/notifications/${id}/test`, { shipment: String(shipment.id), to: '' })
  t.equal(byId.statusCode, 200)
  t.match(byId.body, /<section class="test-result" aria-label="Test result" data-sent="true">/)
  t.match(byId.body, /<div class="notice notice-ok" role="status">Sent to kim@example\.com\.<\/div>/)
  t.match(byId.body, /<td data-rendered="subject">Order A200: New<\/td>/)
  const html = `<p>1 item(s): Teapot &lt;Blue&gt;</p><a href="${link}">Track</a>`
  t.match(byId.body, `<iframe class="mail-preview" title="HTML preview" sandbox="" referrerpolicy="no-referrer" srcdoc="${escapeHtml(html)}"></iframe>`, 'the HTML in a sandboxed frame')
  t.match(byId.body, `<pre data-rendered="html">${escapeHtml(html)}</pre>`)
  t.match(byId.body, `<pre data-rendered="text">Track it: ${escapeHtml(link)}</pre>`)
  t.same(sent.map((message) => [message.to, message.subject, message.html, message.shipmentId]), [[['kim@example.com'], 'Order A200: New', html, shipment.id]])

  const byReference = await admin.post(`/notifications/${id}/test`, { shipment: shipment.reference, to: 'me@example.com' })
  t.equal(byReference.statusCode, 200)
  t.match(byReference.body, /Sent to me@example\.com\./)
  t.match(byReference.body, /name="shipment" value="A200-s001"/, 'the form keeps what was typed')
  t.same(sent.map((message) => message.to), [['kim@example.com'], ['me@example.com']])

  const unknown = await admin.post(`/notifications/${id}/test`, { shipment: 'NOPE-1', to: '' })
  t.equal(unknown.statusCode, 422)
  t.match(fieldMarkup(unknown.body, 'shipment'), /No shipment &quot;NOPE-1&quot;\./)
  const badAddress = await admin.post(`/notifications/${id}/test`, { shipment: String(shipment.id), to: 'me at example' })
  t.equal(badAddress.statusCode, 422)
  t.match(fieldMarkup(badAddress.body, 'to'), /&quot;me&quot; is not an email address/)
  const empty = await admin.post(`/notifications/${id}/test`, { shipment: '', to: '' })
  t.equal(empty.statusCode, 422)
  t.match(fieldMarkup(empty.body, 'shipment'), /Enter a shipment id or reference\./)
  t.equal(sent.length, 2, 'refused tests send nothing')
  t.same(await rawQuery(app, "SELECT id FROM shipments_outbox WHERE name = 'customerNotification'"), [], 'a test is no delivery')
})

t.test('a test whose transport fails says so above the form; nothing is queued', async (t) => {
  const { app, sent, shipment, failNext } = await setup(t)
  const admin = adminClient(app, 'admin')
  const { id } = await app.shipments.notifications.create({ name: 'Shipped', statuses: ['shipped'], recipient: 'customer', subject: 's', html: 'h', text: 't' })
  await admin.get(`/notifications/${id}`)
  failNext(1)
  const failed = await admin.post(`/notifications/${id}/test`, { shipment: String(shipment.id), to: '' })
  t.equal(failed.statusCode, 422)
  t.match(failed.body, /<div class="notice notice-error" role="alert"><div>The test failed: SMTP 451 mailbox busy<\/div><\/div>/)
  t.same(sent, [])
})

t.test('without a transport the pages say so, and a test renders without sending', async (t) => {
  const { app, shipment } = await setup(t, { notifications: undefined })
  t.equal(app.shipments.notifications.canSend, false)
  const admin = adminClient(app, 'admin')
  t.match((await admin.get('/notifications')).body, /No mail transport is configured \(the <code>notifications\.sendMail<\/code> option\)/)
  const { id } = await app.shipments.notifications.create({ name: 'Shipped', statuses: ['shipped'], recipient: 'customer', subject: 'Hi {{ order.reference }}', html: 'h', text: 't' })
  const page = await admin.get(`/notifications/${id}`)
  t.match(page.body, /No mail transport is configured/)
  const test = await admin.post(`/notifications/${id}/test`, { shipment: String(shipment.id), to: '' })
  t.equal(test.statusCode, 200)
  t.match(test.body, /data-sent="false"/)
  t.match(test.body, /Not sent: no mail transport is configured\./)
  t.match(test.body, /<td data-rendered="subject">Hi A200<\/td>/)
})

t.test('delete: the definition is gone, its page 404s', async (t) => {
  const { app } = await setup(t)
  const admin = adminClient(app, 'admin')
  const { id } = await app.shipments.notifications.create({ name: 'Shipped', statuses: ['shipped'], recipient: 'customer', subject: 's', html: 'h', text: 't' })
  const page = await admin.get(`/notifications/${id}`)
  t.match(page.body, new RegExp(`<form method="post" action="${ADMIN}/notifications/${id}/delete" data-confirm=`))
  const deleted = await admin.post(`/notifications/${id}/delete`, {})
  t.equal(deleted.statusCode, 303)
  t.equal(deleted.headers.location, `${ADMIN}/notifications?notice=notificationDeleted`)
  t.same(await app.shipments.notifications.list(), [])
  t.match((await admin.get('/notifications?notice=notificationDeleted')).body, /Notification deleted\./)
  t.equal((await admin.get(`/notifications/${id}`)).statusCode, 404)
  t.equal((await admin.post(`/notifications/${id}/delete`, {})).statusCode, 404)
})

t.test("a definition's page lists its deliveries with the attempt log once a shipment reaches the status", async (t) => {
  const { app, sent, shipment, failNext } = await setup(t)
  const admin = adminClient(app, 'admin')
  const { id } = await app.shipments.notifications.create({ name: 'Shipped', statuses: ['shipped'], recipient: 'customer', subject: 's', html: 'h', text: 't' })
  t.match((await admin.get(`/notifications/${id}`)).body, /No deliveries yet\./)

  failNext(1)
  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  const attempts = async () => (await rawQuery(app, "SELECT attempts FROM shipments_outbox WHERE name = 'customerNotification'")).map((row) => Number(row.attempts))
  await eventually(app, async () => (await attempts())[0] === 1)
  let page = await admin.get(`/notifications/${id}`)
  t.equal(page.statusCode, 200)
  const [delivery] = await app.shipments.notifications.deliveries(id)
  t.match(page.body, new RegExp(`<tr data-delivery="${delivery.id}"><td class="meta"><time datetime="${delivery.dateCreated.replace(/[+.]/g, '\\$&')}"[^>]*>\\d{1,2} [A-Z][a-z]{2} \\d{4}, \\d{2}:\\d{2}</time></td><td><a href="${ADMIN}/shipments/${shipment.id}">${shipment.reference}</a></td>`))
  t.match(page.body, /<span class="badge badge-muted">pending<\/span>/)
  t.match(page.body, new RegExp(`<ul class="attempts"><li><span class="meta"><time datetime="${delivery.attempts[0].date.replace(/[+.]/g, '\\$&')}"[^>]*>\\d{1,2} [A-Z][a-z]{2} \\d{4}, \\d{2}:\\d{2}</time></span> <span class="badge badge-error">failed</span> SMTP 451 mailbox busy</li></ul>`))

  // The retry's minute passes.
  await rawQuery(app, "UPDATE shipments_outbox SET available_at = ? WHERE name = 'customerNotification'", [app.shipments.database.engine === 'sqlite' ? Date.now() : new Date()])
  // Done once the mark is written, which may follow the send (PostgreSQL batches the marks).
  await eventually(app, async () => (await app.shipments.notifications.deliveries(id))[0]?.state === 'done')
  page = await admin.get(`/notifications/${id}`)
  t.match(page.body, /<span class="badge badge-ok">done<\/span>/)
  t.match(page.body, /<ul class="attempts"><li><span class="meta"><time datetime="[^"]+"[^>]*>[^<]+<\/time><\/span> <span class="badge badge-ok">sent<\/span><\/li><li><span class="meta"><time datetime="[^"]+"[^>]*>[^<]+<\/time><\/span> <span class="badge badge-error">failed<\/span> SMTP 451 mailbox busy<\/li><\/ul>/, 'both attempts, newest first')
  t.same(sent.map((message) => message.to), [['kim@example.com']])
})

t.test('a skipped job and an attempt whose outcome is unknown show as such, each with its own badge, not as failed', async (t) => {
  const { app, shipment, failNext } = await setup(t)
  const { id } = await app.shipments.notifications.create({ name: 'Shipped', statuses: ['shipped'], recipient: 'customer', subject: 's', html: 'h', text: 't' })
  failNext(1)
  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  await eventually(app, async () => (await app.shipments.notifications.deliveries(id))[0]?.attempts.length === 1)
  // The notification is disabled while the job waits for its retry; then the instance holding the job
  // stops renewing its claim (it died): the one that takes the job over logs an attempt whose outcome
  // is unknown, and the job, with nothing to send now, is skipped.
  await app.shipments.notifications.update(id, { enabled: false })
  const past = app.shipments.database.engine === 'sqlite' ? Date.now() - 1000 : new Date(Date.now() - 1000)
  await rawQuery(app, "UPDATE shipments_outbox SET claimed_by = 'a-dead-instance', claimed_until = ?, available_at = ? WHERE name = 'customerNotification'", [past, past])
  await eventually(app, async () => (await app.shipments.notifications.deliveries(id))[0]?.state === 'skipped')
  t.match(
    await app.shipments.notifications.deliveries(id),
    [{ state: 'skipped', attempts: [{ error: 'Skipped: the notification was disabled before it was sent.' }, { error: /^Outcome unknown: / }, { error: 'SMTP 451 mailbox busy' }] }],
    'stored: skipped, unknown, failed',
  )
  const page = await adminClient(app, 'admin').get(`/notifications/${id}`)
  t.equal(page.statusCode, 200)
  const badges = [...page.body.matchAll(/<li><span class="meta"><time[^>]*>[^<]+<\/time><\/span> <span class="badge ([\w-]+)">(\w+)<\/span>/g)].map((match) => `${match[1]} ${match[2]}`)
  t.same(badges, ['badge-skipped skipped', 'badge-unknown unknown', 'badge-error failed'], 'newest first: only the failed attempt shows as failed')
  t.match(page.body, /<span class="badge badge-skipped">skipped<\/span> the notification was disabled before it was sent\.<\/li>/)
  t.match(page.body, /<span class="badge badge-unknown">unknown<\/span> the instance that held this job stopped renewing its claim/)
  t.match(page.body, /<span class="badge badge-muted">skipped<\/span><\/td>/, "the job's own state")
})

t.test("a delivery's shipment is shown by its reference, linked to its page, not by its bare id; one gone since as #id", async (t) => {
  const { app, shipment } = await setup(t)
  const admin = adminClient(app, 'admin')
  const { id } = await app.shipments.notifications.create({ name: 'Shipped', statuses: ['shipped'], recipient: 'customer', subject: 's', html: 'h', text: 't' })
  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  await eventually(app, async () => (await app.shipments.notifications.deliveries(id))[0]?.state === 'done')
  t.equal(shipment.reference, 'A200-s001')
  const cell = (body: string) => /<tr data-delivery="[^"]+"><td class="meta"><time[^>]*>[^<]*<\/time><\/td><td>(.*?)<\/td>\n/.exec(body)?.[1]
  let page = await admin.get(`/notifications/${id}`)
  t.equal(page.statusCode, 200)
  t.equal(cell(page.body), `<a href="${ADMIN}/shipments/${shipment.id}">A200-s001</a>`, 'the reference, linked')
  t.notMatch(page.body, `>${shipment.id}</a>`, 'no bare id')

  // A shipment removed from the database since (a host's own cleanup): no page to link to, its id stays.
  await rawQuery(app, 'DELETE FROM shipments_shipments WHERE id = ?', [shipment.id])
  t.same(await app.shipments.shipments.get(shipment.id), null)
  page = await admin.get(`/notifications/${id}`)
  t.equal(page.statusCode, 200)
  t.equal(cell(page.body), `<span class="meta">#${shipment.id}</span>`)
  t.equal((await app.shipments.notifications.deliveries(id)).length, 1, 'the delivery is still listed')
})

t.test('a delivery that cannot be rendered is shown failed, with the reason, and is not retried', async (t) => {
  const { app, sent, shipment } = await setup(t)
  const admin = adminClient(app, 'admin')
  // Parses, fails when rendered: the loop's range is over the memory limit.
  const { id } = await app.shipments.notifications.create({ name: 'Broken', statuses: ['shipped'], recipient: 'customer', subject: 's', html: '{% for i in (1..100000000) %}{% endfor %}', text: 't' })
  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  await eventually(app, async () => (await app.shipments.notifications.deliveries(id))[0]?.state === 'failed')
  const page = await admin.get(`/notifications/${id}`)
  t.match(page.body, /<span class="badge badge-error">failed<\/span><\/td>\n<td><ul class="attempts"><li><span class="meta"><time datetime="[^"]+"[^>]*>[^<]+<\/time><\/span> <span class="badge badge-error">failed<\/span> The template could not be rendered: memory alloc limit exceeded/)
  t.equal(page.body.match(/<li><span class="meta">/g)?.length, 1, 'one attempt')
  t.same(sent, [])
})

t.test("a shipment's page shows its public tracking link; revoking it makes the old link 404 and shows the new one", async (t) => {
  const { app, shipment } = await setup(t)
  const admin = adminClient(app, 'admin')
  const old = await app.shipments.trackingLinks!.url(shipment.id)
  let page = await admin.get(`/shipments/${shipment.id}`)
  t.equal(page.statusCode, 200)
  t.match(page.body, `<input type="text" id="tracking-link" value="${old}" readonly data-tracking-link>`)
  t.match(page.body, `<button type="button" data-copy-from="tracking-link" hidden>Copy</button>`)
  t.match(page.body, `<form method="post" action="${ADMIN}/shipments/${shipment.id}/tracking-link/revoke"`)
  t.equal((await app.inject({ url: new URL(old).pathname })).statusCode, 200, 'the link works')

  const viewer = adminClient(app, 'viewer')
  const viewed = await viewer.get(`/shipments/${shipment.id}`)
  t.match(viewed.body, `value="${old}"`, 'a viewer sees the link')
  t.notMatch(viewed.body, /Revoke link/, 'and cannot revoke it')
  t.equal((await viewer.post(`/shipments/${shipment.id}/tracking-link/revoke`, {})).statusCode, 403)
  t.equal((await admin.post(`/shipments/${shipment.id}/tracking-link/revoke`, {}, { withToken: false })).statusCode, 403, 'no token, no revocation')
  t.equal(await app.shipments.trackingLinks!.url(shipment.id), old, 'still the same link')

  const revoked = await admin.post(`/shipments/${shipment.id}/tracking-link/revoke`, {})
  t.equal(revoked.statusCode, 303)
  t.equal(revoked.headers.location, `${ADMIN}/shipments/${shipment.id}?notice=linkRevoked`)
  const renewed = await app.shipments.trackingLinks!.url(shipment.id)
  t.not(renewed, old)
  page = await admin.get(`/shipments/${shipment.id}?notice=linkRevoked`)
  t.match(page.body, /Tracking link revoked: every earlier link answers 404\./)
  t.match(page.body, `value="${renewed}"`)
  t.equal((await app.inject({ url: new URL(old).pathname })).statusCode, 404, 'the old link answers 404')
  t.equal((await app.inject({ url: new URL(renewed).pathname })).statusCode, 200, 'the new one works')
  t.equal((await admin.post('/shipments/999999/tracking-link/revoke', {})).statusCode, 404)
  t.equal((await shipmentRow(app, shipment.id)).status, 'new', 'the shipment itself is unchanged')
})

t.test('without the trackingPage option the shipment page shows no link and revoking is a 404', async (t) => {
  const { app, shipment } = await setup(t, { trackingPage: undefined })
  const admin = adminClient(app, 'admin')
  const page = await admin.get(`/shipments/${shipment.id}`)
  t.equal(page.statusCode, 200)
  t.notMatch(page.body, /Public tracking link|tracking-link/)
  t.equal((await admin.post(`/shipments/${shipment.id}/tracking-link/revoke`, {})).statusCode, 404)
})
