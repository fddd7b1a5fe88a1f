// A parcel suggestion accepted as it was shown: passed back (its id and parcels), it creates exactly its
// parcels without packing again; refused with SHIPMENTS_SUGGESTION_CHANGED (409) when the shipment's
// items or parcels or the boxes changed since, or its parcels were altered; a 422 when it is not a
// suggestion's shape. Both engines.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import type { Packer } from '../src/index.js'
import { as, buildTestApp } from './fixtures/app.js'
import { tables } from './fixtures/database.js'

function post(app: FastifyInstance, url: string, body: unknown, user: Parameters<typeof as>[0] = 'admin') {
  return app.inject({ method: 'POST', url: `/shipments/api${url}`, headers: { ...as(user), 'content-type': 'application/json' }, payload: JSON.stringify(body) })
}

const LARGE = { name: 'Large', innerDimensions: { length: '40', width: '30', height: '30', unit: 'cm' }, emptyWeight: { value: '400', unit: 'g' }, maxWeight: { value: '10000', unit: 'g' } }

/**
 * A packer that packs differently on every call (one unit a box, then two, then three...) and counts its
 * calls: a suggestion accepted "as shown" must neither call it nor get another packing's parcels.
 */
function shiftingPacker() {
  const calls: number[] = []
  const packer: Packer = {
    pack(items, boxes) {
      calls.push(items.length)
      const perBox = calls.length
      const keys = items.map((item) => item.key)
      const packed = []
      for (let start = 0; start < keys.length; start += perBox) packed.push({ boxId: boxes[0]!.boxId, keys: keys.slice(start, start + perBox) })
      return { boxes: packed, unpacked: [] }
    },
  }
  return { packer, calls }
}

async function mugShipment(app: FastifyInstance, mugs: number) {
  const orderId = await app.shipments.referenceOrders!.createOrder({
    reference: `A-${Math.random().toString(36).slice(2, 8)}`,
    isCompleted: true,
    items: [{ name: 'Mug', sku: 'MUG', quantity: mugs, weight: 350, weightUnit: 'g', dimensions: { length: '12', width: '9', height: '10', unit: 'cm' } }],
  })
  const [shipment] = await app.shipments.shipments.create(orderId, { rule: 'remaining' })
  return { shipmentId: shipment.id, mugLine: shipment.items[0]!.lineItemId }
}

async function parcelRows(app: FastifyInstance, shipmentId: number) {
  const { db, schema } = tables(app)
  return (await db.select().from(schema.parcels)).filter((row) => row.shipmentId === shipmentId)
}

t.test('a suggestion passed back creates exactly its parcels, without packing again; twice is refused', async (t) => {
  const { packer, calls } = shiftingPacker()
  const app = await buildTestApp(t, { deliveries: { packer } })
  const box = (await post(app, '/boxes', LARGE)).json().box
  const { shipmentId, mugLine } = await mugShipment(app, 3)

  const shown = (await post(app, `/shipments/${shipmentId}/parcels/suggest`, {})).json()
  t.match(shown.id, /^sg_[A-Za-z0-9_-]{32}$/, 'the suggestion has an id')
  t.same(shown.parcels.map((parcel: { items: unknown }) => parcel.items), [[{ lineItemId: mugLine, quantity: 1 }], [{ lineItemId: mugLine, quantity: 1 }], [{ lineItemId: mugLine, quantity: 1 }]], 'the first packing: one mug a box')
  t.same(calls, [3])

  // The whole answer passed back, as a client has it (its other keys are ignored).
  const accepted = await post(app, `/shipments/${shipmentId}/parcels/accept-suggestion`, shown)
  t.equal(accepted.statusCode, 201, accepted.body)
  t.same(calls, [3], 'not packed again (the packer would have put two mugs in a box now)')
  t.match(accepted.json(), { success: true, parcels: [{ boxId: box.id, weight: { value: '750', unit: 'g' } }, { boxId: box.id }, { boxId: box.id }] })
  const rows = await parcelRows(app, shipmentId)
  t.equal(rows.length, 3, 'three parcels stored, as shown')
  t.same(rows.map((row) => [row.boxId, row.weight, row.weightUnit, row.length, row.items.map((item) => [item.lineItemId, item.quantity])]), [
    [box.id, '750', 'g', '40', [[mugLine, 1]]],
    [box.id, '750', 'g', '40', [[mugLine, 1]]],
    [box.id, '750', 'g', '40', [[mugLine, 1]]],
  ])

  // A second click: the shipment has parcels now, so the suggestion no longer describes it.
  const again = await post(app, `/shipments/${shipmentId}/parcels/accept-suggestion`, shown)
  t.equal(again.statusCode, 409)
  t.match(again.json(), { errorCode: 'SHIPMENTS_SUGGESTION_CHANGED', message: /changed since this suggestion was made/ })
  t.equal((await parcelRows(app, shipmentId)).length, 3, 'nothing more created')
})

