// The public tracking page and the notification admin pages in a real browser (Debian's chromium, driven
// by playwright-core): the page inside a host layout, escaping, a revoked link; the notifications screen,
// a test send's sandboxed preview, the shipment page's tracking link revoked, and the demo's sent mail.
// Screenshots go to screenshots/tracking-page-browser/ (not committed).
import t, { type Test } from 'tap'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { buildDemoHost } from '../../examples/demo-host.js'
import { createMailCapture } from '../../examples/demo-mail.js'
import { standaloneTrackingLayout } from '../../src/index.js'
import { buildTestApp } from '../fixtures/app.js'
import { launchChromium, listenOnLoopback } from '../fixtures/browser.js'
import { rawQuery, testDatabase } from '../fixtures/database.js'
import { eventually } from '../fixtures/outbox.js'

const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'screenshots', 'tracking-page-browser')
const XSS = '<img src=x onerror=alert(1)>'

/** Chromium with a page that records dialogs (none may open) and Content-Security-Policy reports. */
async function openBrowser(t: Test) {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const browser = await launchChromium(t)
  const page: Page = await browser.newPage({ viewport: { width: 1200, height: 800 } })
  const dialogs: string[] = []
  const violations: string[] = []
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text())
  })
  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
  return { page, dialogs, violations, shot }
}

t.test('the public tracking page in a host layout, in chromium: the host header around it, escaping, a revoked link 404s', async (t) => {
  const app = await buildTestApp(t, {
    trackingPage: {
      secret: 'a-browser-tracking-page-secret-of-32-chars',
      baseUrl: 'https://shop.example',
      // The host's layout hook: its own header around the package's page body.
      layout: (page) => standaloneTrackingLayout({ ...page, body: `<header class="host-header" data-host>Acme Shop · Order tracking</header>${page.body}` }),
    },
  })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'B300', isCompleted: true, email: 'lee@example.com', items: [{ name: 'Kettle <Steel> & "lid"', sku: 'KET', quantity: 1 }] })
  const lines = (await app.shipments.orders.orderLines!(orderId))!
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: lines[0].id, quantity: 1 }] })
  await app.shipments.shipments.update(shipment.id, { status: 'shipped', carrier: XSS, trackingNumber: '1Z5R89390357567127', fulfillmentNotes: 'aisle 7, internal' })
  const base = await listenOnLoopback(app)
  const { page, dialogs, violations, shot } = await openBrowser(t)
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message())
    void dialog.dismiss()
  })

  const link = new URL(await app.shipments.trackingLinks!.url(shipment.id))
  const response = await page.goto(`${base}${link.pathname}`)
  t.equal(response!.status(), 200)
  t.equal(await page.locator('header[data-host]').textContent(), 'Acme Shop · Order tracking', 'the host header wraps the page')
  t.equal(await page.locator('main.tracking > header[data-host] + h1').textContent(), 'Order B300')
  t.equal(await page.title(), 'Order B300')
  t.equal(await page.locator('.status').textContent(), 'Shipped')
  t.match(await page.locator('main.tracking p').nth(1).textContent(), `${XSS}: 1Z5R89390357567127`, 'the carrier shows as text')
  t.equal(await page.locator('main img').count(), 0, 'no image element was made of it')
  t.same(await page.locator('a[href*="1Z5R89390357567127"]').evaluateAll((links) => links.map((link) => link.getAttribute('rel'))), ['noopener noreferrer', 'noopener noreferrer'], 'the number and the button')
  t.equal(await page.locator('a.button').textContent(), `Track on ${XSS}`, "the carrier's button, its name as text")
  t.equal(await page.locator('td').first().textContent(), 'Kettle <Steel> & "lid"')
  t.same(await page.locator('.timeline li strong').allTextContents(), ['Order received', 'Shipped'], 'oldest first')
  t.notMatch(await page.content(), /aisle 7/, 'no internal notes')
  await shot('01-tracking-page-host-layout')

  await app.shipments.trackingLinks!.revoke(shipment.id)
  const revoked = await page.goto(`${base}${link.pathname}`)
  t.equal(revoked!.status(), 404, 'a revoked link answers 404')
  t.equal(await page.locator('h1').textContent(), 'Tracking link not found')
  t.equal(await page.locator('header[data-host]').count(), 1, 'in the host layout too')
  await shot('02-tracking-page-revoked')
  t.same(dialogs, [], 'no script ran')
  t.same(violations, [])
})

