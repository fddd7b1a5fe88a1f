// The admin pages in a real browser (Debian's chromium, driven by playwright-core) over the demo host:
// log in, find and edit a shipment, a validation error beside its field, a transition and its history
// entry, an integration created and checked, the ShipStation page after an export, XSS and CSRF.
// Screenshots of each screen go to screenshots/admin-browser/ (not committed).
import t from 'tap'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import type { Page } from 'playwright-core'
import { buildDemoHost, DEMO_SHIPSTATION_PASSWORD, DEMO_SHIPSTATION_USERNAME } from '../../examples/demo-host.js'
import { launchChromium, listenOnLoopback } from '../fixtures/browser.js'
import { tables, testDatabase } from '../fixtures/database.js'

const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'screenshots', 'admin-browser')
const XSS = '<script>alert(1)</script>'

t.test('a store admin\'s journey through the admin pages of the demo, in chromium', async (t) => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const app = await buildDemoHost({ database: await testDatabase(t, 'browser'), logger: false })
  t.teardown(() => app.close())
  const base = await listenOnLoopback(app)
  const { db, schema } = tables(app)

  const browser = await launchChromium(t)
  const page: Page = await browser.newPage()
  const dialogs: string[] = []
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  const violations: string[] = []
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text())
  })
  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })

  // Log in: the home page links to the admin pages, which send us to the login form and back.
  await page.goto(`${base}/`)
  await page.click('a[href="/shipments/admin/shipments"]')
  t.match(page.url(), /\/login\?returnTo=/)
  await shot('01-login')
  await page.fill('#username', 'admin')
  await page.fill('#password', 'admin')
  await Promise.all([page.waitForURL(/\/shipments\/admin\/shipments/), page.click('button[type=submit]')])
  t.equal(await page.locator('h1').textContent(), 'Shipments')
  t.equal(await page.locator('tr[data-shipment]').count(), 5)
  await shot('02-shipments')

  // Find a shipment by its reference.
  await page.fill('#filter-q', '1003')
  await Promise.all([page.waitForURL(/q=1003/), page.click('form.filters button[type=submit]')])
  t.equal(await page.locator('tr[data-shipment]').count(), 1)
  await Promise.all([page.waitForURL(/\/shipments\/admin\/shipments\/\d+$/), page.click('a:text("1003-s001")')])
  const shipmentId = Number(/\/(\d+)$/.exec(page.url())![1])
  await shot('03-shipment')

  // Edit fields.
  await page.fill('#input-carrier', 'DHL')
  await page.fill('#input-trackingNumber', 'JD014600003828')
  await page.fill('[name="fields.packageCount"]', '2')
  await Promise.all([page.waitForURL(/notice=saved/), page.click('button:text("Save")')])
  t.match(await page.locator('.notice-ok').textContent(), 'Saved.')
  let [row] = await db.select().from(schema.shipments).where(eq(schema.shipments.id, shipmentId))
  t.equal(row.carrier, 'DHL')
  t.equal(row.trackingNumber, 'JD014600003828')
  t.same(row.fields, { packageCount: 2 })

  // A validation error shows beside its field; nothing is stored.
  await page.fill('#input-trackingUrl', 'not a url')
  await Promise.all([page.waitForLoadState('load'), page.click('button:text("Save")')])
  t.equal(await page.locator('[data-field="trackingUrl"] .field-error').textContent(), 'Tracking Url is not a valid URL.')
  t.equal(await page.locator('[data-field="carrier"] .field-error').count(), 0)
  await shot('04-validation-error')
  ;[row] = await db.select().from(schema.shipments).where(eq(schema.shipments.id, shipmentId))
  t.equal(row.trackingUrl, null)

  // Transition it and see the new history entry.
  await page.goto(`${base}/shipments/admin/shipments/${shipmentId}`)
  await page.selectOption('#input-status', 'in_progress')
  await page.fill('#input-statusMessage', 'Picking started')
  await Promise.all([page.waitForURL(/notice=transitioned/), page.click('form[aria-label="Change status"] button[type=submit]')])
  t.match(await page.locator('h1 .badge').textContent(), 'In progress')
  const entry = page.locator('.timeline li').first()
  t.match(await entry.textContent(), /Picking started/)
  t.match(await entry.textContent(), /by admin/, 'the user by name (the demo host\'s admin.userName)')
  await shot('05-transitioned')
  const history = await db.select().from(schema.shipmentStatusHistory).where(eq(schema.shipmentStatusHistory.shipmentId, shipmentId))
  t.match(history.at(-1), { fromStatus: 'new', toStatus: 'in_progress', message: 'Picking started', userId: '1' })

  // XSS: a carrier named <script> shows as text and never runs.
  await page.fill('#input-carrier', XSS)
  await Promise.all([page.waitForURL(/notice=saved/), page.click('button:text("Save")')])
  t.equal(await page.inputValue('#input-carrier'), XSS)
  await page.goto(`${base}/shipments/admin/shipments?q=1003`)
  t.equal(await page.locator(`tr[data-shipment="${shipmentId}"] td`).nth(4).textContent(), XSS)
  t.same(dialogs, [], 'no script ran')

  // CSRF: a form whose token was tampered with is refused, and changes nothing.
  await page.goto(`${base}/shipments/admin/shipments/${shipmentId}`)
  // Run in the page (a string: the test's TypeScript has no DOM types).
  await page.evaluate(`for (const input of document.querySelectorAll('input[name="_csrf"]')) input.value = 'forged'`)
  await page.fill('#input-carrier', 'Forged Carrier')
  const refused = page.waitForResponse((response) => response.request().method() === 'POST')
  await page.click('button:text("Save")')
  t.equal((await refused).status(), 403)
  t.match(await page.locator('.notice-error').textContent(), /This form has expired or was not sent from this site/)
  await shot('06-csrf-refused')
  ;[row] = await db.select().from(schema.shipments).where(eq(schema.shipments.id, shipmentId))
  t.equal(row.carrier, XSS)

  // Create an integration (the ACME provider's form, from its settings schema) and check its connection.
  await page.goto(`${base}/shipments/admin/integrations`)
  await page.selectOption('#input-provider', 'acme-3pl')
  await Promise.all([page.waitForURL(/integrations\/new\?provider=acme-3pl/), page.click('button:text("Continue")')])
  await page.fill('#input-name', 'ACME West')
  await page.fill('#input-handle', 'acme-west')
  await page.fill('[name="settings.token"]', 'west-token-0123456789')
  await page.click('button:text("Add a row")')
  t.equal(await page.locator('[name="statusMap.code"]').count(), 2, 'the package script added a row (CSP allows it)')
  await page.locator('[name="statusMap.code"]').nth(0).fill('PICKING')
  await page.locator('[name="statusMap.status"]').nth(0).selectOption('in_progress')
  await page.locator('[name="statusMap.code"]').nth(1).fill('DISPATCHED')
  await page.locator('[name="statusMap.status"]').nth(1).selectOption('shipped')
  await shot('07-integration-form')
  await Promise.all([page.waitForURL(/integrations\/acme-west\?notice=created/), page.click('button:text("Create")')])
  const [integration] = await db.select().from(schema.integrations).where(eq(schema.integrations.handle, 'acme-west'))
  t.same(integration.settings, { token: 'west-token-0123456789' })
  t.same(integration.statusMap, { PICKING: 'in_progress', DISPATCHED: 'shipped' })
  t.equal(await page.inputValue('[name="settings.token"]'), '********', 'the secret comes back masked')
  await Promise.all([page.waitForLoadState('load'), page.click('button:text("Check connection")')])
  t.match(await page.locator('.notice').first().textContent(), /Connection check: OK\./)
  await shot('08-integration-checked')

  // The ShipStation page after an export.
  const exported = await fetch(`${base}/actions/shippingplatformconnect/orders/process?action=export&page=1`, {
    headers: { authorization: `Basic ${Buffer.from(`${DEMO_SHIPSTATION_USERNAME}:${DEMO_SHIPSTATION_PASSWORD}`).toString('base64')}` },
  })
  t.equal(exported.status, 200)
  await page.goto(`${base}/shipments/admin/shipstation`)
  t.equal(await page.locator('[data-copy="url"]').textContent(), `${base}/actions/shippingplatformconnect/orders/process`)
  t.equal(await page.locator('[data-copy="username"]').textContent(), DEMO_SHIPSTATION_USERNAME)
  t.notOk((await page.content()).includes(DEMO_SHIPSTATION_PASSWORD), 'never the password')
  const activity = page.locator('table.activity tbody tr').first()
  t.match(await activity.textContent(), /export/)
  t.equal(await activity.locator('td').nth(3).textContent(), '4', 'the four completed demo orders')
  await shot('09-shipstation')

  t.same(violations, [], 'no Content-Security-Policy violation on any page')
})

