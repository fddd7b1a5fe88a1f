// The ship-to check and its gate before rating and buying. The setting (off, warn, block and the
// integration that verifies) is package state, the option's value until saved. A check is the carrier's
// verdict on the order's address, stored with a fingerprint of that address; the gate reads it at the
// start of a rate request or a purchase, before any provider call or write: off does nothing; warn
// lets everything through and says why the address is in doubt; block verifies an address not yet
// checked (once, storing the verdict) and refuses an undeliverable one unless the admin chose "ship as
// is". The addresses room (src/addresses/) stands above and owns the routes, the decisions and the screen.
import type { AddressCheckRow } from '../db/customs.js'
import { AddressErrors, ShipmentValidationError } from '../errors.js'
import { DeliveryProviderError, type AddressVerification } from '../gateway/delivery-provider.js'
import type { PostalAddress } from '../order-store.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import type { DeliveryLabelPort } from './label-port.js'
import type { DeliveryServiceContext } from './service-context.js'
import { ADDRESS_VERIFICATION_MODES, ADDRESS_VERIFICATION_STATE_KEY, addressFingerprint, toCheckedAddress, type AddressVerificationSetting, type ShipTo } from './ship-to.js'

const VERDICTS = ['deliverable', 'corrected', 'undeliverable', 'unverified'] as const
const MAX_PROBLEMS = 20

/** The setting with who saved it and when (null while the option's value stands). */
export interface SavedAddressVerificationSetting extends AddressVerificationSetting {
  savedAt: string | null
  savedBy: string | null
}

type Problem = AddressVerification['problems'][number]
const problem = (code: string, message: string): Problem => ({ code, field: null, message, suggestion: null })

/** What a provider's `verifyAddress` answered, checked: it is untrusted, whatever provider gave it. */
export function checkedVerification(value: unknown): AddressVerification {
  const answer = (typeof value === 'object' && value !== null ? value : {}) as Partial<Record<keyof AddressVerification, unknown>>
  if (!(VERDICTS as readonly unknown[]).includes(answer.verdict)) return { verdict: 'unverified', corrected: null, problems: [problem('ANSWER.UNREADABLE', 'The provider answered the address verification without a verdict.')] }
  const text = (each: unknown, max: number): each is string => typeof each === 'string' && textProblem(each, { maxLength: max }) === null
  const problems: Problem[] = (Array.isArray(answer.problems) ? answer.problems.slice(0, MAX_PROBLEMS) : []).flatMap((each: unknown) => {
    const item = (typeof each === 'object' && each !== null ? each : {}) as Record<string, unknown>
    if (!text(item.code, TEXT_LIMITS.short) || !text(item.message, TEXT_LIMITS.statusMessage)) return []
    const optional = (field: unknown, max: number) => (text(field, max) ? field : null)
    return [{ code: item.code, field: optional(item.field, TEXT_LIMITS.short), message: item.message, suggestion: optional(item.suggestion, TEXT_LIMITS.statusMessage) }]
  })
  const corrected = answer.corrected as Partial<PostalAddress> | null | undefined
  const usable = (address: Partial<PostalAddress> | null | undefined): address is PostalAddress =>
    typeof address === 'object' && address !== null && [address.street1, address.city, address.postalCode, address.country].every((field) => text(field, TEXT_LIMITS.short) && field !== '')
  if (answer.verdict === 'corrected' && !usable(corrected)) return { verdict: 'unverified', corrected: null, problems: [problem('ANSWER.UNREADABLE', 'The provider said the address needs corrections but gave no usable corrected address.'), ...problems] }
  return { verdict: answer.verdict as AddressVerification['verdict'], corrected: usable(corrected) ? corrected : null, problems }
}

/** The problems in a store admin's words, for a refusal or a warning. */
export const problemsInWords = (problems: readonly Problem[]): string =>
  problems.length === 0 ? 'the carrier gave no reason' : problems.map((each) => (each.field ? `${each.message} (${each.field})` : each.message)).join('; ')

/** Why the address is in doubt under the setting, or null: what warn mode says beside rates and labels. */
export function addressWarning(setting: AddressVerificationSetting, shipTo: ShipTo): string | null {
  if (setting.mode === 'off' || shipTo.orderAddress === null) return null
  const check = shipTo.current ? shipTo.check : undefined
  if (!check?.verdict) return shipTo.check ? 'The order\'s address changed since it was verified: verify it again.' : 'The ship-to address has not been verified.'
  if (check.decision === 'asIs') return null
  if (check.verdict === 'undeliverable') return `The carrier cannot deliver to the ship-to address: ${problemsInWords(check.problems)}.`
  if (check.verdict === 'unverified') return `The carrier could not verify the ship-to address: ${problemsInWords(check.problems)}.`
  return null
}

