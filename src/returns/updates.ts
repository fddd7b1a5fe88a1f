// The update path of a return (authorised, rejected, closed; a tracking number entered by hand puts it in
// transit), and the carrier's tracking events, which move it forward only.
import type { ReturnState } from '../db/returns.js'
import { RETURN_STATES } from '../db/returns.js'
import { ReturnErrors, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import { TEXT_LIMITS } from '../text.js'
import type { Return } from '../model/return.js'
import { isObject, optionalText, refuseIf, SHORT, type ReturnContext, type ReturnServiceContext } from './service-context.js'

/** The one update path of a return: a state, a message, a tracking number entered by hand. */
export interface UpdateReturnInput {
  state?: ReturnState | undefined
  message?: string | null | undefined
  trackingNumber?: string | undefined
  trackingUrl?: string | null | undefined
  carrier?: string | null | undefined
}

/** Where each state may go through `update` (label_sent comes from a label, received from receiving or tracking). */
const NEXT: Record<ReturnState, readonly ReturnState[]> = {
  requested: ['authorised', 'rejected'],
  authorised: ['rejected', 'in_transit'],
  rejected: [],
  label_sent: ['in_transit'],
  in_transit: [],
  received: ['closed'],
  closed: [],
}
/** States the update never takes: each follows from its own route (buying a label, receiving, requesting). */
const NOT_BY_UPDATE: ReadonlySet<ReturnState> = new Set(['requested', 'label_sent', 'received'])

export function createReturnUpdates(shared: ReturnServiceContext) {
  const { deps, requireReturn, change, checkState } = shared
  const { data } = deps

  async function update(id: number, input: UpdateReturnInput, context: ReturnContext = {}): Promise<Return> {
    if (!isObject(input)) throw new ShipmentValidationError({ body: ['must be an object'] })
    const errors: Record<string, string[]> = {}
    for (const key of Object.keys(input)) if (!['state', 'message', 'trackingNumber', 'trackingUrl', 'carrier'].includes(key)) errors[key] = ['is not a field of a return update']
    const state = input.state
    if (state !== undefined && !(RETURN_STATES as readonly unknown[]).includes(state)) errors.state = [`must be one of: ${RETURN_STATES.join(', ')}`]
    const message = optionalText(input.message, 'message', errors)
    const trackingNumber = input.trackingNumber
    if (trackingNumber !== undefined && (typeof trackingNumber !== 'string' || !/^[\x21-\x7e]{1,64}$/.test(trackingNumber))) errors.trackingNumber = ['must be 1 to 64 printable characters without spaces']
    const trackingUrl = optionalText(input.trackingUrl, 'trackingUrl', errors, { maxLength: TEXT_LIMITS.url })
    if (trackingUrl !== null && !/^https?:\/\//i.test(trackingUrl)) errors.trackingUrl = ['must be an http(s) URL']
    const carrier = optionalText(input.carrier, 'carrier', errors, SHORT)
    if (state === 'rejected' && message === null && !errors.message) errors.message = ['is required to reject a return']
    if (state === undefined && trackingNumber === undefined) errors.body = ['give a state or a trackingNumber']
    refuseIf(errors)
    await requireReturn(id)
    return change(id, context, (current) => {
      if (trackingNumber !== undefined) {
        // The customer ships it themselves: the number they gave, entered by hand, and the return is on its way.
        if (current.labelOperationId !== null || current.trackingNumber !== null) throw new ReturnErrors.LabelExists(current.id)
        const target = (state as ReturnState | undefined) ?? 'in_transit'
        if (target !== 'in_transit') throw new ShipmentValidationError({ state: ['a tracking number puts a return in transit'] })
        checkState(current, 'in_transit', ['authorised'])
        return { columns: { trackingNumber: trackingNumber as string, trackingUrl, carrier, stateMessage: message ?? current.stateMessage }, state: 'in_transit', message: message ?? `Tracking number ${trackingNumber as string}` }
      }
      const target = state as ReturnState
      // A state of the return the update does not take (it follows from a label, a receipt, a request) is
      // a transition this route cannot make: the documented 409, whatever the return's state.
      if (NOT_BY_UPDATE.has(target)) throw new ReturnErrors.InvalidTransition(current.id, current.state, target)
      if (current.state === target) return null
      checkState(current, target, Object.entries(NEXT).flatMap(([from, to]) => (to.includes(target) ? [from as ReturnState] : [])))
      if (target === 'closed' && current.dateReceived === null) throw new ShipmentUpdateRejectedError(`Return ${current.reference}: record what arrived before closing it.`)
      return { columns: message !== null ? { stateMessage: message } : {}, state: target, message }
    })
  }

  /**
   * A tracking event for a return's tracking number (the same webhook as shipments'): moves the return
   * to in transit, and to received when the carrier delivered it; forward only. null when no open
   * return holds the number.
   */
  async function track(event: { trackingNumber: string; status: string; code: string; integration: string }): Promise<{ returnId: number; state: ReturnState } | null> {
    const found = await data.returns.findByTrackingNumber(event.trackingNumber)
    if (!found || !['label_sent', 'in_transit', 'received'].includes(found.state)) return null
    const target: ReturnState | null = event.code.toLowerCase() === 'delivered' ? 'received' : event.status === 'shipped' ? 'in_transit' : null
    const order: ReturnState[] = ['label_sent', 'in_transit', 'received']
    const outcome = await change(found.id, { userId: null, source: event.integration }, (current) => {
      if (target === null || order.indexOf(current.state) < 0 || order.indexOf(current.state) >= order.indexOf(target)) return null
      // The carrier's delivery moves the state; returnReceived waits for what arrived to be recorded.
      return { columns: {}, state: target, message: `${event.integration}: ${event.code}`, event: null }
    })
    return { returnId: outcome.id, state: outcome.state }
  }

  return { update, track }
}
