// Notifications on return events: a return moving through its states mails the customer and the staff
// once per event and definition, through the outbox; a definition disabled before its job runs sends
// nothing; the templates see the return (lines with names, reasons, state, message, label); the
// ready-made return notifications; the admin form offers the return triggers and refuses a bad one.
import t, { type Test } from 'tap'
import { eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { NOTIFICATION_TEMPLATES, RETURN_TRIGGERS, type MailMessage, type NotificationInput } from '../src/index.js'
import { rawQuery, tables, TEST_ENGINE } from './fixtures/database.js'
import { ADMIN, adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'
import { eventually } from './fixtures/outbox.js'

const STAFF = 'returns@shop.example'

/** A host whose transport fails `failNext` times first; an order of Mug x2, Tea x1 shipped to zoe@example.com. */
async function setup(t: Test) {
  const sent: MailMessage[] = []
  let failures = 0
  const app = await buildAdminApp(t, {
    notifications: {
      sendMail: async (message) => {
        if (failures > 0) {
          failures--
          throw new Error('SMTP 421 try again later')
        }
        sent.push(message)
      },
    },
  })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'R700', isCompleted: true, email: 'zoe@example.com', items: [{ name: 'Mug <Blue>', sku: 'MUG', quantity: 2 }, { name: 'Tea', sku: 'TEA', quantity: 1 }] })
  const [mug, tea] = (await app.shipments.orders.orderLines!(orderId))!.map((line) => line.id!)
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: mug!, quantity: 2 }, { lineItemId: tea!, quantity: 1 }] })
  await app.shipments.shipments.update(shipment!.id, { status: 'shipped' })
  return { app, sent, orderId, mug: mug!, tea: tea!, failNext: (count: number) => (failures = count) }
}

const mailJobs = (app: FastifyInstance) => rawQuery(app, "SELECT message_id, state, attempts, last_error FROM shipments_outbox WHERE name = 'customerNotification' ORDER BY id")
/** Waits for `count` mail jobs, none pending (a job handed to the transport is marked done right after). */
const settled = (app: FastifyInstance, count: number) =>
  eventually(app, async () => {
    const jobs = await mailJobs(app)
    return jobs.length === count && jobs.every((job) => job.state !== 'pending')
  })

/** A staff notice on every return event. */
const staffNotice: NotificationInput = {
  name: 'Returns desk',
  statuses: [],
  triggers: [...RETURN_TRIGGERS],
  recipient: 'addresses',
  addresses: [STAFF],
  subject: 'Return {{ return.reference }}: {{ toStateLabel }}',
  html: '<p>{{ return.reference }} ({{ order.reference }}) {{ fromState | default: "new" }} → {{ toState }}: {{ message }}</p>',
  text: '{{ return.reference }} {{ toState }}{% for line in return.lines %} | {{ line.quantity }} x {{ line.name }} ({{ line.reason }}{% if line.note %}: {{ line.note }}{% endif %}){% if line.received %} resellable {{ line.received.resellable }} damaged {{ line.received.damaged }}{% endif %}{% endfor %}{% if return.trackingNumber %} tracking {{ return.trackingNumber }}{% endif %}',
}

