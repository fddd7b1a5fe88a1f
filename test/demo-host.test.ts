// The demo host (`npm start`): its seed, its login / logout routes and sessions, and the README's
// walk-throughs against it, with the bodies the README shows.
import t from 'tap'
import { count, eq } from 'drizzle-orm'
import { buildDemoHost, DEMO_LOGIN_ATTEMPTS_PER_MINUTE, DEMO_LOGIN_ATTEMPTS_PER_USERNAME_PER_MINUTE, DEMO_SESSION_TTL_MS, demoTrustProxy } from '../examples/demo-host.js'
import { ShipmentsPermissions, type Shipment } from '../src/index.js'
import { tables, testDatabase } from './fixtures/database.js'

type DemoHost = Awaited<ReturnType<typeof buildDemoHost>>

async function login(app: DemoHost, username: string, password = username) {
  const response = await app.inject({ method: 'POST', url: '/login', payload: { username, password } })
  const cookie = response.cookies.find((candidate) => candidate.name === 'demo_session')
  return { response, setCookie: cookie, cookie: cookie ? `${cookie.name}=${cookie.value}` : '' }
}

const json = { 'content-type': 'application/json' }
const INVALID_LOGIN = { success: false, error: 'Invalid username or password.' }
const UNAUTHORIZED = { name: 'Unauthorized', message: 'Login required.', code: 0, status: 401, errorCode: 'SHIPMENTS_UNAUTHORIZED' }
const forbidden = (permission: string) => ({ name: 'Forbidden', message: `User is not permitted to perform this action (${permission}).`, code: 0, status: 403, errorCode: 'SHIPMENTS_FORBIDDEN' })

/** A shipment as the update endpoint answers it (spec 2.1: the read without the admin dates). */
const specFields = ({ dateCreated: _created, dateUpdated: _updated, dateDeleted: _deleted, estimatedDelivery: _estimate, estimatedDeliverySource: _source, parcels: _parcels, ...shipment }: Shipment) => shipment

const SEEDED_REFERENCES = ['1001-s001', '1002-s001', '1002-s002', '1003-s001', '1004-s001']

