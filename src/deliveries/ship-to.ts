// A shipment's ship-to address: the order's, unless a check of the carrier's holds for it and the store
// admin accepted the carrier's correction (then the shipment's own, kept on the check row, never written
// to the host's order). A check holds only while the order's address is the one it checked: its
// fingerprint is of that address, so an address changed on the order makes the check stale.
import { createHash } from 'node:crypto'
import type { AddressCheckRow, CheckedAddress } from '../db/customs.js'
import type { PostalAddress } from '../order-store.js'

export const ADDRESS_VERIFICATION_MODES = ['off', 'warn', 'block'] as const
/** off: never verified before rating; warn: rated and bought, with a warning; block: an undeliverable address is refused. */
export type AddressVerificationMode = (typeof ADDRESS_VERIFICATION_MODES)[number]

/** The setting: the mode, and the handle of the integration whose provider verifies. */
export interface AddressVerificationSetting {
  mode: AddressVerificationMode
  integration: string | null
}

/** The package state row that keeps the setting (the option gives its value until it is saved). */
export const ADDRESS_VERIFICATION_STATE_KEY = 'addresses.verification'

const ADDRESS_FIELDS = ['name', 'company', 'street1', 'street2', 'city', 'state', 'postalCode', 'country', 'phone', 'email'] as const

/** A hash of every field of the address (spacing at the ends aside): any change to it makes a check stale. */
export function addressFingerprint(address: PostalAddress): string {
  const values = ADDRESS_FIELDS.map((field) => {
    const value = address[field]
    return typeof value === 'string' ? value.trim() : ''
  })
  return createHash('sha256').update(JSON.stringify(values)).digest('hex')
}

/** The address as the check row keeps it (JSON, every field text or null). */
export function toCheckedAddress(address: PostalAddress): CheckedAddress {
  return Object.fromEntries(ADDRESS_FIELDS.map((field) => [field, typeof address[field] === 'string' ? address[field] : null]))
}

/** A stored address read back; null when it lacks what a label needs (a row written by hand, say). */
export function fromCheckedAddress(stored: CheckedAddress | null | undefined): PostalAddress | null {
  if (!stored || typeof stored !== 'object') return null
  const text = (field: string) => (typeof stored[field] === 'string' && stored[field] !== '' ? stored[field] : null)
  const [street1, city, postalCode, country] = [text('street1'), text('city'), text('postalCode'), text('country')]
  if (!street1 || !city || !postalCode || !country) return null
  return { name: text('name'), company: text('company'), street1, street2: text('street2'), city, state: text('state'), postalCode, country, phone: text('phone'), email: text('email') }
}

/** The shipment's ship-to as rates, labels and documents use it, with the check it comes from. */
export interface ShipTo {
  /** The order's address (the host's), unchanged by anything here. */
  orderAddress: PostalAddress | null
  check: AddressCheckRow | undefined
  /** The check holds: it checked the order's address as it is now. */
  current: boolean
  /** The address to ship to: the shipment's own when a correction was accepted and the check holds, else the order's. */
  address: PostalAddress | null
  /** True when `address` is the shipment's own (the accepted correction). */
  own: boolean
}

export function shipToOf(orderAddress: PostalAddress | null, check: AddressCheckRow | undefined): ShipTo {
  const current = check !== undefined && orderAddress !== null && check.fingerprint === addressFingerprint(orderAddress)
  const own = current && check.decision === 'accepted' ? fromCheckedAddress(check.shipTo) : null
  return { orderAddress, check, current, address: own ?? orderAddress, own: own !== null }
}

/** The gate rates and purchases call first (address-checks.ts): refuses in block mode, else returns warn mode's warning or null. */
export type AddressGate = (shipment: { id: number; orderId: number; reference: string }) => Promise<string | null>