t.test('a return moving through its states mails the customer and the staff, once per event and definition', async (t) => {
  const { app, sent, orderId, mug, tea } = await setup(t)
  const authorised = await app.shipments.notifications.createFromTemplate('returnAuthorised')
  const received = await app.shipments.notifications.createFromTemplate('returnReceived')
  t.match([authorised, received], [
    { name: 'Your return is authorised', enabled: false, statuses: [], triggers: ['returnAuthorised'], recipient: 'customer' },
    { name: 'We received your return', enabled: false, statuses: [], triggers: ['returnReceived'], recipient: 'customer' },
  ], 'the ready-made ones are added disabled')
  await app.shipments.notifications.update(authorised.id, { enabled: true })
  await app.shipments.notifications.update(received.id, { enabled: true, recipient: 'customerAndAddresses', addresses: [STAFF] })
  const staff = await app.shipments.notifications.create(staffNotice)
  // A shipment-status definition is not sent on a return.
  await app.shipments.notifications.create({ ...staffNotice, name: 'Cancelled', statuses: ['cancelled'], triggers: [] })

  const entry = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 2, reason: 'damaged', note: 'Chipped' }], message: 'Customer called' })
  await app.shipments.returns.update(entry.id, { state: 'authorised' })
  await app.shipments.returns.update(entry.id, { trackingNumber: '1Z999AA10123456784', carrier: 'UPS' })
  await app.shipments.returns.receive(entry.id, { lines: [{ lineItemId: mug, resellable: 1, damaged: 1 }] })
  await app.shipments.returns.update(entry.id, { state: 'closed', message: 'Refunded' })
  const second = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: tea, quantity: 1, reason: 'no_longer_needed' }] })
  await app.shipments.returns.update(second.id, { state: 'rejected', message: 'Opened food cannot be returned' })
  await settled(app, 8)

  const summary = sent.map((message) => [message.notificationId, message.returnId, message.shipmentId, message.to, message.subject])
  t.same(
    summary.filter(([id]) => id !== staff.id).sort(),
    [
      [authorised.id, entry.id, null, ['zoe@example.com'], 'Your return R700-r001 for order R700 is authorised'],
      [received.id, entry.id, null, ['zoe@example.com', STAFF], 'We received your return R700-r001 for order R700'],
    ].sort(),
    'the customer: authorised, then received (with the staff address)',
  )
  t.same(
    summary.filter(([id]) => id === staff.id).map(([, returnId, , to, subject]) => [returnId, to, subject]).sort(),
    [
      [entry.id, [STAFF], 'Return R700-r001: Requested'],
      [entry.id, [STAFF], 'Return R700-r001: Authorised'],
      [entry.id, [STAFF], 'Return R700-r001: Received'],
      [entry.id, [STAFF], 'Return R700-r001: Closed'],
      [second.id, [STAFF], 'Return R700-r002: Requested'],
      [second.id, [STAFF], 'Return R700-r002: Rejected'],
    ].sort(),
    'the staff: every event, in transit (no event) left out',
  )
  const customerAuthorised = sent.find((message) => message.notificationId === authorised.id)!
  t.match(customerAuthorised.text, '- 2 x Mug <Blue>\n')
  t.match(customerAuthorised.text, 'Please send the items back to us', 'no label: the customer ships it themselves')
  t.match(customerAuthorised.html, '<li>2 × Mug &lt;Blue&gt;</li>', 'names escaped in the HTML body')
  const staffText = sent.filter((message) => message.notificationId === staff.id).map((message) => message.text)
  t.ok(staffText.includes('R700-r001 received | 2 x Mug <Blue> (damaged: Chipped) resellable 1 damaged 1 tracking 1Z999AA10123456784'), staffText.join('\n'))
  t.ok(sent.some((message) => message.html === '<p>R700-r002 (R700) requested → rejected: Opened food cannot be returned</p>'), 'the rejection with its message')

  // Each job once, each done; sweeping again sends nothing more.
  const jobs = await mailJobs(app)
  t.equal(jobs.length, 8)
  t.equal(new Set(jobs.map((job) => job.message_id)).size, 8, 'one job per event and definition')
  t.ok(jobs.every((job) => job.state === 'done'))
  await app.shipments.outbox.sweep()
  t.equal(sent.length, 8, 'nothing sent twice')
  t.equal(new Set(sent.map((message) => message.messageId)).size, 8)

  // The deliveries name the return; the admin page links it.
  const deliveries = await app.shipments.notifications.deliveries(staff.id)
  t.equal(deliveries.length, 6)
  t.match(deliveries.find((delivery) => delivery.toStatus === 'rejected'), { shipmentId: null, returnId: second.id, state: 'done' })
  const page = await adminClient(app, 'admin').get(`/notifications/${staff.id}`)
  t.equal(page.statusCode, 200)
  t.match(page.body, `<a href="${ADMIN}/returns/${second.id}" data-return="${second.id}">Return R700-r002</a>`)
  t.match(page.body, '<span class="badge badge-return-rejected" data-return-state="rejected">Rejected</span>')
})

