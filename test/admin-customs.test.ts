// The admin's customs screens, on both engines: the Customs page (the settings saved whole, a refusal
// beside its field, nothing saved), and the shipment page's declaration of an international parcel:
// shown with its problems beside the fields, a row added, an edit saved (refused whole when incomplete),
// and reset to the built one; a domestic parcel shows none.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'
import { tables } from './fixtures/database.js'
import { completedOrderWithLines } from './fixtures/orders.js'

const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }

async function declarations(app: FastifyInstance) {
  const { db, schema } = tables(app)
  return db.select().from(schema.customsDeclarations)
}

async function shipmentTo(app: FastifyInstance, country: string) {
  const { orderId, lineIds } = await completedOrderWithLines(app, `ADM-${country}`, [
    { name: 'T-shirt', sku: 'TS-1', quantity: 2, weight: 0.2, weightUnit: 'kg', customs: { tariffNumber: '6109.10', originCountry: 'PT', value: { amount: '19.99', currency: 'USD' } } },
    { name: 'Mug', sku: 'MUG-1', quantity: 1, weight: 350, weightUnit: 'g' },
  ])
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Amelia Pond', address1: '10 Downing St', city: 'London', postalCode: 'SW1A 2AA', countryCode: country })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const parcel = await app.shipments.deliveries.addParcel(shipment!.id, { weight: { value: '1', unit: 'kg' }, items: [{ lineItemId: lineIds[0]!, quantity: 2 }, { lineItemId: lineIds[1]!, quantity: 1 }] })
  return { shipmentId: shipment!.id, parcelId: parcel.id }
}

t.test('the Customs page: the settings as the options give them, saved whole, a refusal beside its field', async (t) => {
  const app = await buildAdminApp(t, { deliveries: { shipFrom: SHIP_FROM }, customs: { signer: 'Ada Lovelace' } })
  const admin = adminClient(app, 'admin')
  const page = await admin.get('/customs')
  t.equal(page.statusCode, 200)
  t.match(page.body, /<h1>Customs<\/h1>/)
  t.match(page.body, /nothing was saved here yet/)
  t.match(fieldMarkup(page.body, 'signer'), /value="Ada Lovelace"/)

  const fields = { contentsType: 'other', contentsExplanation: '', nonDeliveryOption: 'return', restrictionType: 'none', restrictionComments: '', signer: 'Ada Lovelace', certify: 'true', incoterm: 'DDP', eelPfc: 'NOEEI 30.37(a)', currency: 'USD' }
  const refused = await admin.post('/customs', fields)
  t.equal(refused.statusCode, 422)
  t.match(fieldMarkup(refused.body, 'contentsExplanation'), /field-error[^>]*>is required when the contents type is /)
  t.equal((await app.shipments.customs.settings()).savedAt, null, 'nothing saved')

  const saved = await admin.post('/customs', { ...fields, contentsType: 'merchandise' })
  t.equal(saved.statusCode, 303)
  t.match(await app.shipments.customs.settings(), { incoterm: 'DDP', signer: 'Ada Lovelace', savedBy: 'admin' })
  const viewer = adminClient(app, 'viewer')
  const read = await viewer.get('/customs')
  t.match(read.body, /You may view the customs settings, not change them/)
  t.equal((await viewer.post('/customs', fields)).statusCode, 403)
})

