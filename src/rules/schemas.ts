// TypeBox schemas of the shipping rules' routes. The rules' body schema documents the shapes (OpenAPI);
// the route checks only that the body is an object, and the service checks the rest, naming each rule.
import { Type } from '@sinclair/typebox'
import { WEIGHT_UNITS } from '../model/units.js'
import { QuoteSchema } from '../deliveries/schemas.js'
import { RULE_LIMITS } from './validation.js'
import { POSITIVE_DECIMAL_PATTERN } from '../http/exact-decimals.js'

const Literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((value) => Type.Literal(value)))
// Null first, should the schema ever validate: with coerceTypes, a null tried against a number branch first becomes 0.
const Optional = <T extends Parameters<typeof Type.Optional>[0]>(schema: T) => Type.Optional(Type.Union([Type.Null(), schema]))
const Count = (description: string, maximum: number) => Type.Integer({ minimum: 1, maximum, description })
const Text = (maxLength = 255) => Type.String({ maxLength })

// One object rather than a union of four kinds: the service says which fields each kind takes.
const ChoiceSchema = Type.Object(
  {
    kind: Literals(['cheapest', 'cheapestWithin', 'fastest', 'service'] as const),
    days: Type.Optional(Count('cheapestWithin: the number of days', RULE_LIMITS.days)),
    carrier: Type.Optional(Text()),
    service: Type.Optional(Text()),
  },
  { additionalProperties: false, description: "cheapest; cheapestWithin (days); fastest; or service (carrier and service, checked against the provider's list when it gives one)" },
)

const ConditionsSchema = Type.Object(
  {
    countries: Optional(Type.Array(Text(8), { maxItems: RULE_LIMITS.countries, description: 'Destination countries, ISO 3166-1 alpha-2; absent or empty: any' })),
    weight: Optional(
      Type.Object(
        {
          min: Optional(Type.String({ pattern: POSITIVE_DECIMAL_PATTERN, description: 'The parcel weighs at least this: an exact decimal string such as "2.5" (a JSON number is refused)' })),
          max: Optional(Type.String({ pattern: POSITIVE_DECIMAL_PATTERN, description: 'The parcel weighs less than this: an exact decimal string such as "30"' })),
          unit: Literals(WEIGHT_UNITS),
        },
        { additionalProperties: false },
      ),
    ),
    parcelCount: Optional(Type.Object({ min: Optional(Count('At least this many parcels', RULE_LIMITS.parcels)), max: Optional(Count('At most this many parcels', RULE_LIMITS.parcels)) }, { additionalProperties: false, description: "The shipment's number of parcels, min and max included" })),
    orderAttribute: Optional(
      Type.Object({ name: Text(64), values: Type.Array(Text(), { maxItems: RULE_LIMITS.attributeValues }) }, { additionalProperties: false, description: 'An attribute of the order (OrderSummary.attributes, such as shippingMethod) equal to one of the values' }),
    ),
  },
  { additionalProperties: false, description: 'Every condition given must hold' },
)

const RuleFields = {
  name: Text(RULE_LIMITS.name),
  enabled: Type.Boolean(),
  integration: Type.String({ maxLength: 255, description: 'Handle of an integration whose provider sells labels' }),
  conditions: ConditionsSchema,
  choice: ChoiceSchema,
  boxId: Type.Union([Type.Null(), Type.Integer({ minimum: 1 })], { description: 'A box of the catalogue (its id) to pack in first when parcels are suggested' }),
}

const RuleInputSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ maxLength: 64, description: 'Kept across edits; one is made for a rule sent without' })),
    name: RuleFields.name,
    enabled: Type.Optional(RuleFields.enabled),
    integration: RuleFields.integration,
    conditions: Type.Optional(ConditionsSchema),
    choice: ChoiceSchema,
    boxId: Type.Optional(RuleFields.boxId),
  },
  { additionalProperties: false },
)
const DefaultSchema = Type.Object({ integration: RuleFields.integration, choice: ChoiceSchema, boxId: Type.Optional(RuleFields.boxId) }, { additionalProperties: false })

export const RulesBodySchema = Type.Object(
  {
    rules: Type.Array(RuleInputSchema, { maxItems: RULE_LIMITS.rules, description: 'In order: the first enabled rule whose conditions hold wins' }),
    fallback: Type.Union([Type.Null(), DefaultSchema], { description: 'What applies when no rule matches; null: nothing is bought' }),
  },
  { additionalProperties: false },
)

const StoredRuleSchema = Type.Object({ id: Type.String(), ...RuleFields, boxId: Type.Optional(RuleFields.boxId) })
export const RulesResponseSchema = Type.Object({
  success: Type.Literal(true),
  rules: Type.Array(StoredRuleSchema),
  fallback: Type.Union([DefaultSchema, Type.Null()]),
  savedAt: Type.Union([Type.String(), Type.Null()]),
  savedBy: Type.Union([Type.String(), Type.Null()]),
})

const CheckSchema = Type.Object({ condition: Literals(['countries', 'weight', 'parcelCount', 'orderAttribute'] as const), held: Type.Boolean(), why: Type.String() })
const FactsSchema = Type.Object({
  country: Type.Union([Type.String(), Type.Null()]),
  weight: Type.Union([Type.Object({ value: Type.String(), unit: Literals(WEIGHT_UNITS) }), Type.Null()]),
  parcelCount: Type.Integer(),
  orderAttributes: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()])),
})
const ParcelExplanationSchema = Type.Object({
  parcelId: Type.Integer(),
  facts: FactsSchema,
  factsText: Type.String(),
  tried: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), position: Type.Integer(), enabled: Type.Boolean(), matched: Type.Boolean(), checks: Type.Array(CheckSchema), why: Type.String() })),
  rule: Type.Union([Type.Object({ id: Type.String(), name: Type.String(), position: Type.Integer() }), Type.Null()]),
  usedDefault: Type.Boolean(),
  choice: Type.Union([Type.Object({ integration: Type.String(), choice: ChoiceSchema, boxId: Type.Union([Type.Integer(), Type.Null()]) }), Type.Null()]),
  rated: Type.Boolean(),
  offer: Type.Union([QuoteSchema, Type.Null()]),
  refused: Type.Union([Type.String(), Type.Null()]),
  summary: Type.String(),
})
export const ExplanationResponseSchema = Type.Object({ success: Type.Literal(true), shipmentId: Type.Integer(), rated: Type.Boolean(), parcels: Type.Array(ParcelExplanationSchema) })

export const ExplainQuerySchema = Type.Object(
  { rate: Type.Optional(Type.Boolean({ description: 'Ask the provider for rates and say which offer each parcel would take (quotes are stored; needs editShipments; nothing is bought)' })) },
  { additionalProperties: false },
)
