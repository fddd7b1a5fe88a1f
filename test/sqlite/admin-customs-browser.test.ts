// The customs screens in a real browser (Debian's chromium through playwright-core): axe-core's WCAG 2.1
// A/AA rules with no violation at 1280 and 390 px on the Customs page and on a shipment page with an
// international parcel's declaration (problems beside the fields, and a refused save's error summary),
// nothing wider than the phone; the declaration completed in the form, a row added, saved, then reset.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'
import { ADMIN, buildAdminApp } from '../fixtures/admin.js'
import { launchChromium, listenOnLoopback } from '../fixtures/browser.js'
import { tables } from '../fixtures/database.js'
import { completedOrderWithLines } from '../fixtures/orders.js'

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }

/** axe-core's WCAG 2.1 A/AA violations of the page as it stands (evaluated over the devtools protocol: the admin CSP allows no inline script). */
async function violations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE)
  return page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] })
    .then((results) => results.violations.flatMap((violation) => violation.nodes.map((node) => violation.id + ': ' + node.target.join(' '))))`)
}

/** A control by its id (ids of the declaration's controls hold dots and brackets). */
const byId = (id: string) => `[id="${id}"]`

t.test('customs in the browser: axe-clean at 1280 and 390 px, the declaration completed in its form, a row added, saved and reset', async (t) => {
  const app = await buildAdminApp(t, { deliveries: { shipFrom: SHIP_FROM }, customs: { signer: 'Ada Lovelace' } })
  const { orderId, lineIds } = await completedOrderWithLines(app, 'BROWSER-CA', [
    { name: 'T-shirt', sku: 'TS-1', quantity: 3, weight: 0.333, weightUnit: 'kg', customs: { tariffNumber: '6109.10', originCountry: 'PT', value: { amount: '19.99', currency: 'USD' } } },
    { name: 'Mug', sku: 'MUG-1', quantity: 1, weight: 350, weightUnit: 'g' },
  ])
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Jean Tremblay', address1: '100 Queen St W', city: 'Toronto', state: 'ON', postalCode: 'M5H 2N2', countryCode: 'CA' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const parcel = await app.shipments.deliveries.addParcel(shipment!.id, { weight: { value: '2', unit: 'kg' }, items: [{ lineItemId: lineIds[0]!, quantity: 3 }, { lineItemId: lineIds[1]!, quantity: 1 }] })
  const p = `parcel${parcel.id}.`
  const shipmentUrl = `${ADMIN}/shipments/${shipment!.id}`

  const origin = await listenOnLoopback(app)
  const browser = await launchChromium(t)
  for (const width of [1280, 390]) {
    const page = await browser.newPage({ viewport: { width, height: 900 } })
    await page.setExtraHTTPHeaders({ 'x-test-user': 'admin' })
    for (const path of [`${ADMIN}/customs`, shipmentUrl]) {
      const response = await page.goto(`${origin}${path}`)
      t.equal(response?.status(), 200, path)
      t.same(await violations(page), [], `${path}: no axe violation at ${width} px`)
      t.ok(((await page.evaluate('document.documentElement.scrollWidth')) as number) <= width, `${path}: no wider than ${width} px`)
    }
    await page.close()
  }

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  await page.setExtraHTTPHeaders({ 'x-test-user': 'admin' })
  await page.goto(`${origin}${shipmentUrl}`)
  t.match(await page.textContent(byId(`error-${p}items[1].tariffNumber`)), /is required: the HS tariff number/, 'the problem beside its field')

  // Saved incomplete: refused, the summary focused and linking to the fields, the fields' messages beside them.
  await Promise.all([page.waitForLoadState('load'), page.click('button[value="save"]')])
  t.equal(await page.evaluate('document.activeElement?.matches("[data-error-summary]")'), true, 'the error summary has the focus')
  t.match(await page.textContent('.error-summary'), /must be greater than 0/)
  t.same(await violations(page), [], 'no axe violation on the refused form')

  // Completed in the form, a row added for a gift card sleeve, then saved.
  await page.fill(byId(`input-${p}items[1].tariffNumber`), '6912.00')
  await page.fill(byId(`input-${p}items[1].originCountry`), 'US')
  await page.fill(byId(`input-${p}items[1].value`), '12.50')
  await Promise.all([page.waitForLoadState('load'), page.click('button[value="addRow"]')])
  await page.fill(byId(`input-${p}items[2].description`), 'Paper sleeve')
  await page.fill(byId(`input-${p}items[2].value`), '0.50')
  await page.fill(byId(`input-${p}items[2].weight.value`), '0.01')
  await page.fill(byId(`input-${p}items[2].tariffNumber`), '4819.20')
  await page.fill(byId(`input-${p}items[2].originCountry`), 'US')
  await Promise.all([page.waitForURL(/notice=saved/), page.click('button[value="save"]')])
  t.match(await page.textContent('#customs'), /Complete: rates and labels send this declaration/)
  const [row] = await db.select().from(schema.customsDeclarations)
  t.match(row, { edited: true, items: [{ value: '59.97' }, { value: '12.50', tariffNumber: '6912.00' }, { lineItemId: null, description: 'Paper sleeve', value: '0.50' }] })
  t.same(await violations(page), [], 'no axe violation on the saved declaration')

  await Promise.all([page.waitForURL(/notice=saved/), page.click('text=Reset to built')])
  t.same(await db.select().from(schema.customsDeclarations), [], 'back to the built declaration')
  t.match(await page.textContent('#customs'), /3 fields to complete/)
})
