// Demo data for the reference order store: statuses, five orders, and shipments for the completed ones.
import type { FastifyInstance } from 'fastify'
import type { DatabaseHandle, OrderFieldDefinition, schema } from '../src/index.js'

type NewOrder = typeof schema.orders.$inferInsert
type NewLineItem = Omit<typeof schema.orderLineItems.$inferInsert, 'orderId'>
type NewAddress = Omit<typeof schema.orderAddresses.$inferInsert, 'orderId' | 'kind'>

interface DemoOrder {
  order: NewOrder
  items: NewLineItem[]
  address: NewAddress
  shipments: number
}

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000)

const DEMO_ORDERS: DemoOrder[] = [
  {
    order: {
      number: 'a1f0c3d2e4b5a6978899aabbccddeeff',
      reference: '1001',
      email: 'jane.doe@example.com',
      customerId: 11,
      statusHandle: 'processing',
      isCompleted: true,
      totalPrice: '64.90',
      totalTax: '5.90',
      totalShipping: '4.95',
      paymentMethod: 'Credit card',
      shippingMethod: 'Standard Ground',
      customerNotes: 'Please leave at the back door.',
      fields: { store: 'retail' },
      dateOrdered: minutesAgo(300),
      dateUpdated: minutesAgo(240),
    },
    items: [
      { sku: 'TEE-BLK-M', name: 'Organic T-shirt', weight: 180, weightUnit: 'g', quantity: 2, price: '19.95', imageUrl: '/images/tee.jpg', options: { Size: 'M', Colour: 'Black' } },
      { sku: 'MUG-01', name: 'Enamel mug', weight: 0.35, weightUnit: 'kg', quantity: 1, price: '14.10', imageUrl: 'https://cdn.example.com/mug.jpg' },
    ],
    address: { fullName: 'Jane Doe', address1: '12 Harbour Street', city: 'Portland', state: 'OR', postalCode: '97201', countryCode: 'US', phone: '+1 503 555 0101', email: 'jane.doe@example.com' },
    shipments: 1,
  },
  {
    order: {
      number: 'b2e1d4c3f5a6b7c8d9e0f1a2b3c4d5e6',
      reference: '1002',
      email: 'sam.lee@example.com',
      customerId: 12,
      statusHandle: 'processing',
      isCompleted: true,
      totalPrice: '249.00',
      totalTax: '20.75',
      totalShipping: '0.00',
      paymentMethod: 'PayPal',
      shippingMethod: 'Express',
      internalNotes: 'Ships from two warehouses.',
      fields: { store: 'wholesale' },
      isGift: true,
      giftMessage: 'Happy birthday, Alex!',
      dateOrdered: minutesAgo(200),
      dateUpdated: minutesAgo(180),
    },
    items: [
      { sku: 'DESK-LAMP', name: 'Desk lamp', weight: 2.2, weightUnit: 'lb', quantity: 1, price: '89.00' },
      { sku: 'CHAIR-OAK', name: 'Oak chair', weight: 12, weightUnit: 'lb', quantity: 1, price: '160.00' },
    ],
    address: { fullName: 'Sam Lee', company: 'Lee Studio', address1: '400 Market St', address2: 'Suite 9', city: 'San Francisco', state: 'CA', postalCode: '94105', countryCode: 'US', phone: '+1 415 555 0199', email: 'sam.lee@example.com' },
    shipments: 2,
  },
  {
    order: {
      number: 'c3f2e5d4a6b7c8d9e0f1a2b3c4d5e6f7',
      reference: '1003',
      email: 'max.mustermann@example.de',
      customerId: 13,
      statusHandle: 'processing',
      isCompleted: true,
      totalPrice: '45.00',
      totalTax: '7.18',
      totalShipping: '5.00',
      totalDiscount: '-10.00',
      couponCode: 'WELCOME10',
      fields: { store: 'retail' },
      paymentMethod: 'Credit card',
      shippingMethod: 'DHL Paket',
      dateOrdered: minutesAgo(150),
      dateUpdated: minutesAgo(120),
    },
    items: [{ sku: 'BOOK-42', name: 'Field guide', weight: 8, weightUnit: 'oz', quantity: 2, price: '25.00' }],
    address: { fullName: 'Max Mustermann', address1: 'Hauptstraße 5', city: 'Berlin', postalCode: '10115', countryCode: 'DE', phone: '+49 30 555 0123', email: 'max.mustermann@example.de' },
    shipments: 1,
  },
  {
    order: {
      number: 'd4a3f6e5b7c8d9e0f1a2b3c4d5e6f7a8',
      reference: '1004',
      email: 'zoe@example.jp',
      customerId: 14,
      statusHandle: 'processing',
      isCompleted: true,
      totalPrice: '3200.00',
      totalTax: '0.00',
      totalShipping: '800.00',
      paymentMethod: 'Bank transfer',
      shippingMethod: 'EMS <Express> & "Tracked"',
      customerNotes: 'Fragile: <glass> & "porcelain" ]]> handle with care — ありがとう 🙏',
      customField1: 'Zoë & <Co>',
      fields: { store: 'retail' },
      dateOrdered: minutesAgo(100),
      dateUpdated: minutesAgo(60),
    },
    items: [
      { sku: 'TEA-SET-"JP"', name: 'Tea set <Kyūsu> & cups "Sakura" 🍵', weight: 1200, weightUnit: 'g', quantity: 1, price: '2400.00', options: { Glaze: 'Ōbori & <blue>' } },
    ],
    address: {
      fullName: 'Zoë Ångström-Müller',
      company: 'Smith & Sons <Ltd> "Quoted"',
      address1: '東京都千代田区 1-2-3 & <Annex>',
      city: 'Tōkyō',
      state: '東京都',
      postalCode: '100-0001',
      countryCode: 'JP',
      phone: '+81 3 5555 0100',
      email: 'zoe@example.jp',
    },
    shipments: 1,
  },
  {
    order: {
      number: 'e5b4a7f6c8d9e0f1a2b3c4d5e6f7a8b9',
      reference: '1005',
      email: 'pat@example.com',
      statusHandle: 'new',
      isCompleted: false,
      totalPrice: '19.95',
      dateUpdated: minutesAgo(30),
    },
    items: [{ sku: 'TEE-WHT-S', name: 'Organic T-shirt', weight: 180, weightUnit: 'g', quantity: 1, price: '19.95' }],
    address: { fullName: 'Pat Example', address1: '1 Cart Lane', city: 'Leeds', postalCode: 'LS1 1AA', countryCode: 'GB' },
    shipments: 0,
  },
]

