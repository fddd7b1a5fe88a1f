// Parcels on shipments: added, changed and removed through the API with exact weights and sizes in their
// units, history and events written with the change, bad input refused with nothing stored.
import t from 'tap'
import { eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp, insertOrder } from './fixtures/app.js'
import { rawQuery, tables, TEST_ENGINE } from './fixtures/database.js'
import { readdirSync, readFileSync } from 'node:fs'

const base = (shipmentId: number | string) => `/shipments/api/shipments/${shipmentId}/parcels`

function post(app: FastifyInstance, url: string, body: unknown, user = 'admin' as Parameters<typeof as>[0]) {
  return app.inject({ method: 'POST', url, headers: { ...as(user), 'content-type': 'application/json' }, payload: JSON.stringify(body) })
}

async function storedParcels(app: FastifyInstance) {
  const { db, schema } = tables(app)
  return db.select().from(schema.parcels).orderBy(schema.parcels.id)
}

async function parcelEvents(app: FastifyInstance) {
  return (await app.shipments.outbox.list({ kind: 'event' })).filter((message) => message.name.startsWith('parcel'))
}

/** An order of two lines and a shipment holding 2 of the first line; returns the ids. */
async function shipmentWithItems(app: FastifyInstance) {
  const orderId = await insertOrder(app)
  const { db, schema } = tables(app)
  const lines = await db
    .insert(schema.orderLineItems)
    .values([
      { orderId, name: 'Mug', sku: 'MUG', quantity: 2 },
      { orderId, name: 'Plate', sku: 'PLATE', quantity: 1 },
    ])
    .returning({ id: schema.orderLineItems.id })
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: lines[0].id, quantity: 2 }] })
  return { orderId, shipmentId: shipment.id, lineIds: lines.map((line) => line.id) }
}

t.test('a parcel is added with its exact weight and size, a history row and a parcelAdded event', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentId, lineIds } = await shipmentWithItems(app)

  const response = await post(app, base(shipmentId), {
    weight: { value: '1.2500', unit: 'kg' },
    dimensions: { length: '30', width: '20.5', height: '10.25', unit: 'cm' },
    items: [{ lineItemId: lineIds[0], quantity: 2 }],
  })
  t.equal(response.statusCode, 201, response.body)
  const { parcel } = response.json()
  t.match(parcel, {
    shipmentId,
    weight: { value: '1.2500', unit: 'kg' },
    dimensions: { length: '30', width: '20.5', height: '10.25', unit: 'cm' },
    items: [{ lineItemId: lineIds[0], quantity: 2 }],
    status: 'pending',
    trackingNumber: null,
    label: null,
  })
  const [row] = await storedParcels(app)
  t.match(row, { id: parcel.id, weight: '1.2500', weightUnit: 'kg', length: '30', width: '20.5', height: '10.25', dimensionUnit: 'cm' }, 'stored as written: no float rounding')
  const { db, schema } = tables(app)
  t.same((await db.select().from(schema.parcelHistory)).map((entry) => [entry.parcelId, entry.action, entry.userId]), [[parcel.id, 'added', 'admin']])
  const events = await parcelEvents(app)
  t.same(events.map((event) => event.name), ['parcelAdded'])
  t.match(events[0].payload, { shipmentId, parcel: { id: parcel.id, weight: { value: '1.2500' } }, parcels: [{ id: parcel.id }], userId: 'admin' })

  const list = await app.inject({ method: 'GET', url: base(shipmentId), headers: as('viewer') })
  t.equal(list.statusCode, 200)
  t.same(list.json().parcels, [parcel])
})

t.test('a shipment without parcels behaves as before: an empty list, its own tracking number untouched', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentId } = await shipmentWithItems(app)
  await app.shipments.shipments.update(shipmentId, { trackingNumber: '1Z999AA10123456784' })
  const list = await app.inject({ method: 'GET', url: base(shipmentId), headers: as('viewer') })
  t.equal(list.statusCode, 200)
  t.same(list.json(), { success: true, parcels: [] })
  t.equal((await app.shipments.shipments.get(shipmentId))!.trackingNumber, '1Z999AA10123456784')
})

t.test('bad parcel input is refused field by field and stores nothing', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentId, lineIds } = await shipmentWithItems(app)
  const cases: Array<[unknown, string]> = [
    [{}, 'weight'],
    [{ weight: { value: '-1', unit: 'kg' } }, 'weight.value'],
    [{ weight: { value: '0', unit: 'kg' } }, 'weight.value'],
    [{ weight: { value: '1', unit: 'stone' } }, 'weight.unit'],
    [{ weight: { value: '1.23456', unit: 'kg' } }, 'weight.value'],
    [{ weight: { value: '1', unit: 'kg' }, dimensions: { length: '1', width: 'x', height: '1', unit: 'cm' } }, 'dimensions.width'],
    [{ weight: { value: '1', unit: 'kg' }, items: [{ lineItemId: lineIds[1], quantity: 1 }] }, 'items.0'],
    [{ weight: { value: '1', unit: 'kg' }, items: [{ lineItemId: lineIds[0], quantity: 3 }] }, 'items.0'],
    [{ weight: { value: '1', unit: 'kg' }, boxId: 999 }, 'boxId'],
  ]
  for (const [body, field] of cases) {
    const response = await post(app, base(shipmentId), body)
    t.equal(response.statusCode, 422, `${JSON.stringify(body)}: ${response.body}`)
    t.equal(response.json().success, false)
    t.ok(Object.keys(response.json().errors).some((key) => key.startsWith(field)), `${field} is named in ${response.body}`)
  }
  t.same(await storedParcels(app), [], 'nothing was stored')
  t.same(await parcelEvents(app), [], 'no event was written')
})

