// Rate quotes: a parcel's offers from a provider, checked, stored with an expiry and a fingerprint of what
// they depend on, cheapest first; and the carrier and service a purchase names, from a quote still valid.
import { createHash } from 'node:crypto'
import type { IntegrationRow } from '../db/data-layer.js'
import type { ParcelRow, RateQuoteRow } from '../db/parcels.js'
import { DeliveryErrors, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import { DeliveryProviderError, type CustomsInfo } from '../gateway/delivery-provider.js'
import type { PostalAddress } from '../order-store.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import { formatIsoWithOffset } from '../time.js'
import type { BuyLabelInput } from './label-purchase.js'
import type { DeliveryLabelPort } from './label-port.js'
import { checkOffers } from './rate-offers.js'
import { inSpan } from '../telemetry.js'
import type { DeliveryServiceContext } from './service-context.js'
import type { AddressGate } from './ship-to.js'

export interface RateQuote {
  id: number
  parcelId: number
  integration: string
  carrier: string
  service: string
  amount: string
  currency: string
  deliveryDays: number | null
  deliveryDate: string | null
  expiresAt: string
}

export function createRateQuotes(shared: DeliveryServiceContext, port: DeliveryLabelPort, addressGate: AddressGate = async () => null) {
  const { deps, requireShipment, requireParcel, customsFor } = shared
  const { data, timeZone } = deps
  const { deliveryProvider, journalFor, addresses, measures, refusal } = port

  /** A fingerprint of everything a quote depends on: the parcel's size, both addresses, the integration, the customs declaration (an edit makes old quotes stale). */
  function fingerprint(integrationId: number, parcel: ParcelRow, from: PostalAddress, to: PostalAddress, customs?: CustomsInfo): string {
    const inputs: unknown[] = [integrationId, parcel.weight, parcel.weightUnit, parcel.length, parcel.width, parcel.height, parcel.dimensionUnit, from, to]
    // Only when there is one: a domestic parcel's quotes keep the fingerprint they had before declarations existed.
    if (customs) inputs.push(customs)
    return createHash('sha256').update(JSON.stringify(inputs)).digest('hex')
  }

  async function quoteRates(shipmentId: number, parcelId: number, input: { integration: string }): Promise<RateQuote[]> {
    const parcel = await requireParcel(shipmentId, parcelId)
    const shipment = await requireShipment(shipmentId)
    await addressGate(shipment)
    const at = await deliveryProvider(input.integration)
    if (!at.provider.deliveries.quoteRates) throw new ShipmentValidationError({ integration: [`the integration "${at.row.handle}" gives no rates`] })
    const { from, to } = await addresses(shipment)
    // An international parcel's declaration is checked before the provider is asked (refused in words when incomplete).
    const customs = await customsFor({ shipment, parcel, from, to, keep: false })
    const request = { shipmentReference: shipment.reference, parcelId, parcel: measures(parcel), from, to, ...(customs ? { customs } : {}) }
    // The rates calls of a parcel share one entry of the attempt log: there is no label operation yet.
    const journal = journalFor(`rates:${parcelId}`)
    const started = performance.now()
    let offers: unknown
    try {
      const quote = at.provider.deliveries.quoteRates.bind(at.provider.deliveries)
      offers = await inSpan('shipments.provider.quote_rates', { 'shipments.provider': at.provider.id, 'shipments.parcel.id': parcelId }, async (span) => {
        const answered = await quote(request, at.context)
        span.setAttribute('shipments.offers', Array.isArray(answered) ? answered.length : 0)
        return answered
      })
    } catch (error) {
      if (error instanceof DeliveryProviderError) {
        await journal.attempt({ step: 'rates', request: { integration: at.row.handle }, response: { code: error.providerCode }, statusCode: null, error: error.message, durationMs: performance.now() - started })
        throw refusal(error)
      }
      throw error
    }
    const { kept: usable, dropped } = checkOffers(offers)
    const offered = Array.isArray(offers) ? offers.length : 0
    await journal.attempt({ step: 'rates', request: { integration: at.row.handle }, response: { offered, kept: usable.length, dropped }, statusCode: null, error: null, durationMs: performance.now() - started })
    if (dropped.length > 0) deps.logger.warn({ shipmentId, parcelId, integration: at.row.handle, dropped: dropped.map((each) => each.reason) }, 'Rates: offers the provider gave were dropped (see the attempt log)')
    if (usable.length === 0 && dropped.length > 0) throw new ShipmentUpdateRejectedError(`No offer of the carrier could be used: ${dropped[0]!.reason} (${dropped.length} dropped; see the attempt log).`)
    const expiresAt = new Date(deps.clock() + deps.quoteLifetimeMs)
    const print = fingerprint(at.row.id, parcel, from, to, customs)
    const stored = await data.parcels.insertQuotes(
      usable.map((offer) => ({
        shipmentId,
        parcelId,
        integrationId: at.row.id,
        carrier: offer.carrier,
        service: offer.service,
        amount: offer.amount,
        currency: offer.currency,
        deliveryDays: offer.deliveryDays,
        deliveryDate: offer.deliveryDate,
        externalRateId: offer.externalRateId ?? null,
        fingerprint: print,
        expiresAt,
      })),
    )
    return stored.map((row) => presentQuote(row, at.row.handle)).sort(byPriceThenDays)
  }

  const presentQuote = (row: RateQuoteRow, integration: string): RateQuote => ({
    id: row.id,
    parcelId: row.parcelId,
    integration,
    carrier: row.carrier,
    service: row.service,
    amount: row.amount,
    currency: row.currency,
    deliveryDays: row.deliveryDays,
    deliveryDate: row.deliveryDate,
    expiresAt: formatIsoWithOffset(row.expiresAt.getTime(), timeZone),
  })

  /** Cheapest first (exact decimals compared as decimals), then fastest. */
  function byPriceThenDays(a: RateQuote, b: RateQuote): number {
    const compared = compareDecimals(a.amount, b.amount)
    return compared !== 0 ? compared : (a.deliveryDays ?? Number.MAX_SAFE_INTEGER) - (b.deliveryDays ?? Number.MAX_SAFE_INTEGER)
  }

  /** The carrier and service to buy: from a quote still valid for the parcel as it is, or named. */
  async function chosenRate(input: BuyLabelInput, parcel: ParcelRow, integration: IntegrationRow, from: PostalAddress, to: PostalAddress, customs?: CustomsInfo) {
    if (input.quoteId !== undefined) {
      const quote = await data.parcels.findQuote(input.quoteId)
      if (!quote || quote.parcelId !== parcel.id) throw new DeliveryErrors.QuoteNotFound(input.quoteId)
      if (quote.integrationId !== integration.id) throw new ShipmentValidationError({ quoteId: [`quote ${quote.id} is from another integration`] })
      if (quote.expiresAt.getTime() <= deps.clock()) throw new DeliveryErrors.QuoteExpired(quote.id)
      if (quote.fingerprint !== fingerprint(integration.id, parcel, from, to, customs)) throw new DeliveryErrors.QuoteChanged(quote.id)
      return { carrier: quote.carrier, service: quote.service }
    }
    const errors: Record<string, string[]> = {}
    for (const field of ['carrier', 'service'] as const) {
      const value = input[field]
      if (typeof value !== 'string' || value.trim() === '' || value.length > 255) errors[field] = ['is required (or a quoteId), at most 255 characters']
      else {
        const problem = textProblem(value, { maxLength: TEXT_LIMITS.short })
        if (problem) errors[field] = [problem]
      }
    }
    if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
    return { carrier: input.carrier!, service: input.service! }
  }

  return { quoteRates, chosenRate }
}

/** Compares two exact decimal strings (as written by providers: digits, one optional point, optional sign). */
export function compareDecimals(a: string, b: string): number {
  const scale = (value: string) => {
    const negative = value.startsWith('-')
    const [whole, fraction = ''] = value.replace(/^[-+]/, '').split('.')
    const scaled = BigInt(whole || '0') * 10n ** 12n + BigInt((fraction + '0'.repeat(12)).slice(0, 12))
    return negative ? -scaled : scaled
  }
  const difference = scale(a) - scale(b)
  return difference < 0n ? -1 : difference > 0n ? 1 : 0
}
