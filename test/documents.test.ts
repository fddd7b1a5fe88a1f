// Packing slips, pick lists and labels merged with slips, as PDF: read back with poppler's pdftotext and
// pdfinfo (text, page count, page sizes), one page rendered to PNG with pdftoppm under
// screenshots/documents/ (not committed) for a reviewer to look at; Greek and Cyrillic text extracted
// back; unknown, deleted and malformed ids refused with nothing changed.
import t, { type Test } from 'tap'
import { storedParcels, type ParcelRow } from '../src/db/parcels.js'
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import dns from 'node:dns'
import { createServer } from 'node:http'
import { createRequire, syncBuiltinESMExports } from 'node:module'
import type { AddressInfo } from 'node:net'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import PDFDocument from 'pdfkit'
import { PDFDocument as PdfLibDocument } from '@cantoo/pdf-lib'
import bwipjs from 'bwip-js'
import { as, buildTestApp } from './fixtures/app.js'
import { cjkFont } from './fixtures/fonts.js'
import { ADMIN, adminClient, buildAdminApp } from './fixtures/admin.js'
import { tables, TEST_ENGINE } from './fixtures/database.js'
import type { ShipmentsPluginOptions } from '../src/index.js'

const SCREENSHOTS = join(import.meta.dirname, '..', 'screenshots', 'documents')

/** Writes the PDF to a file of the test's own directory and returns its path. */
function saved(t: Test, bytes: Buffer | Uint8Array, name = 'document.pdf'): string {
  const path = join(t.testdir(), name)
  writeFileSync(path, bytes)
  return path
}
const textOf = (path: string, pages?: { first: number; last: number }) =>
  execFileSync('pdftotext', ['-layout', ...(pages ? ['-f', String(pages.first), '-l', String(pages.last)] : []), path, '-'], { encoding: 'utf8' })
/** pdfinfo's page count and each page's size in points. */
function infoOf(path: string) {
  const info = execFileSync('pdfinfo', ['-f', '1', '-l', '9999', path], { encoding: 'utf8' })
  const pages = Number(/^Pages:\s+(\d+)/m.exec(info)?.[1])
  const sizes = [...info.matchAll(/^Page\s+\d+ size:\s+([\d.]+) x ([\d.]+) pts/gm)].map((match) => [Math.round(Number(match[1])), Math.round(Number(match[2]))])
  return { pages, sizes, title: /^Title:\s+(.*)$/m.exec(info)?.[1] ?? '' }
}

/** The images pdfimages lists (their soft masks left out). */
const imagesOf = (path: string) => execFileSync('pdfimages', ['-list', path], { encoding: 'utf8' }).split('\n').filter((line) => /^\s+\d+\s+\d+\s+image\b/.test(line)).length

/**
 * The widths, in modules, of the bars and spaces drawn in the right half of the rendered first page: the
 * dark and light runs of a pixel row between its first and last dark pixel, divided by the narrowest,
 * from the first row whose runs stay the same for 100 rows (a third of the bars' 36 pt at 600 dpi;
 * text changes from row to row).
 */
function barsOnPage(path: string): number[] | null {
  const gray = execFileSync('pdftoppm', ['-gray', '-r', '600', '-f', '1', '-l', '1', '-singlefile', path], { maxBuffer: 1 << 28 })
  // A binary PGM: "P5\n<width> <height>\n<max>\n", then a byte a pixel.
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(gray.subarray(0, 40).toString('latin1'))!
  const [width, height] = [Number(header[1]), Number(header[2])]
  const pixels = gray.subarray(header[0].length)
  const runsOf = (row: number) => {
    const runs: number[] = []
    let previous: boolean | null = null
    for (let column = Math.floor(width / 2); column < width; column++) {
      const dark = pixels[row * width + column]! < 128
      if (previous === null && !dark) continue
      if (dark === previous) runs[runs.length - 1]!++
      else runs.push(1)
      previous = dark
    }
    if (previous === false) runs.pop()
    return runs
  }
  let same = 0
  let last = ''
  for (let row = 0; row < height; row++) {
    const runs = runsOf(row)
    const key = runs.join(',')
    same = runs.length >= 30 && key === last ? same + 1 : 0
    last = key
    if (same === 100) return runs.map((run) => Math.round(run / Math.min(...runs)))
  }
  return null
}

const SHOP = { name: 'Ωmega Crème Shop', address: ['Hauptstraße 5', '10115 Berlin', 'DE'] }

async function setup(t: Test, documents: ShipmentsPluginOptions['documents'] = {}) {
  const app = await buildTestApp(t, { documents: { shop: SHOP, ...documents } })
  return app
}

