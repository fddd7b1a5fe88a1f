// The carriers and services an EasyPost key can buy. EasyPost has no endpoint that lists services per
// account, so the key's carrier accounts (`GET /v2/carrier_accounts`, each with a `type` such as
// `UspsAccount`) are mapped to the service levels EasyPost documents for those carriers. Sources:
// - USPS: docs.easypost.com/carriers/usps-guide ("Service Levels": First, Priority, Express,
//   GroundAdvantage, LibraryMail, MediaMail, and the international ones);
// - UPS: support.easypost.com "UPS Supported Services and Rating" (the twelve "Service Variable" values);
// - FedEx: docs.easypost.com/carriers/fedex-guide (the FEDEX_* / *_OVERNIGHT / INTERNATIONAL_* service names).
// A carrier account of another type is listed with the service '*' (its services cannot be listed, so
// rules naming it are accepted as typed); the carrier is then named as EasyPost's `readable` gives it.
import { DeliveryProviderError, type CarrierService } from '../delivery-provider.js'
import { TEXT_LIMITS, textProblem } from '../../text.js'

/** EasyPost's documented service levels by carrier account type, with the carrier as its rates name it. */
export const EASYPOST_SERVICE_LEVELS: Readonly<Record<string, { carrier: string; services: readonly string[] }>> = {
  UspsAccount: {
    carrier: 'USPS',
    services: ['First', 'Priority', 'Express', 'GroundAdvantage', 'LibraryMail', 'MediaMail', 'FirstClassMailInternational', 'FirstClassPackageInternationalService', 'PriorityMailInternational', 'ExpressMailInternational'],
  },
  UpsAccount: {
    carrier: 'UPS',
    services: ['Ground', 'UPSStandard', 'UPSSaver', 'Express', 'ExpressPlus', 'Expedited', 'NextDayAir', 'NextDayAirSaver', 'NextDayAirEarlyAM', '2ndDayAir', '2ndDayAirAM', '3DaySelect'],
  },
  FedexAccount: {
    carrier: 'FedEx',
    services: [
      'FEDEX_GROUND',
      'GROUND_HOME_DELIVERY',
      'FEDEX_2_DAY',
      'FEDEX_2_DAY_AM',
      'FEDEX_EXPRESS_SAVER',
      'STANDARD_OVERNIGHT',
      'PRIORITY_OVERNIGHT',
      'FIRST_OVERNIGHT',
      'SMART_POST',
      'INTERNATIONAL_ECONOMY',
      'INTERNATIONAL_PRIORITY',
      'INTERNATIONAL_FIRST',
    ],
  },
}
// EasyPost's other USPS and UPS account kinds buy the same services under the same carrier name.
const SAME_AS: Readonly<Record<string, string>> = { UspsShipAccount: 'UspsAccount', UpsDapAccount: 'UpsAccount' }

const isText = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '' && textProblem(value, { maxLength: TEXT_LIMITS.short }) === null

/**
 * The services of the carrier accounts EasyPost answered. The answer is untrusted: it must be a list,
 * and each account is read on its own (one without a usable `type` is left out, never the whole list).
 */
export function servicesOfCarrierAccounts(answer: unknown): CarrierService[] {
  if (!Array.isArray(answer)) throw new DeliveryProviderError('EasyPost answered the carrier accounts with something other than a list.', 'unknown')
  const services: CarrierService[] = []
  const seen = new Set<string>()
  const add = (carrier: string, service: string) => {
    const key = `${carrier}\u0000${service}`
    if (seen.has(key)) return
    seen.add(key)
    services.push({ carrier, service })
  }
  for (const account of answer) {
    if (typeof account !== 'object' || account === null) continue
    const { type, readable } = account as { type?: unknown; readable?: unknown }
    if (!isText(type)) continue
    const known = EASYPOST_SERVICE_LEVELS[SAME_AS[type] ?? type]
    if (known) for (const service of known.services) add(known.carrier, service)
    else add(isText(readable) ? readable.trim() : type.replace(/Account$/, ''), '*')
  }
  return services
}
