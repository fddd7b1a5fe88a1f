// Across borders through EasyPost: a parcel's declaration (saved through the customs service, or built
// from the order lines' customs data under the shop's settings) passes the customs gate and goes to the
// EasyPost imitation as customs_info (items, incoterm) through the built-in provider; the imitation
// refuses an international shipment without it as EasyPost does; the forms of a bought shipment are
// checked one by one and kept with the declaration (also when a lost purchase is recovered); the
// package's commercial invoice is read back with pdftotext; and print jobs put an international parcel's
// forms and invoice after its label (a ZPL job says what it left out).
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import PDFDocument from 'pdfkit'
import { as, buildTestApp, insertOrder } from './fixtures/app.js'
import { tables, testDatabase } from './fixtures/database.js'
import { easyPostImitation } from './fixtures/easypost-api.js'
import { completedOrderWithLines } from './fixtures/orders.js'
import { easyPostProvider } from '../src/index.js'
import type { DeliveryJournal, LabelPurchaseRequest } from '../src/gateway/delivery-provider.js'
import type { CustomsItemRow } from '../src/db/customs.js'
import { reasonForExport, sumDecimals, totalWeight, unitValue } from '../src/documents/invoices.js'
import { easyPostDecimal, formsOf } from '../src/gateway/providers/easypost-customs.js'

const API_KEY = 'EZTK-customs-test-key-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', company: 'Fjord Goods Inc.', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const LONDON = { fullName: 'Ada Lovelace', address1: '12 Baker Street', city: 'London', postalCode: 'NW1 6XE', countryCode: 'GB' }
const PORTLAND = { fullName: 'Pat Doe', address1: '1 Main St', city: 'Portland', state: 'OR', postalCode: '97201', countryCode: 'US' }
const JSON_HEADERS = { ...as('admin'), 'content-type': 'application/json' }

/** Two lines added by hand: 11 oz + 0.9 kg (about 1.21 kg) fit the 1.5 kg parcel; 53.25 USD is under the CN22 limit. */
const ITEMS: CustomsItemRow[] = [
  { lineItemId: null, description: 'Cotton T-shirt', quantity: 2, value: '23.25', weight: { value: '11', unit: 'oz' }, tariffNumber: '6109.10', originCountry: 'US', sku: 'TS-1' },
  { lineItemId: null, description: 'Enamel mug', quantity: 3, value: '30.00', weight: { value: '0.9', unit: 'kg' }, tariffNumber: '6912.00', originCountry: 'CN', sku: 'MUG-1' },
]

/** A complete declaration of ITEMS, as a store admin saves it (PUT .../customs). */
const DECLARATION = {
  contentsType: 'merchandise',
  contentsExplanation: null,
  nonDeliveryOption: 'return',
  restrictionType: 'none',
  restrictionComments: null,
  signer: 'Steve Brule',
  certify: true,
  incoterm: 'DDP',
  eelPfc: 'NOEEI 30.37(a)',
  currency: 'USD',
  items: ITEMS,
} as const

/** Label files the print job asks the host for: the imitation's forms fetched from it, labels made up (EasyPost's file host is not reachable here). */
function labelFiles(imitationOrigin: () => string) {
  const fetched: string[] = []
  const fetchLabel = async ({ url, parcelId }: { url: string; parcelId: number }) => {
    fetched.push(url)
    if (url.startsWith(imitationOrigin())) {
      const response = await fetch(url)
      if (!response.ok) throw new Error(`the file's host answered ${response.status}`)
      return new Uint8Array(await response.arrayBuffer())
    }
    if (url.endsWith('.zpl')) return Buffer.from(`^XA\n^FO50,50^FDZPL LABEL ${parcelId}^FS\n^XZ\n`)
    return labelPdf(`LABEL OF PARCEL ${parcelId}`)
  }
  return { fetched, fetchLabel }
}

async function labelPdf(text: string): Promise<Buffer> {
  const doc = new PDFDocument({ size: [288, 432], margin: 10 })
  const chunks: Buffer[] = []
  doc.on('data', (chunk: Buffer) => chunks.push(chunk))
  const ended = new Promise((resolve) => doc.on('end', resolve))
  doc.fontSize(14).text(text)
  doc.end()
  await ended
  return Buffer.concat(chunks)
}

