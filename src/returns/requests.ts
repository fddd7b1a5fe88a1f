// Requesting a return: its lines checked, each within what shipped minus what other returns hold, under
// the order's lock.
import type { ReturnLedger, ReturnLine } from '../db/returns.js'
import { ShipmentsErrors, ShipmentValidationError } from '../errors.js'
import type { Return } from '../model/return.js'
import { isCount, isObject, MAX_LINES, optionalText, refuseIf, type ReturnContext, type ReturnServiceContext } from './service-context.js'

export interface ReturnLineInput {
  lineItemId: number
  quantity: number
  reason: string
  note?: string | null | undefined
}

export interface RequestReturnInput {
  lines: ReturnLineInput[]
  message?: string | null | undefined
}

/** "Line 12: 3 to return, 1 of 2 shipped left to return." */
export function returnRefusalMessage(lineItemId: number, quantity: number, ledger: ReturnLedger): string {
  const shipped = ledger.shipped.get(lineItemId) ?? 0
  const left = Math.max(0, shipped - (ledger.returned.get(lineItemId) ?? 0))
  return shipped === 0
    ? `Line ${lineItemId}: ${quantity} to return, none of it shipped.`
    : `Line ${lineItemId}: ${quantity} to return, ${left} of ${shipped} shipped left to return.`
}

export function createReturnRequests(shared: ReturnServiceContext) {
  const { deps, who, committed, eventMessage } = shared
  const { data, dispatcher } = deps

  function parseLines(input: unknown): ReturnLine[] {
    if (!isObject(input)) throw new ShipmentValidationError({ body: ['must be an object'] })
    const errors: Record<string, string[]> = {}
    for (const key of Object.keys(input)) if (!['lines', 'message'].includes(key)) errors[key] = ['is not a field of a return']
    if (!Array.isArray(input.lines) || input.lines.length === 0 || input.lines.length > MAX_LINES) {
      throw new ShipmentValidationError({ ...errors, lines: [`must list 1 to ${MAX_LINES} lines`] })
    }
    const seen = new Set<number>()
    const lines: ReturnLine[] = []
    input.lines.forEach((line: unknown, index) => {
      const field = `lines.${index}`
      const add = (message: string) => (errors[field] ??= []).push(message)
      if (!isObject(line)) return add('must be an object')
      for (const key of Object.keys(line)) if (!['lineItemId', 'quantity', 'reason', 'note'].includes(key)) add(`${key} is not a field of a return line`)
      if (!isCount(line.lineItemId, 1)) add('lineItemId must be a positive integer')
      else if (seen.has(line.lineItemId)) add(`line ${line.lineItemId} is listed twice`)
      else seen.add(line.lineItemId)
      if (!isCount(line.quantity, 1)) add('quantity must be a positive integer')
      if (typeof line.reason !== 'string' || !deps.reasons.includes(line.reason)) add(`reason must be one of ${deps.reasons.join(', ')}`)
      const note = optionalText(line.note, `${field}.note`, errors)
      if (!errors[field]) lines.push({ lineItemId: line.lineItemId as number, quantity: line.quantity as number, reason: line.reason as string, note, received: null })
    })
    refuseIf(errors)
    return lines
  }

  /** Every line within what shipped minus what other returns hold; otherwise a 422 naming each line over. */
  function checkLedger(lines: readonly ReturnLine[], ledger: ReturnLedger): void {
    const errors: Record<string, string[]> = {}
    lines.forEach((line, index) => {
      const left = (ledger.shipped.get(line.lineItemId) ?? 0) - (ledger.returned.get(line.lineItemId) ?? 0)
      if (line.quantity > left) errors[`lines.${index}`] = [returnRefusalMessage(line.lineItemId, line.quantity, ledger)]
    })
    refuseIf(errors)
  }

  async function requestReturn(orderId: number, input: RequestReturnInput, context: ReturnContext = {}): Promise<Return> {
    const order = Number.isInteger(orderId) && orderId > 0 ? await deps.orderStore.findOrder(orderId) : null
    if (!order) throw new ShipmentsErrors.OrderNotFound(orderId)
    const lines = parseLines(input)
    const errors: Record<string, string[]> = {}
    const message = optionalText((input as unknown as Record<string, unknown>).message, 'message', errors)
    refuseIf(errors)
    const { userId, source } = who(context)
    const outcome = await data.returns.change({ orderId: order.id }, (_current, ledger) => {
      checkLedger(lines, ledger)
      return {
        insert: { orderReference: order.reference, lines, state: 'requested' },
        history: { fromState: null, toState: 'requested', message, userId, source },
        messages: eventMessage('returnRequested', { from: null, to: 'requested', message, userId, source }),
        claimFor: dispatcher.claim,
      }
    })
    return committed(outcome, 0)
  }

  return { requestReturn }
}
