// Notifications on the carrier's news: a new scan out for delivery, attempted, an exception, delivered or
// returned to sender, and an estimate moved later, from real-shaped EasyPost and AfterShip events; the
// customer and staff addresses together; the ready-made templates, added disabled, in the service and
// the admin pages.
import { createHmac } from 'node:crypto'
import t, { type Test } from 'tap'
import { NOTIFICATION_TEMPLATES, type CarrierMilestoneEvent, type MailMessage } from '../src/index.js'
import { buildTestApp } from './fixtures/app.js'
import { adminClient, buildAdminApp } from './fixtures/admin.js'
import { rawQuery, testDatabase } from './fixtures/database.js'
import { eventually } from './fixtures/outbox.js'

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const SECRET = 'aftership-webhook-secret'
const TRACKING = { secret: 'a-tracking-page-secret-of-at-least-32-chars', baseUrl: 'https://shop.example' }
const NUMBER = '1Z999AA10123456784'

async function setup(t: Test) {
  const sent: MailMessage[] = []
  const app = await buildTestApp(t, { clock: () => NOW, notifications: { sendMail: async (message) => void sent.push(message) }, trackingPage: TRACKING, outbox: { pollIntervalMs: 20 } }, await testDatabase(t, 'carriernews'))
  await app.shipments.integrations.create({ name: 'AfterShip', handle: 'aftership', providerId: 'aftership', settings: { webhookSecret: SECRET } })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'N200', isCompleted: true, email: 'zoe@example.com', items: [{ name: 'Mug', sku: 'MUG', quantity: 1 }] })
  const [shipment] = await app.shipments.shipments.create(orderId)
  await app.shipments.shipments.update(shipment.id, { trackingNumber: NUMBER, carrier: 'UPS' })
  let events = 0
  /** An AfterShip tracking_update of this tag, with these checkpoints. */
  const update = (tag: string, checkpoints: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) => {
    const raw = JSON.stringify({
      event_id: `evt-${++events}`,
      event: 'tracking_update',
      msg: { id: 'as_1', tracking_number: NUMBER, slug: 'ups', tag, courier_tracking_link: 'https://www.ups.com/track?tracknum=1Z999AA10123456784', checkpoints, ...extra },
      ts: Math.floor(NOW / 1000) - 60 + events,
    })
    return app.inject({
      method: 'POST',
      url: '/actions/shipments/gateway/handle?integration=aftership',
      headers: { 'content-type': 'application/json', 'aftership-hmac-sha256': createHmac('sha256', SECRET).update(raw).digest('base64') },
      payload: raw,
    })
  }
  const milestones: CarrierMilestoneEvent[] = []
  app.shipments.events.on('carrierMilestone', (event) => void milestones.push(event))
  return { app, sent, shipment, update, milestones }
}

const scan = (time: string, tag: string, subtag: string, message: string, city = 'Bonn') => ({ slug: 'ups', tag, subtag, message, checkpoint_time: time, city, country_name: 'Germany' })