/**
 * The app with the built-in EasyPost provider pointed at the imitation. The shop's customs settings name
 * the signer and DDP: a declaration built from order lines with customs data is complete with them.
 */
async function setup(t: Test, options: { logLines?: string[]; batches?: boolean } = {}) {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const origin = imitation.baseUrl.replace(/\/v2$/, '')
  const files = labelFiles(() => origin)
  const app = await buildTestApp(
    t,
    {
      deliveries: { shipFrom: SHIP_FROM },
      customs: { signer: 'Steve Brule', incoterm: 'DDP' },
      documents: { shop: { name: 'Fjord Goods' }, fetchLabel: files.fetchLabel },
      ...(options.batches ? { batches: { pollIntervalMs: 20, leaseMs: 1500, backoffMs: 20, maxBackoffMs: 300, rateLimitCooldownMs: 100 }, lockTimeoutMs: 30_000 } : {}),
    },
    await testDatabase(t, 'customs'),
    options.logLines,
  )
  const settings = { webhookSecret: 'secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 2000 }
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings })
  return { app, imitation, files, settings }
}

type Address = typeof LONDON | typeof PORTLAND

/** A shipment of a new order (no lines) to `to`, with one 1.5 kg parcel. */
async function parcelTo(app: FastifyInstance, to: Address) {
  const orderId = await insertOrder(app)
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', ...to })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const parcel = await app.shipments.deliveries.addParcel(shipment!.id, { weight: { value: '1.5', unit: 'kg' } })
  return { shipmentId: shipment!.id, parcelId: parcel.id, reference: shipment!.reference }
}

/** A parcel to London whose declaration (DECLARATION, or it changed) is saved through the customs service, as the customs screen saves it. */
async function declaredParcel(app: FastifyInstance, change: Partial<typeof DECLARATION> = {}) {
  const parcel = await parcelTo(app, LONDON)
  const answer = await app.shipments.customs.saveDeclaration(parcel.shipmentId, parcel.parcelId, { ...DECLARATION, ...change })
  if (answer.declaration?.stored !== true || Object.keys(answer.declaration.problems).length > 0) throw new Error(`the declaration was not saved complete: ${JSON.stringify(answer)}`)
  return parcel
}

async function storedForms(app: FastifyInstance, parcelId: number) {
  const { db, schema } = tables(app)
  const rows = await db.select().from(schema.customsDeclarations)
  return rows.find((row) => row.parcelId === parcelId)?.forms
}

const buy = (app: FastifyInstance, shipmentId: number, parcelId: number, body: Record<string, unknown> = {}) =>
  app.inject({
    method: 'POST',
    url: `/shipments/api/shipments/${shipmentId}/parcels/${parcelId}/label`,
    headers: JSON_HEADERS,
    payload: JSON.stringify({ integration: 'easypost', carrier: 'USPS', service: 'Priority', ...body }),
  })

/** A failed answer's words as the assertion's name; a PDF's bytes never (they would put binary into the TAP log). */
const wordsOf = (response: { statusCode: number; body: string }) => (response.statusCode === 200 ? 'answered 200' : response.body)

function saved(t: Test, bytes: Uint8Array, name = 'document.pdf'): string {
  const path = join(t.testdir(), name)
  writeFileSync(path, bytes)
  return path
}
const textOf = (path: string, page?: number) => execFileSync('pdftotext', ['-layout', ...(page ? ['-f', String(page), '-l', String(page)] : []), path, '-'], { encoding: 'utf8' })
const pagesOf = (path: string) => Number(/^Pages:\s+(\d+)/m.exec(execFileSync('pdfinfo', [path], { encoding: 'utf8' }))?.[1])

