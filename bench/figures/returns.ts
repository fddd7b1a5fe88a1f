// The figure of a return request against a bare JSON echo of the same body.
import type { FastifyInstance } from 'fastify'
import { compare, plan } from '../runner.js'
import type { Label } from '../settings.js'

/** Orders the return requests rotate over (each gathers about ten returns in a run on SQLite). */
export const RETURNABLE_ORDERS = 2_000

/**
 * Orders whose one shipment shipped 1,000,000 units of one line, so return requests never run out;
 * `[orderId, lineItemId]`. Enough of them that an order gathers a few returns in a run, not hundreds
 * (the ledger reads every return of its order, which a real order has one or two of). Ten at a time.
 */
export async function seedReturnableOrders(app: FastifyInstance, count: number, into: Array<[number, number]>) {
  for (let start = 0; start < count; start += 10) {
    const seeded = await Promise.all(Array.from({ length: Math.min(10, count - start) }, (_, offset) => seedReturnableOrder(app, start + offset)))
    into.push(...seeded)
  }
}

async function seedReturnableOrder(app: FastifyInstance, index: number): Promise<[number, number]> {
  const orderId = await app.shipments.referenceOrders!.createOrder({ reference: `RET-${index}`, isCompleted: true, items: [{ name: 'Tee', sku: 'TEE', quantity: 1_000_000 }] })
  const [line] = (await app.shipments.orders.orderLines!(orderId))!
  const [shipment] = await app.shipments.shipments.create(orderId, { items: [{ lineItemId: line.id, quantity: 1_000_000 }] })
  await app.shipments.shipments.update(shipment.id, { status: 'shipped' })
  return [orderId, line.id]
}

export async function measureReturns(label: Label, host: { base: string }, returnable: Array<[number, number]>) {
  const echo = (body: string) => plan(`${host.base}/bare/echo`, { body })
  // Return requests: one unit of an order's shipped line, for the returnable orders in turn.
  await compare(
    label('return request (one line, one unit) / bare JSON echo'),
    { min: 0.2 },
    plan(host.base, {
      rotate: {
        pathPrefix: '/shipments/api/orders',
        pathSuffix: '/returns',
        ids: returnable.map(([orderId]) => orderId),
        bodies: returnable.map(([, lineItemId]) => JSON.stringify({ lines: [{ lineItemId, quantity: 1, reason: 'damaged' }] })),
      },
    }),
    echo(JSON.stringify({ lines: [{ lineItemId: 1, quantity: 1, reason: 'damaged' }] })),
  )
}
