// Hostile input, class by class: numbers at the edges, text that is not text, unbounded text,
// credentials in unusual spellings, and who may fill the error log. Every refusal names what it
// refused and changes nothing.
import t from 'tap'
import fc from 'fast-check'
import { signWebhook, TEXT_LIMITS } from '../src/index.js'
import { as, buildTestApp, historyRows, orderWithShipments, postUpdate, shipmentRow } from './fixtures/app.js'
import { snapshotDatabase } from './fixtures/hostile.js'
import { basicAuth, buildExchangeApp, EXCHANGE_URL, insertExportOrder } from './fixtures/exchange.js'

const RUNS = Number(process.env.PROPERTY_RUNS ?? 150)
const NOT_TEXT = 'contains characters that are not allowed (control characters, bidirectional overrides or unpaired surrogates).'

t.test('paging and ids beyond what the database holds are a 400 naming the parameter, never a 500', async (t) => {
  const app = await buildTestApp(t)
  await orderWithShipments(app)
  const cases: Array<[string, string]> = [
    ['page=2147483648', 'querystring/page must be <= 2147483647'],
    ['page=99999999999999999999', 'querystring/page must be <= 2147483647'],
    ['page=1e300', 'querystring/page must be <= 2147483647'],
    ['orderId=2147483648', 'querystring/orderId must be <= 2147483647'],
    ['orderId=-1', 'querystring/orderId must be >= 1'],
    ['perPage=1e300', 'querystring/perPage must be <= 100'],
  ]
  for (const [query, message] of cases) {
    const response = await app.inject({ url: `/shipments/api/shipments?${query}`, headers: as('viewer') })
    t.equal(response.statusCode, 400, query)
    t.same(response.json(), { name: 'Bad Request', message, code: 0, status: 400, errorCode: 'SHIPMENTS_VALIDATION_FAILED' }, query)
  }
  const last = await app.inject({ url: '/shipments/api/shipments?page=2147483647&perPage=100', headers: as('viewer') })
  t.equal(last.statusCode, 200, 'the largest page answers, empty')
  t.same(last.json().shipments, [])
  t.equal((await app.shipments.shipments.list({ page: Number.MAX_VALUE })).page, 2147483647, 'a host call is clamped')
})

t.test('property: any integer in a paging parameter is a 200 or a 400 naming it', async (t) => {
  const app = await buildTestApp(t)
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('page', 'perPage', 'orderId'),
      fc.oneof(fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String), fc.double().map(String), fc.constantFrom('1e999', '-0', '0x10', ' 7')),
      async (name, value) => {
        const response = await app.inject({ url: `/shipments/api/shipments?${name}=${encodeURIComponent(value)}`, headers: as('viewer') })
        if (response.statusCode === 200) return true
        return response.statusCode === 400 && response.json().message.includes(`querystring/${name}`)
      },
    ),
    { numRuns: RUNS },
  )
})

t.test('dates outside years 1 to 9999 are refused where a date is stored', async (t) => {
  const app = await buildTestApp(t, { shipmentFields: [{ handle: 'due', type: 'date' }] })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  for (const value of [8_640_000_000_000, -62_135_596_801, '253402300800', '-99999999999']) {
    const response = await postUpdate(app, id, { dateScheduledShip: value, fields: { due: value } })
    t.equal(response.statusCode, 422, String(value))
    t.same(response.json().errors, { dateScheduledShip: ['Date Scheduled Ship is not a valid date.'], 'fields.due': ['Due is not a valid date.'] })
  }
  const edge = await postUpdate(app, id, { dateScheduledShip: '9999-12-31T23:59:59Z' })
  t.equal(edge.statusCode, 200)
  t.equal(edge.json().shipment.dateScheduledShip, '9999-12-31T23:59:59+00:00')
})

