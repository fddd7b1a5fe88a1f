// The box catalogue and "suggest parcels": units packed into the fewest boxes within each box's weight
// limit (the packing checked for bounds, overlaps and weight), units that fit no box explained, a host's
// own packer used in place of binpackingjs.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { binPackingPacker, type Packer } from '../src/index.js'
import { as, buildTestApp } from './fixtures/app.js'
import { tables } from './fixtures/database.js'

function post(app: FastifyInstance, url: string, body: unknown, user: Parameters<typeof as>[0] = 'admin') {
  return app.inject({ method: 'POST', url: `/shipments/api${url}`, headers: { ...as(user), 'content-type': 'application/json' }, payload: JSON.stringify(body) })
}

const SMALL = { name: 'Small', innerDimensions: { length: '20', width: '15', height: '10', unit: 'cm' }, emptyWeight: { value: '100', unit: 'g' }, maxWeight: { value: '2000', unit: 'g' } }
const LARGE = { name: 'Large', innerDimensions: { length: '40', width: '30', height: '30', unit: 'cm' }, emptyWeight: { value: '400', unit: 'g' }, maxWeight: { value: '10000', unit: 'g' } }

/** A shipment of an order with mugs (boxable), a rug (too long for any box) and a poster with no size. */
async function orderToPack(app: FastifyInstance, mugs = 4) {
  const orderId = await app.shipments.referenceOrders!.createOrder({
    reference: `P-${Math.random().toString(36).slice(2, 8)}`,
    isCompleted: true,
    items: [
      { name: 'Mug', sku: 'MUG', quantity: mugs, weight: 350, weightUnit: 'g', dimensions: { length: '12', width: '9', height: '10', unit: 'cm' } },
      { name: 'Rug', sku: 'RUG', quantity: 1, weight: 2, weightUnit: 'kg', dimensions: { length: '150', width: '10', height: '10', unit: 'cm' } },
      { name: 'Poster', sku: 'POSTER', quantity: 1 },
    ],
  })
  const [shipment] = await app.shipments.shipments.create(orderId, { rule: 'remaining' })
  const lines = shipment.items.map((item) => item.lineItemId)
  return { shipmentId: shipment.id, mugLine: lines[0], rugLine: lines[1], posterLine: lines[2] }
}

t.test('the box catalogue: created, listed, changed and removed; bad boxes refused field by field', async (t) => {
  const app = await buildTestApp(t)
  const created = await post(app, '/boxes', SMALL)
  t.equal(created.statusCode, 201, created.body)
  t.match(created.json().box, { name: 'Small', innerDimensions: { length: '20', unit: 'cm' }, emptyWeight: { value: '100', unit: 'g' }, maxWeight: { value: '2000', unit: 'g' }, enabled: true })
  const { db, schema } = tables(app)
  t.match(await db.select().from(schema.boxes), [{ name: 'Small', innerLength: '20', emptyWeight: '100', maxWeight: '2000', weightUnit: 'g' }])

  const bad = await post(app, '/boxes', { ...SMALL, maxWeight: { value: '50', unit: 'g' } })
  t.equal(bad.statusCode, 422)
  t.same(bad.json(), { success: false, errors: { 'maxWeight.value': ['must be more than the empty weight'] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' })
  const missing = await post(app, '/boxes', { name: 'No size' })
  t.equal(missing.statusCode, 422)
  t.ok(missing.json().errors.innerDimensions && missing.json().errors.maxWeight)
  t.equal((await db.select().from(schema.boxes)).length, 1, 'nothing stored for bad boxes')
  t.equal((await post(app, '/boxes', SMALL, 'viewer')).statusCode, 403)

  const id = created.json().box.id
  const changed = await post(app, `/boxes/${id}`, { name: 'Small mailer', enabled: false })
  t.equal(changed.statusCode, 200, changed.body)
  t.match(changed.json().box, { name: 'Small mailer', enabled: false, innerDimensions: { length: '20' } })
  const list = await app.inject({ method: 'GET', url: '/shipments/api/boxes', headers: as('viewer') })
  t.same(list.json().boxes.map((box: { name: string }) => box.name), ['Small mailer'])
  t.equal((await app.inject({ method: 'DELETE', url: `/shipments/api/boxes/${id}`, headers: as('admin') })).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: `/shipments/api/boxes/${id}`, headers: as('admin') })).statusCode, 404)
})