t.test('the declaration goes to EasyPost as customs_info with its items and the incoterm; the forms come back, are kept and read', async (t) => {
  const { app, imitation } = await setup(t)
  const parcel = await declaredParcel(app)

  const response = await buy(app, parcel.shipmentId, parcel.parcelId)
  t.equal(response.statusCode, 200, response.body)
  const create = imitation.calls.find((call) => call.step === 'create')!
  const sent = (create.body as { shipment: Record<string, unknown> }).shipment
  t.same(sent.customs_info, {
    contents_type: 'merchandise',
    contents_explanation: '',
    customs_certify: true,
    customs_signer: 'Steve Brule',
    non_delivery_option: 'return',
    restriction_type: 'none',
    restriction_comments: null,
    eel_pfc: 'NOEEI 30.37(a)',
    customs_items: [
      { description: 'Cotton T-shirt', quantity: 2, value: 23.25, weight: 11, hs_tariff_number: '6109.10', origin_country: 'US', code: 'TS-1', currency: 'USD' },
      { description: 'Enamel mug', quantity: 3, value: 30, weight: 31.8, hs_tariff_number: '6912.00', origin_country: 'CN', code: 'MUG-1', currency: 'USD' },
    ],
  })
  t.same(sent.options, { label_format: 'PNG', incoterm: 'DDP' }, 'the incoterm is a shipment option')
  const [stored] = [...imitation.shipments.values()]
  t.match(stored!.customs_info, { id: /^cstinfo_/, object: 'CustomsInfo', customs_items: [{ id: /^cstitem_/, value: '23.25' }, { value: '30' }] }, 'the imitation keeps it as EasyPost answers it')

  const forms = await storedForms(app, parcel.parcelId)
  t.equal(forms?.length, 2)
  t.same(
    forms?.map((form) => form.type),
    ['commercial_invoice', 'cn22'],
    'a commercial invoice and a CN22 (53.25 USD is under the CN22 limit)',
  )
  const read = await app.inject({ method: 'GET', url: `/shipments/api/shipments/${parcel.shipmentId}/parcels/${parcel.parcelId}/forms`, headers: as('viewer') })
  t.equal(read.statusCode, 200)
  t.same(read.json(), { success: true, declared: true, forms })
  t.match(forms![0]!.url, /^http:\/\/127\.0\.0\.1:\d+\/files\/form\/form_[0-9a-f]{32}\.pdf$/)
  const log = await app.shipments.deliveries.labelOperations(parcel.shipmentId, parcel.parcelId)
  t.match(log[0]!.attempts[0], { step: 'create', request: { customs: { contentsType: 'merchandise', incoterm: 'DDP', currency: 'USD', items: 2 } } })
  t.notOk(JSON.stringify(log).includes('Steve Brule'), "the attempt log keeps the declaration's shape, not the signer")

  // A domestic parcel has no declaration and no forms; an unknown parcel is a 404.
  const home = await parcelTo(app, PORTLAND)
  t.equal((await buy(app, home.shipmentId, home.parcelId)).statusCode, 200)
  t.equal((imitation.calls.filter((call) => call.step === 'create')[1]!.body as { shipment: Record<string, unknown> }).shipment.customs_info, undefined, 'no customs_info within one country')
  const domestic = await app.inject({ method: 'GET', url: `/shipments/api/shipments/${home.shipmentId}/parcels/${home.parcelId}/forms`, headers: as('viewer') })
  t.equal(domestic.statusCode, 200)
  t.same(domestic.json(), { success: true, declared: false, forms: [] })
  t.equal(await storedForms(app, home.parcelId), undefined, 'no declaration is stored for it')
  const other = await app.inject({ method: 'GET', url: `/shipments/api/shipments/${parcel.shipmentId}/parcels/999999/forms`, headers: as('viewer') })
  t.equal(other.statusCode, 404)
  t.equal(other.json().errorCode, 'SHIPMENTS_PARCEL_NOT_FOUND')
  const nobody = await app.inject({ method: 'GET', url: `/shipments/api/shipments/${parcel.shipmentId}/parcels/${parcel.parcelId}/forms`, headers: as('nobody') })
  t.equal(nobody.statusCode, 403)
})