/** An order with Greek, Cyrillic and accented text, its lines at shelf locations; one shipment of every line. */
async function orderWithShipment(app: FastifyInstance, options: { reference?: string; lines?: number; notes?: string } = {}) {
  const reference = options.reference ?? `Α-${Math.floor(Math.random() * 1e6)}`
  const items = [
    { name: 'Crème brûlée set', sku: 'CB-1', quantity: 2, options: { location: 'B-10' } },
    { name: 'Матрёшка деревянная', sku: 'MT-2', quantity: 3, options: { location: 'A-2' } },
    { name: 'Ελληνικό λάδι', sku: 'GR-3', quantity: 1 },
    ...Array.from({ length: options.lines ?? 0 }, (_, index) => ({ name: `Extra item ${index + 1} with a rather long name to wrap`, sku: `EX-${index + 1}`, quantity: 1 })),
  ]
  const orderId = await app.shipments.referenceOrders!.createOrder({
    reference,
    isCompleted: true,
    dateOrdered: new Date(Date.UTC(2026, 10, 20, 9, 30)),
    customerNotes: options.notes ?? 'Παρακαλώ — please leave at the door. Спасибо!',
    shippingAddress: { name: 'Αλέξανδρος Παπαδόπουλος', address1: 'улица Тверская 7', city: 'Москва', postalCode: '125009', country: 'RU' },
    items,
  })
  const lines = (await app.shipments.orders.orderLines!(orderId))!
  const [shipment] = await app.shipments.shipments.create(orderId, { items: lines.map((line) => ({ lineItemId: line.id, quantity: line.quantity })) })
  return { orderId, lines, shipment: shipment! }
}

async function storedCounts(app: FastifyInstance) {
  const { db, schema } = tables(app)
  return {
    shipments: JSON.stringify(await db.select().from(schema.shipments).orderBy(schema.shipments.id)),
    history: (await app.shipments.shipments.history(1).catch(() => [])).length,
    outbox: (await app.shipments.outbox.list({})).length,
  }
}

t.test('a packing slip: shop, order, ship-to in Greek and Cyrillic, the reference with its barcode, lines per parcel, notes, footer; a PNG of the page', async (t) => {
  const app = await setup(t)
  const { lines, shipment } = await orderWithShipment(app, { reference: 'SLIP-1001' })
  await app.shipments.deliveries.addParcel(shipment.id, { weight: { value: '1.5', unit: 'kg' }, items: [{ lineItemId: lines[0]!.id, quantity: 2 }, { lineItemId: lines[1]!.id, quantity: 1 }] })
  await app.shipments.deliveries.addParcel(shipment.id, { weight: { value: '0.8', unit: 'kg' }, items: [{ lineItemId: lines[1]!.id, quantity: 2 }] })
  await app.shipments.shipments.update(shipment.id, { shippingNotes: 'Fragile: glass inside' })
  const before = await storedCounts(app)

  const response = await app.inject({ url: `/shipments/api/shipments/${shipment.id}/packing-slip`, headers: as('viewer') })
  t.equal(response.statusCode, 200, response.body.slice(0, 300))
  t.equal(response.headers['content-type'], 'application/pdf')
  t.equal(response.headers['content-disposition'], `inline; filename="packing-slip-${shipment.id}.pdf"`)
  const path = saved(t, response.rawPayload)
  const info = infoOf(path)
  t.equal(info.pages, 1)
  t.same(info.sizes, [[595, 842]], 'A4')
  const text = textOf(path)
  for (const expected of [
    'Ωmega Crème Shop', 'Hauptstraße 5', 'Packing slip', 'Order SLIP-1001', 'Ordered 20 November 2026', `Shipment ${shipment.reference}`,
    'Αλέξανδρος Παπαδόπουλος', 'улица Тверская 7', 'Москва', 'Russia', '125009',
    'Parcel 1 of 2', 'Parcel 2 of 2', '1.5 kg', 'Not in a parcel', 'Crème brûlée set', 'Матрёшка деревянная', 'Ελληνικό λάδι', 'CB-1', 'MT-2', 'GR-3',
    'Fragile: glass inside', 'Παρακαλώ — please leave at the door. Спасибо!', 'Page 1 of 1',
  ]) t.ok(text.includes(expected), `the slip shows ${expected}`)
  t.match(text, /Матрёшка деревянная\s+1 of 3/, 'a part of a line shows N of M')
  t.notOk(text.includes('\uFFFD'), 'no character replaced')

  // The barcode reads as the reference: the bars on the rendered page, measured in modules, are the
  // Code 128 of the reference (as bwip-js encodes it), drawn as vectors (no image on the page).
  const [code128] = bwipjs.raw({ bcid: 'code128', text: shipment.reference })
  t.same(barsOnPage(path), code128 && 'sbs' in code128 ? code128.sbs : 'no encoding', `the bars are the Code 128 of ${shipment.reference}`)
  t.equal(imagesOf(path), 0, 'the bars are vectors, not an image')

  mkdirSync(SCREENSHOTS, { recursive: true })
  const prefix = join(SCREENSHOTS, `packing-slip-${TEST_ENGINE}`)
  execFileSync('pdftoppm', ['-png', '-r', '80', '-f', '1', '-l', '1', '-singlefile', path, prefix])
  const png = readFileSync(`${prefix}.png`)
  t.equal(png.subarray(1, 4).toString('latin1'), 'PNG', 'a PNG of the page for a reviewer')
  t.equal(Math.round(png.readUInt32BE(20) / png.readUInt32BE(16) * 100), 141, 'the page is A4 (1 : 1.41)')

  const service = await app.shipments.documents.packingSlip(shipment.id)
  t.ok(Buffer.isBuffer(service), 'the service returns the bytes')
  t.equal(infoOf(saved(t, service, 'service.pdf')).title, `Packing slip ${shipment.reference}`)
  t.same(await storedCounts(app), before, 'reading documents changes nothing')
})

