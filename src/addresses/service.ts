// Verified addresses: a shipment's ship-to check as the API and the admin present it (the carrier's
// verdict, its corrections field by field, whether it still holds), the admin's decisions (accept the
// correction: it becomes the shipment's own ship-to, kept on the check row and never written to the
// host's order; or ship as is, knowingly), and the setting (off, warn, block; the integration that
// verifies), checked whole before it is saved. The verification, the gate and the ship-to that rates,
// labels and documents use live in the deliveries (address-checks.ts, ship-to.ts), which stand below.
import type { AddressCheckRow, CustomsStore } from '../db/customs.js'
import type { DataLayer } from '../db/data-layer.js'
import { addressWarning, type SavedAddressVerificationSetting } from '../deliveries/address-checks.js'
import type { DeliveryService, LabelPort } from '../deliveries/service.js'
import { ADDRESS_VERIFICATION_MODES, ADDRESS_VERIFICATION_STATE_KEY, fromCheckedAddress, toCheckedAddress, type AddressVerificationMode, type ShipTo } from '../deliveries/ship-to.js'
import { AddressErrors, ShipmentsErrors, ShipmentValidationError } from '../errors.js'
import type { PostalAddress } from '../order-store.js'
import type { ShipmentService } from '../shipments/service.js'
import { formatIsoWithOffset } from '../time.js'

export interface AddressServiceDependencies {
  data: Pick<DataLayer, 'setPackageState'> & { customs: Pick<CustomsStore, 'saveAddressCheck'> }
  deliveries: Pick<DeliveryService, 'addressChecks' | 'shipTo'>
  shipments: Pick<ShipmentService, 'get'>
  /** The label port's integration lookup: the setting's integration must sell labels. */
  labels: Pick<LabelPort, 'deliveryProvider'>
  clock: () => number
  timeZone: string
}

/** A shipment's ship-to check as the API answers it (AddressCheckSchema). */
export interface AddressCheck {
  shipmentId: number
  mode: AddressVerificationMode
  status: 'unchecked' | 'current' | 'stale'
  verdict: AddressCheckRow['verdict']
  decision: AddressCheckRow['decision']
  problems: AddressCheckRow['problems']
  orderAddress: PostalAddress | null
  suggestion: PostalAddress | null
  changes: Array<{ field: string; from: string | null; to: string | null }>
  shipTo: PostalAddress | null
  ownShipTo: boolean
  warning: string | null
  checkedAt: string | null
}

/** The fields a carrier corrects, in the order the admin's diff shows them. */
const CORRECTED_FIELDS = ['street1', 'street2', 'city', 'state', 'postalCode', 'country'] as const

/** Every field present (a host's order store may leave some out), so the answer's schema holds. */
const whole = (address: PostalAddress | null) => (address ? fromCheckedAddress(toCheckedAddress(address)) : null)

