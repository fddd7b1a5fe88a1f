// The `addresses` option: address verification's mode and integration until a store admin saves the
// setting (on the Shipping rules page, or PUT /address-verification); the setting wins from then on.
import { Type, type Static } from '@sinclair/typebox'

/**
 * Address verification: `verification.mode` off (default) | warn | block, and `verification.integration`
 * the handle of the integration whose provider verifies (one that sells labels and verifies addresses,
 * EasyPost's); checked when the setting is saved, not at registration (integrations live in the database).
 */
export interface AddressesOptions {
  addresses?: { verification?: { mode?: 'off' | 'warn' | 'block' | undefined; integration?: string | null | undefined } | undefined } | undefined
}

export const AddressesOptionsSchema = Type.Object({
  addresses: Type.Object(
    {
      verification: Type.Object(
        {
          mode: Type.Union([Type.Literal('off'), Type.Literal('warn'), Type.Literal('block')], { default: 'off' }),
          integration: Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()], { default: null }),
        },
        { additionalProperties: false, default: {} },
      ),
    },
    { additionalProperties: false, default: {} },
  ),
})

export type ResolvedAddressesOptions = Static<typeof AddressesOptionsSchema>['addresses']
