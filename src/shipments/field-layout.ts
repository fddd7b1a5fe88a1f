// The custom field layout of shipments: what a host declares in `shipmentFields`.
import { Type, type Static } from '@sinclair/typebox'

export const SHIPMENT_FIELD_TYPES = ['text', 'number', 'boolean', 'date', 'json'] as const

export const ShipmentFieldSchema = Type.Object(
  {
    handle: Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]*$', maxLength: 64 }),
    name: Type.Optional(Type.String()),
    type: Type.Union(SHIPMENT_FIELD_TYPES.map((type) => Type.Literal(type))),
    maxLength: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
)

/** A custom field of shipments, as the `shipmentFields` option declares it (checked against the schema above). */
export interface ShipmentFieldDefinition {
  handle: string
  /** The label used in messages. Default: the handle in words. */
  name?: string | undefined
  type: (typeof SHIPMENT_FIELD_TYPES)[number]
  /** `text` fields only: the most characters a value may have. */
  maxLength?: number | undefined
}
true satisfies Static<typeof ShipmentFieldSchema> extends ShipmentFieldDefinition ? true : false