t.test('the demo host seeds once and keeps its data across restarts', async (t) => {
  const database = await testDatabase(t, 'demo')
  let app = await buildDemoHost({ database, logger: false })
  const { db, schema } = tables(app)
  const orders = await db.select().from(schema.orders)
  t.equal(orders.length, 5)
  t.equal(orders.filter((order) => order.isCompleted).length, 4)
  const shipments = await db.select().from(schema.shipments)
  for (const order of orders.filter((candidate) => candidate.isCompleted)) {
    const own = shipments.filter((shipment) => shipment.orderId === order.id)
    t.ok(own.length >= 1 && own.every((shipment) => shipment.status === 'new'), `order ${order.reference} has new shipments`)
  }
  t.same(shipments.map((shipment) => shipment.reference).sort(), SEEDED_REFERENCES)
  t.ok(orders.some((order) => order.couponCode && order.totalDiscount !== '0'), 'one order has a discount')
  const addresses = await db.select().from(schema.orderAddresses)
  t.ok(addresses.some((address) => /[^\x00-\x7f]/.test(address.fullName ?? '') && /&/.test(address.company ?? '') && /<.*>/.test(address.company ?? '') && /"/.test(address.company ?? '')))
  t.same((await app.shipments.integrations.list()).map((integration) => integration.handle).sort(), ['acme-3pl', 'demo-webhooks'])

  await app.close()
  app = await buildDemoHost({ database, logger: false })
  t.teardown(() => app.close())
  t.equal((await tables(app).db.select({ total: count() }).from(tables(app).schema.orders))[0].total, 5, 'not seeded twice')
  t.equal((await tables(app).db.select({ total: count() }).from(tables(app).schema.shipments))[0].total, 5)
  t.equal((await app.shipments.integrations.list()).length, 2, 'integrations not created twice')
})

t.test('demo login and logout: the bodies, a signed cookie naming a server-side session, three users with their permissions', async (t) => {
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false })
  t.teardown(() => app.close())

  for (const [username, password] of [['admin', 'nope'], ['root', 'root'], ['admin', 'Admin'], ['viewer', '']]) {
    const refused = await login(app, username, password)
    t.equal(refused.response.statusCode, 401, `${username} / ${JSON.stringify(password)}`)
    t.same(refused.response.json(), INVALID_LOGIN)
    t.equal(refused.cookie, '', 'no cookie')
  }
  const incomplete = await app.inject({ method: 'POST', url: '/login', payload: { username: 'admin' } })
  t.equal(incomplete.statusCode, 400, 'a login without a password is malformed')
  t.match(incomplete.json(), { error: 'Bad Request', message: /password/ })

  const editor = await login(app, 'editor')
  t.equal(editor.response.statusCode, 200)
  t.same(editor.response.json(), {
    success: true,
    user: { id: 2, username: 'editor', permissions: [ShipmentsPermissions.viewShipments, ShipmentsPermissions.editShipments] },
  })
  t.match(editor.setCookie, { name: 'demo_session', httpOnly: true, sameSite: 'Strict', path: '/', maxAge: DEMO_SESSION_TTL_MS / 1000 })
  t.notOk(editor.setCookie!.secure, 'not Secure over plain HTTP')
  const unsigned = app.unsignCookie(editor.setCookie!.value)
  t.ok(unsigned.valid, 'the cookie is signed')
  t.notMatch(unsigned.value!, /editor/, 'it carries a session id, not the user name')

  const headers = { cookie: editor.cookie, ...json }
  let response = await app.inject({ method: 'POST', url: '/shipments/api/shipments/1', headers, payload: JSON.stringify({ carrier: 'UPS' }) })
  t.equal(response.statusCode, 200)
  const afterCarrier = (await app.shipments.shipments.get(1))!
  t.same(response.json(), { success: true, shipment: specFields(afterCarrier) })
  t.match(afterCarrier, { id: 1, reference: '1001-s001', carrier: 'UPS', status: 'new' })
  response = await app.inject({ method: 'POST', url: '/shipments/api/shipments/1', headers, payload: JSON.stringify({ status: 'shipped' }) })
  t.equal(response.statusCode, 403, 'the editor cannot transition')
  t.same(response.json(), forbidden(ShipmentsPermissions.transitionShipments))
  t.equal((await app.shipments.shipments.get(1))!.status, 'new')

  const forged = await app.inject({ method: 'POST', url: '/shipments/api/shipments/1', headers: { cookie: 'demo_session=admin', ...json }, payload: '{"status":"shipped"}' })
  t.equal(forged.statusCode, 401, 'an unsigned cookie is nobody')
  t.same(forged.json(), UNAUTHORIZED)
  const madeUp = await app.inject({ url: '/shipments/api/shipments', headers: { cookie: `demo_session=${app.signCookie('admin')}` } })
  t.equal(madeUp.statusCode, 401, 'a signed cookie naming no session is nobody')
  t.same(madeUp.json(), UNAUTHORIZED)

  const admin = await login(app, 'admin')
  t.same(admin.response.json(), { success: true, user: { id: 1, username: 'admin', permissions: Object.values(ShipmentsPermissions) } })
  response = await app.inject({ method: 'POST', url: '/shipments/api/shipments/1', headers: { cookie: admin.cookie, ...json }, payload: '{"status":"shipped"}' })
  t.equal(response.statusCode, 200)
  const shipped = (await app.shipments.shipments.get(1))!
  t.same(response.json(), { success: true, shipment: specFields(shipped) })
  t.match(shipped, { status: 'shipped', carrier: 'UPS', dateShipped: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/ })
  const order = (await tables(app).db.select().from(tables(app).schema.orders).where(eq(tables(app).schema.orders.id, shipped.orderId)))[0]
  t.equal(order.statusHandle, 'shipped', 'the single-shipment order advanced')

  const viewer = await login(app, 'viewer')
  t.same(viewer.response.json(), { success: true, user: { id: 3, username: 'viewer', permissions: [ShipmentsPermissions.viewShipments] } })
  response = await app.inject({ url: '/shipments/api/shipments', headers: { cookie: viewer.cookie } })
  t.equal(response.statusCode, 200)
  const listed = response.json()
  t.same(listed.pagination, { page: 1, perPage: 50, total: 5, pages: 1 })
  t.same(listed.shipments.map((shipment: Shipment) => [shipment.reference, shipment.status]), SEEDED_REFERENCES.map((reference) => [reference, reference === '1001-s001' ? 'shipped' : 'new']))
  t.same(listed.shipments[0], shipped, 'the list shows each shipment in full')
  response = await app.inject({ method: 'POST', url: '/shipments/api/shipments/2', headers: { cookie: viewer.cookie, ...json }, payload: '{}' })
  t.equal(response.statusCode, 403)
  t.same(response.json(), forbidden(ShipmentsPermissions.editShipments))

  // Logout clears the cookie and ends the session, also for anyone who kept a copy of the cookie.
  const logout = await app.inject({ method: 'POST', url: '/logout', headers: { cookie: viewer.cookie } })
  t.equal(logout.statusCode, 200)
  t.same(logout.json(), { success: true })
  const cleared = logout.cookies.find((candidate) => candidate.name === 'demo_session')
  t.ok(cleared && cleared.value === '' && cleared.expires!.getTime() <= Date.now(), 'the cookie is cleared')
  response = await app.inject({ url: '/shipments/api/shipments', headers: { cookie: viewer.cookie } })
  t.equal(response.statusCode, 401, 'the kept cookie no longer names a session')
  t.same(response.json(), UNAUTHORIZED)
  response = await app.inject({ url: '/shipments/api/shipments/1', headers: { cookie: admin.cookie } })
  t.equal(response.statusCode, 200, "another user's session goes on")
  const again = await app.inject({ method: 'POST', url: '/logout' })
  t.same([again.statusCode, again.json()], [200, { success: true }], 'logging out without a session is harmless')
})

