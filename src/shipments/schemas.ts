// TypeBox schemas of the shipment API: requests, responses and the three error envelopes (spec 7.1).
import { Type, type TSchema } from '@sinclair/typebox'
import { SHIPMENT_STATUSES } from '../model/shipment.js'
import { MAX_ITEMS_PER_SHIPMENT } from '../model/items.js'
import { TEXT_LIMITS } from '../text.js'
import { PARCEL_STATUSES } from '../model/parcel.js'

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()])
const NullableString = Nullable(Type.String())
const Literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((value) => Type.Literal(value)))
const Timestamp = Nullable(Type.String({ description: 'ISO-8601 with an explicit offset' }))

export const ShipmentStatusSchema = Type.Union(SHIPMENT_STATUSES.map((status) => Type.Literal(status)))

/** A parcel as its shipment presents it (and the deliveries routes answer it). */
export const ParcelSchema = Type.Object({
  id: Type.Integer(),
  shipmentId: Type.Integer(),
  weight: Type.Object({ value: Type.String(), unit: Type.String() }),
  dimensions: Type.Union([Type.Object({ length: Type.String(), width: Type.String(), height: Type.String(), unit: Type.String() }), Type.Null()]),
  boxId: Type.Union([Type.Integer(), Type.Null()]),
  items: Type.Array(Type.Object({ lineItemId: Type.Integer(), quantity: Type.Integer() })),
  status: Literals(PARCEL_STATUSES),
  trackingNumber: NullableString,
  trackingUrl: NullableString,
  carrier: NullableString,
  service: NullableString,
  label: Type.Union([
    Type.Object({
      url: Type.String(),
      format: Type.String(),
      cost: Type.Union([Type.Object({ amount: Type.String(), currency: Type.String() }), Type.Null()]),
      operationId: Type.String(),
    }),
    Type.Null(),
  ]),
  dateCreated: Type.String(),
  dateUpdated: Type.String(),
})

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
    parcels: Type.Array(ParcelSchema, { description: 'The parcels, in the order they were added: empty for a shipment without parcels' }),
    estimatedDelivery: Type.Union([Type.String(), Type.Null()], { description: "The delivery date the carrier expects, as the tracking service sent it (a date, or a date-time with its offset); null when none" }),
    estimatedDeliverySource: Type.Union([Type.String(), Type.Null()], { description: 'The integration (handle) the estimate came from' }),
  }),
])

export const CheckpointSchema = Type.Object({
  id: Type.Integer(),
  shipmentId: Type.Integer(),
  parcelId: Type.Union([Type.Integer(), Type.Null()], { description: "The parcel whose tracking number the scan was for; null for the shipment's own" }),
  trackingNumber: Type.String(),
  source: Type.String({ description: 'The integration (handle) that reported it' }),
  occurredAt: Type.String({ description: "The carrier's time as sent: the scan's local time, with its offset when the service gave one" }),
  occurredAtUtc: Type.String({ description: 'The same instant in UTC (a time sent without an offset is read as UTC)' }),
  message: NullableString,
  location: NullableString,
  status: Type.Union([Type.String(), Type.Null()], { description: "The service's status of the scan (EasyPost status, AfterShip tag)" }),
  subStatus: Type.Union([Type.String(), Type.Null()], { description: 'The finer status (EasyPost status_detail, AfterShip subtag)' }),
  signedBy: NullableString,
  dateCreated: Type.String({ description: 'When the package received it' }),
})

export const CheckpointsResponseSchema = Type.Object({ success: Type.Literal(true), checkpoints: Type.Array(CheckpointSchema) })

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

/** A line and a quantity of it, as requests name them. */
export const ShipmentItemInputSchema = Type.Object({
  lineItemId: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "The order line (the order store's line id)" }),
  quantity: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
})
const ItemsInputSchema = Type.Array(ShipmentItemInputSchema, {
  maxItems: MAX_ITEMS_PER_SHIPMENT,
  description: 'Each line at most once. A quantity above what is left of the line is a 422 on `items.<lineItemId>`.',
})

/** Null or absent leaves a value unchanged; for text, an empty string clears it. */
const Change = <T extends TSchema>(schema: T, description: string) => Type.Optional(Type.Union([schema, Type.Null()], { description }))
const ShortText = Type.String({ maxLength: TEXT_LIMITS.short })

/**
 * Spec 2.2, typed for the document. The route validates only that the body is an object: the checks of
 * each field and their messages are the spec's per-field envelope (422, after the 401/403/404 checks),
 * which schema validation would pre-empt with a 400 (see `objectBodyOnly` in routes.ts).
 */