t.test('a long shipment runs over several pages, the table header and footer on each', async (t) => {
  const app = await setup(t)
  const { shipment } = await orderWithShipment(app, { lines: 90 })
  const path = saved(t, await app.shipments.documents.packingSlip(shipment.id))
  const { pages, sizes } = infoOf(path)
  t.ok(pages >= 3, `several pages (${pages})`)
  t.equal(sizes.length, pages)
  for (let page = 1; page <= pages; page++) {
    const text = textOf(path, { first: page, last: page })
    t.match(text, /SKU\s+Item\s+Qty/, `page ${page} has the table header`)
    t.ok(text.includes(`Page ${page} of ${pages}`), `page ${page} has its footer`)
  }
  const all = textOf(path)
  t.ok(all.includes('EX-90') && all.includes('EX-1 '), 'every line is there')
})

t.test('the settings: what the slip shows, the page size, the title', async (t) => {
  const app = await setup(t, { show: { shipTo: false, barcode: false, sku: false, notes: false, orderDate: false }, pageSize: 'LETTER', title: 'Delivery note' })
  const { shipment } = await orderWithShipment(app)
  const path = saved(t, await app.shipments.documents.packingSlip(shipment.id))
  t.same(infoOf(path).sizes, [[612, 792]], 'US Letter')
  const text = textOf(path)
  t.ok(text.includes('Delivery note'))
  for (const hidden of ['Ship to', 'Москва', 'CB-1', 'Notes', 'Ordered']) t.notOk(text.includes(hidden), `no ${hidden}`)
  t.equal(imagesOf(path), 0, 'no barcode')
})

t.test('a pick list sums SKUs over the batch, sorted by location, with the shipments each goes to', async (t) => {
  const app = await setup(t)
  const first = await orderWithShipment(app, { reference: 'P1' })
  const second = await orderWithShipment(app, { reference: 'P2' })
  const ids = [first.shipment.id, second.shipment.id]
  const response = await app.inject({ url: `/shipments/api/documents/pick-list?ids=${ids.join(',')}`, headers: as('viewer') })
  t.equal(response.statusCode, 200, response.body.slice(0, 300))
  t.equal(response.headers['content-disposition'], 'inline; filename="pick-list-2-shipments.pdf"')
  const text = textOf(saved(t, response.rawPayload))
  const rows = text.split('\n').filter((line) => /(CB-1|MT-2|GR-3)/.test(line))
  t.equal(rows.length, 3, text)
  t.match(rows[0], /A-2\s+MT-2\s+Матрёшка деревянная\s+6\s+/, 'A-2 first, 3 + 3')
  t.match(rows[1], /B-10\s+CB-1\s+Crème brûlée set\s+4\s+/, 'then B-10 (natural order: A-2 before B-10), 2 + 2')
  t.match(rows[2], /—\s+GR-3\s+Ελληνικό λάδι\s+2\s+/, 'a line without a location last')
  t.ok(rows[0]!.includes(`${first.shipment.reference}, ${second.shipment.reference}`), 'the shipments it goes to')
  t.ok(text.includes('2 shipments · 3 rows · 12 units'))
})

/** A 4 x 6 in label as a PDF, and as a PNG of 1200 x 1800 pixels (300 dpi). */
async function labelFiles() {
  const doc = new PDFDocument({ size: [288, 432], margin: 10 })
  const chunks: Buffer[] = []
  doc.on('data', (chunk: Buffer) => chunks.push(chunk))
  const ended = new Promise((resolve) => doc.on('end', resolve))
  doc.fontSize(20).text('USPS PRIORITY LABEL 9400111')
  doc.end()
  await ended
  const png = await bwipjs.toBuffer({ bcid: 'code128', text: 'PNG-LABEL', width: 101.6, height: 152.4, scale: 3 } as never)
  return { pdf: Buffer.concat(chunks), png }
}

