// What the customer and the admin read: the shop's name on the tracking page, the parcel's heading in
// step with its progress bar, checkpoint and estimate times in the admin's date format, and addresses
// on the packing slip as the destination country writes them.
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, insertOrder } from './fixtures/app.js'
import { adminClient, buildAdminApp } from './fixtures/admin.js'
import { tables } from './fixtures/database.js'
import type { ShipmentsPluginOptions } from '../src/index.js'

const SECRET = 'a-tracking-secret-of-at-least-32-chars'
const SCANNED = Date.UTC(2026, 10, 20, 15, 0, 0)

async function shippedWithScans(app: FastifyInstance, statuses: readonly string[]) {
  const orderId = await insertOrder(app)
  const [shipment] = await app.shipments.shipments.create(orderId)
  await app.shipments.shipments.update(shipment!.id, { status: 'shipped', trackingNumber: '1Z5R89390357567127', carrier: 'UPS' })
  await app.shipments.shipments.recordCheckpoints(shipment!.id, {
    trackingNumber: '1Z5R89390357567127',
    source: 'test',
    checkpoints: statuses.map((status, index) => {
      const at = new Date(SCANNED + index * 3_600_000)
      return { occurredAt: at, occurredAtText: at.toISOString(), status, message: `Scan ${status}` }
    }),
  })
  return shipment!.id
}

async function trackingPage(app: FastifyInstance, shipmentId: number) {
  const link = new URL(await app.shipments.trackingLinks!.url(shipmentId))
  return app.inject({ url: link.pathname })
}

t.test("the tracking page shows the shop's name (trackingPage.shopName), escaped, above the heading and in the title", async (t) => {
  const app = await buildTestApp(t, { trackingPage: { secret: SECRET, baseUrl: 'https://shop.example', shopName: 'Ωmega <Tea> & Co' } })
  const page = await trackingPage(app, await shippedWithScans(app, ['in_transit']))
  t.equal(page.statusCode, 200)
  t.match(page.body, '<p class="shop">Ωmega &lt;Tea&gt; &amp; Co</p><h1>')
  t.match(page.body, /<title>Order [^<]+ · Ωmega &lt;Tea&gt; &amp; Co<\/title>/)
  t.notMatch(page.body, '<Tea>')

  const plain = await buildTestApp(t, { trackingPage: { secret: SECRET, baseUrl: 'https://shop.example' } })
  t.notMatch((await trackingPage(plain, await shippedWithScans(plain, ['in_transit']))).body, 'class="shop"', 'no name, no line')
  for (const shopName of ['', 'Shop\u202E', 'x'.repeat(256)]) {
    await t.rejects(buildTestApp(t, { trackingPage: { secret: SECRET, baseUrl: 'https://shop.example', shopName } }), { message: /trackingPage\.shopName/ }, JSON.stringify(shopName).slice(0, 20))
  }
})

t.test("the parcel's heading follows the latest carrier milestone, as its progress bar does", async (t) => {
  const app = await buildTestApp(t, { trackingPage: { secret: SECRET, baseUrl: 'https://shop.example' } })
  for (const [statuses, heading] of [
    [['in_transit'], 'Shipped'],
    [['in_transit', 'out_for_delivery'], 'Out for delivery'],
    [['in_transit', 'out_for_delivery', 'attempted'], 'Out for delivery'],
    [['in_transit', 'delivered'], 'Delivered'],
  ] as const) {
    const page = await trackingPage(app, await shippedWithScans(app, statuses))
    t.match(page.body, `<p class="status" data-status="shipped">${heading}</p>`, statuses.join(' > '))
    t.match(page.body, `aria-current="step">${heading}</li>`, 'the bar says the same')
  }
})

t.test('the admin dates checkpoints and the estimate in its own date format, not as raw ISO text', async (t) => {
  const app = await buildAdminApp(t, { trackingPage: { secret: SECRET, baseUrl: 'https://shop.example' } } as Partial<ShipmentsPluginOptions>)
  const id = await shippedWithScans(app, ['in_transit'])
  const { db, schema } = tables(app)
  await db.update(schema.shipments).set({ estimatedDelivery: '2026-11-24', estimatedDeliverySource: 'easypost' }).where(eq(schema.shipments.id, id))
  const page = await adminClient(app, 'admin').get(`/shipments/${id}`)
  t.equal(page.statusCode, 200)
  // 15:00 UTC is 16:00 in Europe/Berlin, the admin's timezone.
  t.match(page.body, '<time datetime="2026-11-20T16:00:00+01:00" title="2026-11-20T16:00:00+01:00">20 Nov 2026, 16:00</time>')
  t.notMatch(page.body, />2026-11-20T15:00:00/, 'no raw ISO text shown')
  t.match(page.body, /<td data-estimate><time datetime="2026-11-24">24 Nov 2026<\/time>/)
})

t.test('the packing slip writes an address as its country does: "San Francisco, CA 94107" in the US, "10115 Berlin" in Germany', async (t: Test) => {
  const app = await buildTestApp(t, { documents: { shop: { name: 'Shop' } } })
  const slipOf = async (shippingAddress: Record<string, string>) => {
    const orderId = await app.shipments.referenceOrders!.createOrder({ reference: `A-${Math.random().toString(36).slice(2, 8)}`, isCompleted: true, shippingAddress: { name: 'Customer', ...shippingAddress } as never, items: [{ name: 'Tea', sku: 'TEA', quantity: 1 }] })
    const [shipment] = await app.shipments.shipments.create(orderId)
    const path = join(t.testdir(), `${shipment!.id}.pdf`)
    writeFileSync(path, await app.shipments.documents.packingSlip(shipment!.id))
    return execFileSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' })
  }
  const us = await slipOf({ address1: '417 Montgomery Street', address2: 'Suite 500', city: 'San Francisco', state: 'CA', postalCode: '94107', country: 'US' })
  t.match(us, /417 Montgomery Street\s+Suite 500\s+San Francisco, CA 94107\s+United States of America/)
  t.notMatch(us, '94107 San Francisco')
  const de = await slipOf({ address1: 'Hauptstraße 5', city: 'Berlin', postalCode: '10115', country: 'DE' })
  t.match(de, /Hauptstraße 5\s+10115 Berlin\s+Germany/)
  const unknown = await slipOf({ address1: 'Main 1', city: 'Nowhere', postalCode: '123', country: 'XX' })
  t.match(unknown, /Main 1[^]*Nowhere[^]*XX/, 'a country the templates do not know keeps its code')
})