t.test('an international shipment without customs info is refused by the imitation as EasyPost refuses it; nothing is bought', async (t) => {
  const { app, imitation, settings } = await setup(t)
  // Through the app, the customs gate refuses the undeclared parcel first (no line, so no item): EasyPost is never called.
  const parcel = await parcelTo(app, LONDON)
  const refused = await buy(app, parcel.shipmentId, parcel.parcelId)
  t.equal(refused.statusCode, 422, refused.body)
  const incomplete = { success: false, errors: { items: ['at least one item is required'] }, errorCode: 'SHIPMENTS_CUSTOMS_INCOMPLETE' }
  t.same(refused.json(), incomplete)
  const rates = await app.inject({
    method: 'POST',
    url: `/shipments/api/shipments/${parcel.shipmentId}/parcels/${parcel.parcelId}/rates`,
    headers: JSON_HEADERS,
    payload: JSON.stringify({ integration: 'easypost' }),
  })
  t.equal(rates.statusCode, 422, rates.body)
  t.same(rates.json(), incomplete)
  t.same(imitation.calls, [], 'the gate answered before any call to EasyPost')
  t.equal(await storedForms(app, parcel.parcelId), undefined, 'no declaration stored')
  t.same(await app.shipments.deliveries.labelOperations(parcel.shipmentId, parcel.parcelId), [], 'no label operation')

  // The built-in provider called directly, as a provider that forgot the declaration would call EasyPost.
  // Its delivery methods read only the context's settings and logger.
  const deliveries = easyPostProvider.deliveries!
  const context = { settings, logger: app.log } as unknown as Parameters<typeof deliveries.purchaseLabel>[1]
  const attempts: Array<Parameters<DeliveryJournal['attempt']>[0]> = []
  const externalIds: string[] = []
  const journal: DeliveryJournal = {
    externalIdKnown: async (id) => void externalIds.push(id),
    attempt: async (entry) => void attempts.push(entry),
  }
  const request: LabelPurchaseRequest = {
    shipmentReference: parcel.reference,
    parcelId: parcel.parcelId,
    parcel: { weightOunces: '53.0', lengthInches: null, widthInches: null, heightInches: null },
    from: SHIP_FROM,
    to: { name: LONDON.fullName, street1: LONDON.address1, city: LONDON.city, postalCode: LONDON.postalCode, country: LONDON.countryCode },
    operationId: 'op-customs-missing',
    carrier: 'USPS',
    service: 'Priority',
    labelFormat: 'PNG',
    externalId: null,
  }
  const failure = { name: 'DeliveryProviderError', message: 'EasyPost refused the create: Missing required parameter. (PARAMETER.REQUIRED).', kind: 'refused', providerCode: 'PARAMETER.REQUIRED' }
  await t.rejects(deliveries.purchaseLabel(request, context, journal), failure)
  t.match(attempts, [{ step: 'create', statusCode: 422, error: failure.message, response: { code: 'PARAMETER.REQUIRED' } }])
  t.equal(attempts.length, 1)
  t.same(externalIds, [], 'no EasyPost shipment to buy on')
  await t.rejects(deliveries.quoteRates!(request, context), failure, 'a quote is refused alike')
  t.match(
    imitation.calls.map((call) => ({ step: call.step, customs: (call.body as { shipment?: Record<string, unknown> }).shipment?.customs_info })),
    [{ step: 'create', customs: undefined }, { step: 'create', customs: undefined }],
  )
  t.equal(imitation.stats.creates, 0, 'neither a rate nor a label: no shipment was created')
  t.equal(imitation.stats.buys, 0)

  // The same request with a declaration is taken: the refusal was the missing customs_info.
  const customs = {
    contentsType: 'merchandise',
    contentsExplanation: null,
    nonDeliveryOption: 'return',
    restrictionType: 'none',
    restrictionComments: null,
    signer: 'Steve Brule',
    certify: true,
    incoterm: 'DDU',
    eelPfc: 'NOEEI 30.37(a)',
    currency: 'USD',
    items: [{ description: 'Cotton T-shirt', quantity: 2, value: '23.25', weightOunces: '11.0', tariffNumber: '6109.10', originCountry: 'US', sku: 'TS-1' }],
  } as const
  const offers = await deliveries.quoteRates!({ ...request, customs: { ...customs, items: [...customs.items] } }, context)
  t.same(offers.map((offer) => `${offer.carrier} ${offer.service} ${offer.amount}`), ['USPS Priority 7.90', 'USPS GroundAdvantage 5.25', 'UPS Ground 11.03'])
  t.equal(imitation.stats.creates, 1)
  t.equal(imitation.stats.buys, 0)
})

