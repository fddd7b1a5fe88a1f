// The `customs` option: the shop's customs settings a declaration starts from until a store admin saves
// them (PUT /customs-settings), plain data checked at registration like every option.
import { Type, type Static } from '@sinclair/typebox'

export const CONTENTS_TYPES = ['merchandise', 'documents', 'gift', 'returned_goods', 'sample', 'other'] as const
export const NON_DELIVERY_OPTIONS = ['return', 'abandon'] as const
export const RESTRICTION_TYPES = ['none', 'other', 'quarantine', 'sanitary_phytosanitary_inspection'] as const
export const INCOTERMS = ['DDU', 'DDP'] as const
/** The US exemption for exports under USD 2,500 per tariff number (15 CFR 30.37(a)); an AES ITN otherwise. */
export const DEFAULT_EEL_PFC = 'NOEEI 30.37(a)'

const Literals = <T extends readonly string[]>(values: T, defaultValue: T[number]) => Type.Union(values.map((value) => Type.Literal(value)), { default: defaultValue })
const NullableText = (maxLength: number) => Type.Union([Type.Null(), Type.String({ minLength: 1, maxLength })], { default: null })

/**
 * Customs: the settings every declaration starts from (a store admin's saved settings take their place).
 * `contentsType` (merchandise), `contentsExplanation` (required for "other"), `nonDeliveryOption` (return),
 * `restrictionType` (none), `restrictionComments`, `signer` (who certifies; null), `certify` (true: the
 * signer certifies the declaration, and a declaration without a signer is incomplete), `incoterm` (DDU:
 * the customer pays duties; DDP: the shop does), `eelPfc` ("NOEEI 30.37(a)"; an AES ITN above USD 2,500
 * per tariff number), `currency` of declared values (USD).
 */
export interface CustomsOptions {
  customs?:
    | {
        contentsType?: (typeof CONTENTS_TYPES)[number] | undefined
        contentsExplanation?: string | null | undefined
        nonDeliveryOption?: (typeof NON_DELIVERY_OPTIONS)[number] | undefined
        restrictionType?: (typeof RESTRICTION_TYPES)[number] | undefined
        restrictionComments?: string | null | undefined
        signer?: string | null | undefined
        certify?: boolean | undefined
        incoterm?: (typeof INCOTERMS)[number] | undefined
        eelPfc?: string | null | undefined
        currency?: string | undefined
      }
    | undefined
}

export const CustomsOptionsSchema = Type.Object({
  customs: Type.Object(
    {
      contentsType: Literals(CONTENTS_TYPES, 'merchandise'),
      contentsExplanation: NullableText(255),
      nonDeliveryOption: Literals(NON_DELIVERY_OPTIONS, 'return'),
      restrictionType: Literals(RESTRICTION_TYPES, 'none'),
      restrictionComments: NullableText(255),
      signer: NullableText(255),
      certify: Type.Boolean({ default: true }),
      incoterm: Literals(INCOTERMS, 'DDU'),
      eelPfc: Type.Union([Type.Null(), Type.String({ minLength: 1, maxLength: 64 })], { default: DEFAULT_EEL_PFC }),
      currency: Type.String({ pattern: '^[A-Z]{3}$', default: 'USD' }),
    },
    { additionalProperties: false, default: {} },
  ),
})

export type ResolvedCustomsOptions = Static<typeof CustomsOptionsSchema>['customs']