t.test('text that is not text is refused with a 422 naming the field, on every text of an update', async (t) => {
  const app = await buildTestApp(t, { shipmentFields: [{ handle: 'label', type: 'text' }, { handle: 'data', type: 'json' }] })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const before = await shipmentRow(app, id)
  const hostile = ['\u0000', 'a\ud800b', '\udfff', 'ab\u202Ecd', '\u2066x', '\u001b[31m', '\u0085', '\uffff', 'x\u007f']
  for (const value of hostile) {
    const response = await postUpdate(app, id, {
      trackingNumber: value,
      carrier: value,
      service: value,
      fulfillmentNotes: value,
      shippingNotes: value,
      status: 'in_progress',
      statusMessage: value,
      externalCode: value,
      integrationHandle: value,
      fields: { label: value, data: { nested: [value] } },
    })
    t.equal(response.statusCode, 422, JSON.stringify(value))
    t.same(Object.keys(response.json().errors).sort(), [
      'carrier', 'externalCode', 'fields.data', 'fields.label', 'fulfillmentNotes', 'integrationHandle', 'service', 'shippingNotes', 'statusMessage', 'trackingNumber',
    ])
    t.same(response.json().errors.trackingNumber, [`Tracking Number ${NOT_TEXT}`])
  }
  // Line breaks and tabs belong in notes and messages, not in a tracking number.
  let response = await postUpdate(app, id, { trackingNumber: '1Z\n999' })
  t.same(response.json().errors, { trackingNumber: [`Tracking Number ${NOT_TEXT}`] })
  t.same(await shipmentRow(app, id), before, 'nothing was stored')
  t.equal((await historyRows(app, id)).length, 1)

  response = await postUpdate(app, id, { fulfillmentNotes: 'Box 1\r\n\tfragile 😀', carrier: 'DHL 😀', statusMessage: 'line 1\nline 2', status: 'on_hold' })
  t.equal(response.statusCode, 200, 'line breaks in notes and emoji anywhere are text')
  t.match(await shipmentRow(app, id), { fulfillmentNotes: 'Box 1\r\n\tfragile 😀', carrier: 'DHL 😀', status: 'on_hold' })
  t.equal((await historyRows(app, id)).at(-1)?.message, 'line 1\nline 2')
})

t.test('every stored text has a limit counted in characters (an emoji is one), enforced with the 422', async (t) => {
  const app = await buildTestApp(t, { shipmentFields: [{ handle: 'label', type: 'text' }, { handle: 'data', type: 'json' }] })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const fill = (count: number) => '😀'.repeat(count)
  const limits: Array<[string, number, Record<string, unknown>, string]> = [
    ['carrier', TEXT_LIMITS.short, {}, 'Carrier'],
    ['fulfillmentNotes', TEXT_LIMITS.long, {}, 'Fulfillment Notes'],
    ['statusMessage', TEXT_LIMITS.statusMessage, { status: 'in_progress' }, 'Status Message'],
  ]
  for (const [key, limit, extra, label] of limits) {
    const over = await postUpdate(app, id, { ...extra, [key]: fill(limit + 1) })
    t.equal(over.statusCode, 422, `${key} over ${limit}`)
    t.same(over.json().errors, { [key]: [`${label} should contain at most ${limit} characters.`] })
    const at = await postUpdate(app, id, { ...extra, [key]: fill(limit) })
    t.equal(at.statusCode, 200, `${key} at ${limit} characters (${limit * 2} UTF-16 units)`)
    await postUpdate(app, id, { status: 'new' })
  }
  let response = await postUpdate(app, id, { fields: { label: 'x'.repeat(TEXT_LIMITS.long + 1) } })
  t.same(response.json().errors, { 'fields.label': [`Label should contain at most ${TEXT_LIMITS.long} characters.`] })
  response = await postUpdate(app, id, { fields: { data: { blob: 'x'.repeat(TEXT_LIMITS.long) } } })
  t.same(response.json().errors, { 'fields.data': [`Data should contain at most ${TEXT_LIMITS.long} characters.`] }, 'a JSON field counts as serialized')
  const megabyteNote = await postUpdate(app, id, { shippingNotes: 'x'.repeat(1_000_000) })
  t.equal(megabyteNote.statusCode, 422)
  t.equal((await shipmentRow(app, id)).shippingNotes, null)
})

t.test('property: any string is stored exactly as sent or refused naming the field, never altered', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  await fc.assert(
    fc.asyncProperty(fc.string({ unit: fc.oneof(fc.constant('\ud800'), fc.constant('\u202e'), fc.constant('\u0000'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 })), maxLength: 30 }), async (value) => {
      const response = await postUpdate(app, id, { shippingNotes: `n${value}` })
      if (response.statusCode === 422) return JSON.stringify(Object.keys(response.json().errors)) === '["shippingNotes"]'
      return response.statusCode === 200 && (await shipmentRow(app, id)).shippingNotes === `n${value}`
    }),
    { numRuns: RUNS },
  )
})

