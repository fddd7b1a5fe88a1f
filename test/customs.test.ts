// Customs declarations, on both engines: the order lines' customs data in the reference store, the shop's
// settings (options as defaults, replaced whole, checked), a parcel's declaration built exactly (3 x 19.99
// = 59.97, 0.333 kg x 3 = 0.999 kg), edited and reset, and rates and labels of an international parcel
// refused before any provider call while it is incomplete (each line and field named, nothing written),
// a complete one reaching the provider's request, and a quote made stale by an edit.
import t, { type Test } from 'tap'
import { eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { completedOrderWithLines } from './fixtures/orders.js'
import { easyPostImitation } from './fixtures/easypost-api.js'
import { defineProvider, Type, type LabelPurchaseRequest, type RateRequest } from '../src/index.js'

const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const TORONTO = { name: 'Jean Tremblay', address1: '100 Queen St W', city: 'Toronto', state: 'ON', postalCode: 'M5H 2N2', country: 'CA' }
const PORTLAND = { name: 'Pat Doe', address1: '1 Main St', city: 'Portland', state: 'OR', postalCode: '97201', country: 'US' }
const json = (user: string) => ({ ...as(user), 'content-type': 'application/json' })

/** A label seller that keeps every request it is sent: what reached the provider, and how often. */
function recordingSeller() {
  const rated: RateRequest[] = []
  const bought: LabelPurchaseRequest[] = []
  const provider = defineProvider({
    id: 'recording-seller',
    settingsSchema: Type.Object({}),
    async handleGatewayRequest() {
      return { statusCode: 200, body: {} }
    },
    deliveries: {
      async quoteRates(request: RateRequest) {
        rated.push(request)
        return [{ carrier: 'Acme', service: 'World', amount: '31.40', currency: 'USD', deliveryDays: 6, deliveryDate: null }]
      },
      async purchaseLabel(request: LabelPurchaseRequest) {
        bought.push(request)
        return { externalId: `ext-${request.operationId}`, trackingNumber: `TRK${bought.length}`, carrier: request.carrier, service: request.service, labelUrl: 'https://labels.example/1.pdf', labelFormat: 'PDF', cost: '31.40', currency: 'USD', trackingUrl: null }
      },
      async recoverLabel() {
        return { state: 'not-purchased' as const }
      },
      async voidLabel() {
        return { refundStatus: 'submitted' }
      },
    },
  })
  return { provider, rated, bought }
}

const SHIRT = { name: 'T-shirt', sku: 'TS-1', quantity: 3, weight: 0.333, weightUnit: 'kg' as const, customs: { tariffNumber: '6109.10', originCountry: 'PT', description: 'Cotton T-shirt', value: { amount: '19.99', currency: 'USD' } } }
const MUG = { name: 'Mug', sku: 'MUG-1', quantity: 2, weight: 350, weightUnit: 'g' as const }

interface Scene {
  app: FastifyInstance
  seller: ReturnType<typeof recordingSeller>
  shipmentId: number
  parcelId: number
  lineIds: number[]
}

async function scene(t: Test, options: { to?: typeof TORONTO; parcelWeight?: string; signer?: string | null } = {}): Promise<Scene> {
  const seller = recordingSeller()
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM }, providers: [seller.provider], customs: { signer: options.signer === undefined ? 'Ada Lovelace' : options.signer } })
  await app.shipments.integrations.create({ name: 'Seller', handle: 'seller', providerId: 'recording-seller', settings: {} })
  const { orderId, lineIds } = await completedOrderWithLines(app, `CUS-${Math.random().toString(36).slice(2, 8)}`, [SHIRT, MUG])
  const { db, schema } = tables(app)
  const to = options.to ?? TORONTO
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: to.name, address1: to.address1, city: to.city, state: to.state, postalCode: to.postalCode, countryCode: to.country })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const parcel = await app.shipments.deliveries.addParcel(shipment!.id, { weight: { value: options.parcelWeight ?? '2', unit: 'kg' }, items: [{ lineItemId: lineIds[0]!, quantity: 3 }, { lineItemId: lineIds[1]!, quantity: 2 }] })
  return { app, seller, shipmentId: shipment!.id, parcelId: parcel.id, lineIds }
}