t.test('a return notification disabled before its job runs is skipped, not sent', async (t) => {
  const { app, sent, orderId, mug, failNext } = await setup(t)
  const staff = await app.shipments.notifications.create(staffNotice)
  failNext(1)
  await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }] })
  // The attempt is counted when the job is claimed: its error marks the attempt's end.
  await eventually(app, async () => (await mailJobs(app))[0]?.last_error === 'SMTP 421 try again later')
  t.match(await mailJobs(app), [{ state: 'pending', last_error: 'SMTP 421 try again later' }], 'the first attempt failed')
  await app.shipments.notifications.update(staff.id, { enabled: false })
  await rawQuery(app, "UPDATE shipments_outbox SET available_at = ? WHERE name = 'customerNotification'", [TEST_ENGINE === 'sqlite' ? Date.now() - 1000 : new Date(Date.now() - 1000)])
  await settled(app, 1)
  t.same(sent, [], 'nothing sent')
  t.match(await mailJobs(app), [{ state: 'skipped', last_error: 'Skipped: the notification was disabled before it was sent.' }])
  t.match(await app.shipments.notifications.deliveries(staff.id), [{ state: 'skipped', returnId: Number }])

  // A return removed from the database before its job ran (the package never deletes one): skipped too.
  await app.shipments.notifications.update(staff.id, { enabled: true })
  failNext(1)
  const gone = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }] })
  await eventually(app, async () => (await mailJobs(app))[1]?.last_error === 'SMTP 421 try again later')
  await rawQuery(app, 'DELETE FROM shipments_returns WHERE id = ?', [gone.id])
  await rawQuery(app, "UPDATE shipments_outbox SET available_at = ? WHERE name = 'customerNotification'", [TEST_ENGINE === 'sqlite' ? Date.now() - 1000 : new Date(Date.now() - 1000)])
  await settled(app, 2)
  t.same(sent, [], 'nothing sent')
  t.match((await mailJobs(app))[1], { state: 'skipped', last_error: 'Skipped: the return was deleted before it was sent.' })
  const page = await adminClient(app, 'admin').get(`/notifications/${staff.id}`)
  t.equal(page.statusCode, 200)
  t.match(page.body, `<span class="meta">Return #${gone.id}</span>`, 'a return gone has no page to link to')
})

t.test('templates see the return: the label link when there is one, the lines, the state; a test send on a return', async (t) => {
  const { app, sent, orderId, mug, tea } = await setup(t)
  const entry = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }, { lineItemId: tea, quantity: 1, reason: 'other', note: 'Wrong flavour' }] })
  await app.shipments.returns.update(entry.id, { state: 'authorised' })
  const authorised = await app.shipments.notifications.createFromTemplate('returnAuthorised')
  const withoutLabel = await app.shipments.notifications.sendTest(authorised.id, { returnId: entry.id })
  t.match(withoutLabel, { to: ['zoe@example.com'], subject: 'Your return R700-r001 for order R700 is authorised', sent: true })
  t.equal(withoutLabel.text, 'We have authorised your return R700-r001 for order R700:\n- 1 x Mug <Blue>\n- 1 x Tea\nPlease send the items back to us and tell us the tracking number.\n')

  // A label bought (as the label purchase stores it): the mail links it.
  const { db, schema } = tables(app)
  await db
    .update(schema.returns)
    .set({ labelState: 'purchased', labelUrl: 'https://labels.example/r700.pdf', labelOperationId: 'op-1', trackingNumber: '9400100000000000000000', carrier: 'USPS', state: 'label_sent' })
    .where(eq(schema.returns.id, entry.id))
  const withLabel = await app.shipments.notifications.sendTest(authorised.id, { returnId: entry.id }, ['qa@shop.example'])
  t.match(withLabel, { to: ['qa@shop.example'], sent: true })
  t.match(withLabel.html, '<p><a href="https://labels.example/r700.pdf">Print your return label</a></p>')
  t.match(withLabel.text, 'Print your return label: https://labels.example/r700.pdf')
  t.match(sent.at(-1), { to: ['qa@shop.example'], returnId: entry.id, shipmentId: null, notificationId: authorised.id })

  const fields = await app.shipments.notifications.create({
    ...staffNotice,
    subject: '{{ return.stateLabel }}',
    text: '{{ return.reference }}|{{ return.state }}|{{ return.carrier }}|{{ return.trackingNumber }}|{{ return.labelUrl }}|{{ items.size }}|{% for line in return.lines %}{{ line.sku }}:{{ line.reason }}:{{ line.note }};{% endfor %}|{{ order.email }}|{{ shipment }}',
  })
  const rendered = await app.shipments.notifications.sendTest(fields.id, { returnId: entry.id })
  t.equal(rendered.subject, 'Label sent')
  t.equal(rendered.text, 'R700-r001|label_sent|USPS|9400100000000000000000|https://labels.example/r700.pdf|2|MUG:damaged:;TEA:other:Wrong flavour;|zoe@example.com|')
  await t.rejects(app.shipments.notifications.sendTest(fields.id, { returnId: 424242 }), { name: 'NotificationConfigError', field: 'returnId' })
})