t.test('ship notifications: a value that is not text, or is too long, is a 400 naming the parameter', async (t) => {
  const app = await buildExchangeApp(t)
  const orderId = await insertExportOrder(app, { reference: 'HX-1' })
  const before = await snapshotDatabase(app)
  const cases: Array<[Record<string, string>, string]> = [
    [{ order_number: 'HX-1', carrier: 'UPS\u0000' }, `carrier ${NOT_TEXT}`],
    [{ order_number: 'HX-1', tracking_number: '1Z\u202E999' }, `tracking_number ${NOT_TEXT}`],
    [{ order_number: 'HX-1', service: 's'.repeat(256) }, 'service should contain at most 255 characters.'],
    [{ order_number: 'HX-1\u2067' }, `order_number ${NOT_TEXT}`],
  ]
  for (const [query, message] of cases) {
    const response = await app.inject({
      method: 'POST',
      url: `${EXCHANGE_URL}?${new URLSearchParams({ action: 'shipnotify', ...query })}`,
      headers: { ...basicAuth(), accept: 'application/json' },
    })
    t.equal(response.statusCode, 400, message)
    t.same(response.json(), { name: 'Bad Request', message, code: 0, status: 400, errorCode: 'SHIPMENTS_EXCHANGE_INVALID_PARAMETER' })
  }
  t.equal(await snapshotDatabase(app), before, 'nothing changed')
  t.ok(orderId)
})

t.test('signed webhooks: an over-long or control-character webhook-id is refused before it is stored', async (t) => {
  const secret = 'whsec_' + Buffer.from('a-test-signing-secret-of-32-bytes').toString('base64')
  const now = 1_790_000_000
  const app = await buildTestApp(t, { clock: () => now * 1000 })
  await app.shipments.integrations.create({ name: 'C', handle: 'c', providerId: 'signed-webhook', settings: { secret }, statusMap: { x: 'shipped' } })
  await orderWithShipments(app)
  const before = await snapshotDatabase(app)
  for (const [id, message] of [
    ['m'.repeat(256), 'The webhook-id header should contain at most 255 characters.'],
    ['msg\u0001', `The webhook-id header ${NOT_TEXT}`],
  ]) {
    const body = '{}'
    const response = await app.inject({
      method: 'POST',
      url: '/actions/shipments/gateway/handle?integration=c',
      headers: { 'webhook-id': id, 'webhook-timestamp': String(now), 'webhook-signature': signWebhook(secret, id, now, body) },
      payload: body,
    })
    t.equal(response.statusCode, 400)
    t.same(response.json(), { name: 'Bad Request', message, code: 0, status: 400, errorCode: 'SHIPMENTS_INTEGRATION_ERROR' })
  }
  t.equal(await snapshotDatabase(app), before)
})

t.test('integrations and external references hold to the same text rule', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  await t.rejects(app.shipments.integrations.create({ name: 'n'.repeat(256), handle: 'a' }), { message: /name: should contain at most 255 characters/ })
  await t.rejects(app.shipments.integrations.create({ name: 'A\u202E', handle: 'a' }), { message: /name: contains characters that are not allowed/ })
  await t.rejects(app.shipments.integrations.create({ name: 'A', handle: 'a', statusMap: { ['\u0000']: 'shipped' } }), { message: /statusMap: an external code contains/ })
  await t.rejects(
    app.shipments.integrations.create({ name: 'A', handle: 'a', providerId: 'signed-webhook', settings: { secret: 'x'.repeat(TEXT_LIMITS.long + 1) } }),
    { message: /settings.secret: should contain at most 10000 characters/ },
  )
  t.same(await app.shipments.integrations.list(), [], 'nothing was stored')
  await app.shipments.integrations.create({ name: 'A', handle: 'a' })
  await t.rejects(app.shipments.integrations.setExternalReference(id, 'a', { externalId: 'x\u0000' }), { message: /externalId: contains/ })
  await t.rejects(app.shipments.integrations.setExternalReference(id, 'a', { externalUrl: `https://x.example/${'p'.repeat(2048)}` }), { message: /externalUrl: should contain at most 2048/ })
  t.same(await app.shipments.integrations.externalReferences(id), [])
})

