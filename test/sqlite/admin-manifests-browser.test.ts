// The Manifests screen in a real browser (Debian's chromium through playwright-core): axe-core's WCAG 2.1
// A/AA rules with no violation at 1280 and 390 px, nothing wider than a 390 px viewport, and a manifest
// made with the keyboard alone (Tab to "Create manifest", Enter) against the local EasyPost imitation.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'
import { insertOrder } from '../fixtures/app.js'
import { ADMIN, buildAdminApp } from '../fixtures/admin.js'
import { launchChromium, listenOnLoopback } from '../fixtures/browser.js'
import { tables } from '../fixtures/database.js'
import { easyPostImitation } from '../fixtures/easypost-api.js'

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const API_KEY = 'EZTK-manifest-browser-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }

/** axe-core's WCAG 2.1 A/AA violations of the page as it stands (evaluated over the devtools protocol: the admin CSP allows no inline script). */
async function violations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE)
  return page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] })
    .then((results) => results.violations.flatMap((violation) => violation.nodes.map((node) => violation.id + ': ' + node.target.join(' '))))`)
}

t.test('the Manifests screen: axe-clean at 1280 and 390 px, no wider than the phone, a manifest made from the keyboard', async (t) => {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const app = await buildAdminApp(t, { deliveries: { shipFrom: SHIP_FROM }, documents: { allowPrivateAddresses: ['127.0.0.1'] } })
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 2000 } })
  const buy = async (carrier: string, service: string) => {
    const orderId = await insertOrder(app)
    const { db, schema } = tables(app)
    await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Dr. Steve Brule', address1: '179 N Harbor Dr', city: 'Redondo Beach', state: 'CA', postalCode: '90277', countryCode: 'US' })
    const [shipment] = await app.shipments.shipments.create(orderId)
    const parcel = await app.shipments.deliveries.addParcel(shipment!.id, { weight: { value: '1', unit: 'kg' } })
    await app.shipments.deliveries.buyLabel(shipment!.id, parcel.id, { integration: 'easypost', carrier, service })
  }
  await buy('USPS', 'Priority')
  await app.shipments.manifests.create({ integration: 'easypost', carrier: 'USPS' }, { userId: 'admin' })
  await buy('USPS', 'Priority')
  await buy('UPS', 'Ground')
  // A failed manifest in the list too (its error in EasyPost's words).
  imitation.fault({ step: 'scanForm', kind: 'error', status: 422, code: 'SCAN_FORM.ADDRESS.MISMATCH', message: 'All shipments of a ScanForm must have the same origin address.' })
  await app.shipments.manifests.create({ integration: 'easypost', carrier: 'USPS' }, { userId: 'admin' }).catch(() => undefined)

  const origin = await listenOnLoopback(app)
  const browser = await launchChromium(t)
  for (const width of [1280, 390]) {
    const page = await browser.newPage({ viewport: { width, height: 900 } })
    await page.setExtraHTTPHeaders({ 'x-test-user': 'admin' })
    const response = await page.goto(`${origin}${ADMIN}/manifests`)
    t.equal(response?.status(), 200)
    t.same(await violations(page), [], `no axe violation at ${width} px`)
    t.ok((await page.evaluate('document.documentElement.scrollWidth')) as number <= width, `no wider than ${width} px`)
    await page.close()
  }

  // The keyboard alone: Tab from the top until "Create manifest" has the focus, then Enter.
  const page = await browser.newPage({ viewport: { width: 390, height: 900 } })
  await page.setExtraHTTPHeaders({ 'x-test-user': 'admin' })
  await page.goto(`${origin}${ADMIN}/manifests`)
  let focused = ''
  for (let presses = 0; presses < 40 && focused !== 'Create manifest'; presses++) {
    await page.keyboard.press('Tab')
    focused = (await page.evaluate('document.activeElement?.textContent?.trim() ?? ""')) as string
  }
  t.equal(focused, 'Create manifest', 'reached with Tab')
  await Promise.all([page.waitForURL(/notice=manifestCreated/), page.keyboard.press('Enter')])
  t.match(await page.textContent('main'), /Manifest created: print its form below\./)
  t.same(await violations(page), [], 'no axe violation after the creation')
  const manifests = await app.shipments.manifests.list()
  t.same(manifests.map((manifest) => manifest.state), ['created', 'failed', 'created'])
  t.equal(imitation.stats.scanForms, 2)
})
