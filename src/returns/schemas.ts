// TypeBox schemas of the returns routes.
import { Type } from '@sinclair/typebox'
import { RETURN_STATES } from '../db/returns.js'
import { LABEL_FORMATS } from '../gateway/delivery-provider.js'
import { DIMENSION_UNITS, WEIGHT_UNITS } from '../model/units.js'
import { DecimalString as Decimal } from '../http/exact-decimals.js'

const NullableString = Type.Union([Type.String(), Type.Null()])
const Literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((value) => Type.Literal(value)))
const Id = Type.Integer({ minimum: 1, maximum: 2_147_483_647 })
const Count = Type.Integer({ minimum: 0, maximum: 2_147_483_647 })

export const ReturnParamsSchema = Type.Object({ returnId: Type.String({ description: 'Return id' }) })

const ReceivedSchema = Type.Object({ resellable: Type.Integer(), damaged: Type.Integer(), missing: Type.Integer() })

export const ReturnSchema = Type.Object({
  id: Type.Integer(),
  orderId: Type.Integer(),
  reference: Type.String(),
  state: Literals(RETURN_STATES),
  lines: Type.Array(
    Type.Object({
      lineItemId: Type.Integer(),
      quantity: Type.Integer(),
      reason: Type.String(),
      note: NullableString,
      received: Type.Union([ReceivedSchema, Type.Null()], { description: 'What arrived, by condition; null until received' }),
    }),
  ),
  stateMessage: NullableString,
  trackingNumber: NullableString,
  trackingUrl: NullableString,
  carrier: NullableString,
  service: NullableString,
  label: Type.Union([
    Type.Object({
      url: Type.String(),
      format: NullableString,
      cost: Type.Union([Type.Object({ amount: Type.String(), currency: Type.String() }), Type.Null()]),
      operationId: Type.String(),
    }),
    Type.Null(),
  ]),
  labelPending: Type.Boolean(),
  dateReceived: NullableString,
  dateCreated: Type.String(),
  dateUpdated: Type.String(),
})

export const ReturnResponseSchema = Type.Object({ success: Type.Literal(true), return: ReturnSchema })
/** A voided return label: the return without it, and the refund's status at the provider (EasyPost: submitted). */
export const ReturnLabelVoidResponseSchema = Type.Object({ success: Type.Literal(true), return: ReturnSchema, refundStatus: Type.String() })
export const ReturnListResponseSchema = Type.Object({ success: Type.Literal(true), returns: Type.Array(ReturnSchema), nextBeforeId: Type.Union([Type.Integer(), Type.Null()]) })
export const ReturnHistoryResponseSchema = Type.Object({
  success: Type.Literal(true),
  history: Type.Array(
    Type.Object({ id: Type.Integer(), fromState: NullableString, toState: Type.String(), message: NullableString, userId: NullableString, source: Type.String(), dateCreated: Type.String() }),
  ),
})
export const ReturnableResponseSchema = Type.Object({
  success: Type.Literal(true),
  reasons: Type.Array(Type.String()),
  lines: Type.Array(
    Type.Object({ lineItemId: Type.Integer(), sku: NullableString, name: NullableString, shipped: Type.Integer(), returned: Type.Integer(), returnable: Type.Integer() }),
  ),
})

export const ReturnListQuerySchema = Type.Object({
  state: Type.Optional(Literals(RETURN_STATES)),
  orderId: Type.Optional(Type.String({ pattern: '^[1-9]\\d{0,9}$' })),
  olderThanDays: Type.Optional(Type.String({ pattern: '^\\d{1,4}$', description: 'Returns created at least this many days ago' })),
  beforeId: Type.Optional(Type.String({ pattern: '^[1-9]\\d{0,9}$', description: 'Key paging: returns older than this id' })),
  limit: Type.Optional(Type.String({ pattern: '^\\d{1,3}$', description: 'At most 200; default 50' })),
})

/** Typed for the document; the service checks every field again (and the reason against the configured list). */
export const RequestReturnBodySchema = Type.Object(
  {
    lines: Type.Array(
      Type.Object(
        { lineItemId: Id, quantity: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), reason: Type.String({ minLength: 1, maxLength: 64 }), note: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])) },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 500 },
    ),
    message: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  },
  { additionalProperties: false },
)

export const UpdateReturnBodySchema = Type.Object(
  {
    // Every state, so that one the update does not take is the documented 409, not a schema refusal.
    state: Type.Optional(Literals(RETURN_STATES)),
    message: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    trackingNumber: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Entered by hand: the customer ships the return themselves' })),
    trackingUrl: Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()])),
    carrier: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
  },
  { additionalProperties: false },
)

export const ReturnLabelBodySchema = Type.Object(
  {
    integration: Type.String({ minLength: 1, maxLength: 255 }),
    carrier: Type.String({ minLength: 1, maxLength: 255 }),
    service: Type.String({ minLength: 1, maxLength: 255 }),
    weight: Type.Object({ value: Decimal, unit: Literals(WEIGHT_UNITS) }, { additionalProperties: false }),
    dimensions: Type.Optional(Type.Union([Type.Object({ length: Decimal, width: Decimal, height: Decimal, unit: Literals(DIMENSION_UNITS) }, { additionalProperties: false }), Type.Null()])),
    labelFormat: Type.Optional(Literals(LABEL_FORMATS)),
  },
  { additionalProperties: false },
)

export const ReceiveReturnBodySchema = Type.Object(
  {
    lines: Type.Array(
      Type.Object({ lineItemId: Id, resellable: Type.Optional(Count), damaged: Type.Optional(Count), missing: Type.Optional(Count) }, { additionalProperties: false }),
      { minItems: 1, maxItems: 500 },
    ),
    message: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  },
  { additionalProperties: false },
)
