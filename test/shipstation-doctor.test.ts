// ShipStation's connection doctor against real listening hosts: one set up right (every step passes, the
// ship notification's dry run changes nothing), and hosts broken on purpose: a wrong path, a wrong
// password, a proxy that strips the Authorization header, an order ShipStation would refuse.
import t, { type Test } from 'tap'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { runConnectionDoctor, orderProblems } from '../src/order-exchange/doctor.js'
import { buildExchangeApp, EXCHANGE_PASSWORD, EXCHANGE_URL, EXCHANGE_USER, insertExportOrder } from './fixtures/exchange.js'
import { as, orderRow } from './fixtures/app.js'

async function listening(t: Test, app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

async function hostWithOrders(t: Test, exchange: Record<string, unknown> = {}) {
  const app = await buildExchangeApp(t, { pageSize: 2, ...exchange })
  const orderIds = [await insertExportOrder(app), await insertExportOrder(app), await insertExportOrder(app)]
  return { app, orderIds, origin: await listening(t, app) }
}

const outcomes = (report: { steps: Array<{ step: string; outcome: string }> }) => Object.fromEntries(report.steps.map((each) => [each.step, each.outcome]))

t.test('a host set up right: every step passes, every page is walked, and the dry run ships nothing', async (t) => {
  const { app, orderIds, origin } = await hostWithOrders(t)
  const before = await Promise.all(orderIds.map((id) => orderRow(app, id)))
  const report = await runConnectionDoctor({ url: `${origin}${EXCHANGE_URL}`, username: EXCHANGE_USER, password: EXCHANGE_PASSWORD })
  t.same(outcomes(report), { reach: 'pass', credentials: 'pass', export: 'pass', pages: 'pass', orders: 'pass', shipnotify: 'pass' }, JSON.stringify(report.steps))
  t.equal(report.ok, true)
  t.match(report.steps.find((each) => each.step === 'export')!.detail, /has 2 pages\.$/)
  t.equal(report.steps.find((each) => each.step === 'pages')!.detail, '2 pages read, 3 orders.')
  t.match(report.steps.find((each) => each.step === 'shipnotify')!.detail, /would be applied \(sent as a dry run: nothing changed\)/)
  t.same(await Promise.all(orderIds.map((id) => orderRow(app, id))), before, 'no order changed')
  const activity = await app.shipments.orderExchange!.activity.recent()
  t.ok(activity.some((entry) => entry.action === 'shipnotify' && entry.reason === 'dry run: checked, not applied'), 'the activity log says it was a dry run')
})

t.test('a wrong path: the 404 named, with the path that answers', async (t) => {
  const { origin } = await hostWithOrders(t)
  const report = await runConnectionDoctor({ url: `${origin}/shipstation/process`, username: EXCHANGE_USER, password: EXCHANGE_PASSWORD })
  t.equal(report.ok, false)
  t.same(report.steps.map((each) => [each.step, each.outcome]), [['reach', 'fail']])
  t.equal(report.steps[0]!.detail, 'The URL answers 404: nothing is mounted at /shipstation/process.')
  t.match(report.steps[0]!.fix, /answers at \/actions\/shippingplatformconnect\/orders\/process/)
})

t.test('a wrong password: refused, and the fix says where the password comes from', async (t) => {
  const { origin } = await hostWithOrders(t)
  const report = await runConnectionDoctor({ url: `${origin}${EXCHANGE_URL}`, username: EXCHANGE_USER, password: 'not it' })
  t.same(outcomes(report), { reach: 'pass', credentials: 'fail' })
  t.equal(report.steps[1]!.detail, 'The username or password is refused (401).')
  t.notMatch(JSON.stringify(report), /not it|correct horse/, 'no password in the report')
})

t.test('a proxy that strips the Authorization header: told apart from a wrong password', async (t) => {
  const { origin } = await hostWithOrders(t, { acceptQueryCredentials: true })
  const target = new URL(origin)
  const proxy: Server = createServer((incoming, outgoing) => {
    const headers = { ...incoming.headers }
    delete headers.authorization
    const forwarded = httpRequest({ host: target.hostname, port: target.port, path: incoming.url, method: incoming.method, headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(outgoing)
    })
    incoming.pipe(forwarded)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => proxy.close(() => resolve())))
  const report = await runConnectionDoctor({ url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${EXCHANGE_URL}`, username: EXCHANGE_USER, password: EXCHANGE_PASSWORD })
  t.equal(outcomes(report).credentials, 'warn')
  t.match(report.steps.find((each) => each.step === 'credentials')!.detail, /strips the Authorization header/)
  t.equal(outcomes(report).pages, 'pass', 'the walk goes on with the credentials in the query')
})

t.test("an order ShipStation would refuse is named with its fields", async (t) => {
  const order = (overrides: string) =>
    `<Order><OrderID>1</OrderID><OrderNumber>R-1</OrderNumber><OrderDate>11/28/2026 10:00</OrderDate><OrderStatus>paid</OrderStatus><LastModified>11/28/2026 10:00</LastModified><OrderTotal>10.00</OrderTotal><Customer><BillTo><Name>A</Name></BillTo><ShipTo><Name>A</Name><Address1>1 Road</Address1><City>Town</City><PostalCode>1</PostalCode><Country>${overrides}</Country></ShipTo></Customer><Items><Item><SKU>S</SKU><Name>Thing</Name><Quantity>1</Quantity><UnitPrice>1,000.00</UnitPrice></Item></Items></Order>`
  const server = createServer((incoming, outgoing) => {
    if (!incoming.headers.authorization) {
      outgoing.writeHead(401).end()
      return
    }
    outgoing.writeHead(200, { 'content-type': 'text/xml' }).end(`<?xml version="1.0"?><Orders pages="1">${order('USA')}</Orders>`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const report = await runConnectionDoctor({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/process`, username: 'u', password: 'p' })
  t.equal(outcomes(report).orders, 'fail')
  t.equal(report.steps.find((each) => each.step === 'orders')!.detail, 'Order R-1: ShipTo/Country must be two letters; Item 1/UnitPrice is not a plain decimal.')
  t.equal(outcomes(report).shipnotify, 'skip', 'a host that does not say it takes a dry run gets no ship notification at all')
  t.equal(report.ok, false)
  t.same(orderProblems({ name: 'Order', attributes: {}, text: '', children: [] }).slice(0, 2), ['OrderID is missing', 'OrderNumber is missing'])
})

t.test('an address that answers nothing, and one that is not http', async (t) => {
  const closed = await runConnectionDoctor({ url: 'http://127.0.0.1:9/process', username: 'u', password: 'p', timeoutMs: 2000 })
  t.same(outcomes(closed), { reach: 'fail' })
  t.match(closed.steps[0]!.detail, /^No answer from 127\.0\.0\.1:9 \(/)
  const ftp = await runConnectionDoctor({ url: 'ftp://shop.example/process', username: 'u', password: 'p' })
  t.same(outcomes(ftp), { reach: 'fail' })
})

t.test('the command line: usage, credentials from the environment only, the exit code of the report', async (t) => {
  const { main } = await import('../src/cli.js')
  const out: string[] = []
  t.equal(await main([], {}, (text) => out.push(text)), 2)
  t.match(out.join('\n'), /^Usage: fastify-shipments doctor <the Custom Store URL>/)
  t.equal(await main(['doctor', 'http://127.0.0.1:9/process'], {}, (text) => out.push(text)), 2, 'no credentials in the environment')
  t.match(out.at(-1), /^Set SHIPSTATION_USERNAME and SHIPSTATION_PASSWORD/)
  const { origin } = await hostWithOrders(t)
  const lines: string[] = []
  const env = { SHIPSTATION_USERNAME: EXCHANGE_USER, SHIPSTATION_PASSWORD: EXCHANGE_PASSWORD }
  t.equal(await main(['doctor', `${origin}${EXCHANGE_URL}`, '--days', '30'], env, (text) => lines.push(text)), 0)
  t.match(lines.join('\n'), /ok {4}credentials: The credentials are accepted[\s\S]*Every step passed\./)
  t.notMatch(lines.join('\n'), /correct horse/, 'the password is never printed')
  const wrong: string[] = []
  t.equal(await main(['doctor', `${origin}/nope`], env, (text) => wrong.push(text)), 1)
  t.match(wrong.join('\n'), /FAIL {2}reach: The URL answers 404[\s\S]*fix: The exchange answers at/)
})

t.test("the admin's ShipStation page runs the doctor against the site's own address, and only that", async (t) => {
  const app = await buildExchangeApp(t, {}, { admin: {} })
  await insertExportOrder(app)
  const origin = await listening(t, app)
  const host = new URL(origin).host
  const page = await app.inject({ method: 'GET', url: '/shipments/admin/shipstation', headers: { ...as('admin'), host } })
  t.equal(page.statusCode, 200)
  t.match(page.body, new RegExp(`<input type="url" id="input-doctor-url" name="url" value="http://${host.replace('.', '\\.')}${EXCHANGE_URL}">`))
  const cookie = `shipments_admin_csrf=${page.cookies.find((entry) => entry.name === 'shipments_admin_csrf')!.value}`
  const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!
  const post = (url: string) =>
    app.inject({ method: 'POST', url: '/shipments/admin/shipstation/doctor', headers: { ...as('admin'), host, cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ _csrf: token, url }).toString() })
  const ran = await post(`${origin}${EXCHANGE_URL}`)
  t.equal(ran.statusCode, 200)
  t.match(ran.body, /Every step passed: ShipStation can import from this URL\./)
  t.match(ran.body, /<li data-step="shipnotify"><span class="badge badge-ok">Passed<\/span>/)
  const elsewhere = await post(`https://attacker.example${EXCHANGE_URL}`)
  t.equal(elsewhere.statusCode, 422)
  t.match(elsewhere.body, /The doctor calls only this site&#39;s own address|The doctor calls only this site's own address/)
  t.notMatch(elsewhere.body, /<ol class="doctor">/, 'nothing was called')
  const viewer = await app.inject({ method: 'POST', url: '/shipments/admin/shipstation/doctor', headers: { ...as('viewer'), host, cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ _csrf: token, url: `${origin}${EXCHANGE_URL}` }).toString() })
  t.equal(viewer.statusCode, 403)
})

t.test("regression: an order changed in the doctor's own minute is in its window (the end is the next whole minute)", async (t) => {
  const app = await buildExchangeApp(t)
  const changed = new Date(Date.UTC(2026, 10, 27, 12, 0, 30))
  await insertExportOrder(app, { dateUpdated: changed })
  const origin = await listening(t, app)
  const report = await runConnectionDoctor({ url: `${origin}${EXCHANGE_URL}`, username: EXCHANGE_USER, password: EXCHANGE_PASSWORD, now: changed.getTime() + 1000 })
  t.equal(report.steps.find((each) => each.step === 'pages')!.detail, '1 page read, 1 order.')
  t.match(report.steps.find((each) => each.step === 'export')!.detail, /\(11\/20\/2026 12:00 to 11\/27\/2026 12:01 UTC\)/)
})