t.test('the notification admin pages over the demo, in chromium: list, test send with its preview, the shipment link revoked, the sent mail', async (t) => {
  const mailbox = createMailCapture()
  const app = await buildDemoHost({ database: await testDatabase(t, 'browser-notifications'), logger: false, mailbox })
  t.teardown(() => app.close())
  const base = await listenOnLoopback(app)
  const { page, dialogs, violations, shot } = await openBrowser(t)
  // The revoke button asks first (data-confirm): accept that one; record every dialog.
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message())
    void dialog.accept()
  })

  await page.goto(`${base}/login`)
  await page.fill('#username', 'admin')
  await page.fill('#password', 'admin')
  await Promise.all([page.waitForURL(/\/shipments\/admin\/shipments/), page.click('button[type=submit]')])
  await Promise.all([page.waitForURL(/\/shipments\/admin\/notifications$/), page.click('header nav a:text("Notifications")')])
  t.equal(await page.locator('h1').textContent(), 'Notifications')
  t.equal(await page.locator('tr[data-notification]').count(), 3, 'the shipped mail and the two return mails the demo seeds')
  t.match(await page.locator('tr[data-notification]').first().textContent(), /Your order has shipped\s*Shipped\s*The order's customer\s*Enabled/)
  await shot('03-notifications')

  await Promise.all([page.waitForURL(/\/notifications\/\d+$/), page.click('a:text("Your order has shipped")')])
  // A refusal beside its field, what was typed kept.
  await page.fill('#input-subject', 'Shipped {{ order.reference ')
  await Promise.all([page.waitForLoadState('load'), page.click('form[aria-label="Notification"] button[type=submit]')])
  t.match(await page.locator('[data-field="subject"] .field-error').textContent(), /^is not a valid template/)
  t.equal(await page.inputValue('#input-subject'), 'Shipped {{ order.reference ')
  await shot('04-notification-refused')

  await page.fill('#input-shipment', '1001-s001')
  await page.fill('#input-to', 'me@example.com')
  await Promise.all([page.waitForLoadState('load'), page.click('button:text("Send test")')])
  t.equal(await page.locator('.test-result .notice-ok').textContent(), 'Sent to me@example.com.')
  t.equal(await page.locator('[data-rendered="subject"]').textContent(), 'Your order 1001 has shipped')
  const preview = page.frameLocator('iframe.mail-preview')
  t.equal(await preview.locator('h1').textContent(), 'Your order 1001 is on its way', 'the preview renders in its sandboxed frame')
  t.equal(await preview.locator('a').getAttribute('href'), await app.shipments.trackingLinks!.url(1), "the shipment's tracking link")
  t.equal(await page.locator('iframe.mail-preview').getAttribute('sandbox'), '')
  await shot('05-notification-test-sent')
  // Headless chromium paints no frame outside the viewport in a full-page shot: the preview on its own.
  await page.locator('.test-result').screenshot({ path: join(SCREENSHOTS, '05b-notification-test-preview.png') })
  t.same(mailbox.messages().map((message) => message.to), [['me@example.com']])

  // The shipment page: its public link with a working Copy button, revoked for a new one.
  await page.goto(`${base}/shipments/admin/shipments/1`)
  const old = await page.inputValue('#tracking-link')
  t.equal(old, await app.shipments.trackingLinks!.url(1))
  t.ok(await page.locator('[data-copy-from="tracking-link"]').isVisible(), 'the script shows the Copy button')
  await shot('06-shipment-tracking-link')
  await Promise.all([page.waitForURL(/notice=linkRevoked/), page.click('button:text("Revoke link")')])
  t.match(dialogs, [/Revoke this link\?/])
  const renewed = await page.inputValue('#tracking-link')
  t.not(renewed, old)
  t.match(await page.locator('.notice-ok').textContent(), /Tracking link revoked/)
  await shot('07-shipment-link-revoked')
  // The links name the demo's default origin; this server listens on a port of its own.
  t.equal((await page.goto(`${base}${new URL(old).pathname}`))!.status(), 404, 'the old link answers 404')
  t.equal((await page.goto(`${base}${new URL(renewed).pathname}`))!.status(), 200)
  t.match(await page.locator('header.demo-shop').textContent(), /Demo shop/)
  await shot('08-demo-tracking-page')

  // Ship a shipment: the seeded notification reaches its customer, and the demo's page shows it.
  await page.goto(`${base}/shipments/admin/shipments/1`)
  await page.selectOption('#input-status', 'shipped')
  await Promise.all([page.waitForURL(/notice=transitioned/), page.click('form[aria-label="Change status"] button[type=submit]')])
  // Up to 30 s: under a loaded CI run the mail's first attempt can miss its lease (5 s) and go again.
  await eventually(app, () => mailbox.messages().length > 1, 30_000)
  t.equal(mailbox.messages().length, 2, 'the shipped mail was sent')
  await page.goto(`${base}/demo/mail`)
  t.equal(await page.locator('[data-mail]').count(), 2)
  t.equal(await page.locator('[data-mail-to]').first().textContent(), 'jane.doe@example.com', 'newest first')
  t.equal(await page.frameLocator('[data-mail] iframe').first().locator('a').getAttribute('href'), renewed, 'the mail carries the current link')
  await shot('09-demo-sent-mail')

  t.equal(dialogs.length, 1, 'no dialog but the confirmation')
  t.same(violations, [], 'no Content-Security-Policy violation')
})

