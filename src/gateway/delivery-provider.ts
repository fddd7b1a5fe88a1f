// The delivery side of a provider: rate quotes, label purchase keyed by a stable operation id, recovery
// of an operation whose outcome is unknown, label documents and voids. Typed over the provider's context,
// so this module stands beside the registry without importing it.

import type { PostalAddress } from '../order-store.js'

export type { PostalAddress }

/** A parcel's size in the units carriers' APIs speak: ounces and inches, exact decimals rounded up to one place. */
export interface ParcelMeasures {
  weightOunces: string
  lengthInches: string | null
  widthInches: string | null
  heightInches: string | null
}

export interface RateRequest {
  /** The shipment's reference, for the provider's records. */
  shipmentReference: string
  parcelId: number
  parcel: ParcelMeasures
  from: PostalAddress
  to: PostalAddress
  /**
   * A return label: the parcel travels from `to` (the customer) back to `from` (the shop). `from` and
   * `to` stay as for the outbound label; the provider swaps them (EasyPost's `is_return`).
   */
  isReturn?: boolean | undefined
  /**
   * The parcel's customs declaration, when its ship-from and ship-to countries differ: complete and
   * checked before the provider is called (a provider never sees an incomplete one).
   */
  customs?: CustomsInfo | undefined
}

/** A customs declaration as a provider is sent it: exact decimals, weights in ounces (rounded up, never down). */
export interface CustomsInfo {
  contentsType: 'merchandise' | 'documents' | 'gift' | 'returned_goods' | 'sample' | 'other'
  contentsExplanation: string | null
  nonDeliveryOption: 'return' | 'abandon'
  restrictionType: 'none' | 'other' | 'quarantine' | 'sanitary_phytosanitary_inspection'
  restrictionComments: string | null
  signer: string
  certify: boolean
  incoterm: 'DDU' | 'DDP'
  /** EEL/PFC ("NOEEI 30.37(a)") or an AES ITN. */
  eelPfc: string | null
  currency: string
  items: CustomsInfoItem[]
}

export interface CustomsInfoItem {
  description: string
  quantity: number
  /** The line's total value (not per unit), an exact decimal in the declaration's currency. */
  value: string
  /** The line's total weight in ounces, an exact decimal rounded up to one place. */
  weightOunces: string
  tariffNumber: string
  /** ISO 3166-1 alpha-2. */
  originCountry: string
  sku: string | null
}

/** A form a provider returned with an international label, to print with it (CN22, CN23, commercial invoice). */
export interface LabelForm {
  /** As the provider names it: `commercial_invoice`, `cn22`, `cn23`, ... */
  type: string
  url: string
}

/** What a provider says of an address: deliverable as is, deliverable as corrected, not deliverable, or no verdict. */
export interface AddressVerification {
  verdict: 'deliverable' | 'corrected' | 'undeliverable' | 'unverified'
  /** The address as the carrier would write it (upper case, ZIP+4, ...), when it gave one. */
  corrected: PostalAddress | null
  problems: Array<{ code: string; field: string | null; message: string; suggestion: string | null }>
}

/** One offer: the amount is an exact decimal string with its currency, never a float. */
export interface RateOffer {
  carrier: string
  service: string
  amount: string
  currency: string
  deliveryDays: number | null
  /** ISO-8601, as the provider gave it. */
  deliveryDate: string | null
  externalRateId?: string | null | undefined
}

export type LabelFormat = 'PDF' | 'ZPL' | 'PNG'
export const LABEL_FORMATS = ['PDF', 'ZPL', 'PNG'] as const satisfies readonly LabelFormat[]

export interface LabelPurchaseRequest extends RateRequest {
  /** Our stable id of the purchase: the provider's reference, so the purchase can be found again. */
  operationId: string
  carrier: string
  service: string
  labelFormat: LabelFormat
  /**
   * The provider's id committed by an earlier attempt of this operation whose outcome was unknown and
   * which the lookup found not bought: buy on it (a second purchase of it is refused by the provider),
   * never on a new one.
   */
  externalId: string | null
}

/** A bought label as the parcel keeps it. */
export interface PurchasedLabel {
  /** The provider's id of the purchase (EasyPost: the shipment `shp_...`). */
  externalId: string
  trackingNumber: string
  carrier: string
  service: string
  labelUrl: string
  labelFormat: string
  cost: string
  currency: string
  trackingUrl: string | null
  /** The forms the provider returned with an international label (untrusted: checked before they are kept). */
  forms?: LabelForm[] | undefined
}

/**
 * What the delivery side writes down while it works: its own id of the operation, committed before any
 * money is spent, and every call with its answer (never a secret).
 */
export interface DeliveryJournal {
  /** Commits the provider's id of this operation; await it before buying. */
  externalIdKnown(externalId: string): Promise<void>
  attempt(entry: { step: string; request: Record<string, unknown>; response: Record<string, unknown>; statusCode: number | null; error: string | null; durationMs: number }): Promise<void>
}

/**
 * How a provider call failed. `refused`: nothing was bought (a carrier error, no funds, an address the
 * carrier refuses); `unknown`: the outcome is not known (a timeout, a 5xx, a lost answer, a purchase in
 * progress) and the operation is recovered later, never bought again; `exists`: a label was bought
 * already (recover it).
 */
export type DeliveryFailureKind = 'refused' | 'unknown' | 'exists'

