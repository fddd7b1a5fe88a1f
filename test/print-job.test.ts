// One print job: labels of parcels in pick order as one PDF (pdfinfo reads back the page count and each
// page's size, pdftotext which label or slip is on which page), or the ZPL labels as one file; parcels
// without a label, labels not bought as ZPL and bad bodies refused by name before any label is fetched.
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import PDFDocument from 'pdfkit'
import bwipjs from 'bwip-js'
import { as, buildTestApp } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { storedParcels, type ParcelRow } from '../src/db/parcels.js'
import type { ShipmentsPluginOptions } from '../src/index.js'

const JSON_BODY = { 'content-type': 'application/json' }

function saved(t: Test, bytes: Uint8Array, name = 'job.pdf'): string {
  const path = join(t.testdir(), name)
  writeFileSync(path, bytes)
  return path
}
/** pdfinfo's page count and each page's size in points (every page: -f 1 -l N). */
function infoOf(path: string) {
  const info = execFileSync('pdfinfo', ['-f', '1', '-l', '9999', path], { encoding: 'utf8' })
  return {
    pages: Number(/^Pages:\s+(\d+)/m.exec(info)?.[1]),
    sizes: [...info.matchAll(/^Page\s+\d+ size:\s+([\d.]+) x ([\d.]+) pts/gm)].map((match) => [Math.round(Number(match[1])), Math.round(Number(match[2]))]),
  }
}
const pageText = (path: string, page: number) => execFileSync('pdftotext', ['-layout', '-f', String(page), '-l', String(page), path, '-'], { encoding: 'utf8' })

/** A one-page label PDF of the given size in points saying `text`. */
async function labelPdf(text: string, size: [number, number]): Promise<Buffer> {
  const doc = new PDFDocument({ size, margin: 10 })
  const chunks: Buffer[] = []
  doc.on('data', (chunk: Buffer) => chunks.push(chunk))
  const ended = new Promise((resolve) => doc.on('end', resolve))
  doc.fontSize(14).text(text)
  doc.end()
  await ended
  return Buffer.concat(chunks)
}

const zplOf = (text: string) => `^XA\n^FO50,50^A0N,40,40^FD${text}^FS\n^XZ\n`

async function setup(t: Test, documents: ShipmentsPluginOptions['documents'] = {}) {
  return buildTestApp(t, { documents: { shop: { name: 'Shop' }, ...documents } })
}