async function labelParcel(app: FastifyInstance, shipmentId: number, values: { url: string; format: string }) {
  const parcel = await app.shipments.deliveries.addParcel(shipmentId, { weight: { value: '1', unit: 'kg' } })
  const { db, schema } = tables(app)
  // As a purchase leaves it (test/labels.test.ts buys through the provider): the label's URL and format on the parcel.
  await (db as typeof db).update(schema.parcels).set({ status: 'labelled', labelUrl: values.url, labelFormat: values.format, labelOperationId: `op-${parcel.id}`, trackingNumber: `9400${parcel.id}`, carrier: 'USPS' }).where(eq(schema.parcels.id, parcel.id))
  // The shipment row's copy of its parcels, as the parcel store rewrites it with every change.
  const rows = (await (db as typeof db).select().from(schema.parcels).where(eq(schema.parcels.shipmentId, shipmentId)).orderBy(schema.parcels.id)) as ParcelRow[]
  await (db as typeof db).update(schema.shipments).set({ parcels: storedParcels(rows) }).where(eq(schema.shipments.id, shipmentId))
  return parcel
}

t.test('labels and the batch packing slips merged into one PDF, each label at its own size', async (t) => {
  const files = await labelFiles()
  const fetched: string[] = []
  const app = await setup(t, {
    fetchLabel: async (label) => {
      fetched.push(`${label.parcelId}:${label.format}`)
      return label.url.endsWith('.pdf') ? files.pdf : files.png
    },
  })
  const first = await orderWithShipment(app)
  const second = await orderWithShipment(app)
  const pdfParcel = await labelParcel(app, first.shipment.id, { url: 'https://files.example/label.pdf', format: 'PDF' })
  const pngParcel = await labelParcel(app, second.shipment.id, { url: 'https://files.example/label.png', format: 'PNG' })
  const response = await app.inject({ url: `/shipments/api/documents/labels?ids=${first.shipment.id},${second.shipment.id}`, headers: as('viewer') })
  t.equal(response.statusCode, 200, response.body.slice(0, 300))
  t.same(fetched, [`${pdfParcel.id}:PDF`, `${pngParcel.id}:PNG`])
  const path = saved(t, response.rawPayload)
  const info = infoOf(path)
  t.equal(info.pages, 4, 'label, slip, label, slip')
  const pngHeight = Math.round((288 * files.png.readUInt32BE(20)) / files.png.readUInt32BE(16))
  t.same(info.sizes, [[288, 432], [595, 842], [288, pngHeight], [595, 842]], 'the PDF label at its own 4 x 6 in, the PNG label 4 in wide, the slips A4')
  t.ok(textOf(path, { first: 1, last: 1 }).includes('USPS PRIORITY LABEL'))
  t.ok(textOf(path, { first: 2, last: 2 }).includes(first.shipment.reference))
  t.ok(textOf(path, { first: 4, last: 4 }).includes(second.shipment.reference))
})

t.test('a label that cannot be fetched is a 502 naming the parcel; nothing changes', async (t) => {
  const app = await setup(t, { fetchLabel: async () => Buffer.from('<html>not a label</html>') })
  const { shipment } = await orderWithShipment(app)
  const parcel = await labelParcel(app, shipment.id, { url: 'https://files.example/label.pdf', format: 'PDF' })
  const before = await storedCounts(app)
  const response = await app.inject({ url: `/shipments/api/documents/labels?ids=${shipment.id}`, headers: as('viewer') })
  t.equal(response.statusCode, 502)
  t.match(response.json(), { name: 'Bad Gateway', status: 502, message: `The label of parcel ${parcel.id} could not be fetched: the file is not a PDF, PNG or JPEG` })
  t.same(await storedCounts(app), before)
})

t.test('packing slips of a batch: one PDF, each slip numbering its own pages; the host renderer replaces the layout', async (t) => {
  const app = await setup(t)
  const first = await orderWithShipment(app)
  const second = await orderWithShipment(app, { lines: 60 })
  const path = saved(t, await app.shipments.documents.packingSlips([first.shipment.id, second.shipment.id]))
  const { pages } = infoOf(path)
  t.ok(pages >= 3)
  t.ok(textOf(path, { first: 1, last: 1 }).includes('Page 1 of 1'))
  t.ok(textOf(path, { first: 2, last: 2 }).includes(`Page 1 of ${pages - 1}`))

  const seen: string[] = []
  const hosted = await setup(t, {
    renderPackingSlip: async (slip) => {
      seen.push(slip.shipment.reference)
      const doc = await PdfLibDocument.create()
      doc.addPage([300, 300]).drawText(`Host slip ${slip.shipment.reference} ${slip.groups[0]!.lines.length} lines`, { x: 10, y: 150, size: 10 })
      return doc.save()
    },
  })
  const a = await orderWithShipment(hosted, { reference: 'HOST-1' })
  const b = await orderWithShipment(hosted, { reference: 'HOST-2' })
  const hostedPath = saved(t, await hosted.shipments.documents.packingSlips([a.shipment.id, b.shipment.id]), 'hosted.pdf')
  t.same(infoOf(hostedPath).sizes, [[300, 300], [300, 300]])
  t.match(textOf(hostedPath), /Host slip HOST-1-\S+ 3 lines[\s\S]*Host slip HOST-2-\S+ 3 lines/)
  t.same(seen, [a.shipment.reference, b.shipment.reference])
  const data = await hosted.shipments.documents.packingSlipData(a.shipment.id)
  t.match(data, { shop: { name: SHOP.name }, order: { reference: 'HOST-1' }, shipTo: { city: 'Москва' }, notes: ['Παρακαλώ — please leave at the door. Спасибо!'] })
})

