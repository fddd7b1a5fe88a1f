// The pack station's API on both engines, against the local EasyPost imitation: a slip's reference opens
// its shipment, items are counted by barcode (else SKU) with the counts kept by the station, a wrong item
// or one too many is refused in a packer's words, and finishing stores the parcel and buys its label by
// the shipping rules exactly once (a second finish answers the same label and buys nothing).
import t, { type Test } from 'tap'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { eq } from 'drizzle-orm'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { shipmentsOpenApiDocument, type ShipmentsPluginOptions } from '../src/index.js'
import { as, buildTestApp } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { easyPostImitation } from './fixtures/easypost-api.js'
import { completedOrderWithLines } from './fixtures/orders.js'
import { adminClient } from './fixtures/admin.js'

const API_KEY = 'EZTK-pack-station-key-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const JSON_BODY = { 'content-type': 'application/json' }
const CHEAPEST_IN_US = {
  rules: [{ id: 'us-cheapest', name: 'US: cheapest', enabled: true, integration: 'easypost', conditions: { countries: ['US'] }, choice: { kind: 'cheapest' } }],
  fallback: null,
}

async function saveRules(app: FastifyInstance, rules: unknown) {
  const { db, schema } = tables(app)
  const value = JSON.stringify(rules)
  await db.insert(schema.packageState).values({ key: 'rules.shippingRules', value }).onConflictDoUpdate({ target: schema.packageState.key, set: { value } })
}

/** A host with EasyPost (the imitation), a US order of a mug (barcode) x2, a tea (SKU only) x1 and an e-book, and its shipments. */
async function setup(t: Test, rules: unknown = CHEAPEST_IN_US, plugin: Partial<ShipmentsPluginOptions> = {}) {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM }, admin: {}, ...plugin })
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'webhook-secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 2000 } })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'processing', name: 'Processing', isDefault: true })
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({
    reference: `PS${Math.floor(Math.random() * 1e9)}`,
    isCompleted: true,
    shippingAddress: { name: 'Dr. Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', country: 'US' },
    items: [
      { name: 'Mug', sku: 'MUG-1', barcode: '4006381333931', quantity: 2 },
      { name: 'Tea', sku: 'TEA-1', quantity: 1 },
      { name: 'E-book', sku: 'EBOOK', quantity: 1, shippable: false },
    ],
  })
  const [mug, tea] = (await app.shipments.orders.orderLines!(orderId))!.map((line) => line.id)
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: mug!, quantity: 2 }, { lineItemId: tea!, quantity: 1 }] })
  await saveRules(app, rules)
  return { app, imitation, orderId, shipment: shipment!, mug: mug!, tea: tea! }
}

const post = (app: FastifyInstance, path: string, body: unknown, user: Parameters<typeof as>[0] = 'admin') =>
  app.inject({ method: 'POST', url: `/shipments/api/pack-station${path}`, headers: { ...as(user), ...JSON_BODY }, payload: JSON.stringify(body) })

async function parcelsOf(app: FastifyInstance, shipmentId: number) {
  const { db, schema } = tables(app)
  return db.select().from(schema.parcels).where(eq(schema.parcels.shipmentId, shipmentId))
}

t.test('the reference store keeps a line barcode, checks it, and orderLines gives it', async (t) => {
  const app = await buildTestApp(t)
  const { orderId } = await completedOrderWithLines(app, 'BAR-1', [
    { name: 'Mug', sku: 'MUG', barcode: '4006381333931', quantity: 1 },
    { name: 'Tea', sku: 'TEA', quantity: 1 },
  ])
  t.match(await app.shipments.orders.orderLines!(orderId), [{ sku: 'MUG', barcode: '4006381333931' }, { sku: 'TEA', barcode: null }])
  await t.rejects(app.shipments.referenceOrders!.createOrder({ reference: 'BAR-2', items: [{ name: 'Mug', barcode: '400 638' }] }), { code: 'SHIPMENTS_REFERENCE_ORDER_INVALID', field: 'items.0.barcode' })
  t.equal(await app.shipments.orders.findOrderByReference('BAR-2'), null, 'the refused order is not stored')
})