t.test('tracking page v2 in chromium at phone and desktop widths: the order, each shipment, progress, estimate, checkpoints newest first, the carrier button', async (t) => {
  const app = await buildTestApp(t, { trackingPage: { secret: 'a-browser-tracking-page-secret-of-32-chars', baseUrl: 'https://shop.example' } })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({
    reference: 'C400',
    isCompleted: true,
    email: 'kim@example.com',
    items: [
      { name: 'Teapot', sku: 'TEA', quantity: 1 },
      { name: 'Cups (set of 4)', sku: 'CUP', quantity: 2 },
    ],
  })
  const lines = (await app.shipments.orders.orderLines!(orderId))!
  const [first] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: lines[0].id, quantity: 1 }] })
  const [second] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: lines[1].id, quantity: 2 }] })
  await app.shipments.shipments.update(first.id, { status: 'shipped', carrier: 'UPS', trackingNumber: '1Z999AA10123456784' })
  await app.shipments.shipments.update(second.id, { status: 'fulfilled' })
  await app.shipments.shipments.recordCheckpoints(first.id, {
    trackingNumber: '1Z999AA10123456784',
    source: 'aftership',
    checkpoints: [
      { occurredAt: new Date('2026-11-20T16:10:00Z'), occurredAtText: '2026-11-20T17:10:00+01:00', message: 'Picked up', location: 'Berlin, Germany', status: 'InTransit', subStatus: 'InTransit_001' },
      { occurredAt: new Date('2026-11-21T21:05:00Z'), occurredAtText: '2026-11-21T22:05:00+01:00', message: 'Departed from facility', location: 'Köln, Germany', status: 'InTransit', subStatus: 'InTransit_002' },
      { occurredAt: new Date('2026-11-22T06:40:00Z'), occurredAtText: '2026-11-22T07:40:00+01:00', message: 'Out for delivery', location: 'Bonn, Germany', status: 'OutForDelivery', subStatus: 'OutForDelivery_001' },
    ],
  })
  await rawQuery(app, "UPDATE shipments_shipments SET estimated_delivery = '2026-11-22', estimated_delivery_source = 'aftership' WHERE id = ?", [first.id])
  const base = await listenOnLoopback(app)
  const { page, dialogs, violations, shot } = await openBrowser(t)
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  const link = new URL(await app.shipments.trackingLinks!.url(second.id))
  for (const [width, height, name] of [[1200, 800, 'desktop'], [390, 844, 'phone']] as const) {
    await page.setViewportSize({ width, height })
    const response = await page.goto(`${base}${link.pathname}`)
    t.equal(response!.status(), 200)
    t.match(response!.headers()['content-security-policy'], /default-src 'none'/, 'the security headers stay')
    t.equal(response!.headers()['x-frame-options'], 'DENY')
    t.equal(await page.locator('h1').textContent(), 'Order C400', `${name}: headed by the order`)
    t.same(await page.locator('section.shipment h2').allTextContents(), ['Parcel 1 of 2', 'Parcel 2 of 2'], 'each shipment of the order, the link being for the second')
    const parcel = page.locator('section.shipment').first()
    t.same(await parcel.locator('.progress li').allTextContents(), ['Ordered', 'Shipped', 'Out for delivery', 'Delivered'])
    t.equal(await parcel.locator('.progress li[aria-current="step"]').textContent(), 'Out for delivery', 'the newest scan is out for delivery')
    t.equal(await parcel.locator('.progress li.done').count(), 3)
    t.equal(await parcel.locator('.estimate').textContent(), 'Expected delivery: Sunday 22 November')
    t.equal(await parcel.locator('a.button').textContent(), 'Track on UPS')
    t.match(await parcel.locator('a.button').getAttribute('href'), /^https:\/\/wwwapps\.ups\.com\/.*1Z999AA10123456784/)
    t.same(await parcel.locator('.checkpoints li strong').allTextContents(), ['Out for delivery', 'Departed from facility', 'Picked up'], 'newest first')
    t.same(await parcel.locator('.checkpoints .place').allTextContents(), ['Bonn, Germany', 'Köln, Germany', 'Berlin, Germany'])
    t.equal(await parcel.locator('.checkpoints time').first().textContent(), '22 Nov 2026, 07:40 (local time)', "the carrier's local time")
    t.equal(await parcel.locator('td').first().textContent(), 'Teapot')
    const other = page.locator('section.shipment').nth(1)
    t.equal(await other.locator('.progress li[aria-current="step"]').textContent(), 'Ordered')
    t.equal(await other.locator('a.button').count(), 0, 'no carrier page yet')
    t.same(await other.locator('.timeline li strong').allTextContents(), ['Order received', 'Packed'], 'the status timeline before any scan')
    t.equal(await other.locator('td').first().textContent(), 'Cups (set of 4)')
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')
    t.equal(overflow, 0, `${name}: nothing wider than the screen`)
    await shot(`10-tracking-page-v2-${name}`)
  }
  t.same(dialogs, [], 'no script ran')
  t.same(violations, [], 'no Content-Security-Policy violation')
})