t.test('a character no font draws: replaced by U+FFFD by default, a 422 under missingGlyphs error', async (t) => {
  const app = await setup(t)
  const { shipment } = await orderWithShipment(app, { notes: 'Gift from 東京 🎁' })
  const text = textOf(saved(t, await app.shipments.documents.packingSlip(shipment.id)))
  t.ok(text.includes('Gift from'), text)
  t.ok(text.includes('\uFFFD'), 'shown as U+FFFD, never dropped')

  const strict = await setup(t, { missingGlyphs: 'error' })
  const other = await orderWithShipment(strict, { notes: 'Gift from 東京' })
  const before = await storedCounts(strict)
  const response = await strict.inject({ url: `/shipments/api/shipments/${other.shipment.id}/packing-slip`, headers: as('viewer') })
  t.equal(response.statusCode, 422)
  t.match(response.json(), { status: 422, message: /U\+6771 \(東\)/ })
  t.same(await storedCounts(strict), before)
})

t.test('unknown, deleted and malformed ids; too large a batch; no login or no permission', async (t) => {
  const app = await setup(t, { maxBatchSize: 3 })
  const { shipment } = await orderWithShipment(app)
  const deleted = await orderWithShipment(app)
  await app.shipments.shipments.softDelete(deleted.shipment.id)
  const before = await storedCounts(app)
  const get = (url: string, user: Parameters<typeof as>[0] | null = 'viewer') => app.inject({ url: `/shipments/api/${url}`, headers: user ? as(user) : {} })

  for (const url of ['shipments/999999/packing-slip', `shipments/${deleted.shipment.id}/packing-slip`, 'shipments/abc/packing-slip', `documents/pick-list?ids=${shipment.id},999999`, `documents/packing-slips?ids=${deleted.shipment.id}`]) {
    const response = await get(url)
    t.equal(response.statusCode, 404, url)
    t.match(response.json(), { name: 'Not Found', status: 404, message: /^Shipment .+ not found\.$/ }, url)
  }
  for (const [url, message] of [
    ['documents/pick-list?ids=1,x', /"x" is not a shipment id/],
    ['documents/pick-list?ids=', /ids/],
    ['documents/pick-list', /ids/],
    ['documents/labels?ids=-1', /"-1" is not a shipment id/],
    ['documents/packing-slips?ids=1,2,3,4', /at most 3 shipments; 4 were named/],
  ] as const) {
    const response = await get(url)
    t.equal(response.statusCode, 422, url)
    t.match(response.json(), { success: false, errors: { ids: [message] } }, url)
  }
  t.equal((await get(`shipments/${shipment.id}/packing-slip`, null)).statusCode, 401)
  t.equal((await get(`documents/pick-list?ids=${shipment.id}`, 'nobody')).statusCode, 403, 'the view permission is needed')
  t.same(await storedCounts(app), before, 'nothing changed')
  await t.rejects(app.shipments.documents.pickList([]), { statusCode: 422, message: /ids/ })
})

t.test('a batch of 200 shipments renders, yielding between slips', async (t) => {
  const app = await setup(t)
  const ids: number[] = []
  for (let index = 0; index < 200; index++) {
    const orderId = await app.shipments.referenceOrders!.createOrder({ reference: `BULK-${index}`, isCompleted: true, items: [{ name: `Item ${index}`, sku: `SKU-${index % 7}`, quantity: 2 }] })
    const [shipment] = await app.shipments.shipments.create(orderId)
    ids.push(shipment!.id)
  }
  // Another task runs between the slips: the batch does not take the event loop for itself.
  let ticks = 0
  const timer = setInterval(() => ticks++, 1)
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  const bytes = await app.shipments.documents.packingSlips(ids)
  delay.disable()
  clearInterval(timer)
  t.ok(ticks > 0, 'the timer ran while the batch rendered')
  // Reported, not asserted (the machine's speed varies): the longest the loop was held.
  t.comment(`200 slips: longest event-loop stall ${(delay.max / 1e6).toFixed(1)} ms, mean ${(delay.mean / 1e6).toFixed(1)} ms`)
  const path = saved(t, bytes)
  t.equal(infoOf(path).pages, 200)
  const pick = textOf(saved(t, await app.shipments.documents.pickList(ids), 'pick.pdf'))
  t.match(pick, /SKU-0\s+Item 0\s+58\s/, 'SKU-0 is in 29 shipments of 2 units each')
  const response = await app.inject({ url: `/shipments/api/documents/packing-slips?ids=${[...ids, 1].join(',')}`, headers: as('viewer') })
  t.equal(response.statusCode, 422, 'the documented maximum is 200')
})