export function createAddressService(deps: AddressServiceDependencies) {
  const { addressChecks } = deps.deliveries

  async function requireShipment(shipmentId: number) {
    const shipment = await deps.shipments.get(shipmentId)
    if (!shipment) throw new ShipmentsErrors.ShipmentNotFound(shipmentId)
    return shipment
  }

  function present(shipmentId: number, shipTo: ShipTo, setting: SavedAddressVerificationSetting): AddressCheck {
    const check = shipTo.check
    const current = shipTo.current ? check : undefined
    const suggestion = fromCheckedAddress(check?.suggestion)
    const changes =
      current && suggestion && shipTo.orderAddress
        ? CORRECTED_FIELDS.flatMap((field) => {
            const [from, to] = [shipTo.orderAddress![field] ?? null, suggestion[field] ?? null]
            return (from ?? '') === (to ?? '') ? [] : [{ field, from, to }]
          })
        : []
    return {
      shipmentId,
      mode: setting.mode,
      status: !check?.verdict ? 'unchecked' : shipTo.current ? 'current' : 'stale',
      verdict: check?.verdict ?? null,
      decision: current?.decision ?? null,
      problems: check?.problems ?? [],
      orderAddress: whole(shipTo.orderAddress),
      suggestion: whole(suggestion),
      changes,
      shipTo: whole(shipTo.address),
      ownShipTo: shipTo.own,
      warning: addressWarning(setting, shipTo),
      checkedAt: check?.checkedAt ? formatIsoWithOffset(check.checkedAt.getTime(), deps.timeZone) : null,
    }
  }

  /** The shipment's check as it stands (unchecked when never verified, stale when the order's address changed since). */
  async function check(shipmentId: number): Promise<AddressCheck> {
    const shipment = await requireShipment(shipmentId)
    const [shipTo, setting] = await Promise.all([deps.deliveries.shipTo(shipment), addressChecks.setting()])
    return present(shipmentId, shipTo, setting)
  }

  /** Verifies the order's address now (through `integration`, else the setting's) and stores the verdict. */
  async function verify(shipmentId: number, input: { integration?: string | undefined } = {}): Promise<AddressCheck> {
    const [{ shipTo }, setting] = await Promise.all([addressChecks.verify(shipmentId, input), addressChecks.setting()])
    return present(shipmentId, shipTo, setting)
  }

  /** The check a decision is about: one that holds for the order's address as it is now. */
  async function currentCheck(shipmentId: number) {
    const shipment = await requireShipment(shipmentId)
    const shipTo = await deps.deliveries.shipTo(shipment)
    if (!shipTo.current || !shipTo.check?.verdict) throw new AddressErrors.NotChecked(shipment.reference)
    return { shipment, check: shipTo.check }
  }

  /** The carrier's correction becomes the shipment's own ship-to (the check row's; the host's order is left as it is). */
  async function accept(shipmentId: number): Promise<AddressCheck> {
    const { shipment, check: row } = await currentCheck(shipmentId)
    if (row.verdict !== 'corrected' || !fromCheckedAddress(row.suggestion)) throw new AddressErrors.NoCorrection(shipment.reference)
    await deps.data.customs.saveAddressCheck(shipmentId, { shipTo: row.suggestion, decision: 'accepted' })
    return check(shipmentId)
  }

  /** Ship to the order's address as it is, knowingly: block mode lets an undeliverable verdict through. */
  async function asIs(shipmentId: number): Promise<AddressCheck> {
    await currentCheck(shipmentId)
    await deps.data.customs.saveAddressCheck(shipmentId, { shipTo: null, decision: 'asIs' })
    return check(shipmentId)
  }

  /**
   * Saves the setting whole once it is checked: a known mode, and (required unless off) an integration
   * that sells labels, is enabled and whose provider verifies addresses. A refusal writes nothing.
   */
  async function saveSetting(input: { mode?: unknown; integration?: unknown }, context: { userId?: string | null | undefined } = {}): Promise<SavedAddressVerificationSetting> {
    const mode = input.mode
    if (!(ADDRESS_VERIFICATION_MODES as readonly unknown[]).includes(mode)) throw new ShipmentValidationError({ mode: [`must be one of ${ADDRESS_VERIFICATION_MODES.join(', ')}`] })
    const integration = input.integration === undefined || input.integration === '' ? null : input.integration
    if (integration === null && mode !== 'off') throw new ShipmentValidationError({ integration: [`is required in ${String(mode)} mode: the handle of an integration that verifies addresses`] })
    if (integration !== null) {
      const at = await deps.labels.deliveryProvider(integration, 'integration')
      if (!at.provider.deliveries.verifyAddress) throw new ShipmentValidationError({ integration: [`the integration "${at.row.handle}" does not verify addresses`] })
    }
    const record: SavedAddressVerificationSetting = {
      mode: mode as AddressVerificationMode,
      integration: integration as string | null,
      savedAt: formatIsoWithOffset(deps.clock(), deps.timeZone),
      savedBy: context.userId ?? null,
    }
    await deps.data.setPackageState(ADDRESS_VERIFICATION_STATE_KEY, JSON.stringify(record))
    return record
  }

  return { setting: addressChecks.setting, saveSetting, check, verify, accept, asIs }
}

export type AddressService = ReturnType<typeof createAddressService>