t.test("the shipment page's declaration: problems beside the fields, a row added, an edit saved, reset to built", async (t) => {
  const app = await buildAdminApp(t, { deliveries: { shipFrom: SHIP_FROM }, customs: { signer: 'Ada Lovelace' } })
  const { shipmentId, parcelId } = await shipmentTo(app, 'GB')
  const admin = adminClient(app, 'admin')
  const url = `/shipments/${shipmentId}`
  const p = `parcel${parcelId}.`
  const page = await admin.get(url)
  t.equal(page.statusCode, 200)
  t.match(page.body, /<h2 id="customs-title">Customs<\/h2>/)
  t.match(page.body, new RegExp(`Parcel ${parcelId}: US to GB`))
  t.match(page.body, /3 fields to complete: rates and labels are refused until then/)
  t.match(page.body, new RegExp(`id="error-${p}items\\[1\\]\\.tariffNumber"[^>]*>is required: the HS tariff number`), 'the problem sits beside its field')
  t.match(page.body, /Totals: 39\.98 USD, 750 g\./)

  const form: Record<string, string> = {
    itemCount: '2',
    [`${p}contentsType`]: 'merchandise',
    [`${p}nonDeliveryOption`]: 'return',
    [`${p}restrictionType`]: 'none',
    [`${p}signer`]: 'Ada Lovelace',
    [`${p}certify`]: 'true',
    [`${p}incoterm`]: 'DDU',
    [`${p}eelPfc`]: 'NOEEI 30.37(a)',
    [`${p}currency`]: 'USD',
    [`${p}items[0].lineItemId`]: '1',
    [`${p}items[0].description`]: 'T-shirt',
    [`${p}items[0].quantity`]: '2',
    [`${p}items[0].value`]: '39.98',
    [`${p}items[0].weight.value`]: '0.4',
    [`${p}items[0].weight.unit`]: 'kg',
    [`${p}items[0].tariffNumber`]: '6109.10',
    [`${p}items[0].originCountry`]: 'PT',
    [`${p}items[1].lineItemId`]: '2',
    [`${p}items[1].description`]: 'Mug',
    [`${p}items[1].quantity`]: '1',
    [`${p}items[1].value`]: '0',
    [`${p}items[1].weight.value`]: '350',
    [`${p}items[1].weight.unit`]: 'g',
  }
  const added = await admin.post(`${url}/parcels/${parcelId}/customs`, { ...form, action: 'addRow' })
  t.equal(added.statusCode, 200)
  t.match(added.body, new RegExp(`name="${p}items\\[2\\]\\.description"`), 'a third row')
  t.same(await declarations(app), [], 'adding a row saves nothing')

  const refused = await admin.post(`${url}/parcels/${parcelId}/customs`, { ...form, action: 'save' })
  t.equal(refused.statusCode, 422)
  t.match(refused.body, /There is a problem/)
  t.match(refused.body, new RegExp(`id="error-${p}items\\[1\\]\\.value"[^>]*>must be greater than 0`))
  t.same(await declarations(app), [], 'an incomplete edit is not saved')

  const complete = { ...form, [`${p}items[1].value`]: '12.00', [`${p}items[1].tariffNumber`]: '6912.00', [`${p}items[1].originCountry`]: 'us', action: 'save' }
  const saved = await admin.post(`${url}/parcels/${parcelId}/customs`, complete)
  t.equal(saved.statusCode, 303, saved.body.slice(0, 300))
  const [row] = await declarations(app)
  t.match(row, { parcelId, edited: true, items: [{ value: '39.98' }, { value: '12.00', originCountry: 'US' }] })
  const after = await admin.get(url)
  t.match(after.body, /Complete: rates and labels send this declaration/)
  t.match(after.body, /Reset to built/)

  // A row removed: the edit declares only the shirt.
  const removed = await admin.post(`${url}/parcels/${parcelId}/customs`, { ...complete, [`${p}items[1].remove`]: 'true' })
  t.equal(removed.statusCode, 303)
  t.equal((await declarations(app))[0]!.items.length, 1)

  const reset = await admin.post(`${url}/parcels/${parcelId}/customs/reset`, {})
  t.equal(reset.statusCode, 303)
  t.same(await declarations(app), [])
  const viewer = adminClient(app, 'viewer')
  t.equal((await viewer.post(`${url}/parcels/${parcelId}/customs/reset`, {})).statusCode, 403)
})

t.test('a domestic parcel has no customs section', async (t) => {
  const app = await buildAdminApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  const { shipmentId } = await shipmentTo(app, 'US')
  const page = await adminClient(app, 'admin').get(`/shipments/${shipmentId}`)
  t.equal(page.statusCode, 200)
  t.notMatch(page.body, /id="customs-title"/)
})