t.test('demo sessions end after eight hours, whatever the cookie says', async (t) => {
  let now = Date.UTC(2026, 10, 23, 8, 0, 0)
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false, clock: () => now })
  t.teardown(() => app.close())
  const { cookie } = await login(app, 'viewer')
  const read = () => app.inject({ url: '/shipments/api/shipments/1', headers: { cookie } })
  now += DEMO_SESSION_TTL_MS - 1
  let response = await read()
  t.equal(response.statusCode, 200, 'valid until the last millisecond')
  t.equal(response.json().shipment.reference, '1001-s001')
  now += 1
  response = await read()
  t.equal(response.statusCode, 401, 'ended at eight hours')
  t.same(response.json(), UNAUTHORIZED)
  now -= 1
  t.equal((await read()).statusCode, 401, 'an ended session stays ended')
})

t.test(`demo login is throttled: ${DEMO_LOGIN_ATTEMPTS_PER_MINUTE} attempts a minute per client address and username, then 429`, async (t) => {
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false })
  t.teardown(() => app.close())
  for (let attempt = 1; attempt <= DEMO_LOGIN_ATTEMPTS_PER_MINUTE; attempt++) {
    const { response } = await login(app, 'admin', `guess-${attempt}`)
    t.same([response.statusCode, response.json()], [401, INVALID_LOGIN], `attempt ${attempt}`)
  }
  const throttled = await login(app, 'admin')
  t.equal(throttled.response.statusCode, 429, 'the next attempt is refused, the right password included')
  t.match(throttled.response.json(), { statusCode: 429, error: 'Too Many Requests' })
  t.equal(throttled.cookie, '', 'and no session is given')
  const other = await login(app, 'editor')
  t.equal(other.response.statusCode, 200, 'another username from the same address is not throttled')
  t.same(other.response.json().user.username, 'editor')
})

t.test('behind a proxy (DEMO_TRUST_PROXY=true) the throttle counts the address the proxy saw, not X-Forwarded-For entries the client wrote', async (t) => {
  t.same([demoTrustProxy(undefined), demoTrustProxy('false'), demoTrustProxy('10.0.0.0/8, 127.0.0.1')], [false, false, '10.0.0.0/8, 127.0.0.1'])
  const hops = (value: string) => [0, 1, 2].map((hop) => (demoTrustProxy(value) as (address: string, hop: number) => boolean)('127.0.0.1', hop))
  t.same([hops('true'), hops('2')], [[true, false, false], [true, true, false]], '`true` trusts one proxy, a number that many')
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false, trustProxy: 'true' })
  t.teardown(() => app.close())
  // The proxy (the peer, 127.0.0.1) appends the address it saw; what comes before is the client's own text.
  const attempt = (forwardedFor: string, username = 'admin', password = 'wrong') =>
    app.inject({ method: 'POST', url: '/login', headers: { 'x-forwarded-for': forwardedFor }, payload: { username, password } })
  for (let guess = 1; guess <= DEMO_LOGIN_ATTEMPTS_PER_MINUTE; guess++) {
    t.equal((await attempt(`10.9.${guess}.1, 198.51.100.7`)).statusCode, 401, `guess ${guess}`)
  }
  const rotated = await attempt('10.9.99.1, 198.51.100.7', 'admin', 'admin')
  t.equal(rotated.statusCode, 429, 'a new forged entry does not make a new client')
  t.notOk(rotated.cookies.some((cookie) => cookie.name === 'demo_session'), 'and no session is given')
  t.equal((await attempt('198.51.100.8', 'admin', 'admin')).statusCode, 200, 'another address the proxy saw logs in')
})

