// The shipment update path every change goes through (API, gateway, ShipStation, the order sync): the
// patch is planned against the row as read in the write transaction, under the shipment's mutex when the
// status changes or an integration's event applies, and its events and order advance are written in that
// same transaction. Rule: no change to a shipment's status, fields, items or enabled flag bypasses `applyUpdate`.
//
// Composed of one module per part, each a factory over the service's shared context: update-checks.ts
// (the input checks), update-plan.ts (what the change writes), update-commit.ts (the locked change),
// update-events.ts (its events) and order-advance.ts (the order advance that follows a move to shipped).
// The types and constants stay importable from here.
import { ShipmentsErrors } from '../errors.js'
import { leavesToDetection } from './detection.js'
import type { ShipmentUpdateInput } from './update-input.js'
import type { ShipmentServiceContext } from './service-context.js'
import type { UpdateContext, UpdateResult } from './update-context.js'
import { createUpdateChecks } from './update-checks.js'
import { createUpdatePlan } from './update-plan.js'
import { createUpdateEvents } from './update-events.js'
import { createOrderAdvance } from './order-advance.js'
import { createUpdateCommit } from './update-commit.js'
import { inSpan, instruments } from '../telemetry.js'

export type { ExternalEvent, UpdateContext, UpdateResult } from './update-context.js'
export { EXTERNAL_EVENT_MAX_SKEW_MS, refuseFutureEvent } from './update-checks.js'
export { ORDER_ADVANCE_JOB } from './order-advance.js'

export function createShipmentUpdates(shared: ShipmentServiceContext) {
  const { deps, present } = shared
  const { data } = deps
  const { checkUpdate } = createUpdateChecks(shared)
  const orderAdvance = createOrderAdvance(shared)
  const { orderAdvanceJob } = orderAdvance
  const { commitChange, withServiceErrors } = createUpdateCommit(shared, { plan: createUpdatePlan(shared), events: createUpdateEvents(shared), orderAdvance })

  async function update(id: number, input: ShipmentUpdateInput, context: UpdateContext = {}): Promise<UpdateResult> {
    return applyUpdate(id, input, context, null)
  }

  /** A change in its span (`shipments.shipment.update`), counted by the status it moved to when it moved one. */
  function applyUpdate(id: number, input: ShipmentUpdateInput, context: UpdateContext, orderCancellation: 'cancel' | 'restore' | null): Promise<UpdateResult> {
    return inSpan('shipments.shipment.update', { 'shipments.shipment.id': id }, async (span) => {
      const result = await applyUpdateInSpan(id, input, context, orderCancellation)
      if (result.transition) {
        span.setAttributes({ 'shipments.status.from': result.transition.from, 'shipments.status.to': result.transition.to })
        instruments().transitions.add(1, { 'shipments.status': result.transition.to })
      }
      return result
    })
  }

  /**
   * `orderCancellation`: the change cancels the shipment with its order (remembering the status to
   * restore) or restores it; it applies only while the shipment is as the order sync found it.
   */
  async function applyUpdateInSpan(
    id: number,
    input: ShipmentUpdateInput,
    context: UpdateContext,
    orderCancellation: 'cancel' | 'restore' | null,
  ): Promise<UpdateResult> {
    const { patch, fillEmpty } = await checkUpdate(id, input, context)

    // Items and the enabled flag are checked against the order's allocation inside the transaction.
    const allocates = patch.columns.items !== undefined || patch.columns.enabled !== undefined
    if (patch.status === undefined && !context.externalEvent && !context.delivery && !context.checkpoints && !allocates && Object.keys(patch.fields).length === 0) {
      // Nothing to read first: one UPDATE ... RETURNING is atomic on its own and doubles as the
      // existence check, which spares the hot path a query and an explicit transaction. A tracking number
      // that replaces another, with detection to redo, needs the stored values: the path below reads them.
      const revisitsDetection = leavesToDetection(patch)
      const after = await withServiceErrors(id, () =>
        data.updateShipmentColumns(id, { ...patch.columns, updatedAt: new Date(deps.clock()) }, fillEmpty, { unlessTrackingNumberChanges: revisitsDetection }),
      )
      if (after) return { shipment: present(after), transition: null, stale: false, duplicate: false }
      if (!revisitsDetection) throw new ShipmentsErrors.ShipmentNotFound(id)
    }

    return commitChange(id, patch, context, orderCancellation, fillEmpty)
  }

  return { update, applyUpdate, orderAdvanceJob }
}

export type ShipmentUpdates = ReturnType<typeof createShipmentUpdates>