t.test('credential-like query parameters are masked in the request log of every surface', async (t) => {
  const logLines: string[] = []
  const app = await buildExchangeApp(t, { acceptQueryCredentials: true }, {}, logLines)
  const secret = 'hunter2-never-logged'
  await app.inject({ url: `${EXCHANGE_URL}?action=export&SS-UserName=u&SS_Password[]=${secret}` })
  await app.inject({ url: `${EXCHANGE_URL}?action=export&SS%252DPassword=${secret}` })
  await app.inject({ url: `/actions/shipments/gateway/handle?integration=none&access_token=${secret}` })
  await app.inject({ url: `/shipments/api/shipments?api_key=${secret}`, headers: as('viewer') })
  t.ok(logLines.length > 0)
  t.notOk(logLines.some((line) => line.includes(secret)), 'the value appears in no log line')
  t.ok(logLines.some((line) => line.includes('access_token=********')))
  t.ok(logLines.some((line) => line.includes('api_key=********')))
})

t.test('a refused gateway request is a warning without a stack; the package’s own failures are errors', async (t) => {
  const logLines: string[] = []
  const app = await buildTestApp(t, {}, undefined, logLines)
  await app.shipments.integrations.create({
    name: 'C',
    handle: 'c',
    providerId: 'signed-webhook',
    settings: { secret: 'whsec_' + Buffer.from('a-test-signing-secret-of-32-bytes').toString('base64') },
  })
  for (let attempt = 0; attempt < 20; attempt++) {
    await app.inject({ method: 'POST', url: '/actions/shipments/gateway/handle?integration=c', headers: { 'webhook-id': `m${attempt}`, 'webhook-timestamp': '1', 'webhook-signature': 'v1,AAAA' }, payload: '{}' })
  }
  const entries = logLines.map((line) => JSON.parse(line))
  t.equal(entries.filter((entry) => entry.level >= 50).length, 0, 'twenty forged deliveries wrote no error entry')
  t.equal(entries.filter((entry) => entry.level === 40 && entry.msg === 'Integration request refused').length, 20)
  t.notOk(logLines.some((line) => line.includes('"stack"')), 'and no stack trace')
})

t.test('JSON nesting is bounded before parsing: a deep body is a 400, a deep value from a host a 422', async (t) => {
  const app = await buildTestApp(t, { shipmentFields: [{ handle: 'data', type: 'json' }] })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const before = await shipmentRow(app, id)
  for (const depth of [33, 5_000, 200_000]) {
    const payload = `{"fields":{"data":${'['.repeat(depth)}${']'.repeat(depth)}}}`
    const response = await app.inject({ method: 'POST', url: `/shipments/api/shipments/${id}`, headers: { ...as('admin'), 'content-type': 'application/json' }, payload })
    t.equal(response.statusCode, 400, `depth ${depth}`)
    t.same(response.json(), { name: 'Bad Request', message: 'The JSON body nests deeper than 32 levels.', code: 0, status: 400, errorCode: 'SHIPMENTS_JSON_TOO_DEEP' })
  }
  // Brackets inside strings are text, not nesting.
  const text = await postUpdate(app, id, { shippingNotes: '['.repeat(100), fields: { data: { a: { b: [1, '{{{{'] } } } })
  t.equal(text.statusCode, 200)
  t.equal((await shipmentRow(app, id)).shippingNotes, '['.repeat(100))

  let deep: unknown = 1
  for (let level = 0; level < 40; level++) deep = [deep]
  const tooDeep = await app.shipments.shipments.update(id, { fields: { data: deep } }).catch((error: { errors?: unknown }) => error)
  t.same((tooDeep as { errors?: unknown }).errors, { 'fields.data': ['Data nests deeper than 32 levels.'] })
  const circular: Record<string, unknown> = {}
  circular.self = circular
  const notJson = await app.shipments.shipments.update(id, { fields: { data: circular } }).catch((error: { errors?: unknown }) => error)
  t.same((notJson as { errors?: unknown }).errors, { 'fields.data': ['Data must be a JSON value.'] })
  t.match(await shipmentRow(app, id), { fields: before.fields }, 'no refused value was stored')
})

