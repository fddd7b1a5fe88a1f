// Customer notifications (definitions, the outbox job, the host's transport, test sends) and the public
// tracking page (signed, revocable links; nothing internal shown).
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { fastifyShipments, standaloneTrackingLayout, type MailMessage, type ShipmentsPluginOptions } from '../src/index.js'
import { as, buildTestApp, postUpdate, shipmentRow } from './fixtures/app.js'
import { rawQuery, testDatabase } from './fixtures/database.js'
import { eventually } from './fixtures/outbox.js'
import { exited } from './fixtures/processes.js'

const TRACKING = { secret: 'a-tracking-page-secret-of-at-least-32-chars', baseUrl: 'https://shop.example' }

async function setup(t: Test, options: Partial<ShipmentsPluginOptions> = {}) {
  const sent: MailMessage[] = []
  let failures = 0
  const app = await buildTestApp(t, {
    notifications: {
      sendMail: async (message) => {
        if (failures > 0) {
          failures--
          throw new Error('SMTP 421 try again later')
        }
        sent.push(message)
      },
    },
    trackingPage: TRACKING,
    ...options,
  })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({
    reference: 'N100',
    isCompleted: true,
    email: 'zoe@example.com',
    items: [{ name: 'Mug <Deluxe>', sku: 'MUG', quantity: 2 }],
  })
  const lines = (await app.shipments.orders.orderLines!(orderId))!
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: lines[0].id, quantity: 2 }] })
  return { app, sent, shipment, failNext: (count: number) => (failures = count) }
}

const shippedMail = {
  name: 'Shipped',
  statuses: ['shipped' as const],
  recipient: 'customer' as const,
  subject: 'Order {{ order.reference }} is {{ toStatusLabel | downcase }}',
  html: '<p>{{ shipment.carrier }}: <a href="{{ trackingLink }}">track</a></p><ul>{% for item in items %}<li>{{ item.quantity }} x {{ item.name }}</li>{% endfor %}</ul><p>{{ message }}</p>',
  text: '{{ items.size }} item(s) via {{ shipment.carrier }}. {{ message }}',
  language: 'en',
}

const notificationJobs = (app: FastifyInstance) => rawQuery(app, "SELECT state, attempts, last_error FROM shipments_outbox WHERE name = 'customerNotification' ORDER BY id")

t.test('reaching a status sends the notification once, rendered with the shipment, order, items and the tracking link', async (t) => {
  const { app, sent, shipment } = await setup(t)
  const notification = await app.shipments.notifications.create(shippedMail)
  t.match(notification, { id: 1, name: 'Shipped', enabled: true, statuses: ['shipped'], recipient: 'customer', addresses: [], language: 'en' })

  await postUpdate(app, shipment.id, { status: 'in_progress' })
  const response = await postUpdate(app, shipment.id, { status: 'shipped', carrier: 'UPS <Air>', statusMessage: 'Left <the> warehouse & on its way' })
  t.equal(response.statusCode, 200)
  await eventually(app, () => sent.length > 0)
  const link = await app.shipments.trackingLinks!.url(shipment.id)
  t.match(link, /^https:\/\/shop\.example\/shipments\/track\/[A-Za-z0-9_-]{22}-[A-Za-z0-9_-]{32}$/)
  t.same(sent, [
    {
      to: ['zoe@example.com'],
      subject: 'Order N100 is shipped',
      html: `<p>UPS &lt;Air&gt;: <a href="${link}">track</a></p><ul><li>2 x Mug &lt;Deluxe&gt;</li></ul><p>Left &lt;the&gt; warehouse &amp; on its way</p>`,
      text: '1 item(s) via UPS <Air>. Left <the> warehouse & on its way',
      language: 'en',
      messageId: sent[0]?.messageId,
      notificationId: notification.id,
      shipmentId: shipment.id,
      returnId: null,
    },
  ])
  t.match(sent[0].messageId, /^<.+:notification:1@fastify-shipments>$/)
  // The done mark is written in batches after the send: wait for it, then sweep once more.
  await eventually(app, async () => (await notificationJobs(app)).every((job) => job.state === 'done'))
  await app.shipments.outbox.sweep()
  t.equal(sent.length, 1, 'sent once; in_progress sent nothing')
  t.same(await notificationJobs(app), [{ state: 'done', attempts: 1, last_error: null }])
  const [delivery] = await app.shipments.notifications.deliveries(notification.id)
  t.match(delivery, { shipmentId: shipment.id, toStatus: 'shipped', state: 'done', attempts: [{ error: null }] })
})

