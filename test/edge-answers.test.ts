// Malformed requests get the answers the rest of the API gives: the order route's refused bodies are
// 400/415 (never "Shipment undefined not found"), and every malformed tracking link gets the HTML
// not-found page, with the page's security headers (no framing, no scripts, no sniffing).
import { createHash } from 'node:crypto'
import t from 'tap'
import { trackingPageFrameworkErrors, trackingPagePolicy } from '../src/index.js'
import { as, buildTestApp, orderWithShipments } from './fixtures/app.js'
import { rawQuery } from './fixtures/database.js'

const TRACKING = { secret: 'a-tracking-page-secret-of-at-least-32-chars', baseUrl: 'https://shop.example' }

t.test('POST orders/:orderId/shipments: a refused body is 400 or 415 like the update route, and creates nothing', async (t) => {
  const app = await buildTestApp(t)
  const { orderId } = await orderWithShipments(app, 1)
  const deep = JSON.stringify(Array.from({ length: 200 }).reduce<unknown>((inner) => ({ a: inner }), 1))
  const cases: Array<[string, string, string, number, RegExp]> = [
    ['malformed JSON', 'application/json', '{"count": ', 400, /JSON/i],
    ['text/plain', 'text/plain', 'count=2', 415, /Unsupported Media Type/i],
    ['too deep', 'application/json', deep, 400, /nests deeper than/],
    ['__proto__ key', 'application/json', '{"__proto__": {"count": 5}}', 400, /JSON|prototype/i],
  ]
  for (const [what, type, payload, status, message] of cases) {
    for (const url of [`/shipments/api/orders/${orderId}/shipments`, `/shipments/api/shipments/999999`]) {
      const response = await app.inject({ method: 'POST', url, headers: { ...as('admin'), 'content-type': type }, payload })
      const expected = url.includes('999999') ? 404 : status
      t.equal(response.statusCode, expected, `${what} on ${url}`)
      const body = response.json<{ message: string; status: number }>()
      t.equal(body.status, expected)
      if (expected !== 404) t.match(body.message, message, what)
      t.notMatch(body.message, /undefined/, 'no "undefined" in the message')
    }
  }
  const [{ count }] = await rawQuery(app, 'SELECT count(*) AS count FROM shipments_shipments WHERE order_id = ?', [orderId])
  t.equal(Number(count), 1, 'nothing created')
})

t.test('every malformed tracking link gets the HTML not-found page with the security headers', async (t) => {
  const app = await buildTestApp(t, { trackingPage: TRACKING })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const link = new URL((await app.shipments.trackingLinks!.url(id))!)
  const good = await app.inject({ url: link.pathname })
  t.equal(good.statusCode, 200)

  const expectedHeaders = {
    'content-security-policy': trackingPagePolicy([]),
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'private, no-store',
  }
  t.match(good.headers, expectedHeaders, 'the page itself')
  t.match(good.headers['content-security-policy'], /^default-src 'none'; style-src 'self' 'sha256-[A-Za-z0-9+/]+=*'; .*frame-ancestors 'none'$/)

  for (const path of [`${link.pathname}/`, `${link.pathname}/more`, `/shipments/track/${'A'.repeat(101)}`, `/shipments/track/${'A'.repeat(5000)}`, '/shipments/track/', '/shipments/track']) {
    const response = await app.inject({ url: path })
    t.equal(response.statusCode, 404, path.slice(0, 60))
    t.match(response.headers['content-type'], /^text\/html/, 'HTML, not JSON')
    t.match(response.body, /<h1>Tracking link not found<\/h1>/)
    t.match(response.headers, expectedHeaders)
  }
})

