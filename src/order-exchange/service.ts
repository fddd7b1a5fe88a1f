// The order exchange with ShipStation (spec 4.3, 4.4): one export page, one ship notification.
// Composed of one module per concern, each a factory over the shared context (exchange-context.ts):
// order-export.ts (the export page), ship-notification.ts (a ship notification for the whole order)
// and ship-notification-items.ts (one with items). The types stay importable from here.
import { createOrderExchangeContext, type OrderExchangeDependencies } from './exchange-context.js'
import { createOrderExport } from './order-export.js'
import { createShipNotification } from './ship-notification.js'
import { createNotifiedItemsShipping } from './ship-notification-items.js'

export type { OrderExchangeDependencies } from './exchange-context.js'
export { pageParameter, type ExportRequest } from './order-export.js'

export type OrderExchangeService = ReturnType<typeof createOrderExchangeService>

export function createOrderExchangeService(deps: OrderExchangeDependencies) {
  const shared = createOrderExchangeContext(deps)
  const { settings } = deps
  const { exportPage, exportDocument } = createOrderExport(shared)
  const { shipNotifiedItems } = createNotifiedItemsShipping(shared)
  const { shipNotify, checkShipNotify } = createShipNotification(shared, { shipNotifiedItems })

  return {
    exportPage,
    exportDocument,
    shipNotify,
    /** A ship notification checked and not applied (the connection doctor's dry run): the order's reference. */
    checkShipNotify,
    /** The settings in force (the password included: never show or log it). */
    settings,
    /** The log of the exchange's requests: what ShipStation asked, what it got, why it was refused. */
    activity: deps.activity,
  }
}