const customsUrl = (s: Pick<Scene, 'shipmentId' | 'parcelId'>) => `/shipments/api/shipments/${s.shipmentId}/parcels/${s.parcelId}/customs`
const getCustoms = (s: Scene, user = 'viewer') => s.app.inject({ method: 'GET', url: customsUrl(s), headers: as(user) })
const rate = (s: Scene) => s.app.inject({ method: 'POST', url: `/shipments/api/shipments/${s.shipmentId}/parcels/${s.parcelId}/rates`, headers: json('admin'), payload: { integration: 'seller' } })
const buy = (s: Scene, body: Record<string, unknown> = { integration: 'seller', carrier: 'Acme', service: 'World' }) =>
  s.app.inject({ method: 'POST', url: `/shipments/api/shipments/${s.shipmentId}/parcels/${s.parcelId}/label`, headers: json('admin'), payload: body })

async function storedDeclarations(app: FastifyInstance) {
  const { db, schema } = tables(app)
  return db.select().from(schema.customsDeclarations)
}

async function labelOperations(app: FastifyInstance) {
  const { db, schema } = tables(app)
  return db.select().from(schema.labelOperations)
}

/** The declaration built for the scene, as an edit would send it back (every field). */
async function builtBody(s: Scene) {
  const { declaration } = (await getCustoms(s)).json()
  const { parcelId, shipmentId, edited, stale, stored, forms, totals, problems, ...body } = declaration
  return body
}

t.test("the reference store keeps each line's customs data and gives it as OrderLine.customs", async (t) => {
  const s = await scene(t)
  const lines = await s.app.shipments.orders.orderLines!((await s.app.shipments.shipments.get(s.shipmentId))!.orderId)
  t.same(lines![0]!.customs, { tariffNumber: '6109.10', originCountry: 'PT', description: 'Cotton T-shirt', value: { amount: '19.99', currency: 'USD' } })
  t.equal(lines![1]!.customs, undefined, 'a line without customs data has none')
  await t.rejects(completedOrderWithLines(s.app, 'CUS-BAD', [{ name: 'X', customs: { originCountry: 'Portugal' } }]), { message: /^items\.0\.customs\.originCountry: / })
  await t.rejects(completedOrderWithLines(s.app, 'CUS-BAD2', [{ name: 'X', customs: { value: { amount: '1,5', currency: 'USD' } } }]), { message: /^items\.0\.customs\.value\.amount: / })
})

t.test('a domestic parcel needs no declaration: required false, and an edit is refused with a coded 409', async (t) => {
  const s = await scene(t, { to: PORTLAND })
  const response = await getCustoms(s)
  t.equal(response.statusCode, 200, response.body)
  t.same(response.json(), { success: true, parcelId: s.parcelId, required: false, fromCountry: 'US', toCountry: 'US', declaration: null })
  const put = await s.app.inject({ method: 'PUT', url: customsUrl(s), headers: json('editor'), payload: { ...SETTINGS, items: [] } })
  t.equal(put.statusCode, 409)
  t.equal(put.json().errorCode, 'SHIPMENTS_CUSTOMS_NOT_REQUIRED')
  t.same(await storedDeclarations(s.app), [])
  // Rates go through untouched: no customs info for a domestic parcel.
  t.equal((await rate(s)).statusCode, 200)
  t.equal(s.seller.rated[0]!.customs, undefined)
})

