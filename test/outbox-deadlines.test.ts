// The outbox under jobs that hang or die: every attempt has a deadline, the sweep never waits on one job,
// a synchronous throw is a failed attempt, claims are renewed while an instance works and taken over
// within a few seconds when it dies (with the unknown attempt in the log), and a job with nothing left
// to do is recorded as skipped.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { fastifyShipments, type MailMessage, type ShipmentsPluginOptions } from '../src/index.js'
import { buildTestApp } from './fixtures/app.js'
import { rawQuery, TEST_ENGINE, testDatabase } from './fixtures/database.js'
import { sleep } from './fixtures/outbox.js'
import { exited, lineMatching } from './fixtures/processes.js'

const shippedMail = {
  name: 'Shipped',
  statuses: ['shipped' as const],
  recipient: 'customer' as const,
  subject: 'Order {{ order.reference }} shipped',
  html: '<p>On its way</p>',
  text: 'On its way',
}

/** Waits until `done` holds, at most `ms`, without calling the sweep (the timer's sweeps are under test). */
async function until(done: () => Promise<boolean> | boolean, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await done()) return true
    await sleep(20)
  }
  return done()
}

/** An app whose transport is `sendMail`, with an order (customer email) and one shipment of it. */
async function setup(t: Test, sendMail: (message: MailMessage) => Promise<void>, options: Partial<ShipmentsPluginOptions> = {}, database?: string) {
  const app = await buildTestApp(t, { notifications: { sendMail }, ...options }, database)
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'D100', isCompleted: true, email: 'zoe@example.com', items: [{ name: 'Mug', sku: 'MUG', quantity: 1 }] })
  const [shipment] = await app.shipments.shipments.create(orderId)
  return { app, shipment }
}

const mailJobs = (app: Parameters<typeof rawQuery>[0]) => rawQuery(app, "SELECT id, state, attempts, last_error FROM shipments_outbox WHERE name = 'customerNotification' ORDER BY id")
/** Makes the notification jobs' retries due now, as if their backoff had passed. */
const dueNow = (app: Parameters<typeof rawQuery>[0]) =>
  rawQuery(app, "UPDATE shipments_outbox SET available_at = ? WHERE name = 'customerNotification' AND state = 'pending'", [TEST_ENGINE === 'sqlite' ? Date.now() - 1000 : new Date(Date.now() - 1000)])

t.test('a hanging mail hook beside a webhook that needs a retry: the sweep goes on and delivers the retry', async (t) => {
  const answers: number[] = []
  const receiver = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      const status = answers.length === 0 ? 503 : 204
      answers.push(status)
      response.writeHead(status).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())))

  let mailCalls = 0
  let releaseMail = () => undefined as void
  const { app, shipment } = await setup(
    t,
    async () => {
      mailCalls++
      if (mailCalls === 1) throw new Error('SMTP 421 try again later')
      await new Promise<void>((resolve) => (releaseMail = resolve)) // the second attempt hangs until the test ends
    },
    // A deadline far beyond the test: only a sweep that does not wait on the hanging job can deliver the retry.
    { outbox: { pollIntervalMs: 20, retryDelaysMs: [1500], jobTimeoutMs: 120_000 }, webhooks: { allowPrivateAddresses: true } },
  )
  const subscription = await app.shipments.webhooks.create({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, events: ['shipmentStatusChanged'] })
  await app.shipments.notifications.create(shippedMail)
  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })

  t.ok(await until(async () => mailCalls === 1 && answers.length === 1 && (await mailJobs(app))[0]?.attempts === 1), 'the mail failed once, the webhook was refused once')
  await dueNow(app)
  t.ok(await until(() => mailCalls === 2), 'the sweep took the mail retry, which now hangs')
  t.ok(
    await until(async () => (await app.shipments.webhooks.deliveries(subscription.id))[0]?.state === 'done'),
    'the webhook retry was delivered while the mail still hangs',
  )
  t.same(answers, [503, 204])
  t.equal(mailCalls, 2, 'the hanging mail was not started again')
  t.match(await mailJobs(app), [{ state: 'pending', attempts: 1 }], 'the hanging attempt is still in flight')
  releaseMail()
})

