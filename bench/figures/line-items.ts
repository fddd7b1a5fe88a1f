// The figure of a shipment's creation with 50 items against one without, on an order of 100 lines.
import type { FastifyInstance } from 'fastify'
import { startHost } from '../hosts.js'
import { compare, plan } from '../runner.js'
import type { Engine, Label } from '../settings.js'

/**
 * An order of 100 lines (each ordered a million times, so allocations never run out) with 20 shipments
 * of 50 lines each; `into` gets the order's id and the items a new shipment of 50 lines holds.
 */
export async function seedLineItems(app: FastifyInstance, into: { orderId: number; items: Array<{ lineItemId: number; quantity: number }> }) {
  const orders = app.shipments.referenceOrders!
  into.orderId = await orders.createOrder({
    reference: 'ITEMS',
    isCompleted: true,
    items: Array.from({ length: 100 }, (_, index) => ({ name: `Line ${index + 1}`, sku: `LINE-${index + 1}`, quantity: 1_000_000 })),
  })
  const lines = (await app.shipments.orders.orderLines!(into.orderId))!
  for (let shipment = 0; shipment < 20; shipment++) {
    const offset = (shipment * 5) % 50
    await app.shipments.shipments.create(into.orderId, { items: lines.slice(offset, offset + 50).map((line) => ({ lineItemId: line.id, quantity: 1 })) })
  }
  into.items = lines.slice(25, 75).map((line) => ({ lineItemId: line.id, quantity: 1 }))
}

/** The host of the creation figure, with its seeded order (`itemsOrder`). */
export async function startItemsHost(engine: Engine) {
  const itemsOrder = { orderId: 0, items: [] as Array<{ lineItemId: number; quantity: number }> }
  const itemsHost = await startHost(engine, 'items', {}, (app) => seedLineItems(app, itemsOrder))
  return { ...itemsHost, itemsOrder }
}

export async function measureItemCreation(label: Label, itemsHost: Awaited<ReturnType<typeof startItemsHost>>) {
  const { itemsOrder } = itemsHost
  // One connection: creations of one order are serialized anyway, and the drop after each keeps the
  // numbering free of races between a creation and the drop of the one before.
  await compare(
    label('create a shipment of 50 items (order of 100 lines, 20 shipments) / create one without items'),
    { min: 0.5 },
    plan(`${itemsHost.base}/bench/create`, { body: JSON.stringify(itemsOrder), connections: 1 }),
    plan(`${itemsHost.base}/bench/create`, { body: JSON.stringify({ orderId: itemsOrder.orderId }), connections: 1 }),
  )
}