t.test('open, scan every item, finish: the parcel stored and its label bought by the rules, once', async (t) => {
  const { app, imitation, shipment, mug, tea } = await setup(t)

  const opened = await post(app, '/open', { code: shipment.reference })
  t.equal(opened.statusCode, 200, opened.body)
  t.match(opened.json(), {
    success: true,
    shipment: {
      id: shipment.id,
      reference: shipment.reference,
      complete: false,
      weight: null,
      labels: [],
      lines: [
        { lineItemId: mug, name: 'Mug', barcode: '4006381333931', code: '4006381333931', needed: 2, counted: 0 },
        { lineItemId: tea, name: 'Tea', barcode: null, code: 'TEA-1', needed: 1, counted: 0 },
      ],
    },
  })
  t.equal(opened.json().shipment.lines.length, 2, 'the digital line is not packed')
  t.equal((await post(app, '/open', { code: shipment.reference.toLowerCase() })).json().shipment.id, shipment.id, "a slip's letters in either case")

  let counted: Array<{ lineItemId: number; quantity: number }> = []
  for (const code of ['4006381333931', 'TEA-1', '4006381333931']) {
    const scanned = await post(app, `/shipments/${shipment.id}/scan`, { code, counted })
    t.equal(scanned.statusCode, 200, scanned.body)
    counted = scanned.json().shipment.lines.map((line: { lineItemId: number; counted: number }) => ({ lineItemId: line.lineItemId, quantity: line.counted }))
  }
  const last = await post(app, `/shipments/${shipment.id}/scan`, { code: 'TEA-1', counted: [{ lineItemId: mug, quantity: 1 }] })
  t.match(last.json(), { line: { lineItemId: tea, counted: 1 }, shipment: { complete: false } }, 'the counts are the ones sent: the server keeps none')
  t.same(counted, [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 1 }])
  t.same(await parcelsOf(app, shipment.id), [], 'scans write nothing')

  const finished = await post(app, `/shipments/${shipment.id}/finish`, { counted, weight: { value: '1.2', unit: 'kg' } })
  t.equal(finished.statusCode, 200, finished.body)
  const body = finished.json()
  t.match(body, { success: true, bought: 1, shipment: { complete: true }, labels: [{ carrier: 'USPS', service: 'GroundAdvantage', format: 'PDF', url: /^https:\/\/easypost-files\.example\// }] })
  t.equal(imitation.stats.buys, 1, 'one purchase at the carrier')
  const [parcel] = await parcelsOf(app, shipment.id)
  t.match(parcel, { weight: '1.2', weightUnit: 'kg', status: 'labelled', carrier: 'USPS', service: 'GroundAdvantage' })
  t.same(parcel!.items.map(({ lineItemId, quantity }) => ({ lineItemId, quantity })), [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 1 }])
  t.equal(body.labels[0].parcelId, parcel!.id)

  const again = await post(app, `/shipments/${shipment.id}/finish`, { counted, weight: { value: '1.2', unit: 'kg' } })
  t.equal(again.statusCode, 200, again.body)
  t.match(again.json(), { bought: 0, labels: [{ parcelId: parcel!.id, url: body.labels[0].url }] })
  t.equal(imitation.stats.buys, 1, 'a second finish buys nothing')
  t.equal((await parcelsOf(app, shipment.id)).length, 1, 'and adds no parcel')
  t.match((await post(app, '/open', { code: shipment.reference })).json(), { shipment: { labels: [{ parcelId: parcel!.id }], weight: { value: '1.2', unit: 'kg' } } }, 'the slip scanned again opens with its label, to print again')
})

t.test('a wrong item, one too many, an unknown slip and a finish before everything is counted are refused in words', async (t) => {
  const { app, imitation, shipment, mug, tea } = await setup(t)
  const scan = (code: string, counted: unknown) => post(app, `/shipments/${shipment.id}/scan`, { code, counted })

  const wrong = await scan('9780201379624', [])
  t.equal(wrong.statusCode, 422)
  t.match(wrong.json(), { errorCode: 'SHIPMENTS_PACK_WRONG_ITEM', message: `Wrong item: "9780201379624" is not in shipment ${shipment.reference}. Put it back.`, status: 422 })
  t.match((await scan('EBOOK', [])).json(), { errorCode: 'SHIPMENTS_PACK_WRONG_ITEM' }, 'a line the shipment does not hold')
  t.match((await scan('MUG-1', [])).json(), { errorCode: 'SHIPMENTS_PACK_WRONG_ITEM' }, 'a line with a barcode is scanned by its barcode')

  t.match((await scan('04006381333931', [])).json(), { line: { lineItemId: mug, counted: 1 } }, 'a GTIN with leading zeros (a GTIN-14 of the EAN-13) is the same item')

  const tooMany = await scan('4006381333931', [{ lineItemId: mug, quantity: 2 }])
  t.equal(tooMany.statusCode, 422)
  t.match(tooMany.json(), { errorCode: 'SHIPMENTS_PACK_TOO_MANY', message: 'One too many: Mug, all 2 packed already. Take it out.' })

  const forged = await scan('TEA-1', [{ lineItemId: tea, quantity: 5 }])
  t.equal(forged.statusCode, 422)
  t.match(forged.json(), { errorCode: 'SHIPMENTS_VALIDATION_FAILED', errors: { 'counted.0': ['line ' + tea + ': counted must be 0 to 1'] } })

  const unknown = await post(app, '/open', { code: 'NO-SUCH-SLIP' })
  t.equal(unknown.statusCode, 404)
  t.match(unknown.json(), { errorCode: 'SHIPMENTS_PACK_UNKNOWN_SLIP', message: 'No shipment has the reference "NO-SUCH-SLIP": scan the barcode on the packing slip.' })
  t.equal((await post(app, '/shipments/999999/scan', { code: 'TEA-1', counted: [] })).json().errorCode, 'SHIPMENTS_PACK_UNKNOWN_SHIPMENT')

  const early = await post(app, `/shipments/${shipment.id}/finish`, { counted: [{ lineItemId: mug, quantity: 1 }], weight: { value: '1', unit: 'kg' } })
  t.equal(early.statusCode, 422)
  t.match(early.json(), { errorCode: 'SHIPMENTS_PACK_NOT_COUNTED', message: 'Not everything is packed yet: Mug 1 of 2, Tea 0 of 1.' })
  const noWeight = await post(app, `/shipments/${shipment.id}/finish`, { counted: [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 1 }] })
  t.equal(noWeight.statusCode, 422)
  t.match(noWeight.json(), { errorCode: 'SHIPMENTS_VALIDATION_FAILED', errors: { weight: [/required/] } })
  t.same(await parcelsOf(app, shipment.id), [], 'nothing stored')
  t.equal(imitation.stats.creates + imitation.stats.buys, 0, 'nothing asked of the carrier')

  t.equal((await post(app, '/open', { code: shipment.reference }, 'editor')).statusCode, 403, "the label purchase's permission guards the station")
  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  const shipped = await post(app, '/open', { code: shipment.reference })
  t.equal(shipped.statusCode, 409)
  t.match(shipped.json(), { errorCode: 'SHIPMENTS_PACK_NOT_PACKABLE', message: `Do not pack shipment ${shipment.reference}: it has shipped already.` })
})

t.test('a whole-order shipment packs every shippable line; no matching rule is said in words and buys nothing', async (t) => {
  const { app, imitation, orderId, mug, tea } = await setup(t, { rules: [{ ...CHEAPEST_IN_US.rules[0], conditions: { countries: ['DE'] } }], fallback: null })
  const { shipment } = await (async () => {
    const list = await app.shipments.shipments.list({ orderId })
    await app.shipments.shipments.update(list.shipments[0]!.id, { status: 'cancelled' })
    const [whole] = await app.shipments.shipments.create(orderId)
    return { shipment: whole! }
  })()
  const opened = await post(app, '/open', { code: shipment.reference })
  t.equal(opened.statusCode, 200, opened.body)
  t.match(opened.json().shipment.lines, [{ lineItemId: mug, needed: 2 }, { lineItemId: tea, needed: 1 }])
  const counted = [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 1 }]
  const refused = await post(app, `/shipments/${shipment.id}/finish`, { counted, weight: { value: '900', unit: 'g' } })
  t.equal(refused.statusCode, 422)
  t.match(refused.json(), { errorCode: 'SHIPMENTS_PACK_NO_RULE', message: 'No label was bought: no shipping rule matches this parcel and there is no default.' })
  t.equal(imitation.stats.buys, 0)
  const [parcel] = await parcelsOf(app, shipment.id)
  t.match(parcel, { weight: '900', weightUnit: 'g', labelOperationId: null }, 'the packed parcel stays, to buy when a rule fits')

  await saveRules(app, CHEAPEST_IN_US)
  const finished = await post(app, `/shipments/${shipment.id}/finish`, { counted, weight: { value: '950', unit: 'g' } })
  t.equal(finished.statusCode, 200, finished.body)
  t.match(finished.json(), { bought: 1, labels: [{ parcelId: parcel!.id }] })
  t.match((await parcelsOf(app, shipment.id))[0], { weight: '950', status: 'labelled' }, 'the weight confirmed again replaces the first')
  t.equal(imitation.stats.buys, 1)
})

