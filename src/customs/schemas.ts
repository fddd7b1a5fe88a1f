// TypeBox schemas of the customs routes. The bodies' schemas document the shapes (OpenAPI); the routes
// check only that a body is an object, and the service checks the rest, naming each field (`items[1].value`).
import { Type } from '@sinclair/typebox'
import { WEIGHT_UNITS } from '../model/units.js'
import { CONTENTS_TYPES, INCOTERMS, NON_DELIVERY_OPTIONS, RESTRICTION_TYPES } from './options.js'
import { MAX_DECLARATION_ITEMS } from './checks.js'

const Literals = <T extends readonly string[]>(values: T, description?: string) => Type.Union(values.map((value) => Type.Literal(value)), description ? { description } : {})
const NullableText = (maxLength: number, description: string) => Type.Union([Type.String({ maxLength }), Type.Null()], { description })

const SettingsFields = {
  contentsType: Literals(CONTENTS_TYPES, 'What the parcel holds (EasyPost contents_type)'),
  contentsExplanation: NullableText(255, 'Required when contentsType is "other"'),
  nonDeliveryOption: Literals(NON_DELIVERY_OPTIONS, 'What the carrier does with a parcel it cannot deliver'),
  restrictionType: Literals(RESTRICTION_TYPES),
  restrictionComments: NullableText(255, 'Required when restrictionType is not "none"'),
  signer: NullableText(255, 'Who certifies the declaration; required when certify is true'),
  certify: Type.Boolean({ description: 'The signer certifies the declaration (customs_certify)' }),
  incoterm: Literals(INCOTERMS, 'DDU: the customer pays duties and taxes; DDP: the shop does'),
  eelPfc: NullableText(64, 'EEL/PFC: "NOEEI 30.37(a)" for US exports under USD 2,500 per tariff number, else an AES ITN'),
  currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217: the currency of every declared value' }),
}

export const CustomsSettingsBodySchema = Type.Object(SettingsFields, { additionalProperties: false })
export const CustomsSettingsResponseSchema = Type.Object({
  success: Type.Literal(true),
  ...SettingsFields,
  savedAt: Type.Union([Type.String(), Type.Null()], { description: 'null: the plugin\'s `customs` options, never saved' }),
  savedBy: Type.Union([Type.String(), Type.Null()]),
})

const WeightSchema = Type.Object({ value: Type.String({ description: 'An exact decimal string' }), unit: Literals(WEIGHT_UNITS) })
const ItemFields = {
  lineItemId: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'The order line it declares; null for a line added by hand' }),
  description: Type.String({ maxLength: 255 }),
  quantity: Type.Integer({ minimum: 1 }),
  value: Type.String({ description: 'The line\'s total value (unit value x quantity), an exact decimal string in the declaration\'s currency' }),
  weight: WeightSchema,
  tariffNumber: Type.Union([Type.String({ maxLength: 13 }), Type.Null()], { description: 'HS tariff number: 6 to 10 digits, dots allowed' }),
  originCountry: Type.Union([Type.String({ maxLength: 2 }), Type.Null()], { description: 'ISO 3166-1 alpha-2' }),
  sku: Type.Union([Type.String({ maxLength: 255 }), Type.Null()]),
}
const ItemSchema = Type.Object(ItemFields)

export const DeclarationBodySchema = Type.Object(
  { ...SettingsFields, items: Type.Array(Type.Object({ ...ItemFields, lineItemId: Type.Optional(ItemFields.lineItemId), sku: Type.Optional(ItemFields.sku) }, { additionalProperties: false }), { maxItems: MAX_DECLARATION_ITEMS }) },
  { additionalProperties: false, description: 'The whole declaration (its settings\' fields and items): checked whole, saved as an edit, kept until reset' },
)

const DeclarationSchema = Type.Object({
  parcelId: Type.Integer(),
  shipmentId: Type.Integer(),
  ...SettingsFields,
  items: Type.Array(ItemSchema),
  edited: Type.Boolean({ description: 'false: built from the parcel\'s items (rebuilt when they change); true: an edit, kept' }),
  stale: Type.Boolean({ description: 'An edit whose lines no longer match the parcel\'s items' }),
  stored: Type.Boolean({ description: 'Stored (an edit, or the declaration a label was bought with); false: built for this answer' }),
  forms: Type.Array(Type.Object({ type: Type.String(), url: Type.String() }), { description: 'The forms the provider returned with the label (CN22, CN23, commercial invoice)' }),
  totals: Type.Object({ value: Type.String(), weight: WeightSchema }),
  problems: Type.Record(Type.String(), Type.Array(Type.String()), { description: 'Field path (items[1].tariffNumber) -> messages; empty when complete. Rates and labels are refused while any remain.' }),
})

export const ParcelCustomsResponseSchema = Type.Object({
  success: Type.Literal(true),
  parcelId: Type.Integer(),
  required: Type.Boolean({ description: 'false: the parcel ships within one country and needs no declaration' }),
  fromCountry: Type.String(),
  toCountry: Type.String(),
  declaration: Type.Union([DeclarationSchema, Type.Null()]),
})