t.test('the declaration is built exactly from the parcel\'s items, the lines\' customs data and the settings', async (t) => {
  const s = await scene(t)
  const response = await getCustoms(s)
  t.equal(response.statusCode, 200, response.body)
  const body = response.json()
  t.match(body, { success: true, required: true, fromCountry: 'US', toCountry: 'CA' })
  const declaration = body.declaration
  t.match(declaration, { contentsType: 'merchandise', nonDeliveryOption: 'return', restrictionType: 'none', incoterm: 'DDU', eelPfc: 'NOEEI 30.37(a)', currency: 'USD', signer: 'Ada Lovelace', certify: true, edited: false, stale: false, stored: false, forms: [] })
  t.same(declaration.items[0], { lineItemId: s.lineIds[0], description: 'Cotton T-shirt', quantity: 3, value: '59.97', weight: { value: '0.999', unit: 'kg' }, tariffNumber: '6109.10', originCountry: 'PT', sku: 'TS-1' })
  t.same(declaration.items[1], { lineItemId: s.lineIds[1], description: 'Mug', quantity: 2, value: '0', weight: { value: '700', unit: 'g' }, tariffNumber: null, originCountry: null, sku: 'MUG-1' })
  t.same(declaration.totals, { value: '59.97', weight: { value: '1699', unit: 'g' } }, 'mixed units add up in grams, exactly')
  t.same(declaration.problems, {
    'items[1].tariffNumber': ['is required: the HS tariff number (6 to 10 digits)'],
    'items[1].originCountry': ['is required: the country where the goods were made (ISO 3166-1 alpha-2, such as US)'],
    'items[1].value': ["must be greater than 0: the line's total value in USD"],
  })
  t.same(await storedDeclarations(s.app), [], 'reading builds, and writes nothing')
})

t.test('rates and labels of an incomplete international parcel are refused before any provider call, each line and field named, nothing written', async (t) => {
  const s = await scene(t)
  for (const attempt of [rate, buy]) {
    const response = await attempt(s)
    t.equal(response.statusCode, 422, response.body)
    t.same(response.json(), {
      success: false,
      errorCode: 'SHIPMENTS_CUSTOMS_INCOMPLETE',
      errors: {
        'items[1].tariffNumber': ['is required: the HS tariff number (6 to 10 digits)'],
        'items[1].originCountry': ['is required: the country where the goods were made (ISO 3166-1 alpha-2, such as US)'],
        'items[1].value': ["must be greater than 0: the line's total value in USD"],
      },
    })
  }
  t.equal(s.seller.rated.length + s.seller.bought.length, 0, 'the provider was not called')
  t.same(await labelOperations(s.app), [], 'no label operation was begun')
  t.same(await storedDeclarations(s.app), [], 'no declaration was stored')
  const { db, schema } = tables(s.app)
  t.same(await db.select().from(schema.rateQuotes), [], 'no quote was stored')
})

t.test('each check names its field: tariff number, origin, value, quantity, weights that do not add up, signer, explanation, a line the parcel does not hold', async (t) => {
  const s = await scene(t, { parcelWeight: '1.5' })
  const body = await builtBody(s)
  const edit = (payload: unknown) => s.app.inject({ method: 'PUT', url: customsUrl(s), headers: json('editor'), payload: payload as Record<string, unknown> })
  const broken = {
    ...body,
    contentsType: 'other',
    contentsExplanation: null,
    signer: null,
    items: [
      { ...body.items[0], tariffNumber: '61.09', originCountry: 'P1', quantity: 4, value: '0.00' },
      { ...body.items[1], tariffNumber: '9503.00.00901', originCountry: 'CN', value: '24.00', weight: { value: '0.8', unit: 'kg' } },
      { lineItemId: 999999, description: ' ', quantity: 1, value: '5', weight: { value: '0.1', unit: 'kg' }, tariffNumber: '950300', originCountry: 'CN', sku: null },
    ],
  }
  const response = await edit(broken)
  t.equal(response.statusCode, 422, response.body)
  t.equal(response.json().errorCode, 'SHIPMENTS_VALIDATION_FAILED', 'the edit itself is refused as any bad input is')
  const errors = response.json().errors
  t.same(Object.keys(errors).sort(), [
    'contentsExplanation',
    'items[0].originCountry',
    'items[0].quantity',
    'items[0].tariffNumber',
    'items[0].value',
    'items[1].tariffNumber',
    'items[2].description',
    'items[2].lineItemId',
    'signer',
    'totals.weight',
  ])
  t.match(errors['items[0].quantity'], [/declare 4 of order line \d+; the parcel holds 3/])
  t.match(errors['totals.weight'], [/the items weigh 1\.899 kg, more than the parcel \(1\.5 kg\)/])
  t.match(errors['items[1].tariffNumber'], [/6 to 10 digits/], '11 digits is too many')
  t.same(await storedDeclarations(s.app), [], 'nothing written')
  // The form of the edit: a number for a value, an unknown field.
  const badForm = await edit({ ...body, currency: 'dollars', items: [{ ...body.items[0], value: 59.97, colour: 'red' }] })
  t.equal(badForm.statusCode, 422)
  t.match(badForm.json().errors, { currency: [/ISO 4217/], 'items[0].value': [/exact decimal string/], 'items[0].colour': ['is not a field of a customs item'] })
})

