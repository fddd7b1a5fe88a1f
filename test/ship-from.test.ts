// Where parcels ship from: a setting store admins keep (API and the Boxes page), over the
// deliveries.shipFrom option; refused field by field with nothing stored.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp } from './fixtures/app.js'
import { rawQuery } from './fixtures/database.js'
import { adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'

const URL = '/shipments/api/ship-from'
const OPTION = { name: 'Host default', street1: '1 Option Road', city: 'Portland', postalCode: '97201', country: 'US' }
const WAREHOUSE = { name: 'Warehouse', company: 'Shop Ltd', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US', phone: null, email: null }

const put = (app: FastifyInstance, body: unknown, user: Parameters<typeof as>[0] = 'admin') =>
  app.inject({ method: 'PUT', url: URL, headers: { ...as(user), 'content-type': 'application/json' }, payload: JSON.stringify(body) })
const stored = async (app: FastifyInstance) => (await rawQuery(app, "SELECT value FROM shipments_package_state WHERE key = 'deliveries.shipFrom'"))[0]?.value ?? null

t.test('the setting stands over the option; null clears it; reads through the API and the service', async (t) => {
  const app = await buildTestApp(t, { deliveries: { shipFrom: OPTION } })
  const first = await app.inject({ method: 'GET', url: URL, headers: as('viewer') })
  t.equal(first.statusCode, 200)
  t.same(first.json(), { success: true, shipFrom: OPTION, source: 'option' })

  const saved = await put(app, { shipFrom: { ...WAREHOUSE, street2: '  ', country: 'us ' } })
  t.equal(saved.statusCode, 200, saved.body)
  t.same(saved.json(), { success: true, shipFrom: { ...WAREHOUSE, street2: null }, source: 'setting' }, 'trimmed, an empty optional field null, the country upper-cased')
  t.same(JSON.parse(String(await stored(app))), { ...WAREHOUSE, street2: null })
  t.same(await app.shipments.deliveries.shipFrom(), { address: { ...WAREHOUSE, street2: null }, source: 'setting' })

  const cleared = await put(app, { shipFrom: null })
  t.same(cleared.json(), { success: true, shipFrom: OPTION, source: 'option' }, 'the option stands again')
  t.equal(await stored(app), 'null')
})

t.test('without option or setting there is no address; a bad one is refused field by field and nothing is stored', async (t) => {
  const app = await buildTestApp(t)
  t.same((await app.inject({ method: 'GET', url: URL, headers: as('viewer') })).json(), { success: true, shipFrom: null, source: null })
  const cases: Array<[unknown, string[]]> = [
    [{ shipFrom: { street1: '', city: 'X', postalCode: '1', country: 'US' } }, ['shipFrom.street1']],
    [{ shipFrom: { street1: 'A', city: 'X', postalCode: '1', country: 'USA' } }, ['shipFrom.country']],
    [{ shipFrom: { street1: 'A', postalCode: '1', country: 'US', planet: 'Mars' } }, ['shipFrom.city']], // an unknown field is dropped
    [{ shipFrom: { street1: 'A', city: 'X'.repeat(256), postalCode: '1', country: 'US' } }, ['shipFrom.city']],
    [{ shipFrom: 'Main Street' }, ['shipFrom']],
    [{}, ['shipFrom']],
  ]
  for (const [body, fields] of cases) {
    const response = await put(app, body)
    t.equal(response.statusCode, 422, `${JSON.stringify(body).slice(0, 80)}: ${response.body}`)
    t.same(Object.keys(response.json().errors).sort(), fields, response.body)
  }
  t.equal(await stored(app), null, 'nothing stored')
  t.equal((await put(app, { shipFrom: WAREHOUSE }, 'viewer')).statusCode, 403)
  t.equal((await put(app, { shipFrom: WAREHOUSE }, 'nobody')).statusCode, 403)
  const anonymous = await app.inject({ method: 'PUT', url: URL, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ shipFrom: WAREHOUSE }) })
  t.equal(anonymous.statusCode, 401)
  t.equal(await stored(app), null)
})

t.test('the Boxes page edits the address: errors beside the fields, the typed values kept; saved, it is the one in force', async (t) => {
  const app = await buildAdminApp(t, { deliveries: { shipFrom: OPTION } })
  const admin = adminClient(app, 'admin')
  const page = await admin.get('/boxes')
  t.equal(page.statusCode, 200)
  t.match(page.body, /<h2 id="ship-from">Ship-from address<\/h2><p class="meta">Rates and labels use the host(?:'|&#39;)s default/)
  t.match(fieldMarkup(page.body, 'shipFrom.street1'), /value="1 Option Road"/, 'the option shown')

  const form = Object.fromEntries(Object.entries(WAREHOUSE).map(([name, value]) => [`shipFrom.${name}`, value ?? '']))
  const bad = await admin.post('/boxes/ship-from', { ...form, 'shipFrom.country': 'United States' })
  t.equal(bad.statusCode, 422)
  t.match(fieldMarkup(bad.body, 'shipFrom.country'), /must be a two-letter country code/)
  t.match(fieldMarkup(bad.body, 'shipFrom.street1'), /value="417 Montgomery Street"/, 'what was typed stays')
  t.equal(await stored(app), null)

  const good = await admin.post('/boxes/ship-from', form)
  t.equal(good.statusCode, 303)
  t.same((await app.shipments.deliveries.shipFrom()).address, { ...WAREHOUSE, street2: null })
  t.match((await admin.get('/boxes')).body, /Rates and labels use this address\./)
  t.equal((await adminClient(app, 'viewer').post('/boxes/ship-from', form)).statusCode, 403)
})