t.test('a customer starts a return in chromium: the button, the form posted without script, the return’s own page', async (t) => {
  const app = await buildTestApp(t, { trackingPage: { secret: 'a-browser-tracking-page-secret-of-32-chars', baseUrl: 'https://shop.example' }, returns: { windowDays: 30 } })
  const orders = app.shipments.referenceOrders!
  await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
  const orderId = await orders.createOrder({ reference: 'R500', isCompleted: true, items: [{ name: 'Lamp', sku: 'LAMP', quantity: 2 }] })
  const [line] = (await app.shipments.orders.orderLines!(orderId))!
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: line!.id, quantity: 2 }] })
  // Shipped without carrier tracking: the window counts from the ship date.
  await app.shipments.shipments.update(shipment!.id, { status: 'shipped' })
  const base = await listenOnLoopback(app)
  const { page, dialogs, violations, shot } = await openBrowser(t)
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  await page.goto(`${base}${new URL(await app.shipments.trackingLinks!.url(shipment!.id)).pathname}`)
  await Promise.all([page.waitForURL(/\/return$/), page.click('a:text("Return items")')])
  await page.fill(`#quantity-${line!.id}`, '1')
  await page.selectOption(`select[name="reason.${line!.id}"]`, 'damaged')
  await shot('10-customer-return-form')
  // The browser sends its Origin (this server's own): the form is taken.
  await Promise.all([page.waitForURL(/\/shipments\/track\/returns\//), page.click('button:text("Start the return")')])
  t.equal(await page.locator('h1').textContent(), 'Return R500-r001')
  t.equal(await page.locator('.status').textContent(), 'Requested')
  t.equal(await page.locator('td').first().textContent(), 'Lamp')
  await shot('11-customer-return-page')
  const [stored] = await app.shipments.returns.ofOrder(orderId)
  t.match(stored, { state: 'requested', lines: [{ lineItemId: line!.id, quantity: 1, reason: 'damaged' }] })
  t.same(dialogs, [], 'no script ran')
  t.same(violations, [], 'no Content-Security-Policy violation (the form may post to this site)')
})