t.test('suggest parcels: fewest boxes within the weight limits, units that fit no box explained; apply creates them', async (t) => {
  const app = await buildTestApp(t)
  const small = (await post(app, '/boxes', SMALL)).json().box
  const large = (await post(app, '/boxes', LARGE)).json().box
  const { shipmentId, mugLine, rugLine, posterLine } = await orderToPack(app, 6)

  const response = await post(app, `/shipments/${shipmentId}/parcels/suggest`, {})
  t.equal(response.statusCode, 200, response.body)
  const suggestion = response.json()
  t.same(suggestion.parcels, [
    { box: { id: large.id, name: 'Large' }, items: [{ lineItemId: mugLine, quantity: 6 }], weight: { value: '2500', unit: 'g' }, dimensions: { length: '40', width: '30', height: '30', unit: 'cm' } },
  ], 'six mugs (2.1 kg) in one large box rather than two small ones; the empty box weighed in')
  t.same(suggestion.unpacked, [
    { lineItemId: posterLine, quantity: 1, reason: 'the order line has no weight or size' },
    { lineItemId: rugLine, quantity: 1, reason: 'too large or too heavy for every box in the catalogue' },
  ])
  t.same(suggestion.created, [])
  t.same(await app.shipments.deliveries.listParcels(shipmentId), [], 'a suggestion alone stores nothing')
  void small

  const applied = await post(app, `/shipments/${shipmentId}/parcels/suggest`, { apply: true })
  t.equal(applied.statusCode, 200)
  t.match(applied.json().created, [{ boxId: large.id, weight: { value: '2500', unit: 'g' }, items: [{ lineItemId: mugLine, quantity: 6 }] }])
  t.equal((await app.shipments.deliveries.listParcels(shipmentId)).length, 1)
})

t.test("the weight limit splits units across boxes, and the default packer's placements stay inside the box without overlaps", async (t) => {
  // 12 mugs of 350 g in large boxes limited to 2 kg of content: at most 5 per box.
  const items = Array.from({ length: 12 }, (_, unit) => ({ key: `1#${unit}`, lineItemId: 1, length: 1200, width: 900, height: 1000, weight: 350_000 }))
  const boxes = [{ boxId: 7, length: 4000, width: 3000, height: 3000, maxContentWeight: 2_000_000 }]
  const result = await binPackingPacker.pack(items, boxes)
  t.same(result.unpacked, [])
  t.equal(result.boxes.length, 3)
  t.same(result.boxes.map((box) => box.keys.length).sort(), [2, 5, 5])
  for (const box of result.boxes) {
    t.ok(box.keys.length * 350_000 <= 2_000_000, 'within the weight limit')
    const placed = box.placements!
    for (const [index, a] of placed.entries()) {
      for (let axis = 0; axis < 3; axis++) t.ok(a.position[axis] >= 0 && a.position[axis] + a.size[axis] <= [3000, 3000, 4000][axis], 'inside the box')
      for (const b of placed.slice(index + 1)) {
        const overlap = [0, 1, 2].every((axis) => a.position[axis] < b.position[axis] + b.size[axis] && b.position[axis] < a.position[axis] + a.size[axis])
        t.notOk(overlap, `${a.key} and ${b.key} do not overlap`)
      }
    }
  }
})