export function createAddressChecks(shared: DeliveryServiceContext, port: Pick<DeliveryLabelPort, 'deliveryProvider' | 'journalFor' | 'shipTo'>) {
  const { deps, requireShipment } = shared
  const { data } = deps
  const initial: AddressVerificationSetting = deps.addressVerification ?? { mode: 'off', integration: null }

  /** The setting as saved, else the option's value. */
  async function setting(): Promise<SavedAddressVerificationSetting> {
    const stored = await data.packageState(ADDRESS_VERIFICATION_STATE_KEY)
    if (!stored) return { ...initial, savedAt: null, savedBy: null }
    const saved = JSON.parse(stored) as Partial<SavedAddressVerificationSetting>
    const mode = (ADDRESS_VERIFICATION_MODES as readonly unknown[]).includes(saved.mode) ? saved.mode! : 'off'
    return { mode, integration: typeof saved.integration === 'string' ? saved.integration : null, savedAt: saved.savedAt ?? null, savedBy: saved.savedBy ?? null }
  }

  /**
   * Asks the provider now and stores its verdict on the shipment's check, with the fingerprint of the
   * order's address it checked; an earlier decision and accepted correction are cleared (they were of
   * an earlier verdict). A provider that cannot be asked (down, timing out) gives "unverified" with its words.
   */
  async function verify(shipmentId: number, input: { integration?: unknown } = {}): Promise<{ check: AddressCheckRow; shipTo: ShipTo }> {
    const shipment = await requireShipment(shipmentId)
    const handle = input.integration ?? (await setting()).integration
    if (handle === null || handle === undefined) throw new ShipmentValidationError({ integration: ['is required: no integration is set to verify addresses (Address verification, on the Shipping rules page)'] })
    const at = await port.deliveryProvider(handle)
    const verifyAddress = at.provider.deliveries.verifyAddress?.bind(at.provider.deliveries)
    if (!verifyAddress) throw new ShipmentValidationError({ integration: [`the integration "${at.row.handle}" does not verify addresses`] })
    const before = await port.shipTo(shipment)
    if (!before.orderAddress) throw new ShipmentValidationError({ shipTo: [`order ${before.orderReference ?? shipment.orderId} has no shipping address to verify`] })
    const address = before.orderAddress
    let verification: AddressVerification
    try {
      verification = checkedVerification(await verifyAddress(address, at.context, port.journalFor(`address:${shipmentId}`)))
    } catch (error) {
      if (!(error instanceof DeliveryProviderError)) throw error
      verification = { verdict: 'unverified', corrected: null, problems: [problem(error.providerCode ?? 'PROVIDER.UNAVAILABLE', error.message)] }
    }
    const check = await data.customs.saveAddressCheck(shipmentId, {
      shipTo: null,
      verdict: verification.verdict,
      suggestion: verification.corrected ? toCheckedAddress(verification.corrected) : null,
      problems: verification.problems,
      fingerprint: addressFingerprint(address),
      decision: null,
      checkedAt: new Date(deps.clock()),
    })
    return { check, shipTo: { ...before, check, current: true, address, own: false } }
  }

  /**
   * The gate at the start of a rate request or a label purchase, before any provider call or write:
   * block refuses an undeliverable address (verifying one not checked yet, once) unless the admin chose
   * "ship as is"; warn and off let it through. Returns the warning of warn mode, or null.
   */
  async function gate(shipment: { id: number; orderId: number; reference: string }): Promise<string | null> {
    const current = await setting()
    if (current.mode === 'off') return null
    let shipTo: ShipTo = await port.shipTo(shipment)
    if (shipTo.orderAddress === null) return null
    if (current.mode === 'block' && !shipTo.current) shipTo = (await verify(shipment.id)).shipTo
    const check = shipTo.current ? shipTo.check : undefined
    if (current.mode === 'block' && check?.verdict === 'undeliverable' && check.decision !== 'asIs') {
      const words = problemsInWords(check.problems)
      // The carrier's words alone ride along, for a batch's "skipped: address undeliverable: ..." line.
      throw Object.assign(new AddressErrors.Undeliverable(shipment.reference, words), { addressProblems: words })
    }
    return addressWarning(current, shipTo)
  }

  /** Why the shipment's ship-to is in doubt under the setting now, or null: beside rates and labels in warn mode. */
  async function warningFor(shipmentId: number): Promise<string | null> {
    const [shipment, current] = await Promise.all([requireShipment(shipmentId), setting()])
    return current.mode === 'off' ? null : addressWarning(current, await port.shipTo(shipment))
  }

  return { setting, verify, gate, warningFor }
}

export type AddressChecks = ReturnType<typeof createAddressChecks>
