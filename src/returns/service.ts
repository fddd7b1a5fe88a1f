// Returns (RMAs) as reverse shipments in the allocation ledger: what a return may hold is what shipped
// minus what other returns hold, checked under the order's lock; one update path with history and
// events; a return label bought exactly once through a delivery provider; receiving line by line.
// Composed of one module per concern, each a factory over the shared context (service-context.ts):
// requests.ts, updates.ts (the update path and tracking), receiving.ts, label-purchase.ts, label-void.ts
// and reads.ts. The types stay importable from here.
import { createReturnLabelPurchase } from './label-purchase.js'
import { createReturnLabelVoid } from './label-void.js'
import { createReturnReads } from './reads.js'
import { createReturnReceiving } from './receiving.js'
import { createReturnRequests } from './requests.js'
import { createReturnServiceContext, type ReturnServiceDependencies } from './service-context.js'
import { createReturnUpdates } from './updates.js'

export type { ReturnContext, ReturnServiceDependencies } from './service-context.js'
export { returnRefusalMessage, type RequestReturnInput, type ReturnLineInput } from './requests.js'
export type { UpdateReturnInput } from './updates.js'
export type { ReceiveReturnInput } from './receiving.js'
export type { ReturnLabelInput } from './label-purchase.js'
export type { ReturnableLine } from './reads.js'

export type ReturnService = ReturnType<typeof createReturnService>

export function createReturnService(deps: ReturnServiceDependencies) {
  const shared = createReturnServiceContext(deps)
  const { requestReturn } = createReturnRequests(shared)
  const { update, track } = createReturnUpdates(shared)
  const { receive } = createReturnReceiving(shared)
  const { buyLabel } = createReturnLabelPurchase(shared)
  const { voidLabel } = createReturnLabelVoid(shared)
  const { get, list, ofOrder, history, returnable } = createReturnReads(shared)

  return {
    /** The reasons a return line may give (the `returns.reasons` option). */
    reasons: [...deps.reasons] as readonly string[],
    /** Requests a return of an order's lines: 422 naming each line over what shipped minus what other returns hold. */
    request: requestReturn,
    get,
    /** Newest first: by state, order, age (`createdBefore`), paged by `beforeId`. */
    list,
    /** The returns of an order, oldest first. */
    ofOrder,
    /** Newest first. */
    history,
    returnable,
    update,
    receive,
    buyLabel,
    voidLabel,
    track,
  }
}
