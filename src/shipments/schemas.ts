// TypeBox schemas of the shipment API: requests, responses and the three error envelopes (spec 7.1).
import { Type } from '@sinclair/typebox'
import { SHIPMENT_STATUSES } from './shipment.js'
import { ParcelSchema } from '../deliveries/schemas.js'

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()])
const NullableString = Nullable(Type.String())
const Timestamp = Nullable(Type.String({ description: 'ISO-8601 with an explicit offset' }))

export const ShipmentStatusSchema = Type.Union(SHIPMENT_STATUSES.map((status) => Type.Literal(status)))

export const ShipmentItemSchema = Type.Object({
  lineItemId: Type.Integer({ description: 'The order line (the order store\'s line id)' }),
  quantity: Type.Integer({ minimum: 1 }),
  sku: NullableString,
  name: Type.String(),
})

/** The shipment of spec 2.1, with the order lines it holds (empty for an order-level shipment). */
export const ShipmentSchema = Type.Object({
  id: Type.Integer(),
  reference: Type.String(),
  orderId: Type.Integer(),
  status: ShipmentStatusSchema,
  dateShipped: Timestamp,
  dateScheduledShip: Timestamp,
  trackingNumber: NullableString,
  trackingUrl: NullableString,
  carrier: NullableString,
  service: NullableString,
  fulfillmentNotes: NullableString,
  shippingNotes: NullableString,
  enabled: Type.Boolean(),
  fields: Type.Record(Type.String(), Type.Unknown()),
  items: Type.Array(ShipmentItemSchema),
})

/** What the admin reads return: spec 2.1 plus creation, update and soft-delete times. */
export const ShipmentDetailSchema = Type.Composite([
  ShipmentSchema,
  Type.Object({
    dateCreated: Type.String(),
    dateUpdated: Type.String(),
    dateDeleted: Timestamp,
    parcels: Type.Optional(Type.Array(ParcelSchema, { description: 'The parcels (reading one shipment): empty for a shipment without parcels' })),
  }),
])

export const HistoryEntrySchema = Type.Object({
  id: Type.Integer(),
  shipmentId: Type.Integer(),
  fromStatus: Type.Union([ShipmentStatusSchema, Type.Null()]),
  toStatus: ShipmentStatusSchema,
  message: NullableString,
  userId: NullableString,
  sourceIntegration: NullableString,
  externalCode: NullableString,
  dateCreated: Type.String(),
})

const loose = Type.Optional(Type.Unknown())
/**
 * Spec 2.2. Every key is loose here on purpose: the checks and their messages are the spec's
 * per-field envelope (422, after the 401/403/404 checks), which schema validation would pre-empt.
 */
export const UpdateBodySchema = Type.Object(
  {
    trackingNumber: loose,
    trackingUrl: loose,
    carrier: loose,
    service: loose,
    dateScheduledShip: loose,
    fulfillmentNotes: loose,
    shippingNotes: loose,
    status: loose,
    statusMessage: loose,
    fields: loose,
    integrationHandle: loose,
    externalCode: loose,
    items: Type.Optional(
      Type.Unknown({ description: 'The order lines the shipment holds: [{ lineItemId, quantity }], replacing the current ones; [] makes it order-level' }),
    ),
    enabled: Type.Optional(
      Type.Unknown({ description: "true or false: false frees the shipment's quantities, true takes them back (422 naming the line when another shipment holds them)" }),
    ),
  },
  { additionalProperties: true },
)

export const IdParamsSchema = Type.Object({ id: Type.String({ description: 'Shipment id' }) })

/** The largest id or page number a request may name: ids are 32-bit integers on PostgreSQL. */
export const MAX_REQUEST_INTEGER = 2_147_483_647

export const ListQuerySchema = Type.Object({
  orderId: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_REQUEST_INTEGER })),
  status: Type.Optional(ShipmentStatusSchema),
  includeDeleted: Type.Optional(Type.Boolean({ default: false })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_REQUEST_INTEGER, default: 1 })),
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
})

export const UpdateResponseSchema = Type.Object({ success: Type.Literal(true), shipment: ShipmentSchema })
export const ShipmentResponseSchema = Type.Object({ success: Type.Literal(true), shipment: ShipmentDetailSchema })
export const ListResponseSchema = Type.Object({
  success: Type.Literal(true),
  shipments: Type.Array(ShipmentDetailSchema),
  pagination: Type.Object({
    page: Type.Integer(),
    perPage: Type.Integer(),
    total: Type.Integer(),
    pages: Type.Integer(),
  }),
})
export const HistoryResponseSchema = Type.Object({ success: Type.Literal(true), history: Type.Array(HistoryEntrySchema) })

export const ValidationErrorSchema = Type.Object({
  success: Type.Literal(false),
  errors: Type.Record(Type.String(), Type.Array(Type.String())),
})
export const ServiceErrorSchema = Type.Object({ success: Type.Literal(false), error: Type.String() })
export const FrameworkErrorSchema = Type.Object({
  name: Type.String(),
  message: Type.String(),
  code: Type.Integer(),
  status: Type.Integer(),
})

export const OrderIdParamsSchema = Type.Object({ orderId: Type.String({ description: 'Order id' }) })

/** One of: `count` order-level shipments, one shipment of `items`, or shipments for what is left by `rule`. */
export const CreateBodySchema = Type.Object(
  {
    count: Type.Optional(Type.Unknown({ description: 'How many order-level shipments (1 to 100); default 1' })),
    items: Type.Optional(Type.Unknown({ description: 'One shipment holding these lines: [{ lineItemId, quantity }]' })),
    rule: Type.Optional(Type.Unknown({ description: 'A split rule: remaining, perLine, or a host rule' })),
  },
  { additionalProperties: true },
)
export const CreateResponseSchema = Type.Object({ success: Type.Literal(true), shipments: Type.Array(ShipmentDetailSchema) })

const LineSchema = Type.Object({
  id: Type.Integer(),
  sku: NullableString,
  name: Type.String(),
  quantity: Type.Integer(),
  shippable: Type.Boolean(),
  allocated: Type.Integer(),
  unallocated: Type.Integer(),
})
export const AllocationResponseSchema = Type.Object({
  success: Type.Literal(true),
  order: Type.Object({ id: Type.Integer(), reference: Type.String() }),
  /** null when the order store gives no lines (order-level shipments only). */
  lines: Type.Union([Type.Array(LineSchema), Type.Null()]),
})

export const AttentionQuerySchema = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_REQUEST_INTEGER, default: 1 })),
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
})
export const AttentionResponseSchema = Type.Object({
  success: Type.Literal(true),
  orders: Type.Array(
    Type.Object({
      orderId: Type.Integer(),
      reference: Type.String(),
      statusHandle: NullableString,
      dateOrdered: Timestamp,
      customer: NullableString,
      linesMissing: Type.Integer(),
      unitsMissing: Type.Integer(),
    }),
  ),
  pagination: Type.Object({ page: Type.Integer(), perPage: Type.Integer(), total: Type.Integer(), pages: Type.Integer() }),
})