t.test('an attempt past outbox.jobTimeoutMs counts as failed and is retried; its late answer is ignored', async (t) => {
  const pending: Array<() => void> = []
  const { app, shipment } = await setup(t, () => new Promise<void>((resolve) => void pending.push(resolve)), { outbox: { pollIntervalMs: 20, jobTimeoutMs: 200 } })
  const notification = await app.shipments.notifications.create(shippedMail)
  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  t.ok(await until(async () => (await mailJobs(app))[0]?.attempts === 1), 'the attempt ended at its deadline')
  t.match(await mailJobs(app), [{ state: 'pending', attempts: 1, last_error: 'No answer within 200 ms (outbox.jobTimeoutMs); a late answer is ignored.' }], 'failed, to be retried')
  const [delivery] = await app.shipments.notifications.deliveries(notification.id)
  t.match(delivery, { state: 'pending', attempts: [{ error: /^No answer within 200 ms/ }] })

  pending[0]()
  await sleep(100)
  t.match(await mailJobs(app), [{ state: 'pending', attempts: 1 }], 'the late answer changed nothing: still waiting for its retry')
  t.equal(pending.length, 1, 'and the retry waits for its backoff')
})

t.test('a host listener that never settles: past outbox.jobTimeoutMs the event counts as delivered, webhooks and later events of its shipment go on', async (t) => {
  const bodies: Array<{ id: string; data: { to: string } }> = []
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString()) as { id: string; data: { to: string } })
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())))

  const logLines: string[] = []
  const app = await buildTestApp(t, { outbox: { leaseMs: 1000, jobTimeoutMs: 300, pollIntervalMs: 20 }, webhooks: { allowPrivateAddresses: true } }, undefined, logLines)
  const orders = app.shipments.referenceOrders!
  const orderId = await orders.createOrder({ reference: 'D200', isCompleted: true, items: [{ name: 'Mug', sku: 'MUG', quantity: 1 }] })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const subscription = await app.shipments.webhooks.create({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, events: ['shipmentStatusChanged'] })
  let calls = 0
  let lateSettle: () => void = () => undefined
  app.shipments.events.on('shipmentStatusChanged', () => {
    calls++
    // The first call never settles until the test lets it, long after its deadline; later ones settle.
    return calls === 1 ? new Promise<void>((resolve) => (lateSettle = resolve)) : Promise.resolve()
  })

  await app.shipments.shipments.update(shipment.id, { status: 'in_progress' })
  await app.shipments.shipments.update(shipment.id, { status: 'fulfilled' })
  t.ok(await until(() => bodies.length === 2, 8000), 'both webhooks arrived')
  t.same(bodies.map((body) => body.data.to), ['in_progress', 'fulfilled'], 'in commit order')
  t.equal(calls, 2, 'the listener was called for the later event too')
  const stateOfEvents = async () => (await app.shipments.outbox.list({ kind: 'event', name: 'shipmentStatusChanged' })).map((event) => event.state)
  t.ok(await until(async () => (await stateOfEvents()).every((state) => state === 'done')))
  t.same(await stateOfEvents(), ['done', 'done'], 'both events delivered, none left pending under a renewed claim')
  t.ok(await until(async () => (await app.shipments.webhooks.deliveries(subscription.id)).every((delivery) => delivery.state === 'done')))

  const warnings = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => /did not settle/.test(String(entry.msg)))
  t.equal(warnings.length, 1, 'one warning, for the event whose listener hung')
  t.match(warnings[0], { level: 40, event: 'shipmentStatusChanged', eventId: bodies[0].id, unsettledListeners: 1, msg: /outbox\.jobTimeoutMs/ })
  t.notOk('shipment' in warnings[0] || logLines.some((line) => /did not settle/.test(line) && line.includes('D200')), 'names the event, never its data')

  lateSettle()
  await sleep(100)
  t.same(await stateOfEvents(), ['done', 'done'], 'the late settle changed nothing')
  t.equal(bodies.length, 2, 'nothing sent again')
})

t.test('a mail hook that throws synchronously is a failed attempt, retried, not a crash', async (t) => {
  const { app, shipment } = await setup(t, ((): Promise<void> => {
    throw new Error('transport not configured')
  }) as (message: MailMessage) => Promise<void>)
  await app.shipments.notifications.create(shippedMail)
  const result = await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  t.equal(result.shipment.status, 'shipped', 'the change stands')
  t.ok(await until(async () => (await mailJobs(app))[0]?.attempts === 1))
  t.match(await mailJobs(app), [{ state: 'pending', attempts: 1, last_error: 'transport not configured' }])
})

