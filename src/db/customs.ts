// The contract for crossing borders: a parcel's customs declaration (one per parcel, kept with it, built from
// its items and editable before purchase, with the forms the provider returned with its label), and a
// shipment's ship-to check (the carrier's verdict on the address, its corrections, the admin's decision
// and the shipment's own ship-to address once a correction is accepted: never written to the host's order).

/** One line of a declaration. Values are exact decimal strings, never floats. */
export interface CustomsItemRow {
  /** The order line it was built from; null for a line the admin added by hand. */
  lineItemId: number | null
  description: string
  quantity: number
  /** The line's total value (not per unit), in the declaration's currency, as EasyPost's customs item wants. */
  value: string
  /** The line's total weight. */
  weight: { value: string; unit: 'g' | 'kg' | 'lb' | 'oz' }
  /** Harmonized System tariff number (6 to 10 digits, dots allowed). */
  tariffNumber: string | null
  /** ISO 3166-1 alpha-2. */
  originCountry: string | null
  sku: string | null
}

/** A form the provider returned with an international label (CN22, CN23, commercial invoice). */
export interface CustomsFormRow {
  type: string
  url: string
}

export interface CustomsDeclarationRow {
  parcelId: number
  shipmentId: number
  contentsType: string
  contentsExplanation: string | null
  nonDeliveryOption: string
  restrictionType: string
  restrictionComments: string | null
  signer: string | null
  /** DDU or DDP. */
  incoterm: string
  /** EEL/PFC ("NOEEI 30.37(a)") or an AES ITN. */
  eelPfc: string | null
  certify: boolean
  currency: string
  items: CustomsItemRow[]
  /** False while the declaration is the one built from the parcel's items; true once someone edited it. */
  edited: boolean
  forms: CustomsFormRow[]
  createdAt: Date
  updatedAt: Date
}

export type NewCustomsDeclaration = Omit<CustomsDeclarationRow, 'createdAt' | 'updatedAt' | 'forms'> & { forms?: CustomsFormRow[] }

/** An address as the check keeps it (the package's PostalAddress shape, stored as JSON). */
export type CheckedAddress = Record<string, string | null>

export interface AddressProblemRow {
  code: string
  field: string | null
  message: string
  suggestion: string | null
}

/** deliverable: the carrier knows it as is; corrected: deliverable with corrections; undeliverable: it is not; unverified: the provider could not say. */
export type AddressVerdict = 'deliverable' | 'corrected' | 'undeliverable' | 'unverified'
/** accepted: the corrections became the shipment's ship-to; asIs: ship to the address as it is, knowingly. */
export type AddressDecision = 'accepted' | 'asIs'

export interface AddressCheckRow {
  shipmentId: number
  /** The shipment's own ship-to address (set when a correction is accepted); null: the order's address. */
  shipTo: CheckedAddress | null
  verdict: AddressVerdict | null
  /** The carrier's corrected address, when it gave one. */
  suggestion: CheckedAddress | null
  problems: AddressProblemRow[]
  /** A hash of the address checked: a check holds only while the address is the same. */
  fingerprint: string | null
  decision: AddressDecision | null
  checkedAt: Date | null
  updatedAt: Date
}

export type AddressCheckChange = Partial<Omit<AddressCheckRow, 'shipmentId' | 'updatedAt'>>

export interface CustomsStore {
  /** The declaration of one parcel, or undefined. */
  declaration(parcelId: number): Promise<CustomsDeclarationRow | undefined>
  /** The declarations of a shipment's parcels (a few: parcels per shipment are bounded). */
  declarationsOf(shipmentId: number): Promise<CustomsDeclarationRow[]>
  /** The declarations of many parcels at once (a batch's print job), in no order. */
  declarationsFor(parcelIds: readonly number[]): Promise<CustomsDeclarationRow[]>
  /** Writes the parcel's declaration whole (insert or replace; the forms are kept unless given). */
  saveDeclaration(row: NewCustomsDeclaration): Promise<CustomsDeclarationRow>
  /** Keeps the forms the provider returned with the parcel's label (no-op without a declaration). */
  saveForms(parcelId: number, forms: CustomsFormRow[]): Promise<void>
  deleteDeclaration(parcelId: number): Promise<void>
  /** The shipment's ship-to check, or undefined. */
  addressCheck(shipmentId: number): Promise<AddressCheckRow | undefined>
  /** The checks of many shipments at once (a batch), in no order. */
  addressChecksFor(shipmentIds: readonly number[]): Promise<AddressCheckRow[]>
  /** Inserts or updates the shipment's check with the fields given. */
  saveAddressCheck(shipmentId: number, change: AddressCheckChange): Promise<AddressCheckRow>
}