const SETTINGS = { contentsType: 'merchandise', contentsExplanation: null, nonDeliveryOption: 'return', restrictionType: 'none', restrictionComments: null, signer: 'Ada Lovelace', certify: true, incoterm: 'DDU', eelPfc: 'NOEEI 30.37(a)', currency: 'USD' }

t.test('an edit is kept and sent to the provider; a complete declaration reaches RateRequest.customs and the purchase, stored first', async (t) => {
  const s = await scene(t)
  const body = await builtBody(s)
  body.items[1] = { ...body.items[1], tariffNumber: '6912.00', originCountry: 'US', value: '24.50' }
  const saved = await s.app.inject({ method: 'PUT', url: customsUrl(s), headers: json('editor'), payload: body })
  t.equal(saved.statusCode, 200, saved.body)
  t.match(saved.json().declaration, { edited: true, stored: true, stale: false, problems: {}, totals: { value: '84.47' } })
  const [row] = await storedDeclarations(s.app)
  t.match(row, { parcelId: s.parcelId, edited: true, incoterm: 'DDU' })

  const rated = await rate(s)
  t.equal(rated.statusCode, 200, rated.body)
  t.same(s.seller.rated[0]!.customs, {
    contentsType: 'merchandise',
    contentsExplanation: null,
    nonDeliveryOption: 'return',
    restrictionType: 'none',
    restrictionComments: null,
    signer: 'Ada Lovelace',
    certify: true,
    incoterm: 'DDU',
    eelPfc: 'NOEEI 30.37(a)',
    currency: 'USD',
    items: [
      { description: 'Cotton T-shirt', quantity: 3, value: '59.97', weightOunces: '35.3', tariffNumber: '6109.10', originCountry: 'PT', sku: 'TS-1' },
      { description: 'Mug', quantity: 2, value: '24.50', weightOunces: '24.7', tariffNumber: '6912.00', originCountry: 'US', sku: 'MUG-1' },
    ],
  }, 'ounces rounded up (0.999 kg = 35.239 oz -> 35.3; 700 g = 24.692 oz -> 24.7), values exact')

  // An edit after the quote makes it stale: the purchase with it is refused, the provider not called.
  const quoteId = rated.json().quotes[0].id
  const changed = await s.app.inject({ method: 'PUT', url: customsUrl(s), headers: json('editor'), payload: { ...body, incoterm: 'DDP' } })
  t.equal(changed.statusCode, 200)
  const stale = await buy(s, { integration: 'seller', quoteId })
  t.equal(stale.statusCode, 409, stale.body)
  t.equal(stale.json().errorCode, 'SHIPMENTS_QUOTE_CHANGED')
  t.equal(s.seller.bought.length, 0)

  const bought = await buy(s)
  t.equal(bought.statusCode, 200, bought.body)
  t.match(s.seller.bought[0]!.customs, { incoterm: 'DDP', items: [{ value: '59.97' }, { value: '24.50' }] })
  // Once labelled, the declaration is the one the label was bought with: no edit, no reset.
  const locked = await s.app.inject({ method: 'DELETE', url: customsUrl(s), headers: as('editor') })
  t.equal(locked.statusCode, 409)
  t.equal(locked.json().errorCode, 'SHIPMENTS_PARCEL_LABELLED')
})

t.test('a built declaration is stored when its label is bought, and follows the parcel\'s items until then', async (t) => {
  const s = await scene(t)
  // Complete the lines' data through the settings' side: the mug's line leaves the parcel.
  await s.app.shipments.deliveries.updateParcel(s.shipmentId, s.parcelId, { items: [{ lineItemId: s.lineIds[0]!, quantity: 2 }] })
  const response = await getCustoms(s)
  t.same(response.json().declaration.items.map((item: { quantity: number; value: string }) => [item.quantity, item.value]), [[2, '39.98']], 'rebuilt from the parcel as it is')
  t.same(response.json().declaration.problems, {})
  const bought = await buy(s)
  t.equal(bought.statusCode, 200, bought.body)
  const [row] = await storedDeclarations(s.app)
  t.match(row, { parcelId: s.parcelId, shipmentId: s.shipmentId, edited: false, items: [{ quantity: 2, value: '39.98', tariffNumber: '6109.10' }] }, 'the declaration the label was bought with is kept (the provider\'s forms go with it)')
  t.equal(s.seller.bought[0]!.customs!.items.length, 1)
})

