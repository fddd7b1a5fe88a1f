// The label batch screens in Chromium: from the shipment list, "Buy labels for the selected" with the
// keyboard at 390 px; the batch's progress page updates itself to Finished without a reload; the list of
// batches; each with no WCAG 2.1 A/AA violation (axe-core) at 1280 and 390 px and no wider than the phone.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'
import { buildTestApp, insertOrder } from '../fixtures/app.js'
import { launchChromium, listenOnLoopback } from '../fixtures/browser.js'
import { tables, testDatabase } from '../fixtures/database.js'
import { easyPostImitation } from '../fixtures/easypost-api.js'

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const API_KEY = 'EZTK-batch-browser-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const ADMIN = '/shipments/admin'

async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE)
  return page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] })
    .then((results) => results.violations.map((violation) => violation.id + ': ' + violation.nodes.map((node) => node.target.join(' ')).join(', ')))`)
}

async function checkWidths(t: Test, page: Page, name: string) {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 })
    t.same(await axeViolations(page), [], `${name} at ${width} px: no WCAG 2.1 A/AA violation`)
    if (width === 390) t.ok((await page.evaluate('document.documentElement.scrollWidth')) as number <= 390, `${name} at 390 px: no wider than the screen`)
  }
}

t.test('buy labels for the selected from the shipment list; the progress page finishes by itself; axe-clean at 1280 and 390 px', async (t) => {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  // Answers that take a moment, so the progress page is seen running before it finishes.
  imitation.setLatency(150)
  const app = await buildTestApp(t, { admin: {}, deliveries: { shipFrom: SHIP_FROM }, batches: { pollIntervalMs: 20, leaseMs: 2000, concurrency: 1 } }, await testDatabase(t, 'batch-browser'))
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 3000 } })
  const { db, schema } = tables(app)
  const rules = JSON.stringify({ rules: [], fallback: { integration: 'easypost', choice: { kind: 'service', carrier: 'USPS', service: 'Priority' } } })
  await db.insert(schema.packageState).values({ key: 'rules.shippingRules', value: rules })
  const orderId = await insertOrder(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Ada Lovelace', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', countryCode: 'US' })
  const shipments = await app.shipments.shipments.create(orderId, { count: 3 })
  for (const shipment of shipments) await app.shipments.deliveries.addParcel(shipment.id, { weight: { value: '1', unit: 'kg' } })
  const base = await listenOnLoopback(app)

  const browser = await launchChromium(t)
  const context = await browser.newContext({ extraHTTPHeaders: { 'x-test-user': 'admin' } })
  const page = await context.newPage()
  await page.setViewportSize({ width: 390, height: 800 })
  await page.goto(`${base}${ADMIN}/shipments`)
  await checkWidths(t, page, 'the shipment list with the batch controls')

  // The keyboard alone: two shipments ticked with the space bar, the format chosen, the button pressed.
  await page.setViewportSize({ width: 390, height: 800 })
  for (const shipment of shipments.slice(0, 2)) {
    await page.focus(`input[name=ids][value="${shipment.id}"]`)
    await page.keyboard.press('Space')
  }
  await page.focus('#batch-format')
  await page.selectOption('#batch-format', 'ZPL')
  await page.focus('button[name=scope][value=selected]')
  await Promise.all([page.waitForURL(/\/label-batches\/\d+\?notice=created$/), page.keyboard.press('Enter')])
  t.match(await page.textContent('h1'), /Label batch \d+/)
  t.match(await page.textContent('[data-batch-progress]'), /of 2 done/)
  await checkWidths(t, page, 'the batch progress page')

  // No reload: the page's script reads the progress again until the batch is finished.
  const url = page.url()
  await page.waitForSelector('[data-batch-progress] [data-batch-state=finished]', { timeout: 20_000 })
  t.equal(page.url(), url, 'the same page, never reloaded')
  t.match(await page.textContent('[data-batch-progress]'), /2 of 2 done/)
  t.equal(imitation.stats.buys, 2)
  const [batch] = (await app.shipments.batches.list()).batches
  t.match(batch, { state: 'finished', settings: { labelFormat: 'ZPL' }, counts: { bought: 2 } })

  await page.goto(`${base}${ADMIN}/label-batches`)
  t.match(await page.textContent('main'), /Batch \d+/)
  await checkWidths(t, page, 'the list of label batches')
})
