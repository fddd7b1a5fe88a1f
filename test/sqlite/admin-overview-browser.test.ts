// The overview and the integration and webhook pages in a real browser (Debian's chromium, driven by
// playwright-core) over the demo host: the landing page draws its chart (Chart.js served from the
// installed package, under the admin CSP), shows the stored counts; the gateway URL's copy button
// copies; every input type is styled. Screenshots go to screenshots/admin-browser/ (not committed).
import t from 'tap'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { eq, isNull } from 'drizzle-orm'
import type { Page } from 'playwright-core'
import { buildDemoHost, DEMO_SHIPSTATION_PASSWORD, DEMO_SHIPSTATION_USERNAME } from '../../examples/demo-host.js'
import { launchChromium, listenOnLoopback } from '../fixtures/browser.js'
import { tables, testDatabase } from '../fixtures/database.js'

const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'screenshots', 'admin-browser')
const DAY = 86_400_000

t.test('the overview, the gateway URL\'s copy button and the styled forms, in chromium', async (t) => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const app = await buildDemoHost({ database: await testDatabase(t, 'browser-overview'), logger: false })
  t.teardown(() => app.close())
  const base = await listenOnLoopback(app)
  const { db, schema } = tables(app)
  const service = app.shipments.shipments

  // Shipments shipped over the last days (a few each day, none on some), two late ones, a failing
  // push, a failing webhook and an export by ShipStation.
  const order = (await app.shipments.orders.findOrderByReference('1002'))!
  const created = await service.create(order.id, { count: 24 })
  const now = Date.now()
  for (const [index, shipment] of created.slice(0, 20).entries()) {
    await service.update(shipment.id, { status: 'shipped' })
    const daysAgo = [0, 1, 1, 2, 3, 3, 3, 5, 6, 8, 9, 9, 12, 15, 15, 18, 21, 24, 27, 29][index]
    await db.update(schema.shipments).set({ dateShipped: new Date(now - daysAgo * DAY) }).where(eq(schema.shipments.id, shipment.id))
  }
  const [late, lateHeld] = created.slice(20, 22)
  await service.update(late.id, { dateScheduledShip: 'yesterday' })
  await service.update(lateHeld.id, { dateScheduledShip: 'yesterday', status: 'on_hold' })
  const integration = await app.shipments.integrations.create({ name: 'ACME West', handle: 'acme-west', providerId: 'acme-3pl', settings: { token: 'west-token-0123456789' } })
  const [stored] = await db.select().from(schema.integrations).where(eq(schema.integrations.handle, integration.handle))
  await db.insert(schema.shipmentExternalReferences).values({ shipmentId: late.id, integrationId: stored.id, lastPushAt: new Date(now - 3_600_000), lastPushError: 'HTTP 503: the warehouse is down for maintenance', pushAttempts: 4, updatedAt: new Date(now) })
  // Subscribed to an event nothing here sends: its failures are the ones set below, not real attempts.
  const hook = await app.shipments.webhooks.create({ url: 'https://erp.example.com/hooks/shipments', events: ['shipmentRestored'] })
  await db.update(schema.webhookSubscriptions).set({ failureCount: 3 }).where(eq(schema.webhookSubscriptions.id, hook.id))
  const exported = await fetch(`${base}/actions/shippingplatformconnect/orders/process?action=export&page=1`, {
    headers: { authorization: `Basic ${Buffer.from(`${DEMO_SHIPSTATION_USERNAME}:${DEMO_SHIPSTATION_PASSWORD}`).toString('base64')}` },
  })
  t.equal(exported.status, 200)

  const browser = await launchChromium(t)
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
  const page: Page = await context.newPage()
  const violations: string[] = []
  const errors: string[] = []
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text())
    else if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(error.message))
  // The demo host has no favicon; anything else the pages ask for must be there.
  page.on('response', (response) => {
    if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) errors.push(`${response.status()} ${response.url()}`)
  })
  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })

  // Log in from the admin root: the landing page is the overview.
  await page.goto(`${base}/shipments/admin/`)
  t.match(page.url(), /\/login\?returnTo=/)
  await page.fill('#username', 'admin')
  await page.fill('#password', 'admin')
  await Promise.all([page.waitForURL(/\/shipments\/admin\/overview$/), page.click('button[type=submit]')])
  t.equal(await page.locator('h1').textContent(), 'Overview')

  // The counts are the stored ones.
  const rows = await db.select().from(schema.shipments).where(isNull(schema.shipments.dateDeleted))
  for (const status of ['new', 'in_progress', 'on_hold', 'fulfilled', 'shipped', 'cancelled']) {
    const stored = rows.filter((row) => row.status === status).length
    t.equal(await page.locator(`[data-status-count="${status}"] .count`).textContent(), String(stored), status)
  }
  t.equal(await page.locator('[data-status-count="shipped"] .count').textContent(), '20')

  // The chart: Chart.js loaded from the package, drawn on a canvas of non-zero size with painted pixels.
  await page.waitForSelector('#shipped-chart[data-rendered="true"]')
  t.equal(await page.evaluate('typeof window.Chart'), 'function')
  const box = (await page.locator('#shipped-chart').boundingBox())!
  t.ok(box.width > 300 && box.height > 150, `the canvas has a size (${box.width}×${box.height})`)
  const painted = await page.evaluate(`(() => {
    const canvas = document.getElementById('shipped-chart')
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data
    let count = 0
    for (let index = 3; index < pixels.length; index += 4) if (pixels[index] > 0) count++
    return count
  })()`)
  t.ok((painted as number) > 1000, 'the chart painted bars and axes')
  t.equal(await page.locator('#shipped-chart').getAttribute('aria-label'), 'Shipments shipped per day over the last 30 days: 20 in all')
  t.equal(await page.locator('table.late tbody tr').count(), 2)
  t.match(await page.locator('table.late').textContent(), /1002/, 'late shipments name their order by reference')
  t.match(await page.locator('table.failing-pushes').textContent(), /HTTP 503: the warehouse is down for maintenance/)
  t.match(await page.locator('.failing-webhooks').textContent(), /3 failures in a row/)
  t.match(await page.locator('dl.last-export').textContent(), /Orders exported4/)
  await shot('20-overview')

  // The integration page: the gateway URL to paste, its copy button (shown by admin.js) copies it.
  await page.goto(`${base}/shipments/admin/integrations/acme-west`)
  const gatewayUrl = `${base}/actions/shipments/gateway/handle?integration=acme-west`
  t.equal(await page.inputValue('#gateway-url'), gatewayUrl)
  const copy = page.locator('button[data-copy-from="gateway-url"]')
  t.ok(await copy.isVisible(), 'the copy button shows once the script runs')
  await copy.click()
  await page.waitForFunction(`document.querySelector('.copy-status').textContent === 'Copied.'`)
  t.equal(await page.evaluate('navigator.clipboard.readText()'), gatewayUrl, 'the clipboard holds the URL')
  t.equal(await page.evaluate(`(() => { const input = document.getElementById('gateway-url'); return input.value.slice(input.selectionStart, input.selectionEnd) })()`), gatewayUrl, 'and it is selected')
  t.equal(await page.locator('label[for="input-settings.token"]').textContent(), 'Bearer token', "the provider's title for the setting, not its key")
  await shot('21-integration-gateway-url')

  // The webhook form: the URL input, the fieldset and its checkboxes are styled like the other fields.
  await page.goto(`${base}/shipments/admin/webhooks`)
  const style = (selector: string, properties: string[]) =>
    page.evaluate(`(() => { const style = getComputedStyle(document.querySelector(${JSON.stringify(selector)})); return ${JSON.stringify(properties)}.map((name) => style.getPropertyValue(name)) })()`) as Promise<string[]>
  const [textBorder, textRadius, textPadding] = await style('#input-description', ['border-top-color', 'border-top-left-radius', 'padding-left'])
  t.same(await style('#input-url', ['border-top-color', 'border-top-left-radius', 'padding-left']), [textBorder, textRadius, textPadding], 'the URL input looks like the text inputs')
  t.equal(textRadius, '6px')
  t.same(await style('#input-url', ['width']), await style('#input-description', ['width']), 'as wide as the other fields')
  t.same(await style('fieldset[data-field="events"]', ['border-top-style', 'border-top-color', 'border-top-left-radius']), ['solid', textBorder, '6px'], 'the fieldset is framed like the inputs')
  t.same(await style('fieldset[data-field="events"] legend', ['font-weight']), ['600'])
  t.same(await style('input[name="events"]', ['accent-color', 'width']), ['rgb(9, 105, 218)', '16px'])
  await page.fill('#input-url', 'https://erp.example.com/hooks/other')
  await page.check('input[name="events"][value="*"]')
  await page.focus('#input-url')
  t.equal((await style('#input-url', ['outline-style']))[0], 'solid', 'a focused input shows its focus ring')
  await shot('22-webhook-form')

  // A shipment page: the order by reference, dates for people, the user by name, the failed push.
  await page.goto(`${base}/shipments/admin/shipments/${late.id}`)
  t.equal(await page.locator('aside table tr:has(th:text("Order")) td').textContent(), '1002')
  t.match(await page.locator('aside table tr:has(th:text("Created")) td time').textContent(), /^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}$/)
  t.match(await page.locator('[data-push="failed"]').textContent(), /HTTP 503/)
  await shot('23-shipment-references')

  // The order page: the customer and the order status above the lines.
  await page.goto(`${base}/shipments/admin/orders/${order.id}`)
  t.match(await page.locator('td[data-customer]').textContent(), /sam\.lee@example\.com/)
  t.equal(await page.locator('td[data-order-status]').textContent(), 'Processing')
  await shot('24-order-customer')

  t.same(violations, [], 'no Content-Security-Policy violation')
  t.same(errors, [], 'no script error')
})
