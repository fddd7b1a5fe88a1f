// Notification templates are text that store admins write: they read no files (include, render and
// layout are refused, and no template lookup reaches the file system), and a hostile one holds the
// host's event loop for one render limit at a time, not for the whole notification.
import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { TEMPLATE_RENDER_LIMIT_MS, type MailMessage } from '../src/index.js'
import { buildTestApp } from './fixtures/app.js'
import { rawQuery } from './fixtures/database.js'
import { eventually } from './fixtures/outbox.js'

const mail = { name: 'Shipped', statuses: ['shipped' as const], recipient: 'customer' as const, subject: 'Shipped', html: '<p>On its way</p>', text: 'On its way' }
// A line of the package's own package.json: what a template that read the file would show.
const packageName = (JSON.parse(readFileSync('package.json', 'utf8')) as { name: string }).name

async function setup(t: Test) {
  const sent: MailMessage[] = []
  const app = await buildTestApp(t, { notifications: { sendMail: async (message) => void sent.push(message) } })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'T100', isCompleted: true, email: 'zoe@example.com', items: [{ name: 'Mug', sku: 'MUG', quantity: 1 }] })
  const [shipment] = await app.shipments.shipments.create(orderId)
  return { app, sent, shipment }
}

t.test('include, render and layout are refused when a template is saved, naming the field and why', async (t) => {
  const { app } = await setup(t)
  const { notifications } = app.shipments
  for (const [field, template] of [
    ['html', '{% include "package.json" %}'],
    ['text', "{% render 'package.json' %}"],
    ['subject', '{% layout "package.json" %}Hi'],
    ['html', '{%- include ".env" -%}'],
    ['html', '{% liquid\n  include "package.json"\n%}'],
  ] as const) {
    await t.rejects(
      notifications.create({ ...mail, [field]: template }),
      { name: 'NotificationConfigError', message: new RegExp(`^${field}: is not a valid template: the "(include|render|layout)" tag is not available: notification templates cannot read other templates or files`) },
      template,
    )
  }
  t.same(await notifications.list(), [], 'nothing stored')
  const saved = await notifications.create(mail)
  await t.rejects(notifications.update(saved.id, { html: '{% include "package.json" %}' }), { name: 'NotificationConfigError' })
  t.equal((await notifications.get(saved.id))!.html, mail.html, 'the update changed nothing')
})

t.test('a template stored before the upgrade that includes a file reads nothing: the test send and the job fail, the file unseen', async (t) => {
  const { app, sent, shipment } = await setup(t)
  const saved = await app.shipments.notifications.create(mail)
  await rawQuery(app, 'UPDATE shipments_notifications SET html = ? WHERE id = ?', ['{% include "package.json" %}', saved.id])

  const refused = await app.shipments.notifications.sendTest(saved.id, shipment.id).then(
    () => null,
    (error: Error) => error,
  )
  t.ok(refused, 'the test send fails')
  t.match(refused!.message, /the "include" tag is not available/)
  t.notMatch(refused!.message, packageName, 'and shows nothing of the file')

  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  await eventually(app, async () => (await app.shipments.notifications.deliveries(saved.id))[0]?.state === 'failed')
  const [delivery] = await app.shipments.notifications.deliveries(saved.id)
  t.match(delivery.attempts, [{ error: /^The template could not be rendered: .*the "include" tag is not available/ }])
  t.same(sent, [], 'no mail, and so no file in any mail')
})

t.test('a hostile template stops at its render or memory limit and never holds the event loop for long', async (t) => {
  const { app, sent, shipment } = await setup(t)
  t.equal(TEMPLATE_RENDER_LIMIT_MS, 50)
  for (const [what, hostile, limit] of [
    // Many cheap nodes: the render limit, checked between nodes.
    ['nested loops', '{% for a in (1..5000) %}{% for b in (1..5000) %}{{ a | append: b }}{% endfor %}{% endfor %}', /template render limit exceeded/],
    // One costly node: a range of ten million held the loop for a second under the old memory limit.
    ['one huge range', '{% for a in (1..9999999) %}{% endfor %}', /memory alloc limit exceeded/],
  ] as const) {
    const saved = await app.shipments.notifications.create({ ...mail, name: what, subject: hostile, html: hostile, text: hostile })
    // The longest stretch without a turn of the event loop while the send runs, measured by a 5 ms
    // ticker and closed by the send's own end: a render that blocks is inside one of these gaps, whether
    // or not the ticker fired during it. Only an order-of-magnitude guard (speed is measured in
    // benchmarks): a render limit of a second, or a node that costs one, fails it.
    let last = performance.now()
    let longestGap = 0
    const tick = () => {
      const now = performance.now()
      longestGap = Math.max(longestGap, now - last)
      last = now
    }
    const ticker = setInterval(tick, 5)
    t.teardown(() => clearInterval(ticker))
    last = performance.now()
    await t.rejects(app.shipments.notifications.sendTest(saved.id, shipment.id), { message: limit }, `${what}: the limit error, as clear as before`)
    tick()
    clearInterval(ticker)
    t.ok(longestGap < 10 * TEMPLATE_RENDER_LIMIT_MS, `${what}: the event loop was held ${Math.round(longestGap)} ms at most (a guard against a second, not a benchmark)`)
  }
  t.same(sent, [])
})