t.test("the station's answers, successes and refusals, validate against the OpenAPI document", async (t) => {
  const { app, shipment, mug, tea } = await setup(t)
  const document = (await shipmentsOpenApiDocument()) as unknown as { paths: Record<string, { post: { responses: Record<string, { content: Record<string, { schema: object }> }> } }> }
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  const check = (response: LightMyRequestResponse, path: string) => {
    const schema = document.paths[`/shipments/api/pack-station${path}`]?.post.responses[String(response.statusCode)]?.content['application/json']?.schema
    t.ok(schema, `${path} documents ${response.statusCode}`)
    t.ok(schema && ajv.validate(schema, response.json()), `${path} ${response.statusCode}: ${ajv.errorsText()}`)
  }
  const counted = [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 1 }]
  check(await post(app, '/open', { code: shipment.reference }), '/open')
  check(await post(app, '/open', { code: 'NOPE' }), '/open')
  check(await post(app, '/open', { code: '' }), '/open')
  check(await post(app, `/shipments/${shipment.id}/scan`, { code: 'TEA-1', counted: [] }), '/shipments/{id}/scan')
  check(await post(app, `/shipments/${shipment.id}/scan`, { code: 'NOPE', counted: [] }), '/shipments/{id}/scan')
  check(await post(app, `/shipments/${shipment.id}/finish`, { counted: [] }), '/shipments/{id}/finish')
  check(await post(app, `/shipments/${shipment.id}/finish`, { counted, weight: { value: 1.5, unit: 'kg' } }), '/shipments/{id}/finish')
  check(await post(app, `/shipments/${shipment.id}/finish`, { counted, weight: { value: '1.5', unit: 'kg' } }), '/shipments/{id}/finish')
  check(await post(app, `/shipments/${shipment.id}/finish`, { counted }, 'viewer'), '/shipments/{id}/finish')
})