t.test('the order page with lines in chromium: pre-fill by rule, a refusal beside its line, a shipment staged', async (t) => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const app = await buildDemoHost({ database: await testDatabase(t, 'browser-lines'), logger: false })
  t.teardown(() => app.close())
  const base = await listenOnLoopback(app)

  const browser = await launchChromium(t)
  const page: Page = await browser.newPage({ viewport: { width: 1200, height: 800 } })
  const violations: string[] = []
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text())
  })
  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })

  await page.goto(`${base}/login`)
  await page.fill('#username', 'admin')
  await page.fill('#password', 'admin')
  await Promise.all([page.waitForURL(/\/shipments\/admin\/shipments/), page.click('button[type=submit]')])
  // The four completed demo orders have order-level shipments only: each needs attention.
  t.equal(await page.locator('header nav a[href="/shipments/admin/attention"] .nav-count').textContent(), '4')

  const orderId = (await app.shipments.orders.findOrderByReference('1001'))!.id
  const lines = (await app.shipments.shipments.allocation(orderId)).lines!
  const tee = lines.find((line) => line.sku === 'TEE-BLK-M')!.id
  const mug = lines.find((line) => line.sku === 'MUG-01')!.id
  await page.goto(`${base}/shipments/admin/orders/${orderId}`)
  t.equal(await page.locator('table.order-lines tbody tr').count(), 2)
  t.equal(await page.inputValue(`[name="items.${tee}"]`), '2', 'pre-filled by "remaining"')
  t.equal(await page.inputValue(`[name="items.${mug}"]`), '1')
  await shot('10-order-lines')

  await page.selectOption('#input-rule', 'perLine')
  await Promise.all([page.waitForURL(/rule=perLine/), page.click('button:text("Pre-fill")')])
  t.equal(await page.inputValue(`[name="items.${tee}"]`), '2')
  t.equal(await page.inputValue(`[name="items.${mug}"]`), '0', 'perLine: the first shipment holds the first line')

  // More T-shirts than were ordered: refused beside the line, nothing stored.
  await page.fill(`[name="items.${tee}"]`, '5')
  await Promise.all([page.waitForLoadState('load'), page.click('button:text("Create shipment")')])
  t.match(await page.locator(`[data-field="items.${tee}"] .field-error`).textContent(), /Line \d+ \([^)]+\): 5 requested, 2 of 2 left to allocate\./)
  t.equal(await page.getAttribute(`[name="items.${tee}"]`, 'aria-invalid'), 'true')
  await shot('11-order-lines-refused')
  t.equal((await app.shipments.shipments.list({ orderId })).total, 1)

  await page.fill(`[name="items.${tee}"]`, '2')
  await page.fill(`[name="items.${mug}"]`, '1')
  await Promise.all([page.waitForURL(/notice=created/), page.click('button:text("Create shipment")')])
  t.match(await page.locator('.notice-ok').textContent(), 'Created.')
  t.match(await page.locator('.shipments-order-panel table').first().textContent(), /2 × Organic T-shirt, 1 × Enamel mug/)
  t.match(await page.locator('.shipments-order-panel').textContent(), /Every shippable line is allocated in full\./)
  t.equal(await page.locator('header nav a[href="/shipments/admin/attention"] .nav-count').textContent(), '3', 'the order left the attention list')
  await shot('12-order-lines-staged')
  const { shipments } = await app.shipments.shipments.list({ orderId })
  t.same(shipments.at(-1)!.items.map((item) => [item.sku, item.quantity]), [['TEE-BLK-M', 2], ['MUG-01', 1]])

  await page.goto(`${base}/shipments/admin/attention`)
  t.equal(await page.locator('table.attention tbody tr').count(), 3)
  await shot('13-attention')

  t.same(violations, [], 'no Content-Security-Policy violation')
})