t.test("a bought shipment's bad forms are dropped one by one and logged; the good ones and the label are kept", async (t) => {
  const logLines: string[] = []
  const { app, imitation } = await setup(t, { logLines })
  const parcel = await declaredParcel(app)
  imitation.setExtraForms([
    { form_type: 'cn23', form_url: 'javascript:alert(1)' },
    { form_type: 'x'.repeat(100), form_url: 'https://files.example/long.pdf' },
    'not a form',
    { form_type: 'label_qr_code', form_url: 'https://user:secret@files.example/qr.pdf' },
    { form_type: 'nafta_certificate_of_origin', form_url: 'https://files.example/nafta.pdf' },
    { form_type: 'high_value_report', form_url: 'not a url' },
  ])
  const response = await buy(app, parcel.shipmentId, parcel.parcelId)
  t.equal(response.statusCode, 200, response.body)
  t.same(
    (await storedForms(app, parcel.parcelId))?.map((form) => form.type),
    ['commercial_invoice', 'cn22', 'nafta_certificate_of_origin'],
  )
  const dropped = logLines.map((line) => JSON.parse(line) as { msg?: string; problem?: string }).filter((line) => line.msg === 'EasyPost answered a form that is not kept')
  t.same(
    dropped.map((line) => line.problem),
    ['its form_url is not http(s)', 'its form_type is not a short name', 'not an object', 'its form_url carries credentials', 'its form_url is not a URL'],
  )
  t.notOk(logLines.some((line) => line.includes('secret@')), 'a URL with credentials is never logged')
})

t.test('a purchase whose answer was lost is recovered with its forms kept', async (t) => {
  const { app, imitation } = await setup(t)
  const parcel = await declaredParcel(app)
  imitation.fault({ step: 'buy', kind: 'lose-answer' })
  const response = await buy(app, parcel.shipmentId, parcel.parcelId)
  t.equal(response.statusCode, 200, wordsOf(response))
  t.equal(response.json().recovered, true)
  t.equal(imitation.stats.buys, 1)
  t.same(
    (await storedForms(app, parcel.parcelId))?.map((form) => form.type),
    ['commercial_invoice', 'cn22'],
  )
})

t.test('a declared value over 400 gets a CN23 instead of a CN22', async (t) => {
  const { app, imitation } = await setup(t)
  const parcel = await declaredParcel(app, { items: [{ ...ITEMS[0]!, value: '400.01' }] })
  t.equal((await buy(app, parcel.shipmentId, parcel.parcelId)).statusCode, 200)
  const sent = (imitation.calls.find((call) => call.step === 'create')!.body as { shipment: { customs_info: { customs_items: Array<{ value: unknown }> } } }).shipment
  t.same(sent.customs_info.customs_items.map((item) => item.value), [400.01], 'the saved declaration is the one sent')
  t.same(
    (await storedForms(app, parcel.parcelId))?.map((form) => form.type),
    ['commercial_invoice', 'cn23'],
  )
})