t.test('a notification job whose definition was disabled or deleted before it ran is recorded as skipped, not done', async (t) => {
  let failing = true
  const sent: MailMessage[] = []
  const { app, shipment } = await setup(t, async (message) => {
    if (failing) throw new Error('SMTP 421 try again later')
    sent.push(message)
  }, { outbox: { pollIntervalMs: 20 } })
  const notification = await app.shipments.notifications.create(shippedMail)
  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  t.ok(await until(async () => (await mailJobs(app))[0]?.attempts === 1), 'the first attempt failed')
  await app.shipments.notifications.update(notification.id, { enabled: false })
  failing = false
  await dueNow(app)
  t.ok(await until(async () => (await mailJobs(app))[0]?.state !== 'pending'))
  t.same(sent, [], 'nothing sent')
  t.match(await mailJobs(app), [{ state: 'skipped', attempts: 2, last_error: 'Skipped: the notification was disabled before it was sent.' }])
  const [delivery] = await app.shipments.notifications.deliveries(notification.id)
  t.match(delivery, { state: 'skipped', attempts: [{ error: 'Skipped: the notification was disabled before it was sent.' }, { error: 'SMTP 421 try again later' }] }, 'newest attempt first')

  // Deleted: the job keeps its record (its rows outlive the definition), skipped for that reason.
  const second = await app.shipments.notifications.create({ ...shippedMail, statuses: ['cancelled'] })
  failing = true
  await app.shipments.shipments.update(shipment.id, { status: 'cancelled' })
  t.ok(await until(async () => (await mailJobs(app))[1]?.attempts === 1))
  await app.shipments.notifications.remove(second.id)
  await dueNow(app)
  t.ok(await until(async () => (await mailJobs(app))[1]?.state !== 'pending'))
  t.match((await mailJobs(app))[1], { state: 'skipped', last_error: 'Skipped: the notification was deleted before it was sent.' })
})

t.test('an instance that works on a job keeps its claim past the lease; another instance does not take it', async (t) => {
  const database = await testDatabase(t)
  let release: () => void = () => undefined
  // Leases of two seconds, renewed every 400 ms: a stall of the loaded test process up to 1.6 s still
  // renews in time (with one second, a stall of 0.8 s handed the job to the other instance).
  const first = await setup(t, () => new Promise<void>((resolve) => (release = resolve)), { outbox: { leaseMs: 2000, pollIntervalMs: 20 } }, database)
  const otherSent: MailMessage[] = []
  const other = Fastify({ logger: false })
  await other.register(fastifyShipments, { database, notifications: { sendMail: async (message) => void otherSent.push(message) }, outbox: { leaseMs: 2000, pollIntervalMs: 20 } })
  t.teardown(() => other.close())
  await other.ready()

  await first.app.shipments.notifications.create(shippedMail)
  await first.app.shipments.shipments.update(first.shipment.id, { status: 'shipped' })
  await sleep(5000)
  t.same(otherSent, [], 'two and a half leases later, the working instance still holds the job')
  release()
  t.ok(await until(async () => (await mailJobs(first.app))[0]?.state === 'done'))
  t.match(await mailJobs(first.app), [{ state: 'done', attempts: 1, last_error: null }])
  await sleep(100)
  t.same(otherSent, [], 'sent once, by the instance that held it')
})

t.test('SIGKILL during a mail send: another instance takes the job over within a few seconds and logs the unknown attempt', async (t) => {
  const database = await testDatabase(t)
  const { app: seeded, shipment } = await setup(t, async () => undefined, {}, database)
  const notification = await seeded.shipments.notifications.create(shippedMail)
  await seeded.close()

  const worker = fileURLToPath(new URL('./fixtures/mail-kill-worker.ts', import.meta.url))
  const child = spawn(process.execPath, ['--import', 'tsx', worker, database, String(shipment.id)], { stdio: ['ignore', 'pipe', 'inherit'] })
  await lineMatching(child, (line) => line === 'sending')
  child.kill('SIGKILL')
  t.equal((await exited(child)).signal, 'SIGKILL', 'killed in the middle of the send')

  const sent: MailMessage[] = []
  const app = Fastify({ logger: false })
  await app.register(fastifyShipments, { database, notifications: { sendMail: async (message) => void sent.push(message) }, outbox: { leaseMs: 1000, pollIntervalMs: 20 } })
  t.teardown(() => app.close())
  await app.ready()
  const killedAt = Date.now()
  t.ok(await until(() => sent.length > 0, 10_000), 'the job resumed on the other instance')
  t.ok(Date.now() - killedAt < 10_000, 'within a few seconds (the dead instance lease of 1 s, not minutes)')
  t.equal(sent.length, 1)
  // The mail is out before the job's completion is written: wait for that write, not only for the send.
  t.ok(await until(async () => (await mailJobs(app))[0]?.state !== 'pending'), 'the job left pending')
  t.match(await mailJobs(app), [{ state: 'done', attempts: 2, last_error: null }])
  const [delivery] = await app.shipments.notifications.deliveries(notification.id)
  t.match(delivery, { state: 'done', attempts: [{ error: null }, { error: /^Outcome unknown: the instance that held this job stopped renewing its claim/ }] }, 'the dead instance attempt is in the log beside the one that completed')
})