t.test('a failing transport is retried with backoff and the attempt logged; the retry sends it', async (t) => {
  const { app, sent, shipment, failNext } = await setup(t)
  await app.shipments.notifications.create({ ...shippedMail, recipient: 'addresses', addresses: ['ops@example.com', 'boss@example.com'] })
  failNext(1)
  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  await eventually(app, async () => (await notificationJobs(app)).some((job) => Number(job.attempts) === 1))
  t.same(await notificationJobs(app), [{ state: 'pending', attempts: 1, last_error: 'SMTP 421 try again later' }])
  t.equal(sent.length, 0)
  const [due] = await rawQuery(app, "SELECT available_at FROM shipments_outbox WHERE name = 'customerNotification'")
  const availableAt = due.available_at instanceof Date ? due.available_at.getTime() : Number(due.available_at)
  // One minute with the dispatcher's ±20 % jitter: due between 48 and 72 s after the attempt.
  const wait = availableAt - Date.now()
  t.ok(wait > 40_000 && wait <= 72_000, `the first retry waits about a minute (${wait} ms)`)
  // The minute passes: the retry comes due.
  await rawQuery(app, "UPDATE shipments_outbox SET available_at = ? WHERE name = 'customerNotification'", [app.shipments.database.engine === 'sqlite' ? Date.now() : new Date()])
  await eventually(app, () => sent.length > 0)
  t.same(sent.map((message) => message.to), [['ops@example.com', 'boss@example.com']])
})

t.test('SIGKILL between the shipped commit and its delivery: after a restart one job sends the mail once; a redelivered event sends no second', async (t) => {
  const database = await testDatabase(t, 'notification-crash')
  const { app: first, shipment } = await setup(t, { database })
  const notification = await first.shipments.notifications.create(shippedMail)
  await first.close()

  // The process that ships and dies has a transport too: it appends what it sends to this file.
  const mailDir = mkdtempSync(join(tmpdir(), 'notification-crash-'))
  t.teardown(() => rmSync(mailDir, { recursive: true, force: true }))
  const mailFile = join(mailDir, 'sent.jsonl')
  const worker = fileURLToPath(new URL('./fixtures/notification-crash-worker.ts', import.meta.url))
  const child = spawn(process.execPath, ['--import', 'tsx', worker, database, mailFile, String(shipment.id)], { stdio: ['ignore', 'ignore', 'inherit'] })
  t.equal((await exited(child)).signal, 'SIGKILL', 'the process died inside the listener, right after the commit')
  t.notOk(existsSync(mailFile), 'it sent nothing')

  const sent: MailMessage[] = []
  const app = Fastify({ logger: false })
  await app.register(fastifyShipments, { database, notifications: { sendMail: async (message) => void sent.push(message) }, outbox: { leaseMs: 1000, pollIntervalMs: 20 } })
  t.teardown(() => app.close())
  const delivered: string[] = []
  app.shipments.events.on('shipmentStatusChanged', (event) => void delivered.push(event.eventId))
  const [event] = await app.shipments.outbox.list({ kind: 'event', name: 'shipmentStatusChanged' })
  t.match(event, { state: 'pending', payload: { to: 'shipped' } }, 'the change was committed, its event left undelivered')
  t.same(await notificationJobs(app), [], 'no notification job yet')

  await app.ready()
  const settled = async () => (await app.shipments.outbox.get(event.id))?.state === 'done' && (await notificationJobs(app)).every((job) => job.state === 'done')
  await eventually(app, async () => sent.length > 0 && (await settled()))
  const once = async (what: string) => {
    t.equal(sent.length, 1, `${what}: one mail`)
    t.match(sent[0], { to: ['zoe@example.com'], subject: 'Order N100 is shipped', messageId: `<${event.id}:notification:${notification.id}@fastify-shipments>`, shipmentId: shipment.id })
    t.same(await notificationJobs(app), [{ state: 'done', attempts: 1, last_error: null }], `${what}: one job, run once`)
  }
  await once('after the restart')
  t.same(delivered, [event.id], 'the event was delivered after the restart, once, with the id it was written with')

  // Delivered again, as when a listener outlives its lease and another instance delivers the event too:
  // its job's id is taken, so no second job is written and no second mail sent.
  await rawQuery(app, "UPDATE shipments_outbox SET state = 'pending', done_at = NULL, claimed_by = NULL, claimed_until = NULL WHERE message_id = ?", [event.id])
  await eventually(app, settled)
  await app.shipments.outbox.sweep()
  t.same(delivered, [event.id, event.id], 'the event was delivered again')
  await once('after the redelivery')
})

