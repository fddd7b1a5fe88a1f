// Demo data for the reference order store: statuses, five orders, and shipments for the completed ones.
import type { FastifyInstance } from 'fastify'
import { ReferenceOrderError, type OrderFieldDefinition, type ReferenceAddress, type ReferenceLineItem, type ReferenceOrderInput } from '../src/index.js'

interface DemoOrder {
  order: ReferenceOrderInput
  items: ReferenceLineItem[]
  /** Used as the shipping and the billing address. */
  address: ReferenceAddress
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
    },
    items: [
      { sku: 'TEE-BLK-M', name: 'Organic T-shirt', weight: 180, weightUnit: 'g', quantity: 2, price: '19.95', imageUrl: '/images/tee.jpg', options: { Size: 'M', Colour: 'Black' } },
      { sku: 'MUG-01', name: 'Enamel mug', weight: 0.35, weightUnit: 'kg', quantity: 1, price: '14.10', imageUrl: 'https://cdn.example.com/mug.jpg' },
    ],
    address: { name: 'Jane Doe', address1: '12 Harbour Street', city: 'Portland', state: 'OR', postalCode: '97201', country: 'US', phone: '+1 503 555 0101', email: 'jane.doe@example.com' },
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
    },
    items: [
      { sku: 'DESK-LAMP', name: 'Desk lamp', weight: 2.2, weightUnit: 'lb', quantity: 1, price: '89.00' },
      { sku: 'CHAIR-OAK', name: 'Oak chair', weight: 12, weightUnit: 'lb', quantity: 1, price: '160.00' },
    ],
    address: { name: 'Sam Lee', company: 'Lee Studio', address1: '400 Market St', address2: 'Suite 9', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US', phone: '+1 415 555 0199', email: 'sam.lee@example.com' },
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
    },
    // International (US to Germany): its lines carry what a customs declaration needs, so a parcel's declaration is complete as built.
    items: [{ sku: 'BOOK-42', name: 'Field guide', weight: 8, weightUnit: 'oz', quantity: 2, price: '25.00', customs: { tariffNumber: '4901.99', originCountry: 'US', description: 'Printed field guide (book)', value: { amount: '25.00', currency: 'USD' } } }],
    address: { name: 'Max Mustermann', address1: 'Hauptstraße 5', city: 'Berlin', postalCode: '10115', country: 'DE', phone: '+49 30 555 0123', email: 'max.mustermann@example.de' },
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
    },
    items: [
      // International (US to Japan) with no tariff number: its declaration shows what is missing before rates or a label.
      { sku: 'TEA-SET-"JP"', name: 'Tea set <Kyūsu> & cups "Sakura" 🍵', weight: 1200, weightUnit: 'g', quantity: 1, price: '2400.00', options: { Glaze: 'Ōbori & <blue>' }, customs: { originCountry: 'JP', description: 'Porcelain tea set', value: { amount: '2400.00', currency: 'USD' } } },
    ],
    address: {
      name: 'Zoë Ångström-Müller',
      company: 'Smith & Sons <Ltd> "Quoted"',
      address1: '東京都千代田区 1-2-3 & <Annex>',
      city: 'Tōkyō',
      state: '東京都',
      postalCode: '100-0001',
      country: 'JP',
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
    },
    items: [{ sku: 'TEE-WHT-S', name: 'Organic T-shirt', weight: 180, weightUnit: 'g', quantity: 1, price: '19.95', customs: { tariffNumber: '6109.10', originCountry: 'PT', description: 'Cotton T-shirt', value: { amount: '19.95', currency: 'USD' } } }],
    address: { name: 'Pat Example', address1: '1 Cart Lane', city: 'Leeds', postalCode: 'LS1 1AA', country: 'GB' },
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

/**
 * Seeds the demo data through the reference store's service; returns how many orders this process
 * created (0 once they exist). Safe for several instances starting at once on a fresh database: each
 * order is created by whichever gets there first, and the others take "already exists" as done (a
 * check before creating would let two of them through).
 */
export async function seedDemoData(app: FastifyInstance): Promise<number> {
  const orders = app.shipments.referenceOrders!
  // A shortcut for every start after the first; the statuses are saved once, so renames made since stay.
  if (await app.shipments.orders.findOrderByReference(DEMO_ORDERS[DEMO_ORDERS.length - 1]!.order.reference)) return 0

  for (const status of DEMO_ORDER_STATUSES) await orders.saveStatus(status)
  let created = 0
  for (const demo of DEMO_ORDERS) {
    let orderId: number
    try {
      orderId = await orders.createOrder({ ...demo.order, items: demo.items, shippingAddress: demo.address, billingAddress: demo.address })
    } catch (error) {
      // Created by another instance (with its shipments), or by an earlier start: nothing left to do.
      if (error instanceof ReferenceOrderError && error.duplicate) continue
      throw error
    }
    created++
    if (demo.shipments > 0) await app.shipments.shipments.create(orderId, { count: demo.shipments })
  }
  return created
}