t.test('CJK text in a host font: names, a note and an address in Japanese and Chinese, a long name wrapped without spaces, extracted back whole', async (t) => {
  const longName = '日本茶の詰め合わせ特別限定版贈答用木箱入り十二種類日本茶の詰め合わせ特別限定版贈答用木箱入り十二種類'
  const app = await setup(t, { fonts: [{ regular: cjkFont(`${longName}東京都渋谷区神南一丁目山田太郎配送注意中国茶叶礼盒`) }], missingGlyphs: 'error' })
  const orderId = await app.shipments.referenceOrders!.createOrder({
    reference: 'JP-1',
    isCompleted: true,
    customerNotes: '配送注意',
    shippingAddress: { name: '山田太郎', address1: '神南一丁目', city: '東京都渋谷区', postalCode: '150-0041', country: 'JP' },
    items: [
      { name: longName, sku: 'TEA-JP', quantity: 1 },
      { name: '中国茶叶礼盒', sku: 'TEA-CN', quantity: 2 },
    ],
  })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const path = saved(t, await app.shipments.documents.packingSlip(shipment!.id))
  t.equal(infoOf(path).pages, 1)
  const text = textOf(path)
  for (const expected of ['山田太郎', '神南一丁目', '東京都渋谷区', '配送注意', '中国茶叶礼盒', 'TEA-JP', 'Order JP-1']) t.ok(text.includes(expected), `the slip shows ${expected}`)
  t.notOk(text.includes('\uFFFD'), 'no character replaced')
  // Forty-eight characters of 10 pt, 1,000 units wide each, do not fit the item column on one line: CJK text
  // has no spaces, and breaks between characters.
  const nameLines = text.split('\n').filter((line) => /[日本茶の詰め合わせ特別限定版贈答用木箱入り十二種類]{3,}/u.test(line))
  t.ok(nameLines.length >= 2, `the long name wraps over ${nameLines.length} lines`)
  t.equal(nameLines.map((line) => line.match(/[\u3040-\u30ff\u4e00-\u9fff]+/gu)!.filter((run) => longName.includes(run)).join('')).join(''), longName, 'every character of the long name, in order')
  const fonts = execFileSync('pdffonts', [path], { encoding: 'utf8' })
  t.match(fonts, /TestCJK/, 'the host font is embedded')

  // Without the host font, the same order fails clearly (missingGlyphs: 'error') rather than dropping glyphs.
  const plain = await setup(t, { missingGlyphs: 'error' })
  const plainOrder = await plain.shipments.referenceOrders!.createOrder({ reference: 'JP-2', isCompleted: true, items: [{ name: '中国茶叶礼盒', sku: 'TEA-CN', quantity: 1 }] })
  const [plainShipment] = await plain.shipments.shipments.create(plainOrder)
  const refused = await plain.inject({ url: `/shipments/api/shipments/${plainShipment!.id}/packing-slip`, headers: as('viewer') })
  t.equal(refused.statusCode, 422, refused.body)
  t.match(refused.json(), { message: /中/ }, 'the answer names a character no font has')
})

t.test('a bad documents option fails registration, naming it', async (t) => {
  for (const [documents, message] of [
    [{ maxBatchSize: 0 }, /documents\.maxBatchSize/],
    [{ fonts: [{ regular: Buffer.from('not a font') }] }, /documents\.fonts\.0\.regular/],
    [{ show: { price: true } }, /documents\.show\.price/],
    [{ shop: { logo: Buffer.from('GIF89a') } }, /documents\.shop\.logo/],
    [{ renderPackingSlip: 'mine' }, /documents\.renderPackingSlip/],
  ] as const) {
    await t.rejects(buildTestApp(t, { documents: documents as never }), { message }, JSON.stringify(documents).slice(0, 60))
  }
})

