// A complete host: register the plugin, create an order in the reference store, ship it.
import Fastify from 'fastify'
import { fastifyShipments, ReferenceOrderError, ShipmentsPermissions, type ShipmentsUser } from 'fastify-shipments'

interface User extends ShipmentsUser {
  id: number
  permissions: string[]
}

// Your own authentication goes here; this host knows one API token (a login with sessions: docs/admin.md).
const users = new Map<string, User>([['admin-token-change-me', { id: 1, permissions: Object.values(ShipmentsPermissions) }]])

// Every request arrives whole within 10 s, or gets a 408 (see "Server options for hosts").
const app = Fastify({ logger: true, requestTimeout: 10_000, http: { headersTimeout: 10_000, connectionsCheckingInterval: 1_000 } })
await app.register(fastifyShipments, {
  database: process.env.DATABASE_URL || 'shop.sqlite', // a SQLite file, or postgres://...
  timezone: 'Europe/Berlin',
  shippedOrderStatus: 'shipped',
  shipmentFields: [{ handle: 'packageCount', type: 'number' }],
  // The order field ShipStation's tracking numbers are written to: one block of these sub-fields per order.
  orderFields: [{ handle: 'shippingInfo', type: 'matrix', subFields: ['carrier', 'service', 'trackingNumber'] }],
  resolveUser: (request) => users.get(request.headers.authorization?.replace(/^Bearer /, '') ?? '') ?? null,
  hasPermission: (user: User, permission) => user.permissions.includes(permission),
  orderExchange: {
    username: '$SHIPSTATION_USERNAME',
    password: '$SHIPSTATION_PASSWORD',
    trackingField: { matrix: 'shippingInfo', carrier: 'carrier', service: 'service', trackingNumber: 'trackingNumber' },
  },
})

app.shipments.events.on('shipmentStatusChanged', ({ shipment, from, to }) => {
  app.log.info({ shipment: shipment.reference, from, to }, 'shipment moved')
})

// The reference store keeps orders in the package's tables (or bring your own `orderStore`).
const orders = app.shipments.referenceOrders!
await orders.saveStatus({ handle: 'processing', name: 'Processing', isDefault: true })
await orders.saveStatus({ handle: 'shipped', name: 'Shipped' })
// Create it and take "it exists" as done (checking first would let two instances starting at once both try).
try {
  const orderId = await orders.createOrder({
    reference: '1001',
    isCompleted: true,
    email: 'jane@example.com',
    totalPrice: '59.90',
    shippingAddress: { name: 'Jane Doe', address1: 'Main St 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
    items: [{ name: 'Mug', sku: 'MUG-1', quantity: 2, price: '27.50', weight: 350, weightUnit: 'g' }],
  })
  for (const shipment of await app.shipments.shipments.create(orderId, { count: 1 })) {
    app.log.info({ shipment: shipment.reference }, 'first shipment created')
  }
} catch (error) {
  if (!(error instanceof ReferenceOrderError && error.duplicate)) throw error
}

await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })
