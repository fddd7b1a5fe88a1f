// HTTP Basic on the order exchange (spec 5): constant-time, never throwing, challenge on 401, opt-in
// SS-UserName / SS-Password, environment references, and settings checked at registration.
import t from 'tap'
import Fastify from 'fastify'
import { fastifyShipments } from '../src/index.js'
import { basicAuth, buildExchangeApp, EXCHANGE_PASSWORD, EXCHANGE_URL, EXCHANGE_USER, exportRequest, insertExportOrder } from './fixtures/exchange.js'
import { orderRow } from './fixtures/app.js'
import { testDatabase } from './fixtures/database.js'

const CHALLENGE = 'Basic realm="ShipStation", charset="UTF-8"'

t.test('a missing, malformed or wrong Authorization header is a 401 with a challenge, never a 500', async (t) => {
  const logLines: string[] = []
  const app = await buildExchangeApp(t, {}, {}, logLines)
  const orderId = await insertExportOrder(app, { reference: 'AUTH-1' })
  const cases: Record<string, Record<string, string>> = {
    missing: {},
    'not basic': { authorization: `Bearer ${EXCHANGE_PASSWORD}` },
    'not base64': { authorization: 'Basic %%%' },
    'no colon': { authorization: `Basic ${Buffer.from('justoneword').toString('base64')}` },
    'empty token': { authorization: 'Basic ' },
    'wrong password, shorter': basicAuth(EXCHANGE_USER, 'x'),
    'wrong password, longer': basicAuth(EXCHANGE_USER, EXCHANGE_PASSWORD + EXCHANGE_PASSWORD),
    'wrong user': basicAuth('someone', EXCHANGE_PASSWORD),
    'control characters': { authorization: `Basic ${Buffer.from(`${EXCHANGE_USER}:\u0000`).toString('base64')}` },
    'unicode': basicAuth('ü', '🔑'),
  }
  for (const [name, headers] of Object.entries(cases)) {
    for (const action of ['export', 'shipnotify']) {
      const response = await app.inject({
        method: action === 'export' ? 'GET' : 'POST',
        url: `${EXCHANGE_URL}?action=${action}&order_number=AUTH-1&carrier=UPS`,
        headers: { ...headers, accept: 'application/json' },
      })
      t.equal(response.statusCode, 401, `${name} (${action})`)
      t.equal(response.headers['www-authenticate'], CHALLENGE)
      t.same(response.json(), { name: 'Unauthorized', message: 'Invalid username or password.', code: 0, status: 401, errorCode: 'SHIPMENTS_EXCHANGE_UNAUTHORIZED' })
    }
  }
  t.equal((await orderRow(app, orderId)).statusHandle, 'processing', 'no refused notification changed the order')
  const html = await app.inject({ url: `${EXCHANGE_URL}?action=export` })
  t.equal(html.statusCode, 401)
  t.match(html.headers['content-type'], /^text\/html/)
  t.notOk(logLines.some((line) => line.includes(EXCHANGE_PASSWORD)), 'the password never reaches the log')

  const ok = await exportRequest(app)
  t.equal(ok.statusCode, 200)
  const lax = await app.inject({ url: `${EXCHANGE_URL}?action=export`, headers: { authorization: `  basic   ${Buffer.from(`${EXCHANGE_USER}:${EXCHANGE_PASSWORD}`).toString('base64')} ` } })
  t.equal(lax.statusCode, 200, 'the scheme is case-insensitive and extra whitespace is tolerated')
})

t.test('credentials from environment references, resolved at registration', async (t) => {
  process.env.TEST_SS_USER = 'env-user'
  process.env.TEST_SS_PASSWORD = 'env:password:with:colons'
  const app = await buildExchangeApp(t, { username: '$TEST_SS_USER', password: '${TEST_SS_PASSWORD}' })
  t.equal((await exportRequest(app, {}, basicAuth('env-user', 'env:password:with:colons'))).statusCode, 200)
  t.equal((await exportRequest(app, {}, basicAuth('$TEST_SS_USER', '${TEST_SS_PASSWORD}'))).statusCode, 401, 'the reference itself is no password')
})

t.test('SS-UserName / SS-Password: refused unless acceptQueryCredentials, then from the query or headers; masked in logs', async (t) => {
  const logLines: string[] = []
  const off = await buildExchangeApp(t, {}, {}, logLines)
  const query = new URLSearchParams({ action: 'export', 'SS-UserName': EXCHANGE_USER, 'SS-Password': EXCHANGE_PASSWORD })
  const refused = await off.inject({ url: `${EXCHANGE_URL}?${query}` })
  t.equal(refused.statusCode, 401)
  t.equal(refused.headers['www-authenticate'], CHALLENGE)

  const on = await buildExchangeApp(t, { acceptQueryCredentials: true }, {}, logLines)
  await insertExportOrder(on, { reference: 'Q-1' })
  const fromQuery = await on.inject({ url: `${EXCHANGE_URL}?${query}` })
  t.equal(fromQuery.statusCode, 200)
  t.match(fromQuery.body, /Q-1/)
  const fromHeaders = await on.inject({ url: `${EXCHANGE_URL}?action=export`, headers: { 'ss-username': EXCHANGE_USER, 'ss-password': EXCHANGE_PASSWORD } })
  t.equal(fromHeaders.statusCode, 200)
  const wrong = await on.inject({ url: `${EXCHANGE_URL}?action=export&SS-UserName=${EXCHANGE_USER}&SS-Password=nope`, headers: { accept: 'application/json' } })
  t.equal(wrong.statusCode, 401)
  t.equal(wrong.headers['www-authenticate'], CHALLENGE)
  t.same(wrong.json(), { name: 'Unauthorized', message: 'Invalid username or password.', code: 0, status: 401, errorCode: 'SHIPMENTS_EXCHANGE_UNAUTHORIZED' })
  t.equal((await on.inject({ url: `${EXCHANGE_URL}?action=export`, headers: basicAuth() })).statusCode, 200, 'the header still works')

  const encoded = encodeURIComponent(EXCHANGE_PASSWORD)
  t.notOk(logLines.some((line) => line.includes(EXCHANGE_PASSWORD) || line.includes(encoded) || line.includes('nope')), 'no password in any log line')
  t.ok(logLines.some((line) => line.includes('SS-Password=********')), 'the request line is logged masked')
})

t.test('order exchange settings are checked at registration, naming the setting', async (t) => {
  const register = async (orderExchange: unknown, extra: Record<string, unknown> = {}) => {
    const app = Fastify({ logger: false })
    t.teardown(() => app.close())
    await app.register(fastifyShipments, { database: await testDatabase(t, 'options'), orderExchange: orderExchange as never, ...extra })
    return app.ready()
  }
  delete process.env.TEST_SS_UNSET
  await t.rejects(register({ username: 'u' }), { code: 'SHIPMENTS_INVALID_OPTION', message: /orderExchange.password/ })
  await t.rejects(register({ username: 'u', password: '' }), { message: 'Invalid option "orderExchange.password": must not be empty' })
  await t.rejects(register({ username: '$TEST_SS_UNSET', password: 'p' }), { message: /"orderExchange.username": Environment variable TEST_SS_UNSET is not set/ })
  await t.rejects(register({ username: 'u', password: 'p', pageSise: 10 }), { message: /orderExchange/ })
  await t.rejects(register({ username: 'u', password: 'p', siteUrl: 'shop.example.com' }), { message: /orderExchange.siteUrl/ })
  await t.rejects(register({ username: 'u', password: 'p' }, { orderStore: { findOrder() {}, findOrderByReference() {}, setOrderStatus() {} } }), {
    message: 'Invalid option "orderStore": must implement exportOrders() for orderExchange',
  })
  await t.rejects(register({ username: 'u', password: 'p' }, { orderFields: [{ handle: 'a', type: 'dropdown' }, { handle: 'a', type: 'matrix' }] }), {
    message: /"orderFields": the handle "a" is declared twice/,
  })

  const withoutExchange = Fastify({ logger: false })
  t.teardown(() => withoutExchange.close())
  await withoutExchange.register(fastifyShipments, { database: await testDatabase(t, 'none') })
  t.equal(withoutExchange.shipments.orderExchange, null)
  t.equal((await withoutExchange.inject({ url: `${EXCHANGE_URL}?action=export` })).statusCode, 404, 'not mounted without settings')
})

t.test('redactUrl masks credential-like parameters however their names are written', async (t) => {
  const { redactUrl } = await import('../src/http/redact.js')
  t.equal(redactUrl('/p?action=export&SS-UserName=u&SS-Password=secret&page=2'), '/p?action=export&SS-UserName=********&SS-Password=********&page=2')
  t.equal(redactUrl('/p?SS%2DPassword=secret&ss-password=x&SS-PASSWORD'), '/p?SS%2DPassword=********&ss-password=********&SS-PASSWORD=********')
  t.equal(redactUrl('/p?%E0%A4%A=1&a=b'), '/p?%E0%A4%A=1&a=b', 'a malformed escape is left as it is')
  t.equal(redactUrl('/p'), '/p')
  const variants = [
    'SS-Password[]', 'SS-Password[0]', 'ss_password', 'SS.Password', 'SS Password', 'SS+Password', 'SSPassword',
    'SS%252DPassword', 'SS%25252DPassword', '%53%53-%50assword', 'ＳＳ-Ｐａｓｓｗｏｒｄ', 'SS-Password%ZZ', 'ss-username',
    'x-api-key', 'access_token', 'client_secret', 'pwd', 'Authorization',
  ]
  for (const name of variants) {
    t.equal(redactUrl(`/p?${name}=hunter2&page=2`), `/p?${name}=********&page=2`, name)
  }
  for (const ordinary of ['page', 'store', 'action', 'order_number', 'tracking_number', 'start_date']) {
    t.equal(redactUrl(`/p?${ordinary}=hunter2`), `/p?${ordinary}=hunter2`, `${ordinary} is not a credential`)
  }
})

t.test('a percent-encoded SS-Password name authenticates and is still masked in the log', async (t) => {
  const logLines: string[] = []
  const app = await buildExchangeApp(t, { acceptQueryCredentials: true }, {}, logLines)
  const response = await app.inject({ url: `${EXCHANGE_URL}?action=export&SS%2DUserName=${EXCHANGE_USER}&SS%2DPassword=${encodeURIComponent(EXCHANGE_PASSWORD)}` })
  t.equal(response.statusCode, 200)
  t.notOk(logLines.some((line) => line.includes(encodeURIComponent(EXCHANGE_PASSWORD))))
  t.ok(logLines.some((line) => line.includes('SS%2DPassword=********')))
})
