// The contract for manifests: a carrier's end-of-day form (USPS's SCAN form through EasyPost, say) for the
// labels bought through one integration, for one carrier and one ship-from address. A label (by its
// label operation) is in at most one manifest: a unique key decides a race between two instances.

/** pending: written before the provider is asked; created: the provider made it; failed: it refused. */
export type ManifestState = 'pending' | 'created' | 'failed'

export interface ManifestRow {
  id: number
  integrationId: number
  carrier: string
  /** The ship-from address the labels left from, as text (one line), for the list. */
  shipFrom: string
  state: ManifestState
  /** The provider's id of the manifest (EasyPost: `sf_...`). */
  externalId: string | null
  /** The form to print (a PDF, as the provider serves it). */
  formUrl: string | null
  parcelCount: number
  /** Why it failed, in the provider's words. */
  error: string | null
  userId: string | null
  createdAt: Date
  updatedAt: Date
}

export interface ManifestParcelRow {
  manifestId: number
  parcelId: number
  /** The label operation that bought the label manifested: unique, so a label is in one manifest at most. */
  operationId: string
}