t.test('the commercial invoice: seller, buyer, number, lines with exact values, terms, declaration and signer', async (t) => {
  const { app } = await setup(t)
  const parcel = await declaredParcel(app)
  const url = `/shipments/api/shipments/${parcel.shipmentId}/parcels/${parcel.parcelId}/commercial-invoice`
  const response = await app.inject({ method: 'GET', url, headers: as('viewer') })
  t.equal(response.statusCode, 200, wordsOf(response))
  t.equal(response.headers['content-type'], 'application/pdf')
  t.equal(response.headers['content-disposition'], `inline; filename="commercial-invoice-${parcel.shipmentId}-${parcel.parcelId}.pdf"`)
  const text = textOf(saved(t, response.rawPayload))
  const number = `INV-${parcel.reference}-${parcel.parcelId}`
  for (const expected of [
    'Commercial invoice',
    `Invoice ${number}`,
    'Seller (exporter)',
    'Fjord Goods Inc.',
    '417 Montgomery Street',
    'Buyer (consignee)',
    'Ada Lovelace',
    '12 Baker Street',
    'London',
    'Cotton T-shirt',
    'SKU TS-1',
    'Enamel mug',
  ])
    t.ok(text.includes(expected), `the invoice shows ${expected}`)
  t.match(text, /Cotton T-shirt\s+6109\.10\s+US\s+2\s+11\.63\s+23\.25/, 'a unit value rounded up, never down: 23.25 / 2 = 11.625 -> 11.63')
  t.match(text, /Enamel mug\s+6912\.00\s+CN\s+3\s+10\.00\s+30\.00/)
  t.match(text, /Total value\s+53\.25 USD/)
  t.match(text, /Total weight\s+42\.8 oz/, 'mixed units added in ounces, each rounded up: 11 oz + 0.9 kg (31.8 oz)')
  t.match(text, /Incoterm\s+DDP/)
  t.match(text, /Reason for export\s+Sale/)
  t.match(text, /EEL\/PFC\s+NOEEI 30\.37\(a\)/)
  t.match(text, /I declare that the information on this invoice is true and correct/)
  t.match(text, /Signature: Steve Brule/)
  t.match(text, /Date: \d{1,2} \w+ \d{4}/)

  const again = await app.inject({ method: 'GET', url, headers: as('viewer') })
  t.ok(textOf(saved(t, again.rawPayload, 'again.pdf')).includes(`Invoice ${number}`), 'the number is stable')

  // A parcel abroad whose declaration was never saved (nor bought with) has no invoice.
  const undeclared = await parcelTo(app, LONDON)
  const none = await app.inject({ method: 'GET', url: `/shipments/api/shipments/${undeclared.shipmentId}/parcels/${undeclared.parcelId}/commercial-invoice`, headers: as('viewer') })
  t.equal(none.statusCode, 404)
  t.same(none.json(), {
    name: 'Not Found',
    status: 404,
    code: 0,
    errorCode: 'SHIPMENTS_DOCUMENT_NO_DECLARATION',
    message: `Parcel ${undeclared.parcelId} has no customs declaration: a commercial invoice is made for a parcel that crosses a border, from its saved declaration.`,
  })
  const notOfIt = await app.inject({ method: 'GET', url: `/shipments/api/shipments/${undeclared.shipmentId}/parcels/${parcel.parcelId}/commercial-invoice`, headers: as('viewer') })
  t.equal(notOfIt.statusCode, 404)
  t.equal(notOfIt.json().errorCode, 'SHIPMENTS_PARCEL_NOT_FOUND', "another shipment's parcel is not found here")
  t.equal((await app.inject({ method: 'GET', url: `/shipments/api/shipments/${parcel.shipmentId}/parcels/x/commercial-invoice`, headers: as('viewer') })).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url, headers: as('nobody') })).statusCode, 403)
  t.equal((await app.inject({ method: 'GET', url })).statusCode, 401)
})

t.test('the reason for export follows the contents type; values and weights are exact', async (t) => {
  const reasons = ['merchandise', 'gift', 'sample', 'returned_goods', 'documents'].map((contentsType) => reasonForExport({ contentsType, contentsExplanation: null }))
  t.same(reasons, ['Sale', 'Gift', 'Sample', 'Return', 'Documents'])
  t.equal(reasonForExport({ contentsType: 'other', contentsExplanation: 'Repair and return' }), 'Repair and return')
  t.equal(unitValue('10.00', 3), '3.34', 'rounded up at the cent')
  t.equal(unitValue('0.001', 2), '0.001', "the total's own places when it has more than two")
  t.equal(unitValue('9', 3), '3.00')
  t.equal(sumDecimals(['0.1', '0.2', '1234567.8999'], 2), '1234568.1999', 'no float: 0.1 + 0.2 is 0.3')
  t.same(totalWeight(ITEMS.map((item) => ({ ...item, weight: { value: '0.5', unit: 'kg' } }))), { value: '1.0', unit: 'kg' })
  t.equal(easyPostDecimal('23.250'), 23.25)
  t.equal(easyPostDecimal('12345678901.123456789'), '12345678901.123456789', 'a decimal a double cannot hold is sent as written')
  t.same(formsOf(undefined, () => t.fail('nothing to drop')), [])
  const dropped: string[] = []
  t.same(formsOf({ form_type: 'cn22' }, (problem) => dropped.push(problem)), [])
  t.same(dropped, ['forms is not a list'])
})

