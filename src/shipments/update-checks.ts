// The update's input checks, before anything is written: the patch parsed, the items and enabled flag
// read (their lines looked up in the order), an integration's event not dated in the future. An
// unknown shipment is a 404 before it is a validation error.
import type { FillableColumns } from '../db/data-layer.js'
import { ShipmentsErrors, ShipmentValidationError } from '../errors.js'
import { parseItemsInput, type ShipmentItemInput } from '../model/items.js'
import { detectedCarrierFill } from './detection.js'
import { parseShipmentUpdate, type ShipmentPatch, type ShipmentUpdateInput } from './update-input.js'
import type { ShipmentServiceContext } from './service-context.js'
import type { UpdateContext } from './update-context.js'

/**
 * How far into the future an integration's event may be dated (clock skew between sender and host).
 * Later than that is refused: an event from year 9999 would make every genuine event after it stale.
 */
export const EXTERNAL_EVENT_MAX_SKEW_MS = 5 * 60 * 1000

/** Refuses an integration's event dated later than the clock skew allows (a 400 at the gateway). */
export function refuseFutureEvent(occurredAt: Date, now: number): void {
  if (!(occurredAt.getTime() <= now + EXTERNAL_EVENT_MAX_SKEW_MS)) {
    throw new ShipmentValidationError({ occurredAt: ['Occurred At must be a date at most 5 minutes in the future.'] })
  }
}

/**
 * The update's `items` (replacing the shipment's, `[]` for order-level) and `enabled`, beyond spec 2.2:
 * both are checked against the order's allocation. null or absent leaves them unchanged.
 */
function parseAllocationInput(input: unknown): { items?: ShipmentItemInput[]; enabled?: boolean } {
  if (typeof input !== 'object' || input === null) return {}
  const { items, enabled } = input as { items?: unknown; enabled?: unknown }
  if (enabled != null && typeof enabled !== 'boolean') throw new ShipmentValidationError({ enabled: ['Enabled must be true or false.'] })
  return { items: items == null ? undefined : parseItemsInput(items), enabled: enabled ?? undefined }
}

/** An update's input as checked: the patch to apply and what carrier detection fills where empty. */
export interface CheckedUpdate {
  patch: ShipmentPatch
  fillEmpty: FillableColumns
}

export function createUpdateChecks(shared: ShipmentServiceContext) {
  const { deps, requireRow, itemsOfOrder } = shared
  const { timeZone } = deps
  const fieldsByHandle = new Map(deps.shipmentFields.map((field) => [field.handle, field]))

  /** The update's patch, checked against the shipment's order and the clock; the errors of spec 7.1. */
  async function checkUpdate(id: number, input: ShipmentUpdateInput, context: UpdateContext): Promise<CheckedUpdate> {
    let patch: ShipmentPatch
    try {
      patch = parseShipmentUpdate(input, { fieldsByHandle, timeZone, now: deps.clock() })
    } catch (error) {
      await requireRow(id) // an unknown shipment is a 404 before it is a validation error
      throw error
    }
    if (!Number.isSafeInteger(id)) throw new ShipmentsErrors.ShipmentNotFound(id)
    const { items, enabled } = parseAllocationInput(input)
    if (enabled !== undefined) patch.columns.enabled = enabled
    if (items !== undefined) {
      const row = await requireRow(id)
      patch.columns.items = items.length === 0 ? [] : await itemsOfOrder(row.orderId, items, row)
    }
    const fillEmpty = detectedCarrierFill(patch, deps.detectCarrier)
    if (context.externalEvent) {
      try {
        refuseFutureEvent(context.externalEvent.occurredAt, deps.clock())
      } catch (error) {
        await requireRow(id)
        throw error
      }
    }
    return { patch, fillEmpty }
  }

  return { checkUpdate }
}