t.test('links with broken percent-encoding: the HTML not-found page with trackingPageFrameworkErrors, Fastify\'s JSON 400 without it', async (t) => {
  const broken = ['/shipments/track/%E0%A4%A', '/shipments/track/%', '/shipments/track/abc%zz', '/shipments/track/%E0%A4%A?x=1']
  const withHelper = await buildTestApp(t, { trackingPage: TRACKING }, undefined, undefined, { frameworkErrors: trackingPageFrameworkErrors() })
  for (const url of broken) {
    const response = await withHelper.inject({ url })
    t.equal(response.statusCode, 404, url)
    t.match(response.headers['content-type'], /^text\/html/, 'HTML, not JSON')
    t.match(response.body, /<h1>Tracking link not found<\/h1>/)
    t.match(response.headers, { 'content-security-policy': trackingPagePolicy([]), 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'cache-control': 'private, no-store' })
  }
  // Elsewhere, and for a prefix that only starts alike, Fastify's own answer.
  for (const url of ['/shipments/api/shipments/%', '/shipments/trackers/%E0%A4%A']) {
    const response = await withHelper.inject({ url })
    t.equal(response.statusCode, 400, url)
    t.match(response.json(), { code: 'FST_ERR_BAD_URL', statusCode: 400 })
  }
  // A host's own handler gets the rest.
  const seen: string[] = []
  const composed = await buildTestApp(t, { trackingPage: TRACKING }, undefined, undefined, {
    frameworkErrors: trackingPageFrameworkErrors((error, _request, reply) => {
      seen.push(error.code)
      void reply.code(400).send('bad link')
    }),
  })
  t.equal((await composed.inject({ url: '/shipments/track/%' })).statusCode, 404)
  const elsewhere = await composed.inject({ url: '/elsewhere/%' })
  t.same([elsewhere.statusCode, elsewhere.body, seen], [400, 'bad link', ['FST_ERR_BAD_URL']])

  // A host layout that throws: the error answer the page's own not-found answer gives, no unhandled rejection.
  const failing = await buildTestApp(t, { trackingPage: { ...TRACKING, layout: () => Promise.reject(new Error('layout broke')) } }, undefined, undefined, { frameworkErrors: trackingPageFrameworkErrors() })
  const answerOf = async (url: string) => {
    const response = await failing.inject({ url })
    return { status: response.statusCode, type: response.headers['content-type'], body: response.body }
  }
  t.same(await answerOf('/shipments/track/%'), await answerOf('/shipments/track/nope/more'), 'a bad URL fails as any malformed link does')
  t.same(await answerOf('/shipments/track/%'), { status: 500, type: 'text/plain; charset=utf-8', body: 'Something went wrong on our side. Please try again later.' })

  // Without it the router answers before any hook of the page runs: what a host gets that does not set it.
  const without = await buildTestApp(t, { trackingPage: TRACKING })
  for (const url of broken) {
    const response = await without.inject({ url })
    t.equal(response.statusCode, 400, `${url} without the helper`)
    t.match(response.json(), { code: 'FST_ERR_BAD_URL' })
  }
})

t.test("the standalone layout's inline styles are allowed by the policy's hash; hosts may allow framing or set their own policy", async (t) => {
  const app = await buildTestApp(t, { trackingPage: { ...TRACKING, frameAncestors: ["'self'", 'https://shop.example'] } })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const page = await app.inject({ url: new URL((await app.shipments.trackingLinks!.url(id))!).pathname })
  const style = /<style>([^<]*)<\/style>/.exec(page.body)![1]
  const hash = createHash('sha256').update(style).digest('base64')
  t.match(page.headers['content-security-policy'], `'sha256-${hash}'`, 'the style element is the one the hash allows')
  t.match(page.headers['content-security-policy'], /frame-ancestors 'self' https:\/\/shop\.example$/)
  t.notOk('x-frame-options' in page.headers, 'no X-Frame-Options when some may frame it')

  const own = await buildTestApp(t, { trackingPage: { ...TRACKING, contentSecurityPolicy: "default-src 'self'" } })
  const { shipmentIds: [other] } = await orderWithShipments(own)
  const ownPage = await own.inject({ url: new URL((await own.shipments.trackingLinks!.url(other))!).pathname })
  t.equal(ownPage.headers['content-security-policy'], "default-src 'self'")

  await t.rejects(buildTestApp(t, { trackingPage: { ...TRACKING, frameAncestors: ["'self'; script-src *"] } }), /trackingPage\.frameAncestors/)
  await t.rejects(buildTestApp(t, { trackingPage: { ...TRACKING, contentSecurityPolicy: "default-src 'self'\r\nX-Evil: 1" } }), /trackingPage\.contentSecurityPolicy/)
})