t.test('admin: "Print packing slip" on the shipment page; print buttons for the selected shipments on the list', async (t) => {
  const app = await buildAdminApp(t, { documents: { shop: SHOP } })
  const { shipment } = await orderWithShipment(app)
  const other = await orderWithShipment(app)
  const viewer = adminClient(app, 'viewer')
  const page = await viewer.get(`/shipments/${shipment.id}`)
  t.equal(page.statusCode, 200)
  t.ok(page.body.includes(`href="${ADMIN}/shipments/${shipment.id}/packing-slip"`), 'the shipment page links its packing slip')
  const slip = await viewer.get(`/shipments/${shipment.id}/packing-slip`)
  t.equal(slip.statusCode, 200)
  t.equal(slip.headers['content-type'], 'application/pdf')
  t.ok(textOf(saved(t, slip.rawPayload, 'admin-slip.pdf')).includes(shipment.reference))

  const list = await viewer.get('/shipments')
  t.equal(list.statusCode, 200)
  for (const kind of ['pick-list', 'packing-slips', 'labels']) t.ok(list.body.includes(`formaction="${ADMIN}/shipments/documents/${kind}"`), `a ${kind} button`)
  t.ok(list.body.includes(`name="ids" value="${shipment.id}"`), 'a viewer can select shipments to print')
  const before = await storedCounts(app)
  const pick = await viewer.post('/shipments/documents/pick-list', { ids: [String(shipment.id), String(other.shipment.id)] })
  t.equal(pick.statusCode, 200, pick.body.slice(0, 200))
  t.ok(textOf(saved(t, pick.rawPayload, 'admin-pick.pdf')).includes('2 shipments · 3 rows · 12 units'))
  const none = await viewer.post('/shipments/documents/packing-slips', {})
  t.equal(none.statusCode, 400)
  t.ok(none.body.includes('Select at least one shipment.'))
  const forged = await viewer.post('/shipments/documents/pick-list', { ids: String(shipment.id), _csrf: 'forged' })
  t.equal(forged.statusCode, 403, 'the CSRF token is checked')
  t.same(await storedCounts(app), before)
})