t.test('the admin form offers the return triggers; a bad definition is refused with 422 and nothing stored; a test send on a return', async (t) => {
  const { app, sent, orderId, mug } = await setup(t)
  const admin = adminClient(app, 'admin')
  const blank = await admin.get('/notifications/new')
  t.equal(blank.statusCode, 200)
  for (const trigger of RETURN_TRIGGERS) t.match(blank.body, `<input type="checkbox" name="triggers" value="${trigger}"> Return `)
  const form = (changes: Record<string, string | string[]>) => ({
    name: 'Return desk',
    statuses: [],
    triggers: ['returnRequested', 'returnReceived'],
    recipient: 'addresses',
    addresses: STAFF,
    subject: 'Return {{ return.reference }}',
    html: '<p>{{ return.reference }}</p>',
    text: '{{ return.reference }}',
    language: '',
    enabled: 'true',
    ...changes,
  })
  const unknown = await admin.post('/notifications', form({ triggers: ['returnRequested', 'returnLost'] }))
  t.equal(unknown.statusCode, 422)
  t.match(fieldMarkup(unknown.body, 'triggers'), /&quot;returnLost&quot; is not one of outForDelivery/)
  const broken = await admin.post('/notifications', form({ text: '{% for line in return.lines %}' }))
  t.equal(broken.statusCode, 422)
  t.match(fieldMarkup(broken.body, 'text'), /is not a valid template/)
  t.match(broken.body, '<input type="checkbox" name="triggers" value="returnReceived" checked> Return received', 'what was ticked stays')
  const noAddress = await admin.post('/notifications', form({ addresses: '' }))
  t.equal(noAddress.statusCode, 422)
  t.same(await app.shipments.notifications.list(), [], 'nothing stored')
  t.same(await mailJobs(app), [])

  const created = await admin.post('/notifications', form({}))
  t.equal(created.statusCode, 303)
  const [stored] = await app.shipments.notifications.list()
  t.match(stored, { name: 'Return desk', statuses: [], triggers: ['returnRequested', 'returnReceived'], recipient: 'addresses', addresses: [STAFF], enabled: true })
  const list = await admin.get('/notifications')
  t.match(list.body, '<span class="badge badge-trigger" data-trigger="returnRequested">Return requested</span>')

  // "Send test" takes a return's reference too (disabled first: the request itself sends nothing then).
  await app.shipments.notifications.update(stored.id, { enabled: false })
  const entry = await app.shipments.returns.request(orderId, { lines: [{ lineItemId: mug, quantity: 1, reason: 'damaged' }] })
  await admin.get(`/notifications/${stored.id}`)
  const tested = await admin.post(`/notifications/${stored.id}/test`, { shipment: entry.reference, to: 'qa@shop.example' })
  t.equal(tested.statusCode, 200)
  t.match(tested.body, '<tr><th>Rendered for</th><td>Return R700-r001</td></tr>')
  t.match(tested.body, '<td data-rendered="subject">Return R700-r001</td>')
  t.match(sent, [{ to: ['qa@shop.example'], subject: 'Return R700-r001', returnId: entry.id, shipmentId: null }])
  const unknownReturn = await admin.post(`/notifications/${stored.id}/test`, { shipment: 'R700-r009', to: '' })
  t.equal(unknownReturn.statusCode, 422)
  t.match(fieldMarkup(unknownReturn.body, 'shipment'), /No shipment &quot;R700-r009&quot;\./)
  t.equal(sent.length, 1)
  for (const name of ['returnAuthorised', 'returnReceived'] as const) t.match(list.body, `data-template="${name}"`, `${NOTIFICATION_TEMPLATES[name].name} offered`)
})