t.test("a host's packer replaces binpackingjs; a packer without pack() fails registration", async (t) => {
  const calls: number[] = []
  const onePerUnit: Packer = {
    pack(items, boxes) {
      calls.push(items.length)
      return { boxes: items.map((item) => ({ boxId: boxes[0].boxId, keys: [item.key] })), unpacked: [] }
    },
  }
  const app = await buildTestApp(t, { deliveries: { packer: onePerUnit } })
  await post(app, '/boxes', LARGE)
  const { shipmentId } = await orderToPack(app, 2)
  const response = await post(app, `/shipments/${shipmentId}/parcels/suggest`, {})
  t.equal(response.statusCode, 200)
  t.equal(response.json().parcels.length, 3, 'two mugs and the rug, one box each')
  t.same(calls, [3])
  await t.rejects(buildTestApp(t, { deliveries: { packer: {} as Packer } }), /deliveries\.packer/)
})

t.test('the default packer leaves the event loop free: an interval timer ticks while it packs', async (t) => {
  const mugs = (count: number) => Array.from({ length: count }, (_, unit) => ({ key: `1#${unit}`, lineItemId: 1, length: 1200, width: 900, height: 1000, weight: 350_000 }))
  const boxes = [
    { boxId: 1, length: 2000, width: 1500, height: 1000, maxContentWeight: 2_000_000 },
    { boxId: 2, length: 4000, width: 3000, height: 3000, maxContentWeight: 10_000_000 },
  ]
  await binPackingPacker.pack(mugs(1), boxes) // binpackingjs loaded: what follows is packing only
  let ticks = 0
  const timer = setInterval(() => ticks++, 1)
  t.teardown(() => clearInterval(timer))
  const result = await binPackingPacker.pack(mugs(120), boxes)
  const ticksWhilePacking = ticks
  clearInterval(timer)
  t.same(result.unpacked, [])
  t.equal(result.boxes.flatMap((box) => box.keys).length, 120)
  t.ok(ticksWhilePacking > 0, `the timer ticked ${ticksWhilePacking} times while the packer worked`)
})

t.test("suggesting parcels is bounded: too many units, too many boxes or a packing over its time budget is a coded 422 that creates nothing", async (t) => {
  const app = await buildTestApp(t, { deliveries: { packingTimeoutMs: 1 } })
  await post(app, '/boxes', SMALL)
  await post(app, '/boxes', LARGE)
  const { shipmentId } = await orderToPack(app, 300)
  const slow = await post(app, `/shipments/${shipmentId}/parcels/suggest`, { apply: true })
  t.equal(slow.statusCode, 422, slow.body)
  t.match(slow.json(), { name: 'Unprocessable Entity', status: 422, errorCode: 'SHIPMENTS_PACKING_TIMEOUT', message: /^Suggesting parcels took longer than 1 ms and was stopped/ })
  t.same(await app.shipments.deliveries.listParcels(shipmentId), [], 'nothing created')

  const many = await orderToPack(app, 501)
  const tooManyUnits = await post(app, `/shipments/${many.shipmentId}/parcels/suggest`, { apply: true })
  t.equal(tooManyUnits.statusCode, 422, tooManyUnits.body)
  t.match(tooManyUnits.json(), { name: 'Unprocessable Entity', status: 422, errorCode: 'SHIPMENTS_PACKING_TOO_LARGE', message: /^A suggestion packs at most 500 units \(this shipment has 503\)/ })
  t.same(await app.shipments.deliveries.listParcels(many.shipmentId), [], 'nothing created')

  for (let box = 3; box <= 41; box++) await post(app, '/boxes', { ...SMALL, name: `Box ${box}` })
  const few = await orderToPack(app, 2)
  const tooManyBoxes = await post(app, `/shipments/${few.shipmentId}/parcels/suggest`, { apply: true })
  t.equal(tooManyBoxes.statusCode, 422, tooManyBoxes.body)
  t.match(tooManyBoxes.json(), { name: 'Unprocessable Entity', status: 422, errorCode: 'SHIPMENTS_PACKING_TOO_LARGE', message: /^A suggestion considers at most 40 enabled boxes \(the catalogue has 41\)/ })
  t.same(await app.shipments.deliveries.listParcels(few.shipmentId), [], 'nothing created')
  const { db, schema } = tables(app)
  t.same(await db.select().from(schema.parcelHistory), [], 'no history written')
})