export class DeliveryProviderError extends Error {
  readonly code = 'SHIPMENTS_DELIVERY_PROVIDER'
  constructor(
    message: string,
    readonly kind: DeliveryFailureKind,
    /** The provider's own error code (EasyPost's `SHIPMENT.POSTAGE.FAILURE`, ...), when it gave one. */
    readonly providerCode: string | null = null,
    options: { cause?: unknown; rateLimited?: boolean | undefined; retryAfterMs?: number | null | undefined } = {},
  ) {
    super(message, { cause: options.cause })
    this.name = 'DeliveryProviderError'
    this.rateLimited = options.rateLimited === true
    this.retryAfterMs = options.retryAfterMs ?? null
  }

  /**
   * The provider is rate limiting the account (HTTP 429): nothing was done, and the same call may
   * succeed later. A batch puts the parcel back and slows down instead of failing it.
   */
  readonly rateLimited: boolean
  /** How long the provider asked to wait (its Retry-After), when it said; null otherwise. */
  readonly retryAfterMs: number | null
}

/** The longest Retry-After taken as given: a provider asking for more is asked again after this. */
export const MAX_RETRY_AFTER_MS = 10 * 60 * 1000

/** A Retry-After header (delay-seconds or an HTTP date) in milliseconds from `now`, bounded; null when absent or unreadable. */
export function retryAfterMs(header: unknown, now = Date.now()): number | null {
  if (typeof header !== 'string' || header.trim() === '') return null
  const text = header.trim()
  const milliseconds = /^\d{1,9}$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now
  if (!Number.isFinite(milliseconds)) return null
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, milliseconds))
}

/** A failure as a clause of a sentence: its message without the closing full stop; an unexpected error by its kind only. */
const clause = (failure: unknown) =>
  failure instanceof DeliveryProviderError ? failure.message.replace(/\.+$/, '') : 'an unexpected error (see the server log)'

/**
 * Why a purchase's outcome is unknown, in the provider's words: what the purchase got (an answer with
 * its status, or no answer) and, when the lookup that followed failed too, what the lookup got.
 */
export function unknownOutcomeReason(failure: unknown, lookupFailure?: unknown): string {
  if (failure === undefined) return `the lookup: ${clause(lookupFailure)}`
  return lookupFailure === undefined ? clause(failure) : `${clause(failure)}; the lookup: ${clause(lookupFailure)}`
}

/** A provider's failure said to the store admin: 422 `{success: false, error}`, a refusal or no usable answer. */
export function providerFailureMessage(error: DeliveryProviderError): string {
  const sentence = /[.!?]$/.test(error.message) ? error.message : `${error.message}.`
  return error.kind === 'unknown' ? `No usable answer from the carrier: ${sentence}` : `The carrier refused: ${sentence}`
}

/** The labels of one manifest: bought through one integration, for one carrier, from one address. */
export interface ManifestRequest {
  /** Each label by the provider's id of its purchase and its tracking number. */
  labels: Array<{ externalId: string; trackingNumber: string }>
  carrier: string
  from: PostalAddress
}

/** A manifest the provider made: its id, and where its form (a PDF to print) is, when it is ready. */
export interface CreatedManifest {
  externalId: string
  formUrl: string | null
}

export type RecoveredLabel = { state: 'purchased'; label: PurchasedLabel } | { state: 'not-purchased' }

export interface DeliveryMethods<Context> {
  /** Optional: quotes for a parcel. */
  quoteRates?(request: RateRequest, context: Context): Promise<RateOffer[]>
  /**
   * Buys a label for the carrier and service named. Call `journal.externalIdKnown` with the provider's
   * own id before the call that spends money; throw DeliveryProviderError to say how it failed.
   */
  purchaseLabel(request: LabelPurchaseRequest, context: Context, journal: DeliveryJournal): Promise<PurchasedLabel>
  /**
   * Looks an operation whose outcome is unknown up at the provider by its own id: the label when it
   * was bought, `not-purchased` when it was not (then `purchaseLabel` may buy it, on that same id).
   */
  recoverLabel(request: LabelPurchaseRequest & { externalId: string }, context: Context, journal: DeliveryJournal): Promise<RecoveredLabel>
  /** Optional: the label again, in another format. */
  labelDocument?(label: { externalId: string; format: LabelFormat }, context: Context, journal: DeliveryJournal): Promise<{ url: string; format: string }>
  /** Voids (refunds) a label; answers the provider's refund status. Throw DeliveryProviderError when refused. */
  voidLabel(label: { externalId: string }, context: Context, journal: DeliveryJournal): Promise<{ refundStatus: string }>
  /**
   * Optional: the carriers and services the account can buy, so shipping rules that name one are checked
   * when saved. `service: '*'` says the carrier's services cannot be listed (any is accepted for it).
   * Without this method, a rule's carrier and service are accepted as typed.
   */
  services?(context: Context): Promise<CarrierService[]>
  /**
   * Optional: the day's manifest (an end-of-day form such as USPS's SCAN form) of labels bought for one
   * carrier from one address. A provider without it, or a carrier outside `manifestCarriers`, needs none.
   * Throw DeliveryProviderError (kind `refused`) when the provider refuses, in its words.
   */
  createManifest?(request: ManifestRequest, context: Context, journal: DeliveryJournal): Promise<CreatedManifest>
  /**
   * Optional: whether the carrier can deliver to an address, with its corrections. Throw
   * DeliveryProviderError when the provider cannot be asked; a provider without it verifies nothing.
   */
  verifyAddress?(address: PostalAddress, context: Context, journal: DeliveryJournal): Promise<AddressVerification>
  /** The carriers whose labels `createManifest` takes (compared without regard to case); absent: every carrier. */
  manifestCarriers?: readonly string[] | undefined
}

/** A carrier and one of its services, spelled as the provider's rates and purchases spell them. */
export interface CarrierService {
  carrier: string
  service: string
}