/** The demo orders' custom fields: the store ShipStation filters on, and the tracking entry it writes. */
export const DEMO_ORDER_FIELDS: OrderFieldDefinition[] = [
  { handle: 'store', type: 'dropdown', options: ['retail', 'wholesale'] },
  { handle: 'shippingInfo', type: 'matrix', subFields: ['carrier', 'service', 'trackingNumber'] },
]

export const DEMO_ORDER_STATUSES = [
  { handle: 'new', name: 'New', isDefault: true },
  { handle: 'processing', name: 'Processing' },
  { handle: 'shipped', name: 'Shipped' },
]

/** Seeds the demo data once; returns false when the database already holds orders. */
export async function seedDemoData(app: FastifyInstance): Promise<boolean> {
  // The same Drizzle calls work on both engines when awaited; the SQLite types stand for both here.
  const { db, schema } = app.shipments.database as Extract<DatabaseHandle, { engine: 'sqlite' }>
  if ((await db.select({ id: schema.orders.id }).from(schema.orders).limit(1)).length > 0) return false

  await db.insert(schema.orderStatuses).values(DEMO_ORDER_STATUSES).onConflictDoNothing()
  for (const demo of DEMO_ORDERS) {
    const [{ id: orderId }] = await db.insert(schema.orders).values(demo.order).returning({ id: schema.orders.id })
    await db.insert(schema.orderLineItems).values(demo.items.map((item) => ({ ...item, orderId })))
    await db.insert(schema.orderAddresses).values([
      { ...demo.address, orderId, kind: 'billing' as const },
      { ...demo.address, orderId, kind: 'shipping' as const },
    ])
    if (demo.shipments > 0) await app.shipments.shipments.create(orderId, { count: demo.shipments })
  }
  return true
}