t.test('a parcel of a whole-order shipment holds no more of a line than the order has, refused like an explicit shipment\'s and storing nothing', async (t) => {
  const app = await buildTestApp(t)
  const { orderId, lineIds } = await shipmentWithItems(app)
  const [shipment] = await app.shipments.shipments.create(orderId)
  t.same(shipment.items, [], 'a shipment of the whole order, no explicit lines')
  const cases: Array<[Array<{ lineItemId: number; quantity: number }>, string]> = [
    [[{ lineItemId: lineIds[0], quantity: 3 }], `line ${lineIds[0]}: 3 in the parcel, 2 on the shipment`],
    [[{ lineItemId: 999_999, quantity: 1 }], 'line 999999 is not on this shipment'],
  ]
  for (const [items, message] of cases) {
    const added = await post(app, base(shipment.id), { weight: { value: '1', unit: 'kg' }, items })
    t.equal(added.statusCode, 422, added.body)
    t.same(added.json(), { success: false, errors: { 'items.0': [message] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' })
  }
  const whole = await post(app, base(shipment.id), { weight: { value: '1', unit: 'kg' }, items: [{ lineItemId: lineIds[0], quantity: 2 }, { lineItemId: lineIds[1], quantity: 1 }] })
  t.equal(whole.statusCode, 201, 'every unit of the order fits its shipment')
  const changed = await post(app, `${base(shipment.id)}/${whole.json().parcel.id}`, { items: [{ lineItemId: lineIds[1], quantity: 2 }] })
  t.equal(changed.statusCode, 422, 'a change is held to the same count')
  t.same(changed.json(), { success: false, errors: { 'items.0': [`line ${lineIds[1]}: 2 in the parcel, 1 on the shipment`] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' })
  t.match(await storedParcels(app), [{ id: whole.json().parcel.id, items: [{ lineItemId: lineIds[0], quantity: 2 }, { lineItemId: lineIds[1], quantity: 1 }] }], 'only the parcel that fits was stored, unchanged')
  t.equal((await storedParcels(app)).length, 1)
  t.same((await parcelEvents(app)).map((event) => event.name), ['parcelAdded'])
})

t.test('unknown shipments and parcels are 404s, missing permissions 401/403', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentId } = await shipmentWithItems(app)
  const other = await shipmentWithItems(app)
  const parcel = (await post(app, base(shipmentId), { weight: { value: '2', unit: 'lb' } })).json().parcel

  t.equal((await post(app, base(999999), { weight: { value: '2', unit: 'lb' } })).statusCode, 404)
  t.equal((await post(app, base('abc'), { weight: { value: '2', unit: 'lb' } })).statusCode, 404)
  const wrongShipment = await post(app, `${base(other.shipmentId)}/${parcel.id}`, { weight: { value: '3', unit: 'lb' } })
  t.equal(wrongShipment.statusCode, 404, 'a parcel is found only under its own shipment')
  t.match(wrongShipment.json(), { name: 'Not Found', status: 404, message: `Parcel ${parcel.id} not found on this shipment.` })
  const anonymous = await app.inject({ method: 'POST', url: base(shipmentId), headers: { 'content-type': 'application/json' }, payload: '{}' })
  t.equal(anonymous.statusCode, 401)
  const viewer = await post(app, base(shipmentId), { weight: { value: '2', unit: 'lb' } }, 'viewer')
  t.equal(viewer.statusCode, 403)
  t.equal((await storedParcels(app)).length, 1)
})

t.test('a parcel is changed and removed with events; the removal takes its history with it', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentId } = await shipmentWithItems(app)
  const first = (await post(app, base(shipmentId), { weight: { value: '16', unit: 'oz' } })).json().parcel
  const second = (await post(app, base(shipmentId), { weight: { value: '500', unit: 'g' } })).json().parcel

  const changed = await post(app, `${base(shipmentId)}/${first.id}`, { weight: { value: '1.5', unit: 'lb' }, dimensions: { length: '10', width: '8', height: '4', unit: 'in' } })
  t.equal(changed.statusCode, 200, changed.body)
  t.match(changed.json().parcel, { id: first.id, weight: { value: '1.5', unit: 'lb' }, dimensions: { length: '10', unit: 'in' } })
  const cleared = await post(app, `${base(shipmentId)}/${first.id}`, { dimensions: null })
  t.equal(cleared.json().parcel.dimensions, null)

  const removed = await app.inject({ method: 'DELETE', url: `${base(shipmentId)}/${second.id}`, headers: as('editor') })
  t.equal(removed.statusCode, 200, removed.body)
  t.equal(removed.json().parcel.id, second.id)
  t.same((await storedParcels(app)).map((row) => row.id), [first.id])
  const { db, schema } = tables(app)
  t.same((await db.select().from(schema.parcelHistory).where(eq(schema.parcelHistory.parcelId, second.id))), [])
  const events = await parcelEvents(app)
  t.same(events.map((event) => event.name), ['parcelAdded', 'parcelAdded', 'parcelChanged', 'parcelChanged', 'parcelRemoved'])
  t.same((events[4].payload as { parcels: Array<{ id: number }> }).parcels.map((each) => each.id), [first.id], 'the removal event lists the parcels left')
  t.equal((await app.inject({ method: 'DELETE', url: `${base(shipmentId)}/${second.id}`, headers: as('editor') })).statusCode, 404)
})

t.test('every read of a shipment carries its parcels: the list, the single read, shipmentStatusChanged; the migration copies parcels already there', async (t) => {
  const app = await buildTestApp(t)
  const { orderId, shipmentId } = await shipmentWithItems(app)
  const first = (await post(app, base(shipmentId), { weight: { value: '16', unit: 'oz' } })).json().parcel
  const second = (await post(app, base(shipmentId), { weight: { value: '500', unit: 'g' }, dimensions: { length: '10', width: '8', height: '4', unit: 'in' } })).json().parcel
  await post(app, `${base(shipmentId)}/${first.id}`, { weight: { value: '1.5', unit: 'lb' } })
  const parcels = (await app.inject({ method: 'GET', url: base(shipmentId), headers: as('viewer') })).json().parcels
  t.same(parcels.map((parcel: { id: number }) => parcel.id), [first.id, second.id])
  t.equal(parcels[0].weight.value, '1.5', 'the copy follows a change')

  const listed = await app.inject({ method: 'GET', url: `/shipments/api/shipments?orderId=${orderId}`, headers: as('viewer') })
  t.equal(listed.statusCode, 200)
  t.same(listed.json().shipments[0].parcels, parcels, 'the list read')
  const single = await app.inject({ method: 'GET', url: `/shipments/api/shipments/${shipmentId}`, headers: as('viewer') })
  t.same(single.json().shipment.parcels, parcels, 'the single read')
  t.same((await app.shipments.shipments.get(shipmentId))!.parcels, parcels, 'the service')

  await app.shipments.shipments.update(shipmentId, { status: 'in_progress' })
  const [changed] = (await app.shipments.outbox.list({ kind: 'event' })).filter((message) => message.name === 'shipmentStatusChanged')
  t.same((changed.payload as { shipment: { parcels: unknown } }).shipment.parcels, parcels, 'the event, as it was at the change')

  await app.inject({ method: 'DELETE', url: `${base(shipmentId)}/${second.id}`, headers: as('editor') })
  t.same((await app.shipments.shipments.get(shipmentId))!.parcels.map((parcel) => parcel.id), [first.id], 'a removal leaves the copy')

  // The migration's copy of parcels already there is the copy a change writes.
  const before = (await app.shipments.shipments.get(shipmentId))!
  await rawQuery(app, "UPDATE shipments_shipments SET parcels = '[]'")
  t.same((await app.shipments.shipments.get(shipmentId))!.parcels, [])
  const folder = new URL(`../drizzle/${TEST_ENGINE}/`, import.meta.url)
  const migration = readdirSync(folder).find((name) => name.endsWith('_parcels_on_shipments.sql'))!
  const [, backfill] = readFileSync(new URL(migration, folder), 'utf8').split('--> statement-breakpoint')
  await rawQuery(app, backfill!)
  t.same(await app.shipments.shipments.get(shipmentId), before, 'the backfill gives the same shipment')
})

t.test('parcelAdded reaches listeners after the commit', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentId } = await shipmentWithItems(app)
  const heard: unknown[] = []
  app.shipments.events.on('parcelAdded', (event) => void heard.push(event))
  const parcel = await app.shipments.deliveries.addParcel(shipmentId, { weight: { value: '3', unit: 'kg' } }, { userId: '7' })
  await app.shipments.outbox.sweep()
  t.match(heard, [{ shipmentId, parcel: { id: parcel.id }, userId: '7' }])
})
