// The schemas of the ship-to check's routes and of the address verification setting.
import { Type } from '@sinclair/typebox'
import { PostalAddressSchema } from '../deliveries/ship-from.js'

const Mode = Type.Union([Type.Literal('off'), Type.Literal('warn'), Type.Literal('block')])
const Verdict = Type.Union([Type.Literal('deliverable'), Type.Literal('corrected'), Type.Literal('undeliverable'), Type.Literal('unverified')])
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

export const AddressVerificationSettingSchema = Type.Object({
  success: Type.Literal(true),
  mode: Mode,
  integration: Nullable(Type.String()),
  savedAt: Nullable(Type.String({ description: 'null while the option\'s value stands' })),
  savedBy: Nullable(Type.String()),
})

export const AddressVerificationBodySchema = Type.Object(
  {
    mode: Mode,
    integration: Type.Optional(Nullable(Type.String({ maxLength: 255, description: 'The handle of an integration that sells labels and verifies addresses; required unless the mode is off' }))),
  },
  { additionalProperties: false },
)

const ProblemSchema = Type.Object({ code: Type.String(), field: Nullable(Type.String()), message: Type.String(), suggestion: Nullable(Type.String()) })

export const AddressCheckSchema = Type.Object({
  success: Type.Literal(true),
  shipmentId: Type.Integer(),
  mode: Mode,
  status: Type.Union([Type.Literal('unchecked'), Type.Literal('current'), Type.Literal('stale')], {
    description: "unchecked: never verified; current: the check is of the order's address as it is now; stale: the order's address changed since",
  }),
  verdict: Nullable(Verdict),
  decision: Nullable(Type.Union([Type.Literal('accepted'), Type.Literal('asIs')])),
  problems: Type.Array(ProblemSchema, { description: "The carrier's words (EasyPost's codes, such as E.ADDRESS.NOT_FOUND)" }),
  orderAddress: Nullable(PostalAddressSchema),
  suggestion: Nullable(PostalAddressSchema),
  changes: Type.Array(Type.Object({ field: Type.String(), from: Nullable(Type.String()), to: Nullable(Type.String()) }), { description: "The carrier's corrections, field by field (a current check only)" }),
  shipTo: Nullable(PostalAddressSchema),
  ownShipTo: Type.Boolean({ description: "true: rates, labels and documents use the accepted correction; false: the order's address" }),
  warning: Nullable(Type.String({ description: 'Why the address is in doubt under the setting (warn and block modes)' })),
  checkedAt: Nullable(Type.String()),
})

export const VerifyBodySchema = Type.Union([
  Type.Object({ integration: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "Default: the setting's integration" })) }, { additionalProperties: false }),
  Type.Null(),
])