t.test('definitions are checked when saved, naming the field; disabled ones send nothing', async (t) => {
  const { app, sent, shipment } = await setup(t)
  const { notifications } = app.shipments
  const refuse = (input: Record<string, unknown>, message: RegExp) => t.rejects(notifications.create({ ...shippedMail, ...input } as never), { name: 'NotificationConfigError', message }, message.source)
  await refuse({ subject: 'Hi {{ order.reference ' }, /^subject: is not a valid template/)
  await refuse({ html: '{% for x in items %}' }, /^html: is not a valid template/)
  await refuse({ statuses: [] }, /^statuses: must list at least one/)
  await refuse({ statuses: ['gone'] }, /^statuses: "gone" is not a shipment status/)
  await refuse({ recipient: 'addresses', addresses: [] }, /^addresses: needs at least one/)
  await refuse({ recipient: 'addresses', addresses: ['not an address'] }, /^addresses: "not an address" is not an email address/)
  await refuse({ language: 'english please' }, /^language: must be a language tag/)
  t.same(await notifications.list(), [], 'nothing was stored')

  const created = await notifications.create(shippedMail)
  await notifications.update(created.id, { enabled: false })
  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  await app.shipments.outbox.sweep()
  t.same(sent, [], 'a disabled definition sends nothing')
  t.same(await notificationJobs(app), [])
  await notifications.remove(created.id)
  t.same(await notifications.list(), [])
})

t.test('a test send renders against a real shipment', async (t) => {
  const { app, sent, shipment } = await setup(t)
  const created = await app.shipments.notifications.create(shippedMail)
  const rendered = await app.shipments.notifications.sendTest(created.id, shipment.id, ['me@example.com'])
  t.match(rendered, { to: ['me@example.com'], subject: 'Order N100 is new', sent: true })
  t.same(sent.map((message) => message.to), [['me@example.com']])
  await t.rejects(app.shipments.notifications.sendTest(created.id, 999999), { name: 'NotificationConfigError', message: 'shipmentId: no shipment 999999' })
})