t.test('the same input packed the same way has the same id; the service takes the suggestion object as returned', async (t) => {
  const app = await buildTestApp(t)
  await post(app, '/boxes', LARGE)
  const { shipmentId } = await mugShipment(app, 2)
  const first = await app.shipments.boxes.suggestParcels(shipmentId)
  const second = await app.shipments.boxes.suggestParcels(shipmentId)
  t.equal(first.id, second.id, 'a stable id')
  const created = await app.shipments.boxes.acceptSuggestion(shipmentId, first, { userId: 'u-1' })
  t.equal(created.length, first.parcels.length)
  t.same(created.map((parcel) => [parcel.boxId, parcel.weight, parcel.items]), first.parcels.map((parcel) => [parcel.box.id, parcel.weight, parcel.items]))
})

t.test('refused when the items, the boxes or the parcels changed since; nothing is created', async (t) => {
  const app = await buildTestApp(t)
  const box = (await post(app, '/boxes', LARGE)).json().box
  const { shipmentId, mugLine } = await mugShipment(app, 4)
  const refusedWith = async (suggestion: unknown, why: string) => {
    const answer = await post(app, `/shipments/${shipmentId}/parcels/accept-suggestion`, suggestion)
    t.equal(answer.statusCode, 409, why)
    t.equal(answer.json().errorCode, 'SHIPMENTS_SUGGESTION_CHANGED', why)
    t.same(await parcelRows(app, shipmentId), [], `${why}: nothing created`)
  }

  const altered = await app.shipments.boxes.suggestParcels(shipmentId)
  await refusedWith({ ...altered, parcels: altered.parcels.map((parcel) => ({ ...parcel, weight: { value: '1', unit: 'g' } })) }, 'a parcel altered')
  await refusedWith({ ...altered, id: `${altered.id.slice(0, -1)}x` }, 'another id')

  const beforeBoxChange = await app.shipments.boxes.suggestParcels(shipmentId)
  t.equal((await post(app, `/boxes/${box.id}`, { maxWeight: { value: '9000', unit: 'g' } })).statusCode, 200)
  await refusedWith(beforeBoxChange, 'the box changed')

  const beforeItemChange = await app.shipments.boxes.suggestParcels(shipmentId)
  await app.shipments.shipments.update(shipmentId, { items: [{ lineItemId: mugLine, quantity: 3 }] })
  await refusedWith(beforeItemChange, 'the items changed')

  const current = await app.shipments.boxes.suggestParcels(shipmentId)
  const accepted = await post(app, `/shipments/${shipmentId}/parcels/accept-suggestion`, current)
  t.equal(accepted.statusCode, 201, 'a fresh suggestion is accepted')
  t.same(accepted.json().parcels.flatMap((parcel: { items: unknown[] }) => parcel.items), [{ lineItemId: mugLine, quantity: 3 }])
})

t.test('not a suggestion: a 422 naming it; a viewer may not accept one', async (t) => {
  const app = await buildTestApp(t)
  await post(app, '/boxes', LARGE)
  const { shipmentId } = await mugShipment(app, 1)
  const shown = await app.shipments.boxes.suggestParcels(shipmentId)

  const noParcels = await post(app, `/shipments/${shipmentId}/parcels/accept-suggestion`, { id: shown.id, parcels: [] })
  t.equal(noParcels.statusCode, 422)
  t.match(noParcels.json(), { success: false, errorCode: 'SHIPMENTS_VALIDATION_FAILED', errors: { suggestion: [/holds no list of 1 to 100 parcels: pass back the suggestion/] } })
  const missingId = await post(app, `/shipments/${shipmentId}/parcels/accept-suggestion`, { parcels: shown.parcels })
  t.equal(missingId.statusCode, 422, 'the schema wants the id')
  // A JavaScript caller bypasses the types: the service checks the shape itself.
  const refusal = (suggestion: unknown) => app.shipments.boxes.acceptSuggestion(shipmentId, suggestion as never).then(() => null, (error: { errors?: Record<string, string[]> }) => error.errors ?? null)
  t.match(await refusal({ id: shown.id, parcels: [{ box: null }] }), { suggestion: [/^parcel 1 is not a suggested parcel: pass back/] })
  t.match(await refusal(null), { suggestion: [/^is not an object/] })
  t.equal((await post(app, `/shipments/${shipmentId}/parcels/accept-suggestion`, shown, 'viewer')).statusCode, 403)
  t.equal((await post(app, '/shipments/999999/parcels/accept-suggestion', shown)).statusCode, 404)
  t.same(await parcelRows(app, shipmentId), [], 'nothing created by any of them')
})