t.test("a print job puts an international parcel's forms and invoice after its label; a ZPL job says what it left out", async (t) => {
  const { app, imitation, files } = await setup(t)
  const abroad = await declaredParcel(app)
  // The second parcel stays in the US: no declaration, and EasyPost returns no forms for it, so its label prints alone.
  const home = await parcelTo(app, PORTLAND)
  t.equal((await buy(app, abroad.shipmentId, abroad.parcelId)).statusCode, 200)
  t.equal((await buy(app, home.shipmentId, home.parcelId)).statusCode, 200)
  t.same([...imitation.shipments.values()][1]!.forms, [], 'EasyPost gave the domestic shipment no forms')
  const forms = (await storedForms(app, abroad.parcelId))!

  const job = await app.inject({
    method: 'POST',
    url: '/shipments/api/documents/print-job',
    headers: JSON_HEADERS,
    payload: JSON.stringify({ parcels: [abroad, home].map(({ shipmentId, parcelId }) => ({ shipmentId, parcelId })), format: 'pdf' }),
  })
  t.equal(job.statusCode, 200, wordsOf(job))
  t.equal(job.headers['x-shipments-not-printed'], undefined)
  const path = saved(t, job.rawPayload)
  t.equal(pagesOf(path), 5, 'label, commercial invoice form, CN22, our invoice; then the other label')
  t.match(textOf(path, 1), new RegExp(`LABEL OF PARCEL ${abroad.parcelId}`))
  t.match(textOf(path, 2), /COMMERCIAL INVOICE\s+shp_/)
  t.match(textOf(path, 3), /CN22\s+shp_/)
  t.match(textOf(path, 4), new RegExp(`Commercial invoice[\\s\\S]*INV-${abroad.reference}-${abroad.parcelId}`))
  t.match(textOf(path, 5), new RegExp(`LABEL OF PARCEL ${home.parcelId}`))
  t.ok(
    forms.every((form) => files.fetched.includes(form.url)),
    "the forms were fetched through the labels' fetch",
  )
})

t.test('a ZPL print job leaves the PDF forms and invoice out and says so', async (t) => {
  const { app } = await setup(t)
  const abroad = await declaredParcel(app)
  t.equal((await buy(app, abroad.shipmentId, abroad.parcelId, { labelFormat: 'ZPL' })).statusCode, 200)
  const job = await app.inject({
    method: 'POST',
    url: '/shipments/api/documents/print-job',
    headers: JSON_HEADERS,
    payload: JSON.stringify({ parcels: [{ shipmentId: abroad.shipmentId, parcelId: abroad.parcelId }], format: 'zpl' }),
  })
  t.equal(job.statusCode, 200, wordsOf(job))
  t.match(job.body, new RegExp(`^\\^XA\\n\\^FO50,50\\^FDZPL LABEL ${abroad.parcelId}\\^FS\\n\\^XZ\\n$`), 'the label alone')
  t.equal(job.headers['x-shipments-not-printed'], `parcel ${abroad.parcelId} of shipment ${abroad.reference}: commercial_invoice, cn22, commercial invoice (PDF only)`)
})

t.test("a form that cannot be fetched fails the print job, naming the form and the parcel", async (t) => {
  const { app, imitation } = await setup(t)
  const abroad = await declaredParcel(app)
  t.equal((await buy(app, abroad.shipmentId, abroad.parcelId)).statusCode, 200)
  imitation.customsForms.clear()
  const job = await app.inject({
    method: 'POST',
    url: '/shipments/api/documents/print-job',
    headers: JSON_HEADERS,
    payload: JSON.stringify({ parcels: [{ shipmentId: abroad.shipmentId, parcelId: abroad.parcelId }], format: 'pdf' }),
  })
  t.equal(job.statusCode, 502, job.body)
  t.same(job.json(), {
    name: 'Bad Gateway',
    status: 502,
    code: 0,
    errorCode: 'SHIPMENTS_DOCUMENT_FORM_UNAVAILABLE',
    message: `The commercial_invoice form of parcel ${abroad.parcelId} could not be fetched: the file's host answered 404`,
  })
})