export const UpdateBodySchema = Type.Object({
  trackingNumber: Change(ShortText, 'Empty string clears it. With no carrier or tracking URL given, they are detected from the number.'),
  trackingUrl: Change(Type.String({ maxLength: TEXT_LIMITS.short }), 'An http(s) URL with a dotted host; without a scheme, https is added. Empty string clears it.'),
  carrier: Change(ShortText, 'Empty string clears it.'),
  service: Change(ShortText, 'Empty string clears it.'),
  dateScheduledShip: Change(
    Type.Union([
      Type.String({ description: 'ISO-8601 with or without time and offset (no offset: UTC), Unix seconds, now, today, tomorrow or yesterday; empty string clears it' }),
      Type.Integer({ description: 'Unix seconds' }),
      Type.Object(
        {
          date: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' }),
          time: Type.Optional(Type.String({ pattern: '^\\d{1,2}:\\d{2}(:\\d{2})?$', default: '00:00' })),
          timezone: Type.Optional(Type.String({ description: "An IANA time zone; default: the plugin's timezone" })),
        },
        { description: 'A date picker\'s parts' },
      ),
    ]),
    'When the shipment is scheduled to ship.',
  ),
  fulfillmentNotes: Change(Type.String({ maxLength: TEXT_LIMITS.long }), 'Empty string clears it.'),
  shippingNotes: Change(Type.String({ maxLength: TEXT_LIMITS.long }), 'Empty string clears it.'),
  status: Change(ShipmentStatusSchema, 'The target status; another value is a 422 on `targetStatusCode`.'),
  statusMessage: Change(Type.String({ maxLength: TEXT_LIMITS.statusMessage }), 'Written on the history row of the transition.'),
  fields: Change(
    Type.Record(Type.String(), Type.Unknown()),
    'Custom field values by handle (the `shipmentFields` option), each of its field\'s type; null or an empty string removes a value; an unknown handle is a 422 on `fields.<handle>`.',
  ),
  integrationHandle: Change(ShortText, 'The integration the change comes from, on the history row.'),
  externalCode: Change(ShortText, "The integration's own code of the change, on the history row."),
  items: Change(ItemsInputSchema, 'The order lines the shipment holds, replacing the current ones; [] makes it order-level.'),
  enabled: Change(Type.Boolean(), "False frees the shipment's quantities; true takes them back (a 422 naming the line when another shipment holds them)."),
})

export const IdParamsSchema = Type.Object({ id: Type.String({ description: 'Shipment id' }) })

/** The largest id or page number a request may name: ids are 32-bit integers on PostgreSQL. */
export const MAX_REQUEST_INTEGER = 2_147_483_647

export const ListQuerySchema = Type.Object({
  orderId: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_REQUEST_INTEGER })),
  status: Type.Optional(ShipmentStatusSchema),
  includeDeleted: Type.Optional(Type.Boolean({ default: false })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_REQUEST_INTEGER, default: 1 })),
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  trackingNumber: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: 'Shipments with this tracking number, ignoring case, spaces and dashes.' }),
  ),
  afterId: Type.Optional(
    Type.Integer({ minimum: 0, maximum: MAX_REQUEST_INTEGER, description: 'Key paging: the shipments after this id (the last of the previous page); as fast deep in the list as at its start.' }),
  ),
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

/** The package's error code of every error answer: stable, unlike its message (docs/shipment-api.md#error-codes). */
const ErrorCode = Type.String({ description: 'The package\'s error code, such as SHIPMENTS_LABEL_EXISTS (see the error codes of docs/shipment-api.md)' })
export const ValidationErrorSchema = Type.Object({
  success: Type.Literal(false),
  errors: Type.Record(Type.String(), Type.Array(Type.String())),
  errorCode: ErrorCode,
})
export const ServiceErrorSchema = Type.Object({ success: Type.Literal(false), error: Type.String(), errorCode: ErrorCode })
export const FrameworkErrorSchema = Type.Object({
  name: Type.String(),
  message: Type.String(),
  code: Type.Integer({ description: 'Always 0: the platform renderer\'s integer; errorCode says which error it is' }),
  status: Type.Integer(),
  errorCode: ErrorCode,
})

export const OrderIdParamsSchema = Type.Object({ orderId: Type.String({ description: 'Order id' }) })

/**
 * One of: `count` order-level shipments, one shipment of `items`, or shipments for what is left by
 * `rule`; none creates one order-level shipment. Typed for the document; the route checks each field
 * itself, with the per-field envelope (422).
 */
export const CreateBodySchema = Type.Object(
  {
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 1, description: 'How many order-level shipments' })),
    items: Type.Optional(Type.Array(ShipmentItemInputSchema, { maxItems: MAX_ITEMS_PER_SHIPMENT, description: 'One shipment holding these lines, each at most once' })),
    rule: Type.Optional(Type.String({ description: 'A split rule for what is left of the order: remaining, perLine, or a rule of the splitRules option' })),
  },
  { description: 'At most one of count, items and rule (two are a 422 on `items`).' },
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