t.test('an edit is flagged stale when the parcel changes, and reset returns to the built declaration', async (t) => {
  const s = await scene(t)
  const body = await builtBody(s)
  body.items[1] = { ...body.items[1], tariffNumber: '6912.00', originCountry: 'US', value: '24.50' }
  t.equal((await s.app.inject({ method: 'PUT', url: customsUrl(s), headers: json('editor'), payload: body })).statusCode, 200)
  await s.app.shipments.deliveries.updateParcel(s.shipmentId, s.parcelId, { items: [{ lineItemId: s.lineIds[0]!, quantity: 3 }, { lineItemId: s.lineIds[1]!, quantity: 1 }] })
  const after = (await getCustoms(s)).json().declaration
  t.match(after, { edited: true, stale: true })
  t.match(after.problems, { 'items[1].quantity': [/declare 2 of order line \d+; the parcel holds 1/] })
  const refused = await rate(s)
  t.equal(refused.statusCode, 422)
  t.equal(refused.json().errorCode, 'SHIPMENTS_CUSTOMS_INCOMPLETE')

  const viewerReset = await s.app.inject({ method: 'DELETE', url: customsUrl(s), headers: as('viewer') })
  t.equal(viewerReset.statusCode, 403)
  const reset = await s.app.inject({ method: 'DELETE', url: customsUrl(s), headers: as('editor') })
  t.equal(reset.statusCode, 200, reset.body)
  t.match(reset.json().declaration, { edited: false, stale: false, stored: false, items: [{ quantity: 3 }, { quantity: 1, tariffNumber: null }] })
  t.same(await storedDeclarations(s.app), [])
})

t.test('the settings: the options as defaults, replaced whole and checked, used by every built declaration', async (t) => {
  const s = await scene(t, { signer: null })
  const first = await s.app.inject({ method: 'GET', url: '/shipments/api/customs-settings', headers: as('viewer') })
  t.equal(first.statusCode, 200)
  t.same(first.json(), { success: true, ...SETTINGS, signer: null, savedAt: null, savedBy: null })
  t.match((await getCustoms(s)).json().declaration.problems, { signer: [/is required when the declaration is certified/] })

  const put = (user: string, payload: unknown) => s.app.inject({ method: 'PUT', url: '/shipments/api/customs-settings', headers: json(user), payload: payload as Record<string, unknown> })
  t.equal((await put('viewer', SETTINGS)).statusCode, 403)
  const refused = await put('editor', { ...SETTINGS, signer: null, contentsType: 'other', restrictionType: 'quarantine', incoterm: 'CIF', currency: 'usd$', extra: 1 })
  t.equal(refused.statusCode, 422)
  t.same(Object.keys(refused.json().errors).sort(), ['currency', 'extra', 'incoterm'], 'the form first')
  const incomplete = await put('editor', { ...SETTINGS, signer: null, contentsType: 'other', restrictionType: 'quarantine' })
  t.same(Object.keys(incomplete.json().errors).sort(), ['contentsExplanation', 'restrictionComments', 'signer'])
  t.equal((await s.app.shipments.customs.settings()).savedAt, null, 'nothing saved')

  const saved = await put('editor', { ...SETTINGS, signer: 'Grace Hopper', incoterm: 'DDP', contentsType: 'gift' })
  t.equal(saved.statusCode, 200, saved.body)
  t.match(saved.json(), { signer: 'Grace Hopper', incoterm: 'DDP', contentsType: 'gift', savedBy: 'editor', savedAt: /^\d{4}-/ })
  t.match((await getCustoms(s)).json().declaration, { signer: 'Grace Hopper', incoterm: 'DDP', contentsType: 'gift' })
  const { db, schema } = tables(s.app)
  const [row] = await db.select().from(schema.packageState).where(eq(schema.packageState.key, 'customs.settings'))
  t.match(JSON.parse(row!.value as string), { signer: 'Grace Hopper', incoterm: 'DDP' })
})

