// The shipment page's ship-to address panel in a real browser (Debian's chromium through playwright-core),
// against the local EasyPost imitation: axe-core's WCAG 2.1 A/AA rules with no violation at 1280 and
// 390 px (the panel unchecked, then with the carrier's corrections shown field by field), nothing wider
// than a 390 px viewport, "Verify" and "Accept the correction" pressed with the keyboard, the address
// verification section of the Shipping rules page saved, and the order's own address left as it was.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { eq } from 'drizzle-orm'
import type { Page } from 'playwright-core'
import { insertOrder } from '../fixtures/app.js'
import { ADMIN, buildAdminApp } from '../fixtures/admin.js'
import { launchChromium, listenOnLoopback } from '../fixtures/browser.js'
import { tables } from '../fixtures/database.js'
import { easyPostImitation } from '../fixtures/easypost-api.js'

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const API_KEY = 'EZTK-address-browser-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }

/** axe-core's WCAG 2.1 A/AA violations of the page as it stands (evaluated over the devtools protocol: the admin CSP allows no inline script). */
async function violations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE)
  return page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] })
    .then((results) => results.violations.flatMap((violation) => violation.nodes.map((node) => violation.id + ': ' + node.target.join(' '))))`)
}

/** Tab from where the focus is until a control reads `label`; then Enter, waiting for the redirect. */
async function pressWithKeyboard(page: Page, label: string, url: RegExp) {
  let focused = ''
  for (let presses = 0; presses < 80 && focused !== label; presses++) {
    await page.keyboard.press('Tab')
    focused = (await page.evaluate('document.activeElement?.textContent?.trim() ?? ""')) as string
  }
  if (focused !== label) return false
  await Promise.all([page.waitForURL(url), page.keyboard.press('Enter')])
  return true
}

t.test('the ship-to address panel: axe-clean at 1280 and 390 px, verified and corrected from the keyboard', async (t) => {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const app = await buildAdminApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 2000 } })
  const orderId = await insertOrder(app)
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Dr. Steve Brule', address1: '417 montgomery street', address2: 'FL 5', city: 'San Francisco', state: 'CA', postalCode: '94104', countryCode: 'US' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  await app.shipments.deliveries.addParcel(shipment!.id, { weight: { value: '1', unit: 'kg' } })

  const origin = await listenOnLoopback(app)
  const browser = await launchChromium(t)
  const shipmentUrl = `${origin}${ADMIN}/shipments/${shipment!.id}`

  // The setting, saved from its section of the Shipping rules page.
  const settings = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  await settings.setExtraHTTPHeaders({ 'x-test-user': 'admin' })
  t.equal((await settings.goto(`${origin}${ADMIN}/shipping-rules`))?.status(), 200)
  t.same(await violations(settings), [], 'the Shipping rules page with its address verification section: no axe violation')
  await settings.selectOption('#input-addressMode', 'warn')
  await settings.selectOption('#input-addressIntegration', 'easypost')
  await Promise.all([settings.waitForURL(/notice=saved/), settings.click('text=Save address verification')])
  t.match(await app.shipments.addresses.setting(), { mode: 'warn', integration: 'easypost', savedBy: 'admin' })
  await settings.close()

  for (const width of [1280, 390]) {
    const page = await browser.newPage({ viewport: { width, height: 900 } })
    await page.setExtraHTTPHeaders({ 'x-test-user': 'admin' })
    t.equal((await page.goto(shipmentUrl))?.status(), 200)
    t.match(await page.textContent('#ship-to'), /Not verified yet\./)
    t.same(await violations(page), [], `the unchecked panel: no axe violation at ${width} px`)
    t.ok((await page.evaluate('document.documentElement.scrollWidth')) as number <= width, `no wider than ${width} px`)
    await page.close()
  }

  const page = await browser.newPage({ viewport: { width: 390, height: 900 } })
  await page.setExtraHTTPHeaders({ 'x-test-user': 'admin' })
  await page.goto(shipmentUrl)
  t.ok(await pressWithKeyboard(page, 'Verify', /notice=saved/), '"Verify" reached with Tab and pressed with Enter')
  t.match(await page.textContent('#ship-to'), /Deliverable with corrections/)
  t.same(
    await page.$$eval('#ship-to tr[data-change]', (rows) => rows.map((row) => row.getAttribute('data-change'))),
    ['street1', 'street2', 'city', 'postalCode'],
    "the carrier's corrections, field by field",
  )
  t.match(await page.textContent('#ship-to tr[data-change="street1"]'), /417 montgomery street\s*417 MONTGOMERY ST FL 5/)
  t.same(await violations(page), [], 'the corrections shown: no axe violation at 390 px')
  t.ok((await page.evaluate('document.documentElement.scrollWidth')) as number <= 390, 'no wider than 390 px')

  t.ok(await pressWithKeyboard(page, 'Accept the correction', /notice=saved/), '"Accept the correction" reached with Tab and pressed with Enter')
  t.match(await page.textContent('#ship-to'), /The carrier's correction was accepted/)
  t.match(await page.textContent('#ship-to address'), /417 MONTGOMERY ST FL 5/)
  t.same(await violations(page), [], 'after accepting: no axe violation')
  const [order] = await db.select().from(schema.orderAddresses).where(eq(schema.orderAddresses.orderId, orderId))
  t.match(order, { address1: '417 montgomery street', address2: 'FL 5' }, "the order's address is left as it was")
  t.equal(imitation.calls.filter((call) => call.step === 'address').length, 1, 'one verification')
})
