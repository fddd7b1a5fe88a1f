// The admin pages' error summary (issue 33): a refused form answers with "There is a problem" at the top
// of the page's content, focused on load, each message linking to its field; the fields keep their own
// messages and aria-invalid; nothing is stored. Plus the default layout's skip link and wrapping navigation.
import t from 'tap'
import { historyRows, orderWithShipments } from './fixtures/app.js'
import { adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'

/** The summary's markup, or '' when the page has none. */
const summaryOf = (body: string) => /<div class="error-summary"[\s\S]*?<\/div>/.exec(body)?.[0] ?? ''

t.test('a status change with no status: the summary opens the content, focused, linking to the status field', async (t) => {
  const app = await buildAdminApp(t)
  const { shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]
  const admin = adminClient(app, 'admin')
  const page = await admin.get(`/shipments/${id}`)
  t.equal(page.statusCode, 200)
  t.equal(summaryOf(page.body), '', 'no summary without errors')
  t.match(page.body, /<a class="skip-link" href="#main-content">Skip to main content<\/a>/)
  t.match(page.body, /<main id="main-content" tabindex="-1"><div class="shipments-admin"><h1>/)
  t.match(page.body, /<\/a>\n<a href="\/shipments\/admin\/shipments" aria-current="page">Shipments<\/a>/, 'the navigation links are apart, so they wrap')
  t.match(page.body, /<nav class="page-links" aria-label="On this page"><a href="#change-status">Change status<\/a>/, 'the status change is linked near the top')
  t.match(page.body, /<h2 id="change-status" tabindex="-1">Change status<\/h2>/)

  const refused = await admin.post(`/shipments/${id}/transition`, { status: '' })
  t.equal(refused.statusCode, 422)
  const summary = summaryOf(refused.body)
  t.match(refused.body, /<main id="main-content" tabindex="-1"><div class="shipments-admin"><div class="error-summary"/, 'first in the main content')
  t.match(summary, /role="alert"/)
  t.match(summary, /tabindex="-1" autofocus data-error-summary/, 'focused when the page loads')
  t.match(summary, /<h2 id="error-summary-title">There is a problem<\/h2>/)
  t.match(summary, /<li><a href="#input-status" data-focus="input-status">Choose the new status\.<\/a><\/li>/)
  t.match(fieldMarkup(refused.body, 'status'), /aria-invalid="true" aria-describedby="error-status"/, 'the field keeps aria-invalid')
  t.match(fieldMarkup(refused.body, 'status'), /<p class="field-error" id="error-status" role="alert">Choose the new status\.<\/p>/, 'and its message')
  t.equal((await historyRows(app, id)).length, 1, 'nothing stored')
})

t.test('the edit form: a message per field, each linking to its input; a message on no field is listed without a link', async (t) => {
  const app = await buildAdminApp(t)
  const { shipmentIds } = await orderWithShipments(app)
  const id = shipmentIds[0]
  const admin = adminClient(app, 'admin')
  await admin.get(`/shipments/${id}`)
  const refused = await admin.post(`/shipments/${id}`, { trackingUrl: 'not a url', 'fields.dimensions': '{nope' })
  t.equal(refused.statusCode, 422)
  const summary = summaryOf(refused.body)
  t.match(summary, /<a href="#input-fields\.dimensions" data-focus="input-fields\.dimensions">Dimensions is not valid JSON\.<\/a>/)
  t.equal(summary.match(/<li>/g)?.length, 1, 'one problem: the form stops at the JSON it cannot read')

  const webhooks = await admin.get('/webhooks')
  t.equal(webhooks.statusCode, 200)
  const badUrl = await admin.post('/webhooks', { url: 'ftp://example.com', events: 'shipmentCreated' })
  t.equal(badUrl.statusCode, 422)
  t.match(summaryOf(badUrl.body), /<a href="#input-url" data-focus="input-url">URL: [^<]+<\/a>/, 'named by its label, linked to its input')
  const noEvents = await admin.post('/webhooks', { url: 'https://example.com/hook' })
  t.equal(noEvents.statusCode, 422)
  t.match(summaryOf(noEvents.body), /<a href="#field-events" data-focus="field-events">Events: [^<]+<\/a>/, 'a group of checkboxes: its fieldset')
  t.match(noEvents.body, /<fieldset class="field has-error" data-field="events" id="field-events">/)
  t.equal((await app.shipments.webhooks.list()).length, 0, 'nothing stored')
})
