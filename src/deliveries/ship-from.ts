// Where parcels ship from. Store admins keep it as a setting (the package state row below, edited on
// the Boxes page or through the API); without one, the `deliveries.shipFrom` option stands. Rates,
// labels and the fingerprints of quotes read it at each call, so a new address makes older quotes stale.
import { Type } from '@sinclair/typebox'
import { typeBoxValue } from '../lazy.js'
import type { DataLayer } from '../db/data-layer.js'
import { ShipmentValidationError } from '../errors.js'
import type { PostalAddress } from '../order-store.js'
import { TEXT_LIMITS, textProblem } from '../text.js'

const AddressText = (maxLength: number) => Type.String({ minLength: 1, maxLength })
const OptionalAddressText = (maxLength: number) => Type.Optional(Type.Union([Type.String({ maxLength }), Type.Null()]))

/** A postal address: the ship-from option and setting. */
export const PostalAddressSchema = Type.Object(
  {
    name: Type.Union([AddressText(255), Type.Null()]),
    company: OptionalAddressText(255),
    street1: AddressText(255),
    street2: OptionalAddressText(255),
    city: AddressText(255),
    state: OptionalAddressText(255),
    postalCode: AddressText(32),
    country: Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, such as "US"' }),
    phone: OptionalAddressText(64),
    email: OptionalAddressText(255),
  },
  { additionalProperties: false },
)

/**
 * What a request may send as an address: every field text or null, so that the service, not the
 * schema, names each problem in a store admin's words (readPostalAddress); unknown fields are dropped.
 */
export const PostalAddressInputSchema = Type.Object(
  Object.fromEntries(Object.keys(PostalAddressSchema.properties).map((key) => [key, Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]))])),
  { additionalProperties: false, description: 'street1, city, postalCode and country required; country ISO 3166-1 alpha-2' },
)

export const SHIP_FROM_STATE_KEY = 'deliveries.shipFrom'

export interface ShipFrom {
  address: PostalAddress | null
  /** Where it comes from: the stored setting, the plugin option, or nowhere (rates and labels refused). */
  source: 'setting' | 'option' | null
}

/** Why a field of an address is refused, in a store admin's words. */
function problemOf(schema: { minLength?: number; maxLength?: number; pattern?: string }, value: unknown): string {
  if (value === undefined || value === null || value === '') return 'is required'
  if (typeof value !== 'string') return 'must be text'
  if (schema.pattern) return 'must be a two-letter country code (ISO 3166-1), such as US'
  if (schema.maxLength !== undefined && value.length > schema.maxLength) return `must be at most ${schema.maxLength} characters`
  return 'is not valid'
}

/**
 * An address from what a form or a request sent: text trimmed, an empty optional field null, the
 * country upper-cased. Refused field by field (422) when it is not a postal address.
 */
export function readPostalAddress(input: unknown): PostalAddress {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new ShipmentValidationError({ shipFrom: ['must be an address'] })
  const required = new Set(['street1', 'city', 'postalCode', 'country'])
  const cleaned: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(input)) {
    const trimmed = typeof value === 'string' ? value.trim() : value
    cleaned[key] = trimmed === '' && !required.has(key) ? null : key === 'country' && typeof trimmed === 'string' ? trimmed.toUpperCase() : trimmed
  }
  cleaned.name ??= null
  const errors: Record<string, string[]> = {}
  for (const error of typeBoxValue().Value.Errors(PostalAddressSchema, cleaned)) {
    const field = error.path.replace(/^\//, '').split('/')[0] || 'shipFrom'
    const message = field in PostalAddressSchema.properties ? problemOf(error.schema as never, cleaned[field]) : 'is not a field of an address'
    if (!errors[field]?.includes(message)) (errors[field] ??= []).push(message)
  }
  for (const [field, value] of Object.entries(cleaned)) {
    const problem = typeof value === 'string' && !errors[field] ? textProblem(value, { maxLength: TEXT_LIMITS.short }) : null
    if (problem) errors[field] = [problem]
  }
  if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
  return cleaned as unknown as PostalAddress
}

export function createShipFromSetting(deps: { data: DataLayer; option: PostalAddress | null }) {
  return {
    async get(): Promise<ShipFrom> {
      const stored = await deps.data.packageState(SHIP_FROM_STATE_KEY)
      const address = stored ? (JSON.parse(stored) as PostalAddress | null) : null
      if (address) return { address, source: 'setting' }
      return { address: deps.option, source: deps.option ? 'option' : null }
    },
    /** Stores the address (validated); null clears the setting, and the option stands again. */
    async set(input: PostalAddress | null): Promise<ShipFrom> {
      const address = input === null ? null : readPostalAddress(input)
      await deps.data.setPackageState(SHIP_FROM_STATE_KEY, JSON.stringify(address))
      return this.get()
    },
  }
}

export type ShipFromSetting = ReturnType<typeof createShipFromSetting>