t.test('the admin page works without script: GET scans carry the counts, the POST buys once, refusals are alerts', async (t) => {
  const { app, imitation, shipment, mug, tea } = await setup(t)
  const admin = adminClient(app, 'admin')
  const idle = await admin.get('/pack-station')
  t.equal(idle.statusCode, 200)
  t.match(idle.body, /<input type="text" id="pack-scan" name="code"[^>]* autofocus>/, 'the scan field has the focus')
  t.match(idle.body, /<a href="\/shipments\/admin\/pack-station" aria-current="page">Pack station<\/a>/, 'in the navigation')
  t.equal((await adminClient(app, 'editor').get('/pack-station')).statusCode, 403, "the label purchase's permission")

  const unknown = await admin.get('/pack-station?code=NOPE')
  t.equal(unknown.statusCode, 422)
  t.match(unknown.body, /role="alert"><strong>Refused\.<\/strong> No shipment has the reference &quot;NOPE&quot;/)

  const opened = await admin.get(`/pack-station?code=${encodeURIComponent(shipment.reference)}`)
  t.equal(opened.statusCode, 200)
  t.match(opened.body, `<input type="hidden" name="shipment" value="${shipment.id}"><input type="hidden" name="counted" value="${mug}:0,${tea}:0">`)
  const wrong = await admin.get(`/pack-station?shipment=${shipment.id}&counted=${mug}:1,${tea}:0&code=NOPE`)
  t.equal(wrong.statusCode, 422)
  t.match(wrong.body, /role="alert"><strong>Refused\.<\/strong> Wrong item: &quot;NOPE&quot; is not in shipment/)
  t.match(wrong.body, `name="counted" value="${mug}:1,${tea}:0"`, 'the counts stay as they were')
  const counted = await admin.get(`/pack-station?shipment=${shipment.id}&counted=${mug}:2,${tea}:0&code=TEA-1`)
  t.equal(counted.statusCode, 200)
  t.match(counted.body, /role="status">Counted: Tea, 1 of 1\. Everything is packed: weigh the parcel\./)
  t.match(counted.body, /<input type="text" id="pack-weight" name="weight" value=""[^>]* autofocus>/, 'the weight field takes the focus')

  const early = await admin.post('/pack-station/finish', { shipment: String(shipment.id), counted: `${mug}:1,${tea}:1`, weight: '1.2', weightUnit: 'kg' })
  t.equal(early.statusCode, 422)
  t.match(early.body, /Not everything is packed yet: Mug 1 of 2\./)
  t.equal((await admin.post('/pack-station/finish', { shipment: String(shipment.id), counted: `${mug}:2,${tea}:1`, weight: '1.2', weightUnit: 'kg' }, { withToken: false })).statusCode, 403, 'the CSRF token is required')
  t.equal(imitation.stats.buys, 0)

  const bought = await admin.post('/pack-station/finish', { shipment: String(shipment.id), counted: `${mug}:2,${tea}:1`, weight: '1.2', weightUnit: 'kg' })
  t.equal(bought.statusCode, 200, bought.body)
  t.match(bought.body, new RegExp(`Label bought for shipment ${shipment.reference}\\. Scan the next packing slip\\.`))
  t.match(bought.body, /<a class="button" href="https:\/\/easypost-files\.example\/[^"]+" target="_blank" rel="noopener" data-pack-label=/)
  t.equal(imitation.stats.buys, 1)
  const again = await admin.post('/pack-station/finish', { shipment: String(shipment.id), counted: `${mug}:2,${tea}:1`, weight: '1.2', weightUnit: 'kg' })
  t.match(again.body, /The label was bought before: nothing bought again/)
  t.equal(imitation.stats.buys, 1, 'sent twice, bought once')
  t.equal((await parcelsOf(app, shipment.id)).length, 1)
})