t.test(`demo login is throttled per username too: ${DEMO_LOGIN_ATTEMPTS_PER_USERNAME_PER_MINUTE} attempts a minute from all addresses together`, async (t) => {
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false, trustProxy: 'true' })
  t.teardown(() => app.close())
  const attempt = (address: string, username: string, password: string) =>
    app.inject({ method: 'POST', url: '/login', headers: { 'x-forwarded-for': address }, payload: { username, password } })
  const statuses: number[] = []
  for (let guess = 1; guess <= DEMO_LOGIN_ATTEMPTS_PER_USERNAME_PER_MINUTE; guess++) statuses.push((await attempt(`203.0.113.${guess}`, 'editor', `guess-${guess}`)).statusCode)
  t.same(new Set(statuses), new Set([401]), 'each address stays under its own limit')
  const next = await attempt('203.0.113.200', 'editor', 'editor')
  t.equal(next.statusCode, 429, 'the next attempt at that username is refused from any address, the right password included')
  t.notOk(next.cookies.some((cookie) => cookie.name === 'demo_session'))
  t.equal((await attempt('203.0.113.200', 'viewer', 'viewer')).statusCode, 200, 'another username is not throttled')
})

t.test('attempts one address is refused do not count against the username: one address cannot lock a user out', async (t) => {
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false, trustProxy: 'true' })
  t.teardown(() => app.close())
  const attempt = (address: string, password: string) =>
    app.inject({ method: 'POST', url: '/login', headers: { 'x-forwarded-for': address }, payload: { username: 'editor', password } })
  const statuses: number[] = []
  for (let guess = 1; guess <= DEMO_LOGIN_ATTEMPTS_PER_USERNAME_PER_MINUTE + 5; guess++) statuses.push((await attempt('203.0.113.66', `guess-${guess}`)).statusCode)
  t.same(statuses.slice(0, DEMO_LOGIN_ATTEMPTS_PER_MINUTE), Array(DEMO_LOGIN_ATTEMPTS_PER_MINUTE).fill(401))
  t.same(new Set(statuses.slice(DEMO_LOGIN_ATTEMPTS_PER_MINUTE)), new Set([429]), 'then that address is refused')
  const elsewhere = await attempt('198.51.100.20', 'editor')
  t.equal(elsewhere.statusCode, 200, 'the user still logs in from another address')
  t.equal(elsewhere.headers['retry-after'], undefined)
  const refused = await attempt('203.0.113.66', 'editor')
  t.equal(refused.statusCode, 429)
  t.match(refused.headers['retry-after'], /^\d+$/, 'a refusal says when to retry')
})

