// The shipment service: the one update path every change goes through (API, gateway, ShipStation).
// Composed of one module per concern, each a factory over the shared context (service-context.ts):
// updates.ts (the update path), allocation.ts (creation, allocation and the order sync) and reads.ts
// (reads and the small writes beside them). The types and constants stay importable from here.
import { createShipmentServiceContext, type ShipmentServiceDependencies } from './service-context.js'
import { createShipmentUpdates } from './updates.js'
import { createShipmentAllocation } from './allocation.js'
import { createShipmentReads } from './reads.js'

export type { ShipmentServiceDependencies } from './service-context.js'
export { EXTERNAL_EVENT_MAX_SKEW_MS, ORDER_ADVANCE_JOB, type ExternalEvent, type UpdateContext, type UpdateResult } from './updates.js'
export { CANCELLED_WITH_ORDER, RESTORED_WITH_ORDER, type CreateShipmentsOptions, type OrderSyncResult } from './allocation.js'
export type { ListShipmentsQuery, ShipmentPage } from './reads.js'

export type ShipmentService = ReturnType<typeof createShipmentService>

export function createShipmentService(deps: ShipmentServiceDependencies) {
  const shared = createShipmentServiceContext(deps)
  const { attentionList } = shared
  const { refreshAttention } = attentionList
  const { update, applyUpdate, orderAdvanceJob } = createShipmentUpdates(shared)
  const { create, allocation, orderStatusChanged, orderCompleted } = createShipmentAllocation(shared, { applyUpdate })
  const { get, list, checkpoints, recordCheckpoints, history, setDeleted } = createShipmentReads(shared)

  return {
    create,
    allocation,
    /**
     * Completed orders whose active shipments do not hold every shippable line in full, oldest first,
     * with the lines and units missing (see attention.ts). Empty for an order store without lines.
     */
    attention: attentionList.attention,
    get,
    list,
    update,
    history,
    checkpoints,
    recordCheckpoints,
    /** Soft-deletes: the shipment stays readable and updatable (spec 4.1), but leaves default lists. */
    softDelete: (id: number) => setDeleted(id, true),
    restore: (id: number) => setDeleted(id, false),
    orderStatusChanged,
    orderCompleted,
    /**
     * Tells the package that an order changed in the order store in a way the attention list depends on
     * (it completed, or its lines changed) without `orderCompleted()`: its attention row is decided again.
     */
    orderChanged: refreshAttention,
    /** The outbox job that advances an order (the plugin registers it with the dispatcher). */
    orderAdvanceJob,
    /** The outbox job that decides an order's attention row again (the plugin registers it). */
    attentionRefreshJob: attentionList.attentionRefreshJob,
    /** Builds the attention rows of a database that has none yet (the plugin starts it once ready). */
    buildAttentionRows: attentionList.buildAttentionRows,
  }
}