t.test('two finishes of one shipment at once (a double Enter, two stations) add one parcel and buy one label', async (t) => {
  const { app, imitation, shipment, mug, tea } = await setup(t)
  const counted = [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 1 }]
  const finish = () => post(app, `/shipments/${shipment.id}/finish`, { counted, weight: { value: '1.2', unit: 'kg' } })
  const answers = await Promise.all([finish(), finish(), finish()])
  t.same(answers.map((answer) => answer.statusCode), [200, 200, 200], answers.map((answer) => answer.body).join('\n'))
  t.same(answers.map((answer) => answer.json().bought).sort(), [0, 0, 1], 'one of them bought')
  t.equal(imitation.stats.buys, 1, 'one purchase at the carrier')
  t.equal((await parcelsOf(app, shipment.id)).length, 1, 'one parcel')
  t.same(new Set(answers.map((answer) => answer.json().labels[0].url)).size, 1, 'each answers the same label')
})

t.test('a finish that waits past lockTimeoutMs for another finish of its shipment is told so (409), and buys nothing', async (t) => {
  const { app, imitation, shipment, mug, tea } = await setup(t, CHEAPEST_IN_US, { lockTimeoutMs: 300 })
  imitation.fault({ step: 'buy', kind: 'delay', ms: 1200 })
  const counted = [{ lineItemId: mug, quantity: 2 }, { lineItemId: tea, quantity: 1 }]
  const first = post(app, `/shipments/${shipment.id}/finish`, { counted, weight: { value: '1.2', unit: 'kg' } })
  await new Promise((resolve) => setTimeout(resolve, 100))
  const second = await post(app, `/shipments/${shipment.id}/finish`, { counted, weight: { value: '1.2', unit: 'kg' } })
  t.equal(second.statusCode, 409, second.body)
  t.match(second.json(), { errorCode: 'SHIPMENTS_PACK_BUSY', message: `Shipment ${shipment.reference} is being finished elsewhere right now: wait a moment and press Buy and print again.` })
  t.equal((await first).statusCode, 200)
  t.equal(imitation.stats.buys, 1)
})

t.test('a shipment with a line that has neither barcode nor SKU is not opened: the station could not verify it', async (t) => {
  const { app } = await setup(t)
  const orderId = await app.shipments.referenceOrders!.createOrder({ reference: `NOSKU${Math.floor(Math.random() * 1e9)}`, isCompleted: true, items: [{ name: 'Loose bolts', quantity: 3 }] })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const refused = await post(app, '/open', { code: shipment!.reference })
  t.equal(refused.statusCode, 409)
  t.match(refused.json(), { errorCode: 'SHIPMENTS_PACK_NOT_PACKABLE', message: `Do not pack shipment ${shipment!.reference}: "Loose bolts" has no barcode or SKU to scan; pack it on the shipment's page.` })
})