t.test('property: a ShipNotice of any shape is read or refused with a 400, never a 500', async (t) => {
  const app = await buildExchangeApp(t)
  await insertExportOrder(app, { reference: 'PX-1' })
  const element: fc.Memo<string> = fc.memo((depth) =>
    depth <= 1
      ? fc.oneof(fc.constantFrom('<a/>', '<OrderNumber>PX-1</OrderNumber>', 'text', '<![CDATA[x]]>', '&amp;', '<b c="1" d="2"/>', '<!-- c -->', '<', '&bogus;'), fc.string({ maxLength: 5 }))
      : fc.array(element(depth - 1), { maxLength: 4 }).chain((children) => fc.constantFrom('a', 'Items', 'Item').map((name) => `<${name}>${children.join('')}</${name}>`)),
  )
  await fc.assert(
    fc.asyncProperty(fc.array(element(5), { maxLength: 5 }), fc.nat(40), fc.constantFrom('ShipNotice', 'Order'), async (children, nesting, root) => {
      const body = `<${root}>${'<x>'.repeat(nesting)}${children.join('')}${'</x>'.repeat(nesting)}</${root}>`
      const response = await app.inject({
        method: 'POST',
        url: `${EXCHANGE_URL}?action=shipnotify&order_number=PX-1`,
        headers: { ...basicAuth(), 'content-type': 'text/xml', accept: 'application/json' },
        payload: body,
      })
      if (response.statusCode === 200) return true
      return response.statusCode === 400 && response.json().message.startsWith('The ShipNotice XML body cannot be read: ')
    }),
    { numRuns: RUNS },
  )
})

t.test('property: a credential parameter is masked however its name is spelled', async (t) => {
  const { redactUrl } = await import('../src/http/redact.js')
  const separator = fc.constantFrom('-', '_', '.', ' ', '', '%2D', '%252D', '+', '%5F')
  const casing = (word: string) => fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length }).map((upper) => [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''))
  const suffix = fc.constantFrom('', '[]', '[0]', '%5B%5D', '.value')
  await fc.assert(
    fc.property(casing('ss'), separator, fc.constantFrom('password', 'username', 'passwd', 'token', 'secret').chain(casing), suffix, (prefix, sep, word, end) =>
      !redactUrl(`/p?${prefix}${sep}${word}${end}=hunter2&page=1`).includes('hunter2'),
    ),
    { numRuns: RUNS },
  )
})

t.test('review fixes: a too-deep body on an unknown id is a 404; key, sig and hmac parameters are masked; a UTF-8 byte order mark wins', async (t) => {
  const app = await buildExchangeApp(t)
  const deep = `{"fields":${'['.repeat(40)}${']'.repeat(40)}}`
  const response = await app.inject({ method: 'POST', url: '/shipments/api/shipments/999999', headers: { ...as('admin'), 'content-type': 'application/json' }, payload: deep })
  t.equal(response.statusCode, 404)
  t.same(response.json(), { name: 'Not Found', message: 'Shipment 999999 not found.', code: 0, status: 404, errorCode: 'SHIPMENTS_SHIPMENT_NOT_FOUND' })

  const { redactUrl } = await import('../src/http/redact.js')
  for (const name of ['key', 'api_key', 'access_key', 'sig', 'x-hmac', 'HMAC-SHA256']) {
    t.equal(redactUrl(`/p?${name}=hunter2`), `/p?${name}=********`, name)
  }

  const orderId = await insertExportOrder(app, { reference: 'BOM-1' })
  const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><ShipNotice><OrderNumber>BOM-1</OrderNumber><Service>Bücherpost</Service></ShipNotice>')])
  const notified = await app.inject({ method: 'POST', url: `${EXCHANGE_URL}?action=shipnotify`, headers: { ...basicAuth(), 'content-type': 'text/xml' }, payload: body })
  t.equal(notified.statusCode, 200, 'the byte order mark says UTF-8, whatever the declaration says')
  const { db, schema } = (await import('./fixtures/database.js')).tables(app)
  const { eq } = await import('drizzle-orm')
  const [row] = await db.select().from(schema.orders).where(eq(schema.orders.id, orderId))
  t.match(row, { statusHandle: 'shipped', fields: { shippingInfo: [{ service: 'Bücherpost' }] } })
})