async function shipmentOf(app: FastifyInstance, reference: string) {
  const orderId = await app.shipments.referenceOrders!.createOrder({
    reference,
    isCompleted: true,
    shippingAddress: { name: 'Customer', address1: 'Main Street 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
    items: [{ name: 'Mug', sku: 'MUG-1', quantity: 2, options: { location: 'A-1' } }],
  })
  const [shipment] = await app.shipments.shipments.create(orderId)
  return shipment!
}

/** A parcel with a label as a purchase leaves it (test/labels.test.ts buys through the provider): URL and format on the parcel. */
async function labelledParcel(app: FastifyInstance, shipmentId: number, label: { url: string; format: string } | null) {
  const parcel = await app.shipments.deliveries.addParcel(shipmentId, { weight: { value: '1', unit: 'kg' } })
  if (!label) return parcel
  const { db, schema } = tables(app)
  await (db as typeof db)
    .update(schema.parcels)
    .set({ status: 'labelled', labelUrl: label.url, labelFormat: label.format, labelOperationId: `op-${parcel.id}`, trackingNumber: `9400${parcel.id}`, carrier: 'USPS' })
    .where(eq(schema.parcels.id, parcel.id))
  const rows = (await (db as typeof db).select().from(schema.parcels).where(eq(schema.parcels.shipmentId, shipmentId)).orderBy(schema.parcels.id)) as ParcelRow[]
  await (db as typeof db).update(schema.shipments).set({ parcels: storedParcels(rows) }).where(eq(schema.shipments.id, shipmentId))
  return parcel
}

/** Label files by URL path, and the parcels whose labels were fetched, in order. */
function labelStore() {
  const files = new Map<string, Uint8Array>()
  const fetched: number[] = []
  const fetchLabel: NonNullable<NonNullable<ShipmentsPluginOptions['documents']>['fetchLabel']> = async (label) => {
    fetched.push(label.parcelId)
    const file = files.get(new URL(label.url).pathname)
    if (!file) throw new Error('the label host answered 404')
    return file
  }
  return { files, fetched, fetchLabel }
}

const printJob = (app: FastifyInstance, body: unknown, user: 'viewer' | 'admin' = 'viewer') =>
  app.inject({ method: 'POST', url: '/shipments/api/documents/print-job', headers: { ...as(user), ...JSON_BODY }, payload: JSON.stringify(body) })

t.test('a PDF in pick order: the pick list first, each label at its own page size, each slip after its shipment\'s last label', async (t) => {
  const store = labelStore()
  const app = await setup(t, { fetchLabel: store.fetchLabel })
  const first = await shipmentOf(app, 'PJ-A')
  const second = await shipmentOf(app, 'PJ-B')
  const a1 = await labelledParcel(app, first.id, { url: 'https://files.example/a1.pdf', format: 'PDF' })
  const a2 = await labelledParcel(app, first.id, { url: 'https://files.example/a2.png', format: 'PNG' })
  const b1 = await labelledParcel(app, second.id, { url: 'https://files.example/b1.pdf', format: 'PDF' })
  store.files.set('/a1.pdf', await labelPdf(`LABEL A1 ${a1.id}`, [288, 432]))
  const png = await bwipjs.toBuffer({ bcid: 'code128', text: 'A2-PNG', width: 101.6, height: 152.4, scale: 3 } as never)
  store.files.set('/a2.png', png)
  store.files.set('/b1.pdf', await labelPdf(`LABEL B1 ${b1.id}`, [288, 288]))

  const pickOrder = [
    { shipmentId: second.id, parcelId: b1.id },
    { shipmentId: first.id, parcelId: a1.id },
    { shipmentId: first.id, parcelId: a2.id },
  ]
  const response = await printJob(app, { parcels: pickOrder, include: { slips: true, pickList: true }, format: 'pdf' })
  t.equal(response.statusCode, 200, response.body.slice(0, 300))
  t.equal(response.headers['content-type'], 'application/pdf')
  t.match(response.headers['content-disposition'], /^inline; filename="print-job-3-parcels\.pdf"$/)
  t.same(store.fetched.sort(), [a1.id, a2.id, b1.id].sort(), 'each label fetched once')
  const path = saved(t, response.rawPayload)
  const info = infoOf(path)
  const pngHeight = Math.round((288 * png.readUInt32BE(20)) / png.readUInt32BE(16))
  t.equal(info.pages, 6, 'pick list, B1, slip B, A1, A2, slip A')
  t.same(info.sizes, [[595, 842], [288, 288], [595, 842], [288, 432], [288, pngHeight], [595, 842]], 'labels at their own sizes, the slips and the pick list A4')
  t.match(pageText(path, 1), /Pick list[\s\S]*2 shipments/)
  t.match(pageText(path, 2), `LABEL B1 ${b1.id}`)
  t.match(pageText(path, 3), 'PJ-B')
  t.match(pageText(path, 4), `LABEL A1 ${a1.id}`)
  t.match(pageText(path, 6), 'PJ-A')

  // Labels only, in the order named.
  const bare = await app.shipments.documents.printJob([pickOrder[1]!, pickOrder[0]!], { format: 'pdf' })
  const barePath = saved(t, bare, 'bare.pdf')
  t.same(infoOf(barePath).sizes, [[288, 432], [288, 288]])
  t.match(pageText(barePath, 2), `LABEL B1 ${b1.id}`)
})

t.test('a ZPL file: the labels bought as ZPL concatenated in pick order, fetched under the outbound rules', async (t) => {
  const served: Record<string, string> = {}
  const hits: string[] = []
  const server = createServer((request, response) => {
    hits.push(request.url ?? '')
    const body = served[request.url ?? '']
    if (body === undefined) return response.writeHead(404).end()
    response.writeHead(200, { 'content-type': 'text/plain' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const app = await setup(t, { allowPrivateAddresses: true, labelTimeoutMs: 2000 })
  const first = await shipmentOf(app, 'ZPL-A')
  const second = await shipmentOf(app, 'ZPL-B')
  const a = await labelledParcel(app, first.id, { url: `${base}/a.zpl`, format: 'ZPL' })
  const b = await labelledParcel(app, second.id, { url: `${base}/b.zpl`, format: 'zpl' })
  served['/a.zpl'] = zplOf('A')
  served['/b.zpl'] = zplOf('B').trimEnd()

  const response = await printJob(app, { parcels: [{ shipmentId: second.id, parcelId: b.id }, { shipmentId: first.id, parcelId: a.id }], format: 'zpl' })
  t.equal(response.statusCode, 200, response.body.slice(0, 300))
  t.match(response.headers['content-type'], /^text\/plain/)
  t.equal(response.headers['content-disposition'], 'attachment; filename="print-job-2-parcels.zpl"')
  t.equal(response.body, `${zplOf('B')}${zplOf('A')}`, 'B then A, each format on its own lines')
  t.same(hits.sort(), ['/a.zpl', '/b.zpl'])

  // A file that is not ZPL (an error page) is a 502 naming the parcel.
  served['/a.zpl'] = '<html>expired</html>'
  const broken = await printJob(app, { parcels: [{ shipmentId: first.id, parcelId: a.id }], format: 'zpl' })
  t.equal(broken.statusCode, 502)
  t.match(broken.json(), { errorCode: 'SHIPMENTS_DOCUMENT_LABEL_UNAVAILABLE', message: `The label of parcel ${a.id} could not be fetched: the file is not ZPL` })
})

t.test('refusals name the parcels and fetch nothing: no label, not ZPL, not of the shipment, bad bodies', async (t) => {
  const store = labelStore()
  const app = await setup(t, { fetchLabel: store.fetchLabel })
  const shipment = await shipmentOf(app, 'REF-1')
  const other = await shipmentOf(app, 'REF-2')
  const pdf = await labelledParcel(app, shipment.id, { url: 'https://files.example/p.pdf', format: 'PDF' })
  const bare = await labelledParcel(app, shipment.id, null)
  const alsoBare = await labelledParcel(app, other.id, null)
  const zpl = await labelledParcel(app, other.id, { url: 'https://files.example/z.zpl', format: 'ZPL' })
  store.files.set('/p.pdf', await labelPdf('P', [288, 432]))
  store.files.set('/z.zpl', Buffer.from(zplOf('Z')))

  const unlabelled = await printJob(app, {
    parcels: [
      { shipmentId: shipment.id, parcelId: pdf.id },
      { shipmentId: shipment.id, parcelId: bare.id },
      { shipmentId: other.id, parcelId: alsoBare.id },
    ],
    format: 'pdf',
  })
  t.equal(unlabelled.statusCode, 422)
  t.same(unlabelled.json(), {
    success: false,
    errorCode: 'SHIPMENTS_VALIDATION_FAILED',
    errors: { parcels: [`Parcel ${bare.id} of shipment ${shipment.reference} has no label.`, `Parcel ${alsoBare.id} of shipment ${other.reference} has no label.`] },
  })

  const notZpl = await printJob(app, { parcels: [{ shipmentId: other.id, parcelId: zpl.id }, { shipmentId: shipment.id, parcelId: pdf.id }], format: 'zpl' })
  t.equal(notZpl.statusCode, 422)
  t.same(notZpl.json().errors, { parcels: [`The label of parcel ${pdf.id} of shipment ${shipment.reference} was bought as PDF, not ZPL.`] })

  const wrongShipment = await printJob(app, { parcels: [{ shipmentId: shipment.id, parcelId: zpl.id }], format: 'pdf' })
  t.equal(wrongShipment.statusCode, 422)
  t.same(wrongShipment.json().errors, { parcels: [`Parcel ${zpl.id} is not a parcel of shipment ${shipment.reference}.`] })

  const unknown = await printJob(app, { parcels: [{ shipmentId: 999_999, parcelId: pdf.id }], format: 'pdf' })
  t.equal(unknown.statusCode, 404)
  t.match(unknown.json(), { errorCode: 'SHIPMENTS_SHIPMENT_NOT_FOUND' })

  const zplWithSlips = await printJob(app, { parcels: [{ shipmentId: other.id, parcelId: zpl.id }], include: { slips: true }, format: 'zpl' })
  t.equal(zplWithSlips.statusCode, 422)
  t.same(zplWithSlips.json().errors, { include: ['A ZPL file holds labels only: packing slips and the pick list come as PDF.'] })

  for (const [body, field] of [
    [{ parcels: [], format: 'pdf' }, 'parcels'],
    [{ parcels: [{ shipmentId: shipment.id, parcelId: pdf.id }], format: 'png' }, 'format'],
    [{ parcels: [{ shipmentId: 'x', parcelId: pdf.id }], format: 'pdf' }, 'parcels'],
    [{ parcels: [{ shipmentId: shipment.id, parcelId: pdf.id }], format: 'pdf', include: { slips: 'yes' } }, 'include'],
  ] as const) {
    const refused = await printJob(app, body)
    t.equal(refused.statusCode, 422, JSON.stringify(body))
    t.ok(Object.hasOwn(refused.json().errors ?? {}, field), `${JSON.stringify(body)}: ${refused.body}`)
  }
  await t.rejects(app.shipments.documents.printJob([], { format: 'pdf' }), { statusCode: 422, message: 'Validation failed: parcels' })
  t.same(store.fetched, [], 'no label was fetched for any refused job')

  const anonymous = await app.inject({ method: 'POST', url: '/shipments/api/documents/print-job', headers: JSON_BODY, payload: JSON.stringify({ parcels: [{ shipmentId: shipment.id, parcelId: pdf.id }], format: 'pdf' }) })
  t.equal(anonymous.statusCode, 401)

  // A label whose file cannot be fetched: 502 naming the parcel.
  store.files.delete('/p.pdf')
  const gone = await printJob(app, { parcels: [{ shipmentId: shipment.id, parcelId: pdf.id }], format: 'pdf' })
  t.equal(gone.statusCode, 502)
  t.match(gone.json(), { errorCode: 'SHIPMENTS_DOCUMENT_LABEL_UNAVAILABLE', message: `The label of parcel ${pdf.id} could not be fetched: the label host answered 404` })
})