t.test('a new scan out for delivery, an exception, a later estimate: one notice each, to the customer and the staff address', async (t) => {
  const { app, sent, shipment, update, milestones } = await setup(t)
  const outForDelivery = await app.shipments.notifications.createFromTemplate('outForDelivery')
  t.match(outForDelivery, { name: 'Out for delivery', enabled: false, statuses: [], triggers: ['outForDelivery'], recipient: 'customer' }, 'added disabled')
  await app.shipments.notifications.update(outForDelivery.id, { enabled: true })
  const problem = await app.shipments.notifications.createFromTemplate('problem')
  await app.shipments.notifications.update(problem.id, { enabled: true, recipient: 'customerAndAddresses', addresses: ['support@shop.example'] })

  const transit = scan('2026-11-21T22:05:00+01:00', 'InTransit', 'InTransit_002', 'Departed from facility', 'Köln')
  const out = scan('2026-11-22T07:40:00+01:00', 'OutForDelivery', 'OutForDelivery_001', 'Out for delivery')
  t.match((await update('InTransit', [transit])).json(), { applied: true })
  t.equal(milestones.length, 0, 'in transit is no milestone')
  t.match((await update('OutForDelivery', [transit, out], { expected_delivery: '2026-11-22' })).json(), { applied: true })
  t.match(milestones, [{ milestone: 'outForDelivery', shipment: { id: shipment.id }, checkpoint: { message: 'Out for delivery', location: 'Bonn, Germany', subStatus: 'OutForDelivery_001' } }])
  await eventually(app, async () => sent.length === 1)
  t.same(sent[0].to, ['zoe@example.com'])
  t.equal(sent[0].subject, 'Your order N200 is out for delivery')
  t.match(sent[0].text, 'Your order N200 is out for delivery today from Bonn, Germany.')
  t.match(sent[0].text, 'https://shop.example/shipments/track/')

  // The same scans again in a later event: nothing new, no second notice.
  t.match((await update('OutForDelivery', [transit, out])).json(), { applied: true })
  t.same(await rawQuery(app, "SELECT name FROM shipments_outbox WHERE name = 'carrierMilestone'"), [{ name: 'carrierMilestone' }], 'one milestone event written')
  t.equal(new Set(milestones.map((event) => event.eventId)).size, 1, 'listeners saw one event (at least once)')

  // A failed attempt (AfterShip's AttemptFail): the problem notice, to the customer and the staff address.
  const attempt = scan('2026-11-22T11:02:00+01:00', 'AttemptFail', 'AttemptFail_001', 'Receiver not at home')
  t.match((await update('AttemptFail', [transit, out, attempt], { expected_delivery: '2026-11-24' })).json(), { applied: true })
  await eventually(app, async () => sent.length >= 3)
  const problemMails = sent.filter((message) => message.notificationId === problem.id)
  t.same(problemMails.map((message) => message.to), [['zoe@example.com', 'support@shop.example'], ['zoe@example.com', 'support@shop.example']], 'the attempt and the later estimate, each to both')
  t.ok(problemMails.some((message) => message.text.includes('Receiver not at home (Bonn, Germany)')), 'the attempt, in the carrier’s words')
  t.ok(problemMails.some((message) => message.text.includes('The carrier now expects to deliver it on Tuesday, November 24')), 'the later estimate')
  t.match(milestones.at(-1), { milestone: 'attempted' })
  const jobStates = async () => (await rawQuery(app, "SELECT state FROM shipments_outbox WHERE name = 'customerNotification' ORDER BY id")).map((job) => job.state)
  // A mail handed to the transport is marked done right after: waited for, not raced.
  await eventually(app, async () => (await jobStates()).every((state) => state === 'done'))
  const jobs = (await jobStates()).map((state) => ({ state }))
  t.same(jobs.map((job) => job.state), ['done', 'done', 'done'], 'three notices, each once')
})

t.test('the ready-made notifications: each checks as a definition; the admin adds one disabled; triggers and recipients are checked', async (t) => {
  const { app } = await setup(t)
  for (const name of Object.keys(NOTIFICATION_TEMPLATES) as Array<keyof typeof NOTIFICATION_TEMPLATES>) {
    const created = await app.shipments.notifications.createFromTemplate(name)
    t.equal(created.enabled, false, `${name} is added disabled`)
    const rendered = await app.shipments.notifications.sendTest(created.id, (await app.shipments.shipments.list({})).shipments[0].id, ['qa@shop.example'])
    t.ok(rendered.subject.includes('N200'), `${name} renders`)
  }
  await t.rejects(app.shipments.notifications.createFromTemplate('nope' as never), { message: /no template "nope"/ })
  await t.rejects(app.shipments.notifications.create({ name: 'x', statuses: [], triggers: ['lost' as never], recipient: 'customer', subject: 's', html: 'h', text: 't' }), { message: /"lost" is not one of outForDelivery/ })
  await t.rejects(app.shipments.notifications.create({ name: 'x', statuses: [], recipient: 'customer', subject: 's', html: 'h', text: 't' }), { message: /must list at least one of/ })
  await t.rejects(app.shipments.notifications.create({ name: 'x', statuses: ['shipped'], recipient: 'customerAndAddresses', subject: 's', html: 'h', text: 't' }), { message: /needs at least one address/ })
  t.equal((await app.shipments.notifications.list()).length, Object.keys(NOTIFICATION_TEMPLATES).length, 'nothing refused was stored')

  const admin = await buildAdminApp(t)
  const client = adminClient(admin, 'admin')
  const list = await client.get('/notifications')
  t.equal(list.statusCode, 200)
  t.match(list.body, 'data-template="problem"')
  const added = await client.post('/notifications/templates/delivered', {})
  t.equal(added.statusCode, 303)
  const [stored] = await admin.shipments.notifications.list()
  t.match(stored, { name: 'Delivered', enabled: false, triggers: ['delivered'] })
  t.equal(added.headers.location, `/shipments/admin/notifications/${stored.id}?notice=templateAdded`)
  const page = await client.get(`/notifications/${stored.id}`)
  t.match(page.body, /<input type="checkbox" name="triggers" value="delivered" checked> Delivered/)
  const unknown = await client.post('/notifications/templates/nope', {})
  t.equal(unknown.statusCode, 404)
  t.equal((await admin.shipments.notifications.list()).length, 1)
})