t.test("the demo's login and home pages are never framed; logout clears the admin CSRF cookie and a token kept from before is refused", async (t) => {
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false })
  t.teardown(() => app.close())
  for (const url of ['/login', '/']) {
    const page = await app.inject({ url })
    t.equal(page.statusCode, 200, url)
    t.equal(page.headers['x-frame-options'], 'DENY', url)
    t.equal(page.headers['content-security-policy'], "frame-ancestors 'none'", url)
  }
  const failed = await app.inject({ method: 'POST', url: '/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'username=admin&password=wrong' })
  t.equal(failed.statusCode, 401)
  t.equal(failed.headers['x-frame-options'], 'DENY', 'the refused login page too')

  const shipment = (await app.shipments.shipments.list({ status: 'new' })).shipments[0]
  const first = await login(app, 'admin')
  const page = await app.inject({ url: `/shipments/admin/shipments/${shipment.id}`, headers: { cookie: first.cookie } })
  t.equal(page.statusCode, 200)
  const csrf = page.cookies.find((cookie) => cookie.name === 'shipments_admin_csrf')!
  const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]
  const logout = await app.inject({ method: 'POST', url: '/logout', headers: { cookie: first.cookie } })
  const cleared = logout.cookies.find((cookie) => cookie.name === 'shipments_admin_csrf')
  t.match(cleared, { value: '', path: '/shipments/admin' }, 'logout clears the CSRF cookie')
  t.ok(cleared!.expires! <= new Date(), 'expired')

  // Someone who kept the old CSRF cookie and token replays them in the same user's next session.
  const second = await login(app, 'admin')
  const replay = await app.inject({
    method: 'POST',
    url: `/shipments/admin/shipments/${shipment.id}/transition`,
    headers: { cookie: `${second.cookie}; shipments_admin_csrf=${csrf.value}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: token, status: 'shipped' }).toString(),
  })
  t.equal(replay.statusCode, 403, 'the token died with its session')
  t.match(replay.body, /This form has expired or was not sent from this site/)
  t.equal((await app.shipments.shipments.get(shipment.id))!.status, 'new', 'nothing changed')
})

t.test('the README walk-through against the demo: log in, list new shipments, ship one, read its history', async (t) => {
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false })
  t.teardown(() => app.close())
  const { cookie } = await login(app, 'admin')

  let response = await app.inject({ url: '/shipments/api/shipments?status=new', headers: { cookie } })
  t.equal(response.statusCode, 200)
  const expected = await app.shipments.shipments.list({ status: 'new' })
  t.same(response.json(), { success: true, shipments: expected.shipments, pagination: { page: 1, perPage: 50, total: 5, pages: 1 } })
  t.same(expected.shipments.map((shipment) => shipment.reference), SEEDED_REFERENCES)

  response = await app.inject({
    method: 'POST',
    url: '/shipments/api/shipments/1',
    headers: { cookie, ...json },
    payload: JSON.stringify({ status: 'shipped', carrier: 'UPS', trackingNumber: '1Z999AA10123456784', trackingUrl: 'ups.com/track?num=1Z999AA10123456784' }),
  })
  t.equal(response.statusCode, 200)
  const shipment = (await app.shipments.shipments.get(1))!
  t.same(response.json(), { success: true, shipment: specFields(shipment) })
  t.match(shipment, {
    id: 1,
    reference: '1001-s001',
    status: 'shipped',
    carrier: 'UPS',
    trackingNumber: '1Z999AA10123456784',
    trackingUrl: 'https://ups.com/track?num=1Z999AA10123456784',
    dateShipped: /\+00:00$/,
  })

  response = await app.inject({ url: '/shipments/api/shipments/1/history', headers: { cookie } })
  t.equal(response.statusCode, 200)
  const { history } = response.json()
  t.same(
    history.map((entry: Record<string, unknown>) => [entry.shipmentId, entry.fromStatus, entry.toStatus, entry.userId, entry.sourceIntegration, entry.externalCode, entry.message]),
    [
      [1, 'new', 'shipped', '1', null, null, null],
      [1, null, 'new', null, null, null, null],
    ],
    'newest first; the transition recorded with the demo user id',
  )
  t.same(response.json(), { success: true, history: await app.shipments.shipments.history(1) })

  response = await app.inject({ url: '/shipments/api/shipments?status=new', headers: { cookie } })
  t.same(response.json().pagination, { page: 1, perPage: 50, total: 4, pages: 1 }, 'one new shipment fewer')
})

t.test('the demo integrations answer signed webhooks and the custom provider', async (t) => {
  const { signWebhook } = await import('../src/index.js')
  const { DEMO_WEBHOOK_SECRET, DEMO_ACME_TOKEN } = await import('../examples/demo-integrations.js')
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false })
  t.teardown(() => app.close())
  const body = JSON.stringify({ orderNumber: '1003', status: 'in_transit', occurredAt: new Date().toISOString(), trackingNumber: 'JD0146' })
  const timestamp = Math.floor(Date.now() / 1000)
  const signed = {
    method: 'POST' as const,
    url: '/actions/shipments/gateway/handle?integration=demo-webhooks',
    headers: { 'webhook-id': 'msg_demo', 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(DEMO_WEBHOOK_SECRET, 'msg_demo', timestamp, body) },
    payload: body,
  }
  let response = await app.inject(signed)
  t.equal(response.statusCode, 200)
  const delivered = (await tables(app).db.select().from(tables(app).schema.shipments).where(eq(tables(app).schema.shipments.reference, '1003-s001')))[0]
  t.same(response.json(), { success: true, applied: true, deliveryId: 'msg_demo', shipment: { id: delivered.id, reference: '1003-s001', status: 'shipped' } })
  t.match(delivered, { status: 'shipped', trackingNumber: 'JD0146' })
  response = await app.inject(signed)
  t.same([response.statusCode, response.json()], [200, { success: true, applied: false, reason: 'duplicate', deliveryId: 'msg_demo' }], 'the same delivery again changes nothing')
  response = await app.inject({ ...signed, headers: { ...signed.headers, 'webhook-signature': 'v1,AAAA' } })
  t.equal(response.statusCode, 400, 'a wrong signature is refused')
  t.match(response.json(), { name: 'Bad Request', code: 0, status: 400, message: /signature/i })

  const acme = (payload: object, token = DEMO_ACME_TOKEN) =>
    app.inject({
      method: 'POST',
      url: '/actions/shipments/gateway/handle?integration=acme-3pl',
      headers: { authorization: `Bearer ${token}`, ...json },
      payload,
    })
  response = await acme({ shipmentReference: '1004-s001', state: 'PICKING' })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { accepted: true, applied: true, status: 'in_progress' })
  response = await acme({ shipmentReference: '1004-s001', state: 'TELEPORTED' })
  t.equal(response.statusCode, 202)
  t.same(response.json(), { accepted: true, applied: false, reason: 'unmapped state TELEPORTED' })
  response = await acme({ shipmentReference: '1004-s009', state: 'DISPATCHED' })
  t.equal(response.statusCode, 400)
  t.same(response.json(), { name: 'Bad Request', message: 'Unknown shipment 1004-s009.', code: 0, status: 400, errorCode: 'SHIPMENTS_INTEGRATION_ERROR' })
  response = await acme({ shipmentReference: '1004-s001', state: 'DISPATCHED' }, 'wrong-token')
  t.equal(response.statusCode, 400)
  t.same(response.json(), { name: 'Bad Request', message: 'Invalid bearer token.', code: 0, status: 400, errorCode: 'SHIPMENTS_INTEGRATION_ERROR' })
  const shipment = (await tables(app).db.select().from(tables(app).schema.shipments).where(eq(tables(app).schema.shipments.reference, '1004-s001')))[0]
  t.equal(shipment.status, 'in_progress', 'only the accepted, mapped state applied')
  t.same((await app.shipments.shipments.history(shipment.id)).map((entry) => [entry.toStatus, entry.sourceIntegration, entry.externalCode]), [
    ['in_progress', 'acme-3pl', 'PICKING'],
    ['new', null, null],
  ])
})

t.test('the demo host answers ShipStation: export of the four completed orders, a ship notification, 401 and 404', async (t) => {
  const { DEMO_SHIPSTATION_PASSWORD, DEMO_SHIPSTATION_USERNAME } = await import('../examples/demo-host.js')
  const { exportedOrders, textOf } = await import('./fixtures/exchange.js')
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false })
  t.teardown(() => app.close())
  const authorization = `Basic ${Buffer.from(`${DEMO_SHIPSTATION_USERNAME}:${DEMO_SHIPSTATION_PASSWORD}`).toString('base64')}`
  const url = '/actions/shippingplatformconnect/orders/process'

  const exported = await app.inject({ url: `${url}?action=export&page=1`, headers: { authorization } })
  t.equal(exported.statusCode, 200)
  t.equal(exported.headers['content-type'], 'text/xml; charset=utf-8')
  const { numbers, orders, pages } = exportedOrders(exported.body)
  t.same([...numbers].sort(), ['1001', '1002', '1003', '1004'])
  t.equal(pages, 1)
  const tricky = orders.find((order) => textOf(order, 'OrderNumber') === '1004')!
  t.equal(textOf(tricky, 'CustomerNotes'), 'Fragile: <glass> & "porcelain" ]]> handle with care — ありがとう 🙏')
  const wholesale = await app.inject({ url: `${url}?action=export&store=wholesale&start_date=01%2f01%2f2020+00%3a00&end_date=12%2f31%2f2030+23%3a59`, headers: { authorization } })
  t.same(exportedOrders(wholesale.body).numbers, ['1002'])
  const viaQuery = await app.inject({ url: `${url}?action=export&SS-UserName=${DEMO_SHIPSTATION_USERNAME}&SS-Password=${DEMO_SHIPSTATION_PASSWORD}` })
  t.equal(viaQuery.statusCode, 200, 'credentials in the query string (acceptQueryCredentials)')
  t.equal(viaQuery.body, exported.body)

  const notified = await app.inject({
    method: 'POST',
    url: `${url}?action=shipnotify&order_number=1003&carrier=DHL&service=Paket&tracking_number=JD014600003828`,
    headers: { authorization, 'content-type': 'application/xml; charset=utf-8' },
    payload: '<?xml version="1.0" encoding="utf-8"?><ShipNotice><OrderNumber>1003</OrderNumber><Carrier>DHL</Carrier></ShipNotice>',
  })
  t.equal(notified.statusCode, 200)
  t.same(notified.json(), { success: true })
  const order = (await tables(app).db.select().from(tables(app).schema.orders).where(eq(tables(app).schema.orders.reference, '1003')))[0]
  t.equal(order.statusHandle, 'shipped')
  t.same(order.fields, { store: 'retail', shippingInfo: [{ carrier: 'DHL', service: 'Paket', trackingNumber: 'JD014600003828' }] })
  const shipments = await tables(app).db.select().from(tables(app).schema.shipments).where(eq(tables(app).schema.shipments.orderId, order.id))
  t.same(shipments.map((shipment) => [shipment.status, shipment.carrier, shipment.service, shipment.trackingNumber]), [['shipped', 'DHL', 'Paket', 'JD014600003828']], 'the demo moves open shipments too')
  t.same(
    (await app.shipments.shipments.history(shipments[0].id)).map((entry) => [entry.fromStatus, entry.toStatus, entry.sourceIntegration, entry.externalCode]),
    [['new', 'shipped', 'shipstation', 'shipnotify'], [null, 'new', null, null]],
    'through the shipment service, tagged as the README says',
  )

  const challenge = await app.inject({ url: `${url}?action=export` })
  t.equal(challenge.statusCode, 401, 'no credentials')
  t.equal(challenge.headers['www-authenticate'], 'Basic realm="ShipStation", charset="UTF-8"')
  t.match(challenge.headers['content-type'], /^text\/html/)
  t.match(challenge.body, /<h1>Unauthorized<\/h1>/)
  const unknown = await app.inject({ url: `${url}?action=shipnotify&order_number=nope`, headers: { authorization, accept: 'application/json' } })
  t.equal(unknown.statusCode, 404)
  t.same(unknown.json(), { name: 'Not Found', message: 'No order matches order_number nope.', code: 0, status: 404, errorCode: 'SHIPMENTS_EXCHANGE_ORDER_NOT_FOUND' })
})

t.test('the demo has a login form page that returns to the admin page asked for, and a home page linking them', async (t) => {
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false })
  t.teardown(() => app.close())
  const home = await app.inject({ url: '/' })
  t.equal(home.statusCode, 200)
  for (const link of ['/shipments/admin/shipments', '/shipments/admin/integrations', '/shipments/admin/notifications', '/shipments/admin/shipstation', '/demo/mail', '/login']) t.match(home.body, `href="${link}"`)

  const asked = await app.inject({ url: '/shipments/admin/shipments?status=new' })
  t.equal(asked.statusCode, 303)
  t.equal(asked.headers.location, `/login?returnTo=${encodeURIComponent('/shipments/admin/shipments?status=new')}`)
  const page = await app.inject({ url: asked.headers.location as string })
  t.equal(page.statusCode, 200)
  t.match(page.body, /<form method="post" action="\/login">/)
  t.match(page.body, /name="returnTo" value="\/shipments\/admin\/shipments\?status=new"/)

  const form = (fields: Record<string, string>) =>
    app.inject({ method: 'POST', url: '/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() })
  const refused = await form({ username: 'admin', password: 'nope', returnTo: '/shipments/admin/shipments' })
  t.equal(refused.statusCode, 401)
  t.match(refused.body, /Invalid username or password\./)
  t.notOk(refused.cookies.some((cookie) => cookie.name === 'demo_session'), 'no session for a wrong password')

  const loggedIn = await form({ username: 'admin', password: 'admin', returnTo: '/shipments/admin/shipments?status=new' })
  t.equal(loggedIn.statusCode, 303)
  t.equal(loggedIn.headers.location, '/shipments/admin/shipments?status=new')
  const session = loggedIn.cookies.find((cookie) => cookie.name === 'demo_session')!
  const admin = await app.inject({ url: '/shipments/admin/shipments?status=new', headers: { cookie: `demo_session=${session.value}` } })
  t.equal(admin.statusCode, 200)
  t.equal(admin.body.match(/<tr data-shipment=/g)?.length, 5, 'the seeded shipments')
  t.match((await app.inject({ url: '/', headers: { cookie: `demo_session=${session.value}` } })).body, /Logged in as <strong>admin<\/strong>/)

  const elsewhere = await form({ username: 'viewer', password: 'viewer', returnTo: '//evil.example/steal' })
  t.equal(elsewhere.headers.location, '/shipments/admin/shipments', 'a login never returns to another site')
  const api = await app.inject({ method: 'POST', url: '/shipments/api/shipments/1', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `demo_session=${session.value}` }, payload: 'carrier=UPS' })
  t.equal(api.statusCode, 415, 'the form parser reaches the login route only')
})

t.test('the demo mails: shipping a seeded shipment through the API captures the customer mail with a tracking link that answers 200', async (t) => {
  const { createMailCapture, DEMO_NOTIFICATION } = await import('../examples/demo-mail.js')
  const { eventually } = await import('./fixtures/outbox.js')
  const mailbox = createMailCapture(2)
  const app = await buildDemoHost({ database: await testDatabase(t, 'demo'), logger: false, mailbox, baseUrl: 'http://shop.test:8080' })
  t.teardown(() => app.close())
  t.match(await app.shipments.notifications.list(), [{ name: 'Your order has shipped', statuses: ['shipped'], recipient: 'customer', enabled: true, subject: DEMO_NOTIFICATION.subject }], 'seeded once')

  const { cookie } = await login(app, 'admin')
  let response = await app.inject({
    method: 'POST',
    url: '/shipments/api/shipments/1',
    headers: { cookie, ...json },
    payload: JSON.stringify({ status: 'shipped', carrier: 'UPS', trackingNumber: '1Z999AA10123456784' }),
  })
  t.equal(response.statusCode, 200)
  await eventually(app, () => mailbox.messages().length > 0)
  const [mail] = mailbox.messages()
  const link = await app.shipments.trackingLinks!.url(1)
  t.match(link, /^http:\/\/shop\.test:8080\/shipments\/track\/[A-Za-z0-9_-]{22}-[A-Za-z0-9_-]{32}$/, 'links name the base URL given')
  t.match(mail, { to: ['jane.doe@example.com'], subject: 'Your order 1001 has shipped', language: 'en', notificationId: 1, shipmentId: 1, sentAt: /^\d{4}-\d\d-\d\dT/ })
  t.match(mail.html, `<p><a href="${link}">Track your parcel</a></p>`)
  t.match(mail.html, 'Shipment 1001-s001 travels with UPS (tracking number 1Z999AA10123456784).')
  t.match(mail.text, `Track your parcel: ${link}`)

  const page = await app.inject({ url: new URL(link).pathname })
  t.equal(page.statusCode, 200)
  t.match(page.body, /<header class="demo-shop"><strong>Demo shop<\/strong>: where is my parcel\?<\/header><h1>Order 1001<\/h1>/, 'in the demo layout')
  t.match(page.body, /<p class="status" data-status="shipped">Shipped<\/p>/)

  // A shipment holding items: the mail lists them.
  const orderId = (await app.shipments.orders.findOrderByReference('1001'))!.id
  const [staged] = await app.shipments.shipments.create(orderId, { rule: 'remaining' })
  await app.shipments.shipments.update(staged.id, { status: 'shipped' })
  await eventually(app, () => mailbox.messages().length > 1)
  t.match(mailbox.messages()[0].html, /<ul><li>2 × Organic T-shirt<\/li><li>1 × Enamel mug<\/li><\/ul>/)
  t.match(mailbox.messages()[0].text, /- 2 x Organic T-shirt\n- 1 x Enamel mug\n/)
  t.equal(mailbox.messages()[1].shipmentId, 1, 'newest first')

  // The capture keeps the newest only.
  await app.shipments.shipments.update(2, { status: 'shipped' })
  await eventually(app, () => mailbox.messages()[0].shipmentId === 2)
  t.same(mailbox.messages().map((message) => message.shipmentId), [2, staged.id], 'bounded: the oldest dropped')

  // The mail page, behind the demo login; for those who may manage notifications.
  response = await app.inject({ url: '/demo/mail' })
  t.equal(response.statusCode, 303)
  t.equal(response.headers.location, `/login?returnTo=${encodeURIComponent('/demo/mail')}`)
  const viewer = await login(app, 'viewer')
  response = await app.inject({ url: '/demo/mail', headers: { cookie: viewer.cookie } })
  t.equal(response.statusCode, 403)
  response = await app.inject({ url: '/demo/mail', headers: { cookie } })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-security-policy'], /default-src 'none';/)
  t.equal(response.body.match(/<article class="captured-mail" data-mail>/g)?.length, 2)
  t.match(response.body, /<td data-mail-to>sam\.lee@example\.com<\/td>/)
  t.match(response.body, /<iframe class="mail-preview" title="[^"]*" sandbox="" referrerpolicy="no-referrer" srcdoc="&#60;h1&#62;Your order 1002 is on its way/)
  t.match(response.body, /<pre data-mail-text>Your order 1002 is on its way\./)
  t.match((await app.inject({ url: '/' })).body, 'href="/demo/mail"', 'the home page links it')
})