t.test('the public tracking page: status, timeline, carrier link and items; escaped; nothing internal', async (t) => {
  const { app, shipment } = await setup(t)
  await postUpdate(app, shipment.id, { status: 'shipped', carrier: '<script>alert(1)</script>', trackingNumber: '1Z5R89390357567127', statusMessage: 'internal note: fragile', fulfillmentNotes: 'secret aisle 4' })
  const link = new URL((await app.shipments.trackingLinks!.url(shipment.id))!)
  const page = await app.inject({ url: link.pathname })
  t.equal(page.statusCode, 200)
  t.match(page.headers, { 'content-type': 'text/html; charset=utf-8', 'referrer-policy': 'no-referrer', 'x-robots-tag': 'noindex', 'cache-control': 'private, no-store' })
  t.match(page.body, /<h1>Order N100<\/h1>/, "headed by the shop's order reference")
  t.match(page.body, /<p class="status" data-status="shipped">Shipped<\/p>/)
  t.match(page.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;: <a href="https:\/\/wwwapps\.ups\.com\/WebTracking\/track\?track=yes&amp;trackNums=1Z5R89390357567127"/)
  t.match(page.body, /<td>Mug &lt;Deluxe&gt;<\/td><td>2<\/td>/)
  t.match(page.body, /Order received[^]*Shipped/)
  t.notMatch(page.body, /<script>|internal note|secret aisle|test-user|admin|"id"/, 'no raw markup, notes or users')
  t.notMatch(page.body, new RegExp(`>${shipment.id}<|orderId`), 'no internal ids')

  const forged = link.pathname.replace(/.$/, (last) => (last === 'A' ? 'B' : 'A'))
  t.equal((await app.inject({ url: forged })).statusCode, 404)
  // The token shows no internal id: its first part is the id enciphered, and another shipment's differs wholly.
  const token = link.pathname.split('/').pop()!
  const other = (await app.shipments.shipments.create(shipment.orderId))[0]!.id
  const otherToken = new URL(await app.shipments.trackingLinks!.url(other)).pathname.split('/').pop()!
  t.notOk(token.startsWith(`${shipment.id.toString(36)}-`) || token.startsWith(`${shipment.id}-`), 'no readable id')
  t.not(token.slice(0, 22), otherToken.slice(0, 22))
  t.equal((await app.inject({ url: `/shipments/track/${otherToken.slice(0, 22)}-${token.slice(23)}` })).statusCode, 404, "one shipment's signature with another's id")
  t.equal((await app.inject({ url: `/shipments/track/${'A'.repeat(22)}-${token.slice(23)}` })).statusCode, 404, 'an id block that deciphers to nothing')
  // The block's last character carries 4 bits the block does not use: another spelling of it is no link.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const respelled = `${token.slice(0, 21)}${alphabet[alphabet.indexOf(token[21]!) ^ 1]}${token.slice(22)}`
  t.equal((await app.inject({ url: `/shipments/track/${respelled}` })).statusCode, 404, 'one spelling per link')
  const long = await app.inject({ url: `/shipments/track/${'x'.repeat(90)}` })
  t.same([long.statusCode, long.headers['content-type']], [404, 'text/html; charset=utf-8'], "any other text (within the router's 100 characters): the page saying the link is not valid")
  t.equal((await app.inject({ url: '/shipments/track/nonsense' })).statusCode, 404)
  const renewed = new URL(await app.shipments.trackingLinks!.revoke(shipment.id))
  t.equal((await app.inject({ url: link.pathname })).statusCode, 404, 'a revoked link answers 404')
  t.equal((await app.inject({ url: renewed.pathname })).statusCode, 200, 'the new link works')
  await app.shipments.shipments.softDelete(shipment.id)
  t.equal((await app.inject({ url: renewed.pathname })).statusCode, 404, 'a deleted shipment has no page')
  t.equal((await shipmentRow(app, shipment.id)).status, 'shipped')
  void as
})

t.test('the standalone tracking layout escapes the title and language it is given', async (t) => {
  const page = standaloneTrackingLayout({ title: 'Shipment </title><script>alert(1)</script>', body: '<h1>ok</h1>', language: 'en"><script>' })
  t.match(page, '<title>Shipment &lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>')
  t.match(page, '<html lang="en&quot;&gt;&lt;script&gt;">')
  t.notMatch(page, /<script>/)
  t.match(page, '<main class="tracking"><h1>ok</h1></main>', 'the body is markup already')
})

t.test('bad notifications and trackingPage options fail ready() naming them', async (t) => {
  await t.rejects(buildTestApp(t, { notifications: { sendMail: 'smtp://x' as never } }), { message: /notifications\.sendMail/ })
  await t.rejects(buildTestApp(t, { trackingPage: { secret: 'short', baseUrl: 'https://shop.example' } }), { message: /trackingPage\.secret/ })
  await t.rejects(buildTestApp(t, { trackingPage: { secret: TRACKING.secret, baseUrl: 'shop.example' } }), { message: /trackingPage\.baseUrl/ })
  await t.rejects(buildTestApp(t, { trackingPage: { secret: '$NO_SUCH_TRACKING_SECRET_VARIABLE', baseUrl: 'https://shop.example' } }), { message: /trackingPage\.secret/ })
})
