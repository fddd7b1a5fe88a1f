// The pack station's page in Chromium, driven by the keyboard alone as a barcode scanner drives it (it
// types the code and presses Enter): a slip opens its shipment, each item is counted off, a wrong item
// and one too many raise an alert, the weight is typed and Enter buys the label by the shipping rules
// (against the local EasyPost imitation); the next slip starts the next shipment. axe-core's WCAG 2.1
// A/AA rules find nothing, at 1280 px and on a 390 px phone, in every state of the page.
import t, { type Test } from 'tap'
import { mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../fixtures/app.js'
import { launchChromium, listenOnLoopback } from '../fixtures/browser.js'
import { tables } from '../fixtures/database.js'
import { easyPostImitation } from '../fixtures/easypost-api.js'

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']
const API_KEY = 'EZTK-pack-station-browser-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const STATION = '/shipments/admin/pack-station'
const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'screenshots', 'pack-station')

/** axe-core's WCAG 2.1 A/AA violations on the page as it stands (evaluated by the devtools protocol: the admin CSP allows no inline script). */
async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE)
  return page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(WCAG_TAGS)} }, resultTypes: ['violations'] }).then((results) =>
    results.violations.flatMap((violation) => violation.nodes.map((node) => violation.id + ': ' + node.target.join(' ') + ': ' + node.failureSummary)))`)
}

/** A scanner: types the code where the focus is and presses Enter; the page the form leads to has loaded. */
async function scan(page: Page, code: string) {
  await page.keyboard.type(code)
  await enter(page)
}

/** Presses Enter and waits until the document the form led to has loaded (its deferred scripts run). */
async function enter(page: Page) {
  const loaded = page.waitForEvent('load')
  await page.keyboard.press('Enter')
  await loaded
}

const focusedId = (page: Page) => page.evaluate('document.activeElement && document.activeElement.id') as Promise<string | null>

async function setup(t: Test) {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM }, admin: {} })
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'webhook-secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 2000 } })
  const { db, schema } = tables(app)
  const rules = { rules: [{ id: 'us', name: 'US: cheapest', enabled: true, integration: 'easypost', conditions: { countries: ['US'] }, choice: { kind: 'cheapest' } }], fallback: null }
  await db.insert(schema.packageState).values({ key: 'rules.shippingRules', value: JSON.stringify(rules) })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'processing', name: 'Processing', isDefault: true })
  const address = { name: 'Dr. Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', country: 'US' }
  const shipmentOf = async (reference: string, items: Parameters<typeof orders.createOrder>[0]['items']) => {
    const orderId = await orders.createOrder({ reference, isCompleted: true, shippingAddress: address, items })
    const [shipment] = await app.shipments.shipments.create(orderId)
    return shipment!
  }
  const first = await shipmentOf('PACK-1', [
    { name: 'Mug', sku: 'MUG-1', barcode: '4006381333931', quantity: 2 },
    { name: 'Tea', sku: 'TEA-1', quantity: 1 },
  ])
  const second = await shipmentOf('PACK-2', [{ name: 'Spoon', sku: 'SPN-1', quantity: 1 }])
  const base = await listenOnLoopback(app)
  const browser = await launchChromium(t)
  // The test host's users come by header: this context is the admin's.
  const context = await browser.newContext({ extraHTTPHeaders: { 'x-test-user': 'admin' } })
  const page = await context.newPage()
  const blocked: string[] = []
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) blocked.push(message.text())
  })
  return { app, imitation, base, page, first, second, blocked, parcels: (shipmentId: number) => db.select().from(schema.parcels).where(eq(schema.parcels.shipmentId, shipmentId)) }
}

t.test('a whole shipment packed by typed scans: counted off, a wrong item and one too many alerted, Enter buys and the next slip starts', async (t) => {
  const { imitation, base, page, first, second, blocked, parcels } = await setup(t)
  await page.setViewportSize({ width: 1280, height: 900 })
  await page.goto(`${base}${STATION}`)
  t.equal(await page.locator('h1').textContent(), 'Pack station')
  t.equal(await focusedId(page), 'pack-scan', 'the scan field has the focus')
  t.same(await axeViolations(page), [], 'idle: no WCAG 2.1 A/AA violation')

  await scan(page, 'NO-SUCH-SLIP')
  t.match(await page.locator('[role=alert]').textContent(), /No shipment has the reference "NO-SUCH-SLIP"/, 'an unknown slip is refused in words')
  t.equal(await focusedId(page), 'pack-scan')

  await scan(page, first.reference)
  t.equal(await page.locator('h2').first().textContent(), `Shipment ${first.reference}`)
  t.equal(await page.locator('tr[data-line]').count(), 2)
  t.equal(await focusedId(page), 'pack-scan', 'pack mode: the scan field keeps the focus')

  await scan(page, '4006381333931')
  t.match(await page.locator('[role=status]').textContent(), /Counted: Mug, 1 of 2/)
  t.equal(await page.locator('tr[data-line]').first().getAttribute('data-counted'), '1')

  await scan(page, '9780201379624')
  const wrong = page.locator('[role=alert]')
  t.match(await wrong.textContent(), new RegExp(`Wrong item: "9780201379624" is not in shipment ${first.reference}`), 'a wrong item: an alert in words')
  t.equal(await page.locator('tr[data-line]').first().getAttribute('data-counted'), '1', 'the counts stay as they were')
  t.same(await axeViolations(page), [], 'the alert: no WCAG 2.1 A/AA violation')

  await scan(page, '4006381333931')
  await scan(page, '4006381333931')
  t.match(await page.locator('[role=alert]').textContent(), /One too many: Mug, all 2 packed already/, 'one too many: an alert')
  t.equal(await page.locator('tr.pack-line-done').count(), 1, 'the mug is packed, in colour and in words')
  t.equal(await page.locator('tr.pack-line-done .badge').textContent(), 'Packed')

  await scan(page, 'TEA-1')
  t.equal(await focusedId(page), 'pack-weight', 'everything counted: the weight field takes the focus')
  t.match(await page.locator('[role=status]').textContent(), /Everything is packed: weigh the parcel/)
  t.same(await axeViolations(page), [], 'complete: no WCAG 2.1 A/AA violation')
  t.equal(imitation.stats.buys, 0, 'nothing bought before Enter')

  await page.keyboard.type('1.4')
  await enter(page)
  t.match(page.url(), /pack-station\/finish$/)
  t.match(await page.locator('[role=status]').textContent(), new RegExp(`Label bought for shipment ${first.reference}`))
  t.ok(await page.locator('a[data-pack-label]').count(), 'the label to print')
  t.equal(imitation.stats.buys, 1, 'one label bought')
  t.match((await parcels(first.id))[0], { weight: '1.4', weightUnit: 'kg', status: 'labelled' })
  t.equal(await focusedId(page), 'pack-scan', 'the scan field waits for the next slip')

  await scan(page, second.reference)
  t.equal(await page.locator('h2').first().textContent(), `Shipment ${second.reference}`, 'the next slip starts the next shipment')
  t.same(blocked, [], 'no script or style refused by the Content Security Policy')
})

t.test('at 390 px: the page fits the phone, with no WCAG 2.1 A/AA violation in pack mode and with an alert', async (t) => {
  const { base, page, first } = await setup(t)
  await page.setViewportSize({ width: 390, height: 800 })
  await page.goto(`${base}${STATION}`)
  await scan(page, first.reference)
  await scan(page, 'TEA-1')
  t.same(await axeViolations(page), [], 'pack mode at 390 px')
  await scan(page, 'TEA-1')
  t.match(await page.locator('[role=alert]').textContent(), /One too many: Tea/)
  t.same(await axeViolations(page), [], 'an alert at 390 px')
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOTS, 'alert-390.png'), fullPage: true })
  t.ok((await page.evaluate('document.documentElement.scrollWidth')) as number <= 390, 'no wider than the phone')
  for (const code of ['4006381333931', '4006381333931']) await scan(page, code)
  t.equal(await focusedId(page), 'pack-weight')
  t.same(await axeViolations(page), [], 'the weight form at 390 px')
  await page.screenshot({ path: join(SCREENSHOTS, 'weight-390.png'), fullPage: true })
  t.ok((await page.evaluate('document.documentElement.scrollWidth')) as number <= 390, 'no wider than the phone')
})
