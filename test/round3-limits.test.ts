// Round 3 of hostile input: a request body that never finishes, 500s from keys PostgreSQL cannot hold
// and from a header built from request text, and a flood of anonymous ShipStation requests.
import { connect } from 'node:net'
import t from 'tap'
import { buildDemoHost, DEMO_SERVER_OPTIONS } from '../examples/demo-host.js'
import { EXCHANGE_ACTIVITY_KEPT, EXCHANGE_ACTIVITY_PRUNE_EVERY, EXCHANGE_ACTIVITY_REFUSED_KEPT } from '../src/index.js'
import { openDatabase } from '../src/db/open.js'
import { rawQuery, testDatabase } from './fixtures/database.js'
import { basicAuth, buildExchangeApp, EXCHANGE_URL, exportedOrders, exportRequest, insertExportOrder } from './fixtures/exchange.js'
import { adminClient, buildAdminApp } from './fixtures/admin.js'

/** Opens a connection, writes `head`, then sends nothing more; resolves with what came back and when the server closed it. */
function stalledRequest(port: number, head: string): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    let answer = ''
    const socket = connect(port, '127.0.0.1', () => socket.write(head))
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (answer += chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }))
  })
}

t.test('a request body that never finishes gets a 408 within the demo\'s deadline, and its connection is let go', async (t) => {
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  t.equal(app.server.requestTimeout, DEMO_SERVER_OPTIONS.requestTimeout, 'the demo runs with the options it exports')
  t.equal(app.server.headersTimeout, DEMO_SERVER_OPTIONS.http.headersTimeout)

  const halfABody = (path: string, headers: string) =>
    `POST ${path} HTTP/1.1\r\nHost: localhost\r\n${headers}Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"username":"${'a'.repeat(500_000)}`
  const stalled = await Promise.all([
    stalledRequest(port, halfABody('/login', '')),
    stalledRequest(port, halfABody(`${EXCHANGE_URL}?action=shipnotify&order_number=1001`, 'Authorization: Basic c2hpcHN0YXRpb246ZGVtby1zaGlwc3RhdGlvbi1wYXNzd29yZC1jaGFuZ2UtbWU=\r\n')),
    stalledRequest(port, 'POST /login HTTP/1.1\r\nHost: localhost\r\nContent-Ty'),
  ])
  const deadline = DEMO_SERVER_OPTIONS.requestTimeout + DEMO_SERVER_OPTIONS.http.connectionsCheckingInterval
  for (const [index, { answer, closedAfterMs }] of stalled.entries()) {
    t.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/, `stalled request ${index}: a 408`)
    t.match(answer, /\r\n\r\n\{"error":"Request Timeout","message":"Client Timeout","statusCode":408\}$/)
    t.ok(closedAfterMs >= DEMO_SERVER_OPTIONS.requestTimeout - 100 && closedAfterMs <= deadline + 4_000, `closed after ${closedAfterMs} ms (deadline ${deadline} ms, checked every second; slack for a busy CI machine)`)
  }
  const open = await new Promise<number>((resolve, reject) => app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))))
  t.equal(open, 0, 'no connection (nor the body it buffered) is kept')
  const login = await fetch(`http://127.0.0.1:${port}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"admin","password":"admin"}' })
  t.equal(login.status, 200, 'the server goes on answering')
  t.match(await login.json(), { success: true, user: { username: 'admin' } })
})

t.test('a login whose returnTo holds a non-Latin-1 character, NUL or DEL logs in and returns to a safe local path', async (t) => {
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false })
  t.teardown(() => app.close())
  const fallback = '/shipments/admin/shipments'
  const cases: Array<[string, string]> = [
    ['/shipments/admin/shipments?q=€', '/shipments/admin/shipments?q=%E2%82%AC'],
    ['/shipments/admin/orders/1?note=café😀', '/shipments/admin/orders/1?note=caf%C3%A9%F0%9F%98%80'],
    ['/shipments/admin/webhooks?x=%E2%82%AC', '/shipments/admin/webhooks?x=%E2%82%AC'],
    ['/shipments/admin/shipments\u0000', fallback],
    ['/shipments/admin/shipments\u007f', fallback],
    ['/shipments/admin/\u0085shipments', fallback],
    ['/\t/evil.example', fallback],
    ['/\\evil.example', fallback],
    ['/shipments\\..\\admin', fallback],
    ['//evil.example/x', fallback],
    ['https://evil.example/', fallback],
    ['javascript:alert(1)', fallback],
    ['/a b', fallback],
    ['', fallback],
  ]
  for (const [index, [returnTo, location]] of cases.entries()) {
    // Three users in turn: the login throttle allows each ten attempts a minute.
    const username = ['admin', 'editor', 'viewer'][index % 3]
    const response = await app.inject({
      method: 'POST',
      url: '/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ username, password: username, returnTo }).toString(),
    })
    t.equal(response.statusCode, 303, JSON.stringify(returnTo))
    t.equal(response.headers.location, location, JSON.stringify(returnTo))
    t.equal(response.body, '')
    const session = response.cookies.find((cookie) => cookie.name === 'demo_session')
    const read = await app.inject({ url: '/shipments/api/shipments/1', headers: { cookie: `demo_session=${session?.value}` } })
    t.equal(read.statusCode, 200, `the login holds: ${JSON.stringify(returnTo)}`)
    t.equal(read.json().shipment.reference, '1001-s001')
  }
  const admin = await app.inject({ method: 'POST', url: '/login', payload: { username: 'admin', password: 'admin' } })
  const cookie = `demo_session=${admin.cookies.find((entry) => entry.name === 'demo_session')?.value}`
  for (const location of new Set(cases.map(([, location]) => location))) {
    t.equal((await app.inject({ url: location, headers: { cookie } })).statusCode, 200, `${location} is a page of the site`)
  }
  // The login form carries the same safe path (it is never a header there, but it is the next redirect).
  const form = await app.inject({ url: `/login?returnTo=${encodeURIComponent('/shipments/admin/shipments?q=€\u0000')}` })
  t.equal(form.statusCode, 200)
  t.match(form.body, `<input type="hidden" name="returnTo" value="${fallback}">`)
  const encoded = await app.inject({ url: `/login?returnTo=${encodeURIComponent('/shipments/admin/shipments?q=€')}` })
  t.match(encoded.body, '<input type="hidden" name="returnTo" value="/shipments/admin/shipments?q=%E2%82%AC">')
})

t.test('a ShipStation export whose store holds NUL is an empty page, not a 500', async (t) => {
  const app = await buildExchangeApp(t, { storeField: 'store' })
  await insertExportOrder(app, { reference: 'RETAIL', fields: { store: 'retail' } })
  t.same(exportedOrders((await exportRequest(app, { store: 'retail' })).body).numbers, ['RETAIL'])
  for (const store of ['retail\u0000', '\u0000', 're\u0000tail']) {
    const response = await exportRequest(app, { store })
    t.equal(response.statusCode, 200, JSON.stringify(store))
    t.equal(response.headers['content-type'], 'text/xml; charset=utf-8')
    t.same(exportedOrders(response.body), { pages: 0, orders: [], numbers: [] })
  }
  const [logged] = await app.shipments.orderExchange!.activity.recent(1)
  t.match(logged, { action: 'export', page: 1, ordersExported: 0, statusCode: 200, reason: null }, 'recorded as answered')
})

t.test('admin webhook ids beyond int4 and delivery ids holding NUL are a 404, not a 500', async (t) => {
  const app = await buildAdminApp(t)
  const subscription = await app.shipments.webhooks.create({ url: 'https://receiver.example/hook', events: ['shipmentCreated'] })
  const admin = adminClient(app, 'admin')
  await admin.get('/webhooks')
  for (const id of ['2147483648', '9007199254740991', '4294967297']) {
    const page = await admin.get(`/webhooks/${id}`)
    t.equal(page.statusCode, 404, `GET ${id}`)
    t.match(page.body, /Webhook subscription not found\./)
    for (const action of ['enable', 'disable', 'delete', 'redeliver']) {
      const response = await admin.post(`/webhooks/${id}/${action}`, { deliveryId: `x:webhook:${id}` })
      t.equal(response.statusCode, 404, `${action} ${id}`)
      t.match(response.body, /Webhook subscription not found\./)
    }
    t.equal(await app.shipments.webhooks.get(Number(id)), null, 'the service finds none either')
  }
  const redeliver = await admin.post(`/webhooks/${subscription.id}/redeliver`, { deliveryId: `event\u0000:webhook:${subscription.id}` })
  t.equal(redeliver.statusCode, 404, 'a delivery id with NUL names no delivery')
  t.match(redeliver.body, /Webhook delivery not found\./)
  t.equal(await app.shipments.outbox.get('event\u0000'), null)
  t.equal(await app.shipments.outbox.retry('event\u0000'), false)
  t.match(await app.shipments.webhooks.get(subscription.id), { id: subscription.id, enabled: true, failureCount: 0 }, 'the subscription is untouched')
  t.equal((await app.shipments.webhooks.list()).length, 1)
})

t.test('the activity log prunes refused rows against their own bound, never the answered ones', async (t) => {
  const { data } = await openDatabase(await testDatabase(t, 'activity'), true, { lockDirectory: null, onLockCompromised: () => {}, onPoolError: () => {} })
  t.teardown(() => data.close())
  const record = (page: number, statusCode: number) =>
    data.recordExchangeActivity({ action: 'export', page, orderNumber: null, ordersExported: null, statusCode, reason: null, createdAt: new Date() }, { keep: 3, keepRefused: 2, every: 5 })
  const pages = async (refused?: boolean) => (await data.exchangeActivity(100, refused)).map((row) => row.page)
  await record(1, 200)
  await record(2, 200)
  for (let page = 3; page <= 14; page++) await record(page, 401)
  t.same(await pages(false), [2, 1], 'the answered rows outlive any number of refusals')
  t.same(await pages(true), [14, 13, 12, 11, 10, 9], 'the 10th write kept the newest 2 refused (9, 10), more came since')
  for (let page = 15; page <= 19; page++) await record(page, 200)
  t.same(await pages(false), [19, 18, 17, 16, 15, 2, 1], 'not pruned before the 15th write')
  await record(20, 200)
  t.same(await pages(false), [20, 19, 18], 'the 20th write kept the newest 3 answered')
  t.same(await pages(true), [14, 13], 'and the newest 2 refused')
  t.same(await pages(), [20, 19, 18, 14, 13])
})

t.test('a flood of anonymous ShipStation requests evicts no answered request and stores no text it chose', async (t) => {
  const app = await buildAdminApp(t)
  await insertExportOrder(app, { reference: 'KEPT-1' })
  for (let page = 1; page <= 3; page++) t.equal((await exportRequest(app, { page: String(page) })).statusCode, 200)
  const answered = await app.shipments.orderExchange!.activity.recent(10)
  t.equal(answered.length, 3)

  const flood = 1_100
  for (let index = 0; index < flood; index++) {
    const query =
      index % 2 === 0
        ? `action=%3Cb%3Espam${index}%3C%2Fb%3E&order_number=SPAM-${index}-${'x'.repeat(100)}`
        : `action=export&page=99999999999&order_number=SPAM-${index}`
    const response = await app.inject({ method: index % 4 === 1 ? 'POST' : 'GET', url: `${EXCHANGE_URL}?${query}`, headers: basicAuth('shipstation-user', `guess-${index}`) })
    if (response.statusCode !== 401) t.fail(`request ${index}: ${response.statusCode}`)
  }
  t.same(await app.shipments.orderExchange!.activity.recent(10, { refused: false }), answered, 'every answered request is still there')
  const refused = await app.shipments.orderExchange!.activity.recent(2_000, { refused: true })
  t.ok(refused.length >= EXCHANGE_ACTIVITY_REFUSED_KEPT && refused.length < EXCHANGE_ACTIVITY_REFUSED_KEPT + EXCHANGE_ACTIVITY_PRUNE_EVERY, `${refused.length} refused rows kept`)
  const [{ total }] = await rawQuery(app, 'SELECT count(*) AS total FROM shipments_exchange_activity')
  t.equal(Number(total), refused.length + 3, 'nothing else is stored')
  t.ok(EXCHANGE_ACTIVITY_KEPT >= 3)
  t.same(
    new Set(refused.map(({ action, orderNumber, statusCode, reason }) => JSON.stringify({ action, orderNumber, statusCode, reason }))),
    new Set([
      JSON.stringify({ action: '', orderNumber: null, statusCode: 401, reason: 'Invalid username or password.' }),
      JSON.stringify({ action: 'export', orderNumber: null, statusCode: 401, reason: 'Invalid username or password.' }),
    ]),
    'an unauthenticated request leaves a known action at most: no order number, no text of its own',
  )
  t.same(new Set(refused.map((row) => row.page)), new Set([null, 2_147_483_647]), 'a page beyond the column is stored as the largest it holds')

  // The admin page shows the answered requests beside the newest refused ones.
  const page = await adminClient(app, 'admin').get('/shipstation')
  t.equal(page.statusCode, 200)
  t.equal(page.body.match(/<tr data-status-code="200">/g)?.length, 3, 'the three exports are on the page')
  t.equal(page.body.match(/<tr data-status-code="401">/g)?.length, 100, 'with the newest 100 refusals')
  t.notMatch(page.body, /spam|SPAM/)
  t.match(page.body, /the last 100 answered and the last 100 refused/)

  // A client that proved its credentials still has its order number and action recorded.
  const notify = await app.inject({ method: 'POST', url: `${EXCHANGE_URL}?action=shipnotify&order_number=NO-SUCH-ORDER`, headers: basicAuth() })
  t.equal(notify.statusCode, 404)
  t.match((await app.shipments.orderExchange!.activity.recent(1))[0], { action: 'shipnotify', orderNumber: 'NO-SUCH-ORDER', statusCode: 404, reason: 'No order matches order_number NO-SUCH-ORDER.' })
})
