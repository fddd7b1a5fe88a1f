// Deliveries: a shipment's parcels, rate quotes, and labels bought exactly once through a provider's
// delivery methods (intent committed first, reconciled by the provider's own id, never bought twice).
// Composed of one module per concern, each a factory over the shared context (service-context.ts):
// parcel-changes.ts (parcels and their tracking), rates.ts (quotes), label-purchase.ts (the purchase and
// its recovery), label-void.ts, label-reads.ts (label files and operations), all over label-port.ts (the
// providers, addresses and measures, which the returns service borrows). The types stay importable here.
import type { PostalAddress } from '../order-store.js'
import { createLabelPort } from './label-port.js'
import { createLabelPurchase } from './label-purchase.js'
import { createLabelReads } from './label-reads.js'
import { createLabelVoid } from './label-void.js'
import { createParcelChanges } from './parcel-changes.js'
import { createRateQuotes } from './rates.js'
import { createAddressChecks } from './address-checks.js'
import { createDeliveryServiceContext, type DeliveryServiceDependencies } from './service-context.js'

export type { CustomsGate, DeliveryContext, DeliveryServiceDependencies } from './service-context.js'
export type { DeliveryProviderAt } from './label-port.js'
export type { BuyLabelInput, LabelPurchaseResult } from './label-purchase.js'
export type { LabelOperation } from './label-reads.js'
export { compareDecimals, type RateQuote } from './rates.js'

/** The deliveries service as hosts see it (`app.shipments.deliveries`): without the returns' port. */
export type DeliveryService = Omit<ReturnType<typeof createDeliveryService>, 'labelPort'>
/** What the returns service borrows to buy a return label: the provider, the journal, the addresses, the measures. */
export type LabelPort = ReturnType<typeof createDeliveryService>['labelPort']

export function createDeliveryService(deps: DeliveryServiceDependencies) {
  const shared = createDeliveryServiceContext(deps)
  const port = createLabelPort(shared)
  const { deliveryProvider, deliveryProviderById, journalFor, addresses, measures, refusal } = port
  const { listParcels, addParcel, updateParcel, removeParcel, trackParcel } = createParcelChanges(shared)
  const addressChecks = createAddressChecks(shared, port)
  const { quoteRates, chosenRate } = createRateQuotes(shared, port, addressChecks.gate)
  const { buyLabel } = createLabelPurchase(shared, port, { chosenRate, addressGate: addressChecks.gate })
  const { voidLabel } = createLabelVoid(shared, port)
  const { labelDocument, labelOperations, labelForms } = createLabelReads(shared, port)

  return {
    /** For the returns service only (the plugin leaves it off `app.shipments.deliveries`). */
    labelPort: { deliveryProvider, deliveryProviderById, journalFor, addresses, shipTo: port.shipTo, measures, refusal },
    trackParcel,
    /** Where parcels ship from: the stored setting, else the `deliveries.shipFrom` option. */
    shipFrom: () => deps.shipFrom.get(),
    /** Stores the ship-from address (422 field by field when it is not one); null clears the setting. */
    setShipFrom: (address: PostalAddress | null) => deps.shipFrom.set(address),
    listParcels,
    addParcel,
    updateParcel,
    removeParcel,
    quoteRates,
    buyLabel,
    voidLabel,
    labelDocument,
    labelOperations,
    labelForms,
    /** The ship-to check: the setting, a verification now, the gate (the addresses room presents and decides). */
    addressChecks,
    /** The shipment's ship-to as rates, labels and documents use it, with its check. */
    shipTo: port.shipTo,
  }
}

