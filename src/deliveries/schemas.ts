// TypeBox schemas of the deliveries routes: parcels, rates, labels and their operations.
import { Type } from '@sinclair/typebox'
import { LABEL_FORMATS } from '../gateway/delivery-provider.js'
import { DIMENSION_UNITS, WEIGHT_UNITS } from '../model/units.js'
import { PostalAddressInputSchema, PostalAddressSchema } from './ship-from.js'
import { DecimalString as Decimal } from '../http/exact-decimals.js'
import { ParcelSchema } from '../shipments/schemas.js'

export { ParcelSchema }

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()])
const NullableString = Nullable(Type.String())
const Literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((value) => Type.Literal(value)))

export const ParcelParamsSchema = Type.Object({ id: Type.String({ description: 'Shipment id' }), parcelId: Type.String({ description: 'Parcel id' }) })

const WeightSchema = Type.Object({ value: Decimal, unit: Literals(WEIGHT_UNITS) }, { additionalProperties: false })
const DimensionsSchema = Type.Object({ length: Decimal, width: Decimal, height: Decimal, unit: Literals(DIMENSION_UNITS) }, { additionalProperties: false })
const ParcelItemSchema = Type.Object({ lineItemId: Type.Integer({ minimum: 1 }), quantity: Type.Integer({ minimum: 1 }) }, { additionalProperties: false })

/** A new parcel (weight required) or a change of one (every field optional). */
export const ParcelBodySchema = Type.Object(
  {
    weight: Type.Optional(WeightSchema),
    dimensions: Type.Optional(Type.Union([DimensionsSchema, Type.Null()])),
    boxId: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    items: Type.Optional(Type.Array(ParcelItemSchema, { maxItems: 500, description: 'The order lines in the parcel (lines the shipment holds)' })),
  },
  { additionalProperties: false },
)


export const ParcelResponseSchema = Type.Object({ success: Type.Literal(true), parcel: ParcelSchema })
export const ParcelListResponseSchema = Type.Object({ success: Type.Literal(true), parcels: Type.Array(ParcelSchema) })

export const RatesBodySchema = Type.Object({ integration: Type.String({ minLength: 1, maxLength: 255, description: 'Handle of an integration whose provider gives rates' }) }, { additionalProperties: false })
export const QuoteSchema = Type.Object({
  id: Type.Integer(),
  parcelId: Type.Integer(),
  integration: Type.String(),
  carrier: Type.String(),
  service: Type.String(),
  amount: Type.String({ description: 'Exact decimal' }),
  currency: Type.String(),
  deliveryDays: Type.Union([Type.Integer(), Type.Null()]),
  deliveryDate: NullableString,
  expiresAt: Type.String(),
})
/** Address verification's warn mode: why the ship-to address is in doubt, or null (docs/shipping-abroad.md#verified-addresses). */
const AddressWarning = Type.Optional(Nullable(Type.String({ description: 'Why the ship-to address is in doubt under address verification (warn and block modes), or null' })))

export const RatesResponseSchema = Type.Object({ success: Type.Literal(true), quotes: Type.Array(QuoteSchema), addressWarning: AddressWarning })

export const BuyBodySchema = Type.Object(
  {
    integration: Type.String({ minLength: 1, maxLength: 255, description: 'Handle of an integration whose provider sells labels' }),
    quoteId: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'A stored quote: refused (409) when expired or made for other inputs' })),
    carrier: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    service: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    labelFormat: Type.Optional(Literals(LABEL_FORMATS)),
  },
  { additionalProperties: false },
)
export const BuyResponseSchema = Type.Object({ success: Type.Literal(true), parcel: ParcelSchema, operationId: Type.String(), recovered: Type.Boolean(), addressWarning: AddressWarning })
export const VoidResponseSchema = Type.Object({ success: Type.Literal(true), parcel: ParcelSchema, refundStatus: Type.String() })

export const LabelQuerySchema = Type.Object({ format: Type.Optional(Literals(LABEL_FORMATS)) })
export const LabelResponseSchema = Type.Object({ success: Type.Literal(true), url: Type.String(), format: Type.String() })

export const FormsResponseSchema = Type.Object({
  success: Type.Literal(true),
  declared: Type.Boolean({ description: 'Whether the parcel has a customs declaration (an international parcel).' }),
  forms: Type.Array(
    Type.Object({
      type: Type.String({ description: "The provider's name of the form: commercial_invoice, cn22, cn23, ..." }),
      url: Type.String({ description: "Where the provider serves the form (its file host's URL, fetched under the labels' outbound rules when printed)." }),
    }),
  ),
})

