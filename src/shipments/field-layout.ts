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
export type ShipmentFieldDefinition = Static<typeof ShipmentFieldSchema>
