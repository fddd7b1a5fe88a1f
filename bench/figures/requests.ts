// The figures of the shipment API's writes and the gateway's requests against a bare route beside
// them on the same host: updates, status changes, EasyPost events, and a dispatch to an instant provider.
import type { FastifyInstance } from 'fastify'
import type { DatabaseHandle } from 'fastify-shipments'
import { signedTrackerEvent } from '../easypost-event.js'
import { compare, plan } from '../runner.js'
import type { Label } from '../settings.js'

const EASYPOST_WEBHOOK_SECRET = 'bench-webhook-secret'
/** The tracking number of a tracked shipment: its id inside, so the PostgreSQL replay can make it of `:id`. */
const trackingCode = (id: number) => `BENCHTRK${id}`

/**
 * Ten orders with 100 shipments each, for the shipment API (`into`), and 1,000 orders of one shipment
 * with a tracking number, shipped, for EasyPost's events (`tracked`; the integration `easypost`, without
 * API key): one order each, as a shop's parcels are, so events for different shipments take different
 * order locks when they move an order.
 */
export async function seedShipments(app: FastifyInstance, into: number[], tracked: number[] = []) {
  await app.shipments.integrations.create({ name: 'Instant', handle: 'instant', providerId: 'instant' })
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: EASYPOST_WEBHOOK_SECRET } })
  // Awaited Drizzle calls work on both engines; the SQLite types stand for both here.
  const { db, schema } = app.shipments.database as Extract<DatabaseHandle, { engine: 'sqlite' }>
  // The order status a shipped shipment's order moves to (shippedOrderStatus) must exist.
  await db
    .insert(schema.orderStatuses)
    .values([
      { handle: 'processing', name: 'Processing', isDefault: true },
      { handle: 'shipped', name: 'Shipped' },
    ])
    .onConflictDoNothing()
  for (let order = 1; order <= 10; order++) {
    const [{ id }] = await db.insert(schema.orders).values({ number: `bench-${order}`, reference: `B${order}`, isCompleted: true }).returning()
    for (const shipment of await app.shipments.shipments.create(id, { count: 100 })) into.push(shipment.id)
  }
  const trackedOrders = await db
    .insert(schema.orders)
    .values(Array.from({ length: 1_000 }, (_, index) => ({ number: `tracked-${index + 1}`, reference: `T${index + 1}`, isCompleted: true })))
    .returning({ id: schema.orders.id })
  for (const { id } of trackedOrders) tracked.push((await app.shipments.shipments.create(id, { count: 1 }))[0].id)
  for (const id of tracked) await app.shipments.shipments.update(id, { trackingNumber: trackingCode(id), carrier: 'UPS', status: 'shipped' })
}

/** A signed EasyPost tracker.updated event for a tracked shipment (as load.ts sends them). */
export function easyPostEvent(id: number, status: string, eventId: string) {
  const { body, signature } = signedTrackerEvent(EASYPOST_WEBHOOK_SECRET, { id: eventId, trackingCode: trackingCode(id), carrier: 'UPS', status })
  return { body, headers: { 'content-type': 'application/json', 'x-hmac-signature': signature } }
}

/** The loads of the write figures, for the shipments seeded by seedShipments (the PostgreSQL ceilings replay the same). */
export function writeLoads(host: { base: string }, shipmentIds: number[], trackedIds: number[]) {
  const fieldsBody = JSON.stringify({ carrier: 'UPS', trackingNumber: '1Z999AA10123456784', service: 'Ground' })
  const statusChanges = plan(host.base, { transitions: { pathPrefix: '/shipments/api/shipments', shipmentIds, statuses: ['in_progress', 'on_hold'] } })
  // Every request to another shipment of the thousand, as the status changes do (one shipment for
  // every connection measured the queue on its row, on PostgreSQL about 1,000 a second whatever the package did).
  const fieldUpdates = plan(host.base, { body: fieldsBody, rotate: { pathPrefix: '/shipments/api/shipments', ids: shipmentIds } })
  const carrierEvents = plan(`${host.base}/actions/shipments/gateway/handle?integration=easypost`, {
    headers: { 'content-type': 'application/json' },
    easyPost: { secret: EASYPOST_WEBHOOK_SECRET, trackingCodes: trackedIds.map(trackingCode), carrier: 'UPS', statuses: ['in_transit', 'return_to_sender'] },
  })
  return { fieldsBody, statusChanges, fieldUpdates, carrierEvents }
}
export type WriteLoads = ReturnType<typeof writeLoads>

export async function measureWrites(label: Label, host: { base: string }, { fieldsBody, statusChanges, fieldUpdates, carrierEvents }: WriteLoads, trackedIds: number[]) {
  const echo = (body: string) => plan(`${host.base}/bare/echo`, { body })
  await compare(label('update, no status change / bare JSON echo'), { min: 0.4 }, fieldUpdates, echo(fieldsBody))
  await compare(label('update with a status change / bare JSON echo'), { min: 0.3 }, statusChanges, echo(JSON.stringify({ status: 'in_progress' })))
  // Every event changes the shipment's status (in_transit: shipped, return_to_sender: on hold, in turn).
  await compare(label('EasyPost tracker.updated events applied through the gateway / bare JSON echo'), { min: 0.3 }, carrierEvents, echo(easyPostEvent(trackedIds[0], 'in_transit', 'evt_echo').body))
}

export async function measureGatewayDispatch(label: Label, host: { base: string }) {
  await compare(
    label('gateway dispatch to an instant provider / bare route'),
    { min: 0.8 },
    plan(`${host.base}/actions/shipments/gateway/handle?integration=instant`, { body: '{}' }),
    plan(`${host.base}/bare/instant`, { body: '{}' }),
  )
}
