// Exact decimals only: weights and sizes given as JSON numbers are refused on every route that takes
// decimal strings (Fastify's Ajv would turn 1.5 into "1.5" before the package's own check, and a number
// may be rounded already), each naming its field, with nothing stored.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp, insertOrder } from './fixtures/app.js'
import { tables } from './fixtures/database.js'

const DECIMAL_STRING_REQUIRED = 'must be a decimal string such as "1.25" (a number may already be rounded)'

function post(app: FastifyInstance, url: string, body: unknown) {
  return app.inject({ method: 'POST', url: `/shipments/api${url}`, headers: { ...as('admin'), 'content-type': 'application/json' }, payload: JSON.stringify(body) })
}

const BOX = { name: 'Small', innerDimensions: { length: '20', width: '15', height: '10', unit: 'cm' }, emptyWeight: { value: '100', unit: 'g' }, maxWeight: { value: '2000', unit: 'g' } }

t.test('parcels and boxes refuse JSON numbers where decimal strings are required, naming each field, storing nothing', async (t) => {
  const app = await buildTestApp(t)
  const [shipment] = await app.shipments.shipments.create(await insertOrder(app))
  const parcel = (await post(app, `/shipments/${shipment.id}/parcels`, { weight: { value: '2', unit: 'kg' } })).json().parcel
  const box = (await post(app, '/boxes', BOX)).json().box
  const { db, schema } = tables(app)
  const stored = async () => ({ parcels: await db.select().from(schema.parcels), boxes: await db.select().from(schema.boxes), history: await db.select().from(schema.parcelHistory) })
  const before = await stored()

  const cases: Array<[string, unknown, Record<string, string[]>]> = [
    [`/shipments/${shipment.id}/parcels`, { weight: { value: 1.5, unit: 'kg' } }, { 'weight.value': [DECIMAL_STRING_REQUIRED] }],
    [
      `/shipments/${shipment.id}/parcels`,
      { weight: { value: '1.5', unit: 'kg' }, dimensions: { length: 30, width: '20', height: 10.25, unit: 'cm' } },
      { 'dimensions.length': [DECIMAL_STRING_REQUIRED], 'dimensions.height': [DECIMAL_STRING_REQUIRED] },
    ],
    [`/shipments/${shipment.id}/parcels/${parcel.id}`, { weight: { value: 3, unit: 'kg' } }, { 'weight.value': [DECIMAL_STRING_REQUIRED] }],
    ['/boxes', { ...BOX, innerDimensions: { length: 20, width: 15, height: 10, unit: 'cm' } }, { 'innerDimensions.length': [DECIMAL_STRING_REQUIRED], 'innerDimensions.width': [DECIMAL_STRING_REQUIRED], 'innerDimensions.height': [DECIMAL_STRING_REQUIRED] }],
    ['/boxes', { ...BOX, emptyWeight: { value: 100, unit: 'g' }, maxWeight: { value: 2000.5, unit: 'g' } }, { 'emptyWeight.value': [DECIMAL_STRING_REQUIRED], 'maxWeight.value': [DECIMAL_STRING_REQUIRED] }],
    [`/boxes/${box.id}`, { innerDimensions: { length: '20', width: 16, height: '10', unit: 'cm' } }, { 'innerDimensions.width': [DECIMAL_STRING_REQUIRED] }],
  ]
  for (const [url, body, errors] of cases) {
    const response = await post(app, url, body)
    t.equal(response.statusCode, 422, `${url} ${JSON.stringify(body)}: ${response.body}`)
    t.same(response.json(), { success: false, errors, errorCode: 'SHIPMENTS_VALIDATION_FAILED' }, url)
  }
  t.same(await stored(), before, 'nothing stored or changed')
  t.equal((await post(app, `/shipments/${shipment.id}/parcels/${parcel.id}`, { weight: { value: '3', unit: 'kg' } })).statusCode, 200, 'the same change as a decimal string is taken')
})