t.test('a bad customs option fails registration, naming it', async (t) => {
  await t.rejects(buildTestApp(t, { customs: { incoterm: 'CIF' as 'DDU' } }), { code: 'SHIPMENTS_INVALID_OPTION', message: /customs\.incoterm/ })
})

t.test('the EasyPost provider is not called for an incomplete international parcel', async (t) => {
  const apiKey = 'EZTK-customs-test-key-0123456789abcdef'
  const imitation = await easyPostImitation(t, { apiKey })
  const s = await scene(t)
  await s.app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'secret', apiKey, apiBaseUrl: imitation.baseUrl, timeoutMs: 2000 } })
  const rated = await s.app.inject({ method: 'POST', url: `/shipments/api/shipments/${s.shipmentId}/parcels/${s.parcelId}/rates`, headers: json('admin'), payload: { integration: 'easypost' } })
  const bought = await buy(s, { integration: 'easypost', carrier: 'USPS', service: 'PriorityMailInternational' })
  t.same([rated.statusCode, bought.statusCode], [422, 422])
  t.same([rated.json().errorCode, bought.json().errorCode], ['SHIPMENTS_CUSTOMS_INCOMPLETE', 'SHIPMENTS_CUSTOMS_INCOMPLETE'])
  t.same([imitation.stats.creates, imitation.stats.buys], [0, 0], 'no request reached EasyPost')
})

t.test('a label batch fails an incomplete international parcel with the same words, and calls no provider for it', async (t) => {
  const s = await scene(t)
  const { db, schema } = tables(s.app)
  const rules = JSON.stringify({ rules: [], fallback: { integration: 'seller', choice: { kind: 'service', carrier: 'Acme', service: 'World' } } })
  await db.insert(schema.packageState).values({ key: 'rules.shippingRules', value: rules }).onConflictDoUpdate({ target: schema.packageState.key, set: { value: rules } })
  const batch = await s.app.shipments.batches.create({ shipmentIds: [s.shipmentId] })
  let page = await s.app.shipments.batches.get(batch.id, { perPage: 10 })
  for (const deadline = Date.now() + 30_000; page.batch.state !== 'finished' && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    page = await s.app.shipments.batches.get(batch.id, { perPage: 10 })
  }
  t.match(page.items, [
    {
      parcelId: s.parcelId,
      state: 'failed',
      reason:
        "items[1].tariffNumber: is required: the HS tariff number (6 to 10 digits) items[1].originCountry: is required: the country where the goods were made (ISO 3166-1 alpha-2, such as US) items[1].value: must be greater than 0: the line's total value in USD",
    },
  ])
  t.equal(s.seller.bought.length, 0, 'the provider was not called')
  t.same(await labelOperations(s.app), [])
})

t.test("the shipping rules' dry run, rated, says why an incomplete declaration gets no offer, naming the fields", async (t) => {
  const s = await scene(t)
  await s.app.shipments.rules.replace({ rules: [], fallback: { integration: 'seller', choice: { kind: 'cheapest' } } })
  const explained = await s.app.shipments.rules.explain(s.shipmentId, { rate: true })
  t.match(explained.parcels[0], { offer: null, refused: /^The customs declaration of parcel \d+ is incomplete: items\[1\]\.tariffNumber is required/ })
  t.equal(s.seller.rated.length, 0)
})

t.test("a parcel that lists no items declares the shipment's (an order-level shipment: the order's shippable lines)", async (t) => {
  const s = await scene(t)
  const bare = await s.app.shipments.deliveries.addParcel(s.shipmentId, { weight: { value: '3', unit: 'kg' } })
  const response = await s.app.inject({ method: 'GET', url: customsUrl({ shipmentId: s.shipmentId, parcelId: bare.id }), headers: as('viewer') })
  t.equal(response.statusCode, 200, response.body)
  t.same(response.json().declaration.items.map((item: { lineItemId: number; quantity: number }) => [item.lineItemId, item.quantity]), [[s.lineIds[0], 3], [s.lineIds[1], 2]])
})
