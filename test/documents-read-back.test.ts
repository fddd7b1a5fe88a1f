// Documents whose text reads back as it is drawn (pdftotext): Latin letters after a Greek slip,
// shipment references never broken in the pick list, a host font without digits, a font collection.
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp } from './fixtures/app.js'
import { cjkFont, fontCollection } from './fixtures/fonts.js'
import type { ShipmentsPluginOptions } from '../src/index.js'

function textOf(t: Test, bytes: Uint8Array, name = 'document.pdf'): string {
  const path = join(t.testdir(), name)
  writeFileSync(path, bytes)
  return execFileSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' })
}

const setup = (t: Test, documents: ShipmentsPluginOptions['documents'] = {}) => buildTestApp(t, { documents: { shop: { name: 'Shop' }, ...documents } })

async function shipmentOf(app: FastifyInstance, order: { reference: string; city?: string; address1?: string; items?: Array<{ name: string; sku: string; quantity: number; options?: Record<string, string> }> }) {
  const orderId = await app.shipments.referenceOrders!.createOrder({
    reference: order.reference,
    isCompleted: true,
    shippingAddress: { name: 'Customer', address1: order.address1 ?? 'Main Street 1', city: order.city ?? 'Berlin', postalCode: '10115', country: 'DE' },
    items: order.items ?? [{ name: 'APPLE', sku: 'AP-1', quantity: 1, options: { location: 'A-2' } }],
  })
  const [shipment] = await app.shipments.shipments.create(orderId)
  return shipment!
}

t.test('after a slip showing "Αθήνα", later documents of the host keep the Latin capital A in their text', async (t) => {
  const app = await setup(t)
  const greek = await shipmentOf(app, { reference: 'GR-1', city: 'Αθήνα', items: [{ name: 'Ελιά', sku: 'EL-1', quantity: 1 }] })
  t.ok(textOf(t, await app.shipments.documents.packingSlip(greek.id), 'greek.pdf').includes('Αθήνα'))
  const latin = await shipmentOf(app, { reference: 'AB-2' })
  const pick = await app.inject({ url: `/shipments/api/documents/pick-list?ids=${latin.id}`, headers: as('viewer') })
  t.equal(pick.statusCode, 200)
  const text = textOf(t, pick.rawPayload, 'pick.pdf')
  t.match(text, /A-2\s+AP-1\s+APPLE\s+1\s/, 'A-2 and APPLE read back with their Latin A')
  const slip = textOf(t, await app.shipments.documents.packingSlip(latin.id), 'slip.pdf')
  t.ok(slip.includes('Order AB-2'), slip)
})

t.test('the pick list never breaks a shipment reference at its hyphen', async (t) => {
  const app = await setup(t)
  const ids: number[] = []
  const references: string[] = []
  for (let number = 1001; number <= 1006; number++) {
    const shipment = await shipmentOf(app, { reference: `SO-${number}`, items: [{ name: 'Shared item', sku: 'SH-1', quantity: 1 }] })
    ids.push(shipment.id)
    references.push(shipment.reference)
  }
  const response = await app.inject({ url: `/shipments/api/documents/pick-list?ids=${ids.join(',')}`, headers: as('viewer') })
  t.equal(response.statusCode, 200)
  const text = textOf(t, response.rawPayload)
  for (const reference of references) t.ok(text.includes(reference), `${reference} whole`)
  t.notMatch(text, /SO-\d+-\s*$/m, 'no line ends inside a reference')
})

t.test('a host CJK font without digits: "1-1" falls back to DejaVu Sans; missingGlyphs error names only what no font draws', async (t) => {
  const font = cjkFont('東京都渋谷区神南丁目', { withoutDigits: true })
  const app = await setup(t, { fonts: [{ regular: font }], missingGlyphs: 'error' })
  const shipment = await shipmentOf(app, { reference: 'JP-1', address1: '神南1-1', city: '東京都渋谷区' })
  const response = await app.inject({ url: `/shipments/api/shipments/${shipment.id}/packing-slip`, headers: as('viewer') })
  t.equal(response.statusCode, 200, response.body.slice(0, 200))
  const text = textOf(t, response.rawPayload)
  t.match(text, /神南\s*1-1/, 'the digits drawn and read back beside the CJK text')
  t.ok(text.includes('東京都渋谷区'))
  t.notOk(text.includes('\uFFFD'))

  const other = await shipmentOf(app, { reference: 'JP-2', address1: '神南1-1 🎁', city: '東京都渋谷区' })
  const refused = await app.inject({ url: `/shipments/api/shipments/${other.id}/packing-slip`, headers: as('viewer') })
  t.equal(refused.statusCode, 422, refused.body.slice(0, 200))
  t.match(refused.json(), { message: /U\+1F381/ }, 'names the character no font draws')
  t.notMatch(refused.json().message, /U\+003[0-9]/, 'not a digit DejaVu draws')
})

t.test('a font collection (.ttc) as Debian ships Noto CJK: a face picked by PostScript name; without one, registration names the faces', async (t) => {
  const collection = fontCollection([cjkFont('東京', { familyName: 'TestJP' }), cjkFont('中国茶', { familyName: 'TestSC' })])
  const app = await setup(t, { fonts: [{ regular: collection, regularFace: 'TestSCRegular' }], missingGlyphs: 'error' })
  const shipment = await shipmentOf(app, { reference: 'CN-1', items: [{ name: '中国茶', sku: 'TEA', quantity: 1 }] })
  const text = textOf(t, await app.shipments.documents.packingSlip(shipment.id))
  t.ok(text.includes('中国茶'), text)

  await t.rejects(buildTestApp(t, { documents: { fonts: [{ regular: collection }] } }), { message: /documents\.fonts\.0\.regularFace.*TestJPRegular, TestSCRegular/ })
  await t.rejects(buildTestApp(t, { documents: { fonts: [{ regular: collection, regularFace: 'Nope' }] } }), { message: /"Nope" is not among them/ })
  await t.rejects(buildTestApp(t, { documents: { fonts: [{ regular: cjkFont('中'), regularFace: 'Other' }] } }), { message: /documents\.fonts\.0\.regularFace/ })
})
