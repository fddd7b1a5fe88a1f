// A provider's rate offers, checked one by one: a provider's answer is untrusted, and one odd offer
// (EasyPost has sent `delivery_days: "soon"`) must neither hide the good ones nor reach the database.
import type { RateOffer } from '../gateway/delivery-provider.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import { isAmount } from '../model/units.js'

/** The most offers one quote keeps: more than any carrier mix offers, few enough to store at once. */
export const MAX_OFFERS_PER_QUOTE = 100
/** The most delivery days an offer may name (a year). */
const MAX_DELIVERY_DAYS = 366

/** An offer left out, as the attempt log keeps it: what was offered (bounded) and why it was dropped. */
export interface DroppedOffer {
  carrier: unknown
  service: unknown
  amount: unknown
  currency: unknown
  deliveryDays: unknown
  reason: string
}

const shortText = (value: unknown): string | null => {
  if (typeof value !== 'string') return 'must be a string'
  if (value.trim() === '') return 'must not be empty'
  return textProblem(value, { maxLength: TEXT_LIMITS.short })
}

/** Why the offer cannot be quoted (the first field found wrong), or null. */
function offerProblem(offer: unknown): string | null {
  if (typeof offer !== 'object' || offer === null || Array.isArray(offer)) return 'offer: must be an object'
  const { carrier, service, amount, currency, deliveryDays, deliveryDate, externalRateId } = offer as Record<string, unknown>
  const carrierProblem = shortText(carrier)
  if (carrierProblem) return `carrier: ${carrierProblem}`
  const serviceProblem = shortText(service)
  if (serviceProblem) return `service: ${serviceProblem}`
  if (!isAmount(amount) || amount.startsWith('-')) return 'amount: must be a decimal string such as "7.90", 0 or more'
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) return 'currency: must be a three-letter ISO 4217 code'
  if (deliveryDays != null && !(Number.isSafeInteger(deliveryDays) && (deliveryDays as number) >= 0 && (deliveryDays as number) <= MAX_DELIVERY_DAYS)) {
    return 'deliveryDays: must be a whole number of days, 0 or more, or absent'
  }
  if (deliveryDate != null && deliveryDate !== '' && !(typeof deliveryDate === 'string' && deliveryDate.length <= 64 && !Number.isNaN(Date.parse(deliveryDate)))) return 'deliveryDate: must be an ISO-8601 date or absent'
  if (externalRateId != null && shortText(externalRateId)) return `externalRateId: ${shortText(externalRateId)}`
  return null
}

/** A field of a dropped offer as the log keeps it: strings cut short, anything else by its type. */
const logged = (value: unknown): unknown => (typeof value === 'string' ? value.slice(0, 100) : typeof value === 'number' || typeof value === 'boolean' || value == null ? value : `(${typeof value})`)

/** The offers that may be quoted, as the provider gave them, and those dropped with their reason. */
export function checkOffers(offers: unknown): { kept: RateOffer[]; dropped: DroppedOffer[] } {
  const kept: RateOffer[] = []
  const dropped: DroppedOffer[] = []
  if (!Array.isArray(offers)) return { kept, dropped: [{ carrier: null, service: null, amount: null, currency: null, deliveryDays: null, reason: `offers: must be a list, not ${logged(offers)}` }] }
  for (const offer of offers) {
    const problem = kept.length >= MAX_OFFERS_PER_QUOTE ? `offer: more than ${MAX_OFFERS_PER_QUOTE} offers` : offerProblem(offer)
    if (problem === null) {
      const { carrier, service, amount, currency, deliveryDays, deliveryDate, externalRateId } = offer as RateOffer
      kept.push({ carrier, service, amount, currency, deliveryDays: deliveryDays ?? null, deliveryDate: deliveryDate || null, externalRateId: externalRateId ?? null })
      continue
    }
    const fields = typeof offer === 'object' && offer !== null ? (offer as Record<string, unknown>) : {}
    dropped.push({
      carrier: logged(fields.carrier),
      service: logged(fields.service),
      amount: logged(fields.amount),
      currency: logged(fields.currency),
      deliveryDays: logged(fields.deliveryDays),
      reason: problem,
    })
  }
  return { kept, dropped }
}