/** Order lines with customs data in the reference store: 2 x 5.5 oz at 11.50, 3 x 0.3 kg at 10.00 (53.00 USD, under the CN22 limit). */
const SHIRT = { name: 'T-shirt', sku: 'TS-1', quantity: 2, weight: 5.5, weightUnit: 'oz' as const, customs: { tariffNumber: '6109.10', originCountry: 'US', description: 'Cotton T-shirt', value: { amount: '11.50', currency: 'USD' } } }
const MUG = { name: 'Mug', sku: 'MUG-1', quantity: 3, weight: 0.3, weightUnit: 'kg' as const, customs: { tariffNumber: '6912.00', originCountry: 'CN', description: 'Enamel mug', value: { amount: '10.00', currency: 'USD' } } }

t.test("a label batch's print job prints its international parcels' forms and invoices with their labels", async (t) => {
  const { app, imitation } = await setup(t, { batches: true })
  const { db, schema } = tables(app)
  const rules = JSON.stringify({ rules: [], fallback: { integration: 'easypost', choice: { kind: 'service', carrier: 'USPS', service: 'Priority' } } })
  await db.insert(schema.packageState).values({ key: 'rules.shippingRules', value: rules }).onConflictDoUpdate({ target: schema.packageState.key, set: { value: rules } })
  // No declaration saved by hand: the one built from the lines' customs data under the shop's settings is complete.
  const { orderId, lineIds } = await completedOrderWithLines(app, `CF-${Math.random().toString(36).slice(2, 8)}`, [SHIRT, MUG])
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', ...LONDON })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const added = await app.shipments.deliveries.addParcel(shipment!.id, { weight: { value: '1.5', unit: 'kg' }, items: [{ lineItemId: lineIds[0]!, quantity: 2 }, { lineItemId: lineIds[1]!, quantity: 3 }] })
  const abroad = { shipmentId: shipment!.id, parcelId: added.id, reference: shipment!.reference }
  const before = await app.shipments.customs.parcelCustoms(abroad.shipmentId, abroad.parcelId)
  t.match(before, { required: true, declaration: { edited: false, stored: false, problems: {} } }, 'built, complete, not stored yet')

  const batch = await app.shipments.batches.create({ shipmentIds: [abroad.shipmentId] })
  const deadline = Date.now() + 40_000
  let page = await app.shipments.batches.get(batch.id, { perPage: 50 })
  while (page.batch.state !== 'finished' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    page = await app.shipments.batches.get(batch.id, { perPage: 50 })
  }
  t.match(page.items, [{ parcelId: abroad.parcelId, state: 'bought' }])
  const create = imitation.calls.filter((call) => call.step === 'create').at(-1)!
  t.same((create.body as { shipment: { customs_info: { customs_items: unknown } } }).shipment.customs_info.customs_items, [
    { description: 'Cotton T-shirt', quantity: 2, value: 23, weight: 11, hs_tariff_number: '6109.10', origin_country: 'US', code: 'TS-1', currency: 'USD' },
    { description: 'Enamel mug', quantity: 3, value: 30, weight: 31.8, hs_tariff_number: '6912.00', origin_country: 'CN', code: 'MUG-1', currency: 'USD' },
  ], "the built declaration was sent: each line's unit value and weight times its quantity")
  t.same(
    (await storedForms(app, abroad.parcelId))?.map((form) => form.type),
    ['commercial_invoice', 'cn22'],
    'the batch kept the forms with the declaration it bought with',
  )
  const printed = await app.inject({ method: 'GET', url: `/shipments/api/label-batches/${batch.id}/print`, headers: as('admin') })
  t.equal(printed.statusCode, 200, wordsOf(printed))
  const path = saved(t, printed.rawPayload, 'batch.pdf')
  t.equal(pagesOf(path), 4, 'the label, the two forms, the invoice')
  t.match(textOf(path, 1), new RegExp(`LABEL OF PARCEL ${abroad.parcelId}`))
  t.match(textOf(path, 2), /COMMERCIAL INVOICE\s+shp_/)
  t.match(textOf(path, 3), /CN22\s+shp_/)
  t.match(textOf(path, 4), new RegExp(`INV-${abroad.reference}-${abroad.parcelId}`))
  const zpl = await app.inject({ method: 'GET', url: `/shipments/api/label-batches/${batch.id}/print?format=zpl`, headers: as('admin') })
  t.equal(zpl.statusCode, 422, 'a batch of PDF labels has no ZPL job (as before)')
})
