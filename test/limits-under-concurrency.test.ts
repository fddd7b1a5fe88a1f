// Count limits hold under concurrent requests: the count is checked inside the transaction that writes,
// under the lock that serialises the writes, so requests that all saw room before the first of them
// committed cannot together go past the limit.
import t from 'tap'
import { eq } from 'drizzle-orm'
import { as, buildTestApp, insertOrder } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { MAX_PARCELS_PER_SHIPMENT } from '../src/index.js'

t.test('20 concurrent parcel adds to a shipment of 95 parcels leave exactly 100, the others refused with the limit', async (t) => {
  const app = await buildTestApp(t)
  const orderId = await insertOrder(app)
  const [shipment] = await app.shipments.shipments.create(orderId)
  const { db, schema } = tables(app)
  const existing = MAX_PARCELS_PER_SHIPMENT - 5
  const now = new Date()
  await db.insert(schema.parcels).values(
    Array.from({ length: existing }, () => ({ shipmentId: shipment.id, weight: '1', weightUnit: 'kg', items: [], createdAt: now, updatedAt: now })),
  )

  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      app.inject({
        method: 'POST',
        url: `/shipments/api/shipments/${shipment.id}/parcels`,
        headers: { ...as('admin'), 'content-type': 'application/json' },
        payload: JSON.stringify({ weight: { value: '2', unit: 'kg' } }),
      }),
    ),
  )
  const created = answers.filter((answer) => answer.statusCode === 201)
  const refused = answers.filter((answer) => answer.statusCode !== 201)
  t.equal(created.length, 5, 'as many as the limit leaves room for')
  t.equal(refused.length, 15)
  for (const answer of refused) {
    t.equal(answer.statusCode, 422, answer.body)
    t.same(answer.json(), { success: false, error: `A shipment may have at most ${MAX_PARCELS_PER_SHIPMENT} parcels.`, errorCode: 'SHIPMENTS_UPDATE_REJECTED' })
  }
  const stored = await db.select().from(schema.parcels).where(eq(schema.parcels.shipmentId, shipment.id))
  t.equal(stored.length, MAX_PARCELS_PER_SHIPMENT, 'exactly the limit is stored')
  const history = await db.select().from(schema.parcelHistory).where(eq(schema.parcelHistory.shipmentId, shipment.id))
  t.equal(history.length, 5, 'a history row for each parcel added, none for the refused ones')
  const events = (await app.shipments.outbox.list({ kind: 'event' })).filter((message) => message.name === 'parcelAdded')
  t.equal(events.length, 5, 'a parcelAdded event for each parcel added, none for the refused ones')
})