export const OperationsResponseSchema = Type.Object({
  success: Type.Literal(true),
  operations: Type.Array(
    Type.Object({
      operationId: Type.String(),
      parcelId: Type.Integer(),
      state: Type.String(),
      carrier: Type.String(),
      service: Type.String(),
      externalId: NullableString,
      error: NullableString,
      userId: NullableString,
      dateCreated: Type.String(),
      attempts: Type.Array(
        Type.Object({
          step: Type.String(),
          request: Type.Record(Type.String(), Type.Unknown()),
          response: Type.Record(Type.String(), Type.Unknown()),
          statusCode: Type.Union([Type.Integer(), Type.Null()]),
          error: NullableString,
          durationMs: Type.Integer(),
          dateCreated: Type.String(),
        }),
      ),
    }),
  ),
})

export const BoxParamsSchema = Type.Object({ boxId: Type.String({ description: 'Box id' }) })
export const BoxBodySchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    innerDimensions: Type.Optional(DimensionsSchema),
    emptyWeight: Type.Optional(WeightSchema),
    maxWeight: Type.Optional(WeightSchema),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
export const BoxSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  innerDimensions: Type.Object({ length: Type.String(), width: Type.String(), height: Type.String(), unit: Type.String() }),
  emptyWeight: Type.Object({ value: Type.String(), unit: Type.String() }),
  maxWeight: Type.Object({ value: Type.String(), unit: Type.String() }),
  enabled: Type.Boolean(),
  dateCreated: Type.String(),
  dateUpdated: Type.String(),
})
export const BoxResponseSchema = Type.Object({ success: Type.Literal(true), box: BoxSchema })
export const BoxListResponseSchema = Type.Object({ success: Type.Literal(true), boxes: Type.Array(BoxSchema) })
export const SuccessSchema = Type.Object({ success: Type.Literal(true) })

export const ShipFromResponseSchema = Type.Object({
  success: Type.Literal(true),
  shipFrom: Type.Union([PostalAddressSchema, Type.Null()]),
  source: Type.Union([Type.Literal('setting'), Type.Literal('option'), Type.Null()], { description: 'setting: stored by a store admin; option: the deliveries.shipFrom option; null: none' }),
})
export const ShipFromBodySchema = Type.Object(
  {
    shipFrom: Type.Union([PostalAddressInputSchema, Type.Null()], {
      description: 'The address, or null to clear the setting so that the deliveries.shipFrom option stands. Refused field by field with a 422.',
    }),
  },
  { additionalProperties: false },
)

export const SuggestBodySchema = Type.Object({ apply: Type.Optional(Type.Boolean({ description: 'Create the suggested parcels (default false: only suggest)' })) }, { additionalProperties: false })
const SuggestedParcelSchema = Type.Object({
  box: Type.Object({ id: Type.Integer(), name: Type.String() }),
  items: Type.Array(Type.Object({ lineItemId: Type.Integer(), quantity: Type.Integer() })),
  weight: Type.Object({ value: Type.String(), unit: Type.String() }),
  dimensions: Type.Object({ length: Type.String(), width: Type.String(), height: Type.String(), unit: Type.String() }),
})
export const SuggestResponseSchema = Type.Object({
  success: Type.Literal(true),
  id: Type.String({ description: 'The suggestion, to accept as it is shown: POST it back to /parcels/accept-suggestion' }),
  parcels: Type.Array(SuggestedParcelSchema),
  unpacked: Type.Array(Type.Object({ lineItemId: Type.Integer(), quantity: Type.Integer(), reason: Type.String() })),
  created: Type.Array(ParcelSchema),
})

/** A suggestion passed back as it was returned (its id and parcels; other keys of the answer are ignored). */
export const AcceptSuggestionBodySchema = Type.Object(
  {
    id: Type.String({ maxLength: 100, description: "The suggestion's id, as /parcels/suggest returned it" }),
    parcels: Type.Array(SuggestedParcelSchema, { description: 'Its parcels, unchanged' }),
  },
  { additionalProperties: true },
)
export const AcceptSuggestionResponseSchema = Type.Object({ success: Type.Literal(true), parcels: Type.Array(ParcelSchema) })