t.test('the default label fetch: an HTTP GET of the stored URL, refused past labelMaxBytes', async (t) => {
  const files = await labelFiles()
  const big = Buffer.alloc(4096, 0x41)
  const server = createServer((request, response) => {
    const body = request.url === '/big.pdf' ? Buffer.concat([Buffer.from('%PDF-1.4\n'), big]) : request.url === '/label.pdf' ? files.pdf : null
    if (!body) return response.writeHead(404).end()
    response.writeHead(200, { 'content-type': 'application/pdf' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const app = await setup(t, { labelMaxBytes: 2048, labelTimeoutMs: 2000, allowPrivateAddresses: true })
  const { shipment } = await orderWithShipment(app)
  await labelParcel(app, shipment.id, { url: `${base}/label.pdf`, format: 'PDF' })
  const path = saved(t, await app.shipments.documents.labels([shipment.id]))
  t.same(infoOf(path).sizes, [[288, 432], [595, 842]])

  const other = await orderWithShipment(app)
  const parcel = await labelParcel(app, other.shipment.id, { url: `${base}/big.pdf`, format: 'PDF' })
  await t.rejects(app.shipments.documents.labels([other.shipment.id]), { statusCode: 502, message: `The label of parcel ${parcel.id} could not be fetched: the label is larger than 2048 bytes` })
  const missing = await orderWithShipment(app)
  const gone = await labelParcel(app, missing.shipment.id, { url: `${base}/gone.pdf`, format: 'PDF' })
  await t.rejects(app.shipments.documents.labels([missing.shipment.id]), { statusCode: 502, message: `The label of parcel ${gone.id} could not be fetched: the label's host answered 404` })
})

t.test('a host font draws what DejaVu Sans cannot (here DejaVu Math for 𝒜; CJK fonts the same way)', async (t) => {
  const math = createRequire(import.meta.url).resolve('dejavu-fonts-ttf/ttf/DejaVuMathTeXGyre.ttf')
  const app = await setup(t, { fonts: [{ regular: math }], missingGlyphs: 'error' })
  const { shipment } = await orderWithShipment(app, { notes: 'Formula 𝒜𝔅 for Athens' })
  const path = saved(t, await app.shipments.documents.packingSlip(shipment.id))
  const text = textOf(path)
  t.ok(text.includes('Formula 𝒜𝔅 for Athens'), 'the note in the host font, extracted back whole')
  t.ok(text.includes('Αλέξανδρος Παπαδόπουλος'), 'the rest in DejaVu Sans')
  const fonts = execFileSync('pdffonts', [path], { encoding: 'utf8' })
  t.match(fonts, /DejaVuMathTeXGyre/, 'the host font is embedded')
  t.match(fonts, /DejaVuSans\b/, 'beside DejaVu Sans')
})

/** A local label server that counts what it is asked; `routes` answer by path (a redirect: `{ location }`). */
async function labelServer(t: Test, routes: Record<string, Buffer | { location: string }>) {
  const hits: string[] = []
  const server = createServer((request, response) => {
    hits.push(request.url ?? '')
    const route = routes[(request.url ?? '').replace(/\?.*$/, '')]
    if (!route) return response.writeHead(404).end()
    if ('location' in route) return response.writeHead(302, { location: route.location }).end()
    response.writeHead(200, { 'content-type': 'application/pdf' }).end(route)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { hits, port: (server.address() as AddressInfo).port }
}

t.test('SSRF: a label URL on a loopback address is refused before any request, naming the parcel and not the URL', async (t) => {
  const files = await labelFiles()
  const local = await labelServer(t, { '/latest/meta-data/label.pdf': files.pdf })
  const app = await setup(t)
  const { shipment } = await orderWithShipment(app)
  const parcel = await labelParcel(app, shipment.id, { url: `http://127.0.0.1:${local.port}/latest/meta-data/label.pdf?X-Amz-Signature=label-url-secret`, format: 'PDF' })
  const before = await storedCounts(app)
  const response = await app.inject({ url: `/shipments/api/documents/labels?ids=${shipment.id}`, headers: as('viewer') })
  t.equal(response.statusCode, 502, response.body.slice(0, 300))
  t.match(response.json(), { status: 502, errorCode: 'SHIPMENTS_DOCUMENT_LABEL_REFUSED', message: `The label of parcel ${parcel.id} was not fetched: its URL names a host that is not allowed: 127.0.0.1 is a private address; documents.allowPrivateAddresses allows such hosts` })
  t.notMatch(response.body, /label-url-secret|meta-data/, "the answer carries no part of the URL's path or query")
  await t.rejects(app.shipments.documents.labels([shipment.id]), { code: 'SHIPMENTS_DOCUMENT_LABEL_REFUSED' })
  t.same(local.hits, [], 'the loopback server never got a request')
  t.same(await storedCounts(app), before)
})

t.test('SSRF: a label host that redirects to loopback or the metadata address is refused; an allowed host still serves labels', async (t) => {
  const files = await labelServer(t, {}).then(async (loopback) => ({ loopback, pdf: (await labelFiles()).pdf }))
  const allowed = await labelServer(t, {
    '/label.pdf': files.pdf,
    '/to-loopback.pdf': { location: `http://127.0.0.1:${files.loopback.port}/secret.pdf` },
    '/to-metadata.pdf': { location: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' },
  })
  // 'localhost' stands in for a public label host: only the host named here may be private, and nothing it redirects to.
  const app = await setup(t, { allowPrivateAddresses: ['localhost'], labelTimeoutMs: 2000 })
  const base = `http://localhost:${allowed.port}`
  const { shipment } = await orderWithShipment(app)
  await labelParcel(app, shipment.id, { url: `${base}/label.pdf`, format: 'PDF' })
  t.same(infoOf(saved(t, await app.shipments.documents.labels([shipment.id]))).sizes, [[288, 432], [595, 842]], 'the allowed host serves its label')

  for (const [path, reason] of [
    ['/to-loopback.pdf', 'a redirect names a host that is not allowed: 127.0.0.1 is a private address'],
    ['/to-metadata.pdf', 'a redirect names a host that is not allowed: 169.254.169.254 is a private address'],
  ] as const) {
    const other = await orderWithShipment(app)
    const parcel = await labelParcel(app, other.shipment.id, { url: `${base}${path}`, format: 'PDF' })
    const response = await app.inject({ url: `/shipments/api/documents/labels?ids=${other.shipment.id}`, headers: as('viewer') })
    t.equal(response.statusCode, 502, path)
    t.match(response.json(), { status: 502, errorCode: 'SHIPMENTS_DOCUMENT_LABEL_REFUSED', message: `The label of parcel ${parcel.id} was not fetched: ${reason}; documents.allowPrivateAddresses allows such hosts` }, path)
  }
  t.same(files.loopback.hits, [], 'the loopback server behind the redirect never got a request')
})

t.test('SSRF: a public-looking name that resolves to loopback is refused on the address it resolves to', async (t) => {
  const files = await labelFiles()
  const local = await labelServer(t, { '/label.pdf': files.pdf })
  const original = dns.lookup
  // The name of a public label host whose DNS answers 127.0.0.1 (a rebinding name, or a hijacked record).
  dns.lookup = ((hostname: string, options: unknown, callback: unknown) =>
    hostname === 'labels.carrier.example' ? (original as (...args: unknown[]) => void)('127.0.0.1', options, callback) : (original as (...args: unknown[]) => void)(hostname, options, callback)) as typeof dns.lookup
  syncBuiltinESMExports()
  t.teardown(() => {
    dns.lookup = original
    syncBuiltinESMExports()
  })
  const app = await setup(t, { labelTimeoutMs: 2000 })
  const { shipment } = await orderWithShipment(app)
  const parcel = await labelParcel(app, shipment.id, { url: `http://labels.carrier.example:${local.port}/label.pdf`, format: 'PDF' })
  const response = await app.inject({ url: `/shipments/api/documents/labels?ids=${shipment.id}`, headers: as('viewer') })
  t.equal(response.statusCode, 502, response.body.slice(0, 300))
  t.match(response.json(), { message: `The label of parcel ${parcel.id} was not fetched: the label's host is not allowed: labels.carrier.example resolves to a private address (127.0.0.1); documents.allowPrivateAddresses allows such hosts` })
  t.same(local.hits, [], 'the loopback server never got a request')
})
