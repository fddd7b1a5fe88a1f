// The admin pages as a store admin reads them (issue 25: 7-10): the overview's figures from the stored
// data, order references instead of ids, human dates in <time>, the host's user names in the history,
// the order page's customer and status, the integration page's gateway URL and labelled settings, and
// the chart's script served from the installed package. Both engines.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { eq } from 'drizzle-orm'
import { defineProvider, type OrderStore } from '../src/index.js'
import { jsonScript, overviewPage } from '../src/admin/overview-page.js'
import { dateTime } from '../src/admin/components.js'
import { buildTestApp, insertOrder, orderWithShipments } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { ADMIN, adminClient, buildAdminApp } from './fixtures/admin.js'
import { exportRequest, insertExportOrder } from './fixtures/exchange.js'

const HOUR = 3_600_000
/** The pages' "now": 15 April 2026, 12:00 in Berlin (CEST, +02:00), the test hosts' site timezone. */
const NOW = Date.parse('2026-04-15T10:00:00Z')

/** The markup of a section of the overview, by its heading's id. */
const section = (body: string, id: string) => new RegExp(`<section[^>]*aria-labelledby="${id}"[^]*?</section>`).exec(body)?.[0] ?? ''

t.test('the overview counts shipments by status, ships per day in the site timezone, lists late shipments and failing pushes', async (t) => {
  const app = await buildAdminApp(t, { clock: () => NOW })
  const { db, schema } = tables(app)
  const service = app.shipments.shipments
  const { orderId, shipmentIds } = await orderWithShipments(app, 12)
  const order = (await app.shipments.orders.findOrder(orderId))!
  const [a, b, c, d, deleted, late1, late2, shippedLate, cancelledLate, disabledLate, future, held] = shipmentIds

  // Shipped at times around midnight in Berlin: the day is the site's, not UTC's.
  const shippedAt = new Map([
    [a, '2026-04-14T22:30:00Z'], // 15 Apr 00:30 in Berlin: today
    [b, '2026-04-14T21:59:59Z'], // 14 Apr 23:59:59
    [c, '2026-03-16T22:59:00Z'], // 16 Mar 23:59 (CET, +01:00): the day before the 30 days
    [d, '2026-03-16T23:00:00Z'], // 17 Mar 00:00: the first of the 30 days
    [deleted, '2026-04-10T08:00:00Z'],
  ])
  for (const [id, at] of shippedAt) {
    await service.update(id, { status: 'shipped' })
    await db.update(schema.shipments).set({ dateShipped: new Date(at) }).where(eq(schema.shipments.id, id))
  }
  await service.softDelete(deleted)

  // Late: scheduled before now, enabled, not shipped, not cancelled, not deleted.
  await service.update(late1, { dateScheduledShip: { date: '2026-04-10', time: '09:00' } })
  await service.update(late2, { dateScheduledShip: { date: '2026-04-15', time: '11:59' }, status: 'on_hold' })
  await service.update(shippedLate, { dateScheduledShip: { date: '2026-04-01' }, status: 'shipped' })
  await service.update(cancelledLate, { dateScheduledShip: { date: '2026-04-01' }, status: 'cancelled' })
  await service.update(disabledLate, { dateScheduledShip: { date: '2026-04-01' }, enabled: false })
  await service.update(future, { dateScheduledShip: { date: '2026-04-15', time: '12:01' }, status: 'in_progress' })
  await service.update(held, { status: 'fulfilled' })

  // A failing push and one that worked.
  const integration = await app.shipments.integrations.create({ name: 'Warehouse', handle: 'wh', providerId: 'signed-webhook', settings: { secret: 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=' } })
  const [stored] = await db.select().from(schema.integrations).where(eq(schema.integrations.handle, integration.handle))
  await db.insert(schema.shipmentExternalReferences).values([
    { shipmentId: late1, integrationId: stored.id, lastPushAt: new Date(NOW - HOUR), lastPushError: 'HTTP 503 from the warehouse', pushAttempts: 3, updatedAt: new Date(NOW) },
    { shipmentId: late2, integrationId: stored.id, lastPushAt: new Date(NOW - 2 * HOUR), lastPushError: null, pushAttempts: 1, updatedAt: new Date(NOW) },
    // A host may write an error without a time: it is listed after the dated ones.
    { shipmentId: future, integrationId: stored.id, lastPushAt: null, lastPushError: 'Refused: unknown SKU', pushAttempts: 1, updatedAt: new Date(NOW) },
  ])

  const admin = adminClient(app, 'admin')
  const page = await admin.get('/overview')
  t.equal(page.statusCode, 200)
  t.match(page.body, /<h1>Overview<\/h1>/)

  // By status: the stored counts, deleted shipments left out.
  const expected = { new: 2, in_progress: 1, on_hold: 1, fulfilled: 1, shipped: 5, cancelled: 1 }
  const rows = await db.select().from(schema.shipments)
  for (const [status, count] of Object.entries(expected)) {
    t.equal(rows.filter((row) => row.status === status && row.dateDeleted === null).length, count, `stored: ${status}`)
    t.match(page.body, new RegExp(`<a href="${ADMIN}/shipments\\?status=${status}" data-status-count="${status}"><span class="count">${count}</span>`), status)
  }
  t.match(section(page.body, 'overview-by-status'), /11 shipments in all \(deleted ones left out\)/)

  // Shipped per day: 30 days, oldest first, today last; the JSON block and the table agree.
  const json = /<script type="application\/json" id="shipped-per-day-data">([^<]*)<\/script>/.exec(page.body)?.[1] ?? '[]'
  const days = JSON.parse(json) as Array<{ date: string; label: string; count: number }>
  t.equal(days.length, 30)
  t.same(days[0], { date: '2026-03-17', label: '17 Mar', count: 1 }, 'shipped at 00:00 in Berlin on the first day')
  t.same(days.at(-1), { date: '2026-04-15', label: '15 Apr', count: 2 }, 'shipped at 00:30 in Berlin (today, not yesterday as in UTC), and one shipped now')
  t.same(days.at(-2), { date: '2026-04-14', label: '14 Apr', count: 1 })
  t.equal(days.reduce((sum, day) => sum + day.count, 0), 4, 'neither the day before the 30 days nor the deleted shipment')
  t.equal(days.find((day) => day.date === '2026-03-29')?.label, '29 Mar', 'a day of the DST change is one day')
  t.match(page.body, /<tr data-day="2026-04-15"><td>15 Apr 2026<\/td><td class="num">2<\/td><\/tr>/)
  t.match(page.body, /<canvas id="shipped-chart" role="img" aria-label="Shipments shipped per day over the last 30 days: 4 in all">/)
  t.match(page.body, new RegExp(`<script src="${ADMIN}/assets/chart.umd.js" defer></script><script src="${ADMIN}/assets/overview.js" defer></script>`))

  // Late: the two, earliest first, with their order's reference and the scheduled date in <time>.
  const lateSection = section(page.body, 'overview-late')
  t.match(lateSection, /<span class="badge badge-attention" data-count="2">2<\/span>/)
  t.same([...lateSection.matchAll(/<tr data-shipment="(\d+)">/g)].map((match) => Number(match[1])), [late1, late2])
  t.match(lateSection, new RegExp(`<a href="${ADMIN}/orders/${orderId}">${order.reference}</a>`), 'the order by its reference')
  t.notMatch(lateSection, new RegExp(`>${orderId}</a>`), 'never the internal order id')
  t.match(lateSection, /<time datetime="2026-04-10T09:00:00\+02:00" title="2026-04-10T09:00:00\+02:00">10 Apr 2026, 09:00<\/time>/)

  // Failing pushes: the failed ones only, the newest attempt first, with their error, attempts and time.
  const pushes = section(page.body, 'overview-pushes')
  t.match(pushes, /data-count="2">2<\/span>/)
  t.same([...pushes.matchAll(/<tr data-shipment="(\d+)">/g)].map((match) => Number(match[1])), [late1, future])
  t.notMatch(pushes, new RegExp(`<tr data-shipment="${late2}">`), 'a push that worked is not failing')
  t.match(pushes, /<td>—<\/td><td class="num">1<\/td><td>Refused: unknown SKU<\/td>/, 'no time: a dash')
  t.match(pushes, /HTTP 503 from the warehouse/)
  t.match(pushes, /<td class="num">3<\/td>/)
  t.match(pushes, /15 Apr 2026, 11:00<\/time>/)
  t.match(pushes, new RegExp(`<a href="${ADMIN}/integrations/wh">wh</a>`))

  // A viewer sees the failing pushes too, the integration unlinked (its page is the managers').
  const viewerPushes = section((await adminClient(app, 'viewer').get('/overview')).body, 'overview-pushes')
  t.match(viewerPushes, /<td>wh<\/td>/)
  t.notMatch(viewerPushes, /\/integrations\/wh/)

  // The shipment page shows the last push with its error too.
  const shipmentPage = await admin.get(`/shipments/${late1}`)
  t.match(shipmentPage.body, /<div class="meta" data-push="failed">Last push <time[^>]*>15 Apr 2026, 11:00<\/time> \(3 attempts\): HTTP 503 from the warehouse<\/div>/)

  // The navigation starts with the overview, the landing page.
  t.match(page.body, new RegExp(`<a href="${ADMIN}/overview" aria-current="page">Overview</a>`))
  const root = await admin.get('/')
  t.equal(root.statusCode, 303)
  t.equal(root.headers.location, `${ADMIN}/overview`)
})

t.test('the overview bounds its lists: the 20 earliest late shipments of more, counted in full', async (t) => {
  const app = await buildAdminApp(t, { clock: () => NOW })
  const { shipmentIds } = await orderWithShipments(app, 22)
  for (const [index, id] of shipmentIds.entries()) {
    await app.shipments.shipments.update(id, { dateScheduledShip: { date: `2026-03-${String(index + 1).padStart(2, '0')}` } })
  }
  const page = await adminClient(app, 'admin').get('/overview')
  t.equal(page.statusCode, 200)
  const late = section(page.body, 'overview-late')
  t.match(late, /data-count="22">22<\/span>/)
  t.same([...late.matchAll(/<tr data-shipment="(\d+)">/g)].map((match) => Number(match[1])), shipmentIds.slice(0, 20), 'the earliest scheduled first')
  t.match(late, /Showing the 20 earliest of 22\./)
  t.match(section(page.body, 'overview-pushes'), /No push to an integration is failing\./)
})

t.test('the overview for integration managers: failing webhooks and the last ShipStation import; a viewer sees neither', async (t) => {
  const app = await buildAdminApp(t, { clock: () => NOW })
  const { db, schema } = tables(app)
  const webhooks = app.shipments.webhooks
  const healthy = await webhooks.create({ url: 'https://hooks.example.com/ok', events: ['*'] })
  const failing = await webhooks.create({ url: 'https://hooks.example.com/failing', events: ['*'] })
  const disabled = await webhooks.create({ url: 'https://hooks.example.com/disabled', events: ['*'] })
  const once = await webhooks.create({ url: 'https://hooks.example.com/once', events: ['*'] })
  const paused = await webhooks.create({ url: 'https://hooks.example.com/paused', events: ['*'] })
  await db.update(schema.webhookSubscriptions).set({ failureCount: 1 }).where(eq(schema.webhookSubscriptions.id, once.id))
  await webhooks.update(paused.id, { enabled: false })
  await db.update(schema.webhookSubscriptions).set({ failureCount: 4 }).where(eq(schema.webhookSubscriptions.id, failing.id))
  await db.update(schema.webhookSubscriptions).set({ enabled: false, failureCount: 20, disabledReason: '20 failed attempts in a row' }).where(eq(schema.webhookSubscriptions.id, disabled.id))

  const admin = adminClient(app, 'admin')
  let page = await admin.get('/overview')
  const hooks = section(page.body, 'overview-webhooks')
  t.match(hooks, /data-count="4">4<\/span>/)
  t.match(hooks, new RegExp(`<li data-webhook="${once.id}">[^]*?<div class="meta">1 failure in a row</div>`))
  t.match(hooks, new RegExp(`<li data-webhook="${paused.id}">[^]*?<div class="meta">Disabled</div>`), 'disabled by an admin: no reason')
  t.match(hooks, new RegExp(`<li data-webhook="${failing.id}"><a href="${ADMIN}/webhooks/${failing.id}">https://hooks.example.com/failing</a>\\s*<div class="meta">4 failures in a row</div>`))
  t.match(hooks, new RegExp(`<li data-webhook="${disabled.id}">[^]*Disabled: 20 failed attempts in a row`))
  t.notMatch(hooks, new RegExp(`data-webhook="${healthy.id}"`))
  t.match(section(page.body, 'overview-shipstation'), /ShipStation has not imported orders yet\./)

  // An export, then a refused one: the newest is shown, whatever its outcome.
  await insertExportOrder(app, { dateUpdated: new Date(NOW - HOUR) })
  const exported = await exportRequest(app, { page: '1' })
  t.equal(exported.statusCode, 200)
  page = await admin.get('/overview')
  let shipStation = section(page.body, 'overview-shipstation')
  t.match(shipStation, /<dl class="last-export" data-status-code="200">/)
  t.match(shipStation, /<dt>Orders exported<\/dt><dd>1 <span class="meta">\(page 1\)<\/span><\/dd>/)
  t.match(shipStation, /15 Apr 2026, 12:00<\/time>/, 'the time in the site timezone')
  const refused = await exportRequest(app, { page: '1' }, { authorization: `Basic ${Buffer.from('shipstation-user:wrong').toString('base64')}` })
  t.equal(refused.statusCode, 401)
  page = await admin.get('/overview')
  shipStation = section(page.body, 'overview-shipstation')
  t.match(shipStation, /data-status-code="401"/)
  t.match(shipStation, /<span class="badge badge-error">401<\/span> [^<]+<\/dd>/, 'the refusal with its reason')
  const [newest] = await app.shipments.orderExchange!.activity.recent(1)
  t.equal(newest.statusCode, 401, 'the log holds the refusal as its newest')

  const viewer = await adminClient(app, 'viewer').get('/overview')
  t.equal(viewer.statusCode, 200)
  t.equal(section(viewer.body, 'overview-webhooks'), '', 'webhooks are the managers\' pages')
  t.equal(section(viewer.body, 'overview-shipstation'), '')
  t.notMatch(viewer.body, /hooks\.example\.com/)
  t.equal((await adminClient(app, 'nobody').get('/overview')).statusCode, 403)
})

t.test('an overview without the order exchange says so; an empty store shows zeros', async (t) => {
  const app = await buildTestApp(t, { admin: {}, clock: () => NOW })
  const page = await adminClient(app, 'admin').get('/overview')
  t.equal(page.statusCode, 200)
  t.match(section(page.body, 'overview-shipstation'), /The order exchange with ShipStation is not configured\./)
  t.match(page.body, /data-status-count="new"><span class="count">0<\/span>/)
  t.match(section(page.body, 'overview-late'), /No shipment is late\./)
  t.match(section(page.body, 'overview-webhooks'), /Every webhook subscription is delivering\./)
})

t.test('shipment pages name the order by its reference and show dates for people, the ISO value in <time>', async (t) => {
  const app = await buildAdminApp(t, { clock: () => NOW })
  const { orderId, shipmentIds } = await orderWithShipments(app, 2)
  const order = (await app.shipments.orders.findOrder(orderId))!
  const admin = adminClient(app, 'admin')
  const { db, schema } = tables(app)
  // Created in winter (CET, +01:00); the clock's now is in summer time (CEST, +02:00).
  const created = new Date('2026-01-05T06:04:00Z')
  await db.update(schema.shipments).set({ createdAt: created, updatedAt: created })
  await db.update(schema.shipmentStatusHistory).set({ createdAt: created })

  const list = await admin.get('/shipments')
  t.equal(list.statusCode, 200)
  const row = new RegExp(`<tr data-shipment="${shipmentIds[0]}">[^]*?</tr>`).exec(list.body)?.[0] ?? ''
  t.match(row, new RegExp(`<td><a href="${ADMIN}/orders/${orderId}">${order.reference}</a></td>`))
  t.match(row, /<td class="meta"><time datetime="2026-01-05T07:04:00\+01:00" title="2026-01-05T07:04:00\+01:00">5 Jan 2026, 07:04<\/time><\/td>/)

  await app.shipments.shipments.update(shipmentIds[0], { status: 'shipped' })
  const page = await admin.get(`/shipments/${shipmentIds[0]}`)
  t.equal(page.statusCode, 200)
  t.match(page.body, new RegExp(`<tr><th>Order</th><td><a href="${ADMIN}/orders/${orderId}">${order.reference}</a></td></tr>`))
  for (const label of ['Shipped', 'Updated']) {
    t.match(page.body, new RegExp(`<tr><th>${label}</th><td><time datetime="2026-04-15T12:00:00\\+02:00" title="2026-04-15T12:00:00\\+02:00">15 Apr 2026, 12:00</time></td></tr>`), label)
  }
  t.match(page.body, /<tr><th>Created<\/th><td><time datetime="2026-01-05T07:04:00\+01:00" title="2026-01-05T07:04:00\+01:00">5 Jan 2026, 07:04<\/time><\/td><\/tr>/)
  t.match(page.body, /<li data-history="\d+"><div>Created [^]*?<div class="meta"><time datetime="2026-01-05T07:04:00\+01:00"[^>]*>5 Jan 2026, 07:04<\/time><\/div>/)
  t.match(page.body, /<div class="meta"><time datetime="2026-04-15T12:00:00\+02:00"[^>]*>15 Apr 2026, 12:00<\/time><\/div><\/li>/, 'the move to shipped, at the clock\'s now')
  t.notMatch(page.body, />\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}</, 'no raw ISO value as text')

  // An order the store no longer has: its id, marked as such, instead of a reference.
  await db.delete(schema.orders).where(eq(schema.orders.id, orderId))
  const orphan = await admin.get(`/shipments/${shipmentIds[1]}`)
  t.equal(orphan.statusCode, 200)
  t.match(orphan.body, new RegExp(`<tr><th>Order</th><td><a href="${ADMIN}/orders/${orderId}">#${orderId}</a></td></tr>`))
  t.match((await admin.get('/shipments')).body, new RegExp(`<a href="${ADMIN}/orders/${orderId}">#${orderId}</a>`))
})

t.test('the history names users through admin.userName: "by Jane"; null, a failure or no hook shows the id', async (t) => {
  const asked: string[] = []
  const logLines: string[] = []
  const app = await buildTestApp(
    t,
    {
      admin: {
        userName: async (userId) => {
          asked.push(userId)
          if (userId === 'viewer') throw new Error('directory down')
          return userId === 'admin' ? 'Jane <Admin>' : null
        },
      },
    },
    undefined,
    logLines,
  )
  const { shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]
  await app.shipments.shipments.update(id, { status: 'in_progress' }, { userId: 'admin' })
  await app.shipments.shipments.update(id, { status: 'on_hold' }, { userId: 'editor' })
  await app.shipments.shipments.update(id, { status: 'fulfilled' }, { userId: 'viewer' })
  await app.shipments.shipments.update(id, { status: 'shipped' }, { userId: 'admin' })

  const page = await adminClient(app, 'admin').get(`/shipments/${id}`)
  t.equal(page.statusCode, 200)
  t.equal(page.body.match(/ · by Jane &lt;Admin&gt;/g)?.length, 2, 'the name, escaped, on each of the user\'s rows')
  t.match(page.body, / · by user editor/, 'null: the id')
  t.match(page.body, / · by user viewer/, 'a failure: the id')
  t.same(asked.sort(), ['admin', 'editor', 'viewer'], 'asked once per user, not per row')
  t.ok(logLines.some((line) => line.includes('admin.userName failed') && line.includes('directory down')), 'the failure is logged')

  await t.rejects(buildTestApp(t, { admin: { userName: 'Jane' as never } }), /Invalid option "admin.userName": must be a function/)
})

t.test('the order page shows the customer, the order status and the lines', async (t) => {
  const app = await buildAdminApp(t)
  const orderId = await insertExportOrder(app, { email: 'jane@example.com' }, { items: [{ sku: 'TEE', name: 'T-shirt', quantity: 2, price: '10.00' }] })
  const admin = adminClient(app, 'admin')
  const page = await admin.get(`/orders/${orderId}`)
  t.equal(page.statusCode, 200)
  t.match(page.body, /<tr><th>Customer<\/th><td data-customer>Jane Doe<br><span class="meta">jane@example.com<\/span><\/td><\/tr>/)
  t.match(page.body, /<tr><th>Order status<\/th><td data-order-status="processing">Processing<\/td><\/tr>/, 'the status by its name')
  t.match(page.body, /<table class="order-lines">[^]*T-shirt[^]*<td class="num">2<\/td><td class="num">0<\/td><td class="num">2<\/td>/, 'the lines with ordered, allocated and unallocated')

  const bare = await insertOrder(app, { isCompleted: false, statusHandle: null })
  const barePage = await admin.get(`/orders/${bare}`)
  t.match(barePage.body, /<td data-customer>—<\/td>/)
  t.match(barePage.body, /<td data-order-status="">— <span class="badge badge-muted">Not completed<\/span><\/td>/)
})

t.test('a host order store without names: the order page shows the email and the status handle', async (t) => {
  const order = { id: 7, reference: 'HOST-7', statusHandle: 'paid', isCompleted: true, email: 'sam@example.com' }
  const store: OrderStore = {
    findOrder: async (id) => (id === 7 ? order : null),
    findOrderByReference: async (reference) => (reference === 'HOST-7' ? order : null),
    setOrderStatus: async () => {},
  }
  const app = await buildTestApp(t, { admin: {}, orderStore: store })
  const page = await adminClient(app, 'admin').get('/orders/7')
  t.equal(page.statusCode, 200)
  t.match(page.body, /<td data-customer><span class="meta">sam@example.com<\/span><\/td>/)
  t.match(page.body, /<td data-order-status="paid">paid<\/td>/)
})

t.test('the admin list asks a store with findOrders once per page for the order references; a failing lookup shows the ids', async (t) => {
  const known = new Map([7, 8].map((id) => [id, { id, reference: `HOST-${id}`, statusHandle: 'paid', isCompleted: true, email: null }]))
  const asked: number[][] = []
  let single = 0
  let failing = false
  const store: OrderStore = {
    findOrder: async (id) => (single++, known.get(id) ?? null),
    findOrders: async (ids) => {
      asked.push([...ids].sort())
      if (failing) throw new Error('order service down')
      return [...known.values()].filter((order) => ids.includes(order.id))
    },
    findOrderByReference: async () => null,
    setOrderStatus: async () => {},
  }
  const app = await buildTestApp(t, { admin: {}, orderStore: store })
  for (const orderId of [7, 8, 8]) await app.shipments.shipments.create(orderId)
  const admin = adminClient(app, 'admin')
  single = 0
  const page = await admin.get('/shipments')
  t.equal(page.statusCode, 200)
  t.same(asked, [[7, 8]], 'one call for the page, each order once')
  t.equal(single, 0, 'no lookup per order')
  t.equal(page.body.match(/>HOST-8<\/a>/g)?.length, 2)
  t.match(page.body, />HOST-7<\/a>/)

  failing = true
  const failed = await admin.get('/shipments')
  t.equal(failed.statusCode, 200, 'the page still answers')
  t.match(failed.body, />#7<\/a>/, 'the order id in place of the reference')
  t.notMatch(failed.body, />HOST-\d<\/a>/, 'no reference shown')
  t.equal((await app.shipments.shipments.list({})).shipments.length, 3, 'nothing changed')
})

/** A provider whose settings have titles and descriptions, and one without either. */
const labelled = defineProvider({
  id: 'labelled',
  name: 'Labelled',
  settingsSchema: Type.Object({
    accountId: Type.String({ title: 'Account number', description: 'As printed on the invoice.' }),
    region: Type.Optional(Type.String()),
  }),
  handleGatewayRequest: async () => ({ status: 204 }),
})

t.test('integration pages: the gateway URL to paste with a copy button, settings labelled by the schema\'s titles', async (t) => {
  const app = await buildAdminApp(t, { providers: [labelled], prefixes: { gateway: '/hooks/in' } })
  await app.shipments.integrations.create({ name: 'Labelled', handle: 'acme-west', providerId: 'labelled', settings: { accountId: 'A-1' } })
  const admin = adminClient(app, 'admin')
  const page = await admin.get('/integrations/acme-west')
  t.equal(page.statusCode, 200)
  t.match(page.body, /<input type="text" id="gateway-url" value="http:\/\/localhost:80\/hooks\/in\/handle\?integration=acme-west" readonly/)
  t.match(page.body, /<button type="button" data-copy-from="gateway-url" hidden>Copy<\/button>/, 'the button shows when admin.js runs')
  t.match(page.body, /<label for="input-settings.accountId">Account number<\/label>/)
  t.match(page.body, /<p class="hint">As printed on the invoice.<\/p>/)
  t.match(page.body, /<label for="input-settings.region">region \(optional\)<\/label>/, 'no title: the key')
  t.notMatch(page.body, /<script>/, 'no inline script')

  const created = await admin.get('/integrations/new?provider=signed-webhook')
  t.notMatch(created.body, /id="gateway-url"/, 'no URL before the integration has a handle')
  t.match(created.body, /<label for="input-settings.secret">Signing secret<\/label>/, 'the built-in provider\'s titles')
  t.match(created.body, /<label for="input-settings.toleranceSeconds">Timestamp tolerance \(seconds\)<\/label>/)

  const list = await admin.get('/integrations')
  t.match(list.body, /<td class="meta"><time datetime="[^"]+"[^>]*>\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}<\/time><\/td>/)
})

t.test('the chart script is served from the installed chart.js, the overview script from assets; no other file', async (t) => {
  const app = await buildAdminApp(t)
  for (const file of ['chart.umd.js', 'overview.js', 'admin.js']) {
    const asset = await app.inject({ url: `${ADMIN}/assets/${file}` })
    t.equal(asset.statusCode, 200, file)
    t.match(asset.headers['content-type'], /^text\/javascript/)
  }
  const chart = await app.inject({ url: `${ADMIN}/assets/chart.umd.js` })
  t.match(chart.body, /^\/\*!\n \* Chart\.js v4\./)
  t.notMatch(chart.body, /sourceMappingURL/, 'no map to ask for')
  for (const file of ['constructor', '__proto__', 'chart.js', '..%2Fpackage.json']) {
    t.equal((await app.inject({ url: `${ADMIN}/assets/${file}` })).statusCode, 404, file)
  }
})

t.test('dates for people and JSON in a script element, directly', async (t) => {
  t.equal(dateTime('2026-01-05T07:04:00+01:00', 'Europe/Berlin').value, '<time datetime="2026-01-05T07:04:00+01:00" title="2026-01-05T07:04:00+01:00">5 Jan 2026, 07:04</time>')
  t.equal(dateTime(new Date('2026-07-31T22:15:00Z'), 'America/New_York').value, '<time datetime="2026-07-31T18:15:00-04:00" title="2026-07-31T18:15:00-04:00">31 Jul 2026, 18:15</time>')
  t.equal(dateTime('2026-01-05T06:04:00Z', 'Asia/Kolkata').value, '<time datetime="2026-01-05T11:34:00+05:30" title="2026-01-05T11:34:00+05:30">5 Jan 2026, 11:34</time>', 'a value from another zone shows in the site\'s')
  t.equal(dateTime(null, 'UTC').value, '—')
  t.equal(dateTime(new Date(Number.NaN), 'UTC').value, 'Invalid Date', 'an invalid Date shows as text')
  t.equal(dateTime('<b>soon</b>', 'UTC').value, '&lt;b&gt;soon&lt;/b&gt;', 'text that is no date shows as text')
  // An export the log holds without a page, an answer or a reason: dashes, no empty parentheses.
  const figures = {
    byStatus: { new: 0, in_progress: 0, on_hold: 0, fulfilled: 0, shipped: 0, cancelled: 0 },
    shippedPerDay: [],
    late: { shipments: [], total: 0 },
    failingPushes: { pushes: [], total: 0 },
  }
  const context = { prefix: '/a', csrf: 'token', can: { view: true, edit: false, transition: false, manage: true }, timeZone: 'UTC' }
  const lastExport = { id: 1, date: '2026-01-05T06:04:00+00:00', action: 'export', page: null, orderNumber: null, ordersExported: null, statusCode: 200, reason: null }
  const rendered = overviewPage(context, { figures, orderReferences: new Map(), failingWebhooks: null, shipStation: { configured: true, lastExport }, chart: true }).value
  t.match(rendered, /<dt>Answer<\/dt><dd><span class="badge badge-ok">200<\/span><\/dd>\s*<dt>Orders exported<\/dt><dd>—<\/dd>/)
  t.notMatch(rendered, /overview-webhooks/, 'no webhooks section without the list')
  // Without chart.js (an optional peer dependency): the numbers as a table, open, and no script asked for.
  const withoutChart = overviewPage(context, { figures: { ...figures, shippedPerDay: [{ date: '2026-01-05', count: 3 }] }, orderReferences: new Map(), failingWebhooks: null, shipStation: null, chart: false }).value
  t.notMatch(withoutChart, /<canvas|chart\.umd\.js|overview\.js|shipped-per-day-data/, 'no canvas, no chart script, no data for one')
  t.match(withoutChart, /<p class="meta" data-chart-missing>No chart: it is drawn with chart\.js, which this host has not installed \(npm install chart\.js\)\. The numbers:<\/p>\s*<details open><summary>3 shipped in 30 days/)
  t.match(withoutChart, /<tr data-day="2026-01-05"><td>5 Jan 2026<\/td><td class="num">3<\/td><\/tr>/, 'the day in the table')
  t.match(rendered, /<details><summary>/, 'with chart.js the table stays folded')
  const script = jsonScript('data', [{ label: '</script><script>alert(1)</script>', amp: '&', line: '\u2028' }]).value
  t.notMatch(script.slice(0, -'</script>'.length), /<\/script/i)
  t.same(JSON.parse(/>([^<]*)<\/script>$/.exec(script)![1]), [{ label: '</script><script>alert(1)</script>', amp: '&', line: '\u2028' }], 'the same value read back')
})
