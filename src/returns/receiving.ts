// Receiving a return: what arrived of each line, by condition (resellable, damaged, missing), recorded once.
import type { ReceivedQuantities, ReturnState } from '../db/returns.js'
import { ReturnErrors, ShipmentValidationError } from '../errors.js'
import type { Return } from '../model/return.js'
import { isCount, isObject, MAX_LINES, optionalText, refuseIf, type ReturnContext, type ReturnServiceContext } from './service-context.js'

export interface ReceiveReturnInput {
  /** What arrived of each line of the return, by condition; together they account for the line's quantity. */
  lines: Array<{ lineItemId: number } & Partial<ReceivedQuantities>>
  message?: string | null | undefined
}

/** States in which what arrived may be recorded. */
const RECEIVABLE: readonly ReturnState[] = ['authorised', 'label_sent', 'in_transit', 'received']

export function createReturnReceiving(shared: ReturnServiceContext) {
  const { requireReturn, change, checkState } = shared

  async function receive(id: number, input: ReceiveReturnInput, context: ReturnContext = {}): Promise<Return> {
    if (!isObject(input)) throw new ShipmentValidationError({ body: ['must be an object'] })
    const errors: Record<string, string[]> = {}
    for (const key of Object.keys(input)) if (!['lines', 'message'].includes(key)) errors[key] = ['is not a field of a receipt']
    const message = optionalText(input.message, 'message', errors)
    if (!Array.isArray(input.lines) || input.lines.length === 0 || input.lines.length > MAX_LINES) errors.lines = [`must list 1 to ${MAX_LINES} lines`]
    refuseIf(errors)
    const given = new Map<number, ReceivedQuantities>()
    ;(input.lines as unknown[]).forEach((line, index) => {
      const field = `lines.${index}`
      const add = (text: string) => (errors[field] ??= []).push(text)
      if (!isObject(line)) return add('must be an object')
      for (const key of Object.keys(line)) if (!['lineItemId', 'resellable', 'damaged', 'missing'].includes(key)) add(`${key} is not a field of a received line`)
      if (!isCount(line.lineItemId, 1)) return add('lineItemId must be a positive integer')
      for (const condition of ['resellable', 'damaged', 'missing'] as const) if (line[condition] !== undefined && !isCount(line[condition], 0)) add(`${condition} must be a whole number, 0 or more`)
      if (given.has(line.lineItemId)) add(`line ${line.lineItemId} is listed twice`)
      if (!errors[field]) given.set(line.lineItemId, { resellable: (line.resellable as number | undefined) ?? 0, damaged: (line.damaged as number | undefined) ?? 0, missing: (line.missing as number | undefined) ?? 0 })
    })
    refuseIf(errors)
    await requireReturn(id)
    return change(id, context, (current) => {
      if (current.dateReceived !== null) throw new ReturnErrors.AlreadyReceived(current.id)
      checkState(current, 'received', RECEIVABLE)
      const problems: Record<string, string[]> = {}
      for (const lineItemId of given.keys()) if (!current.lines.some((line) => line.lineItemId === lineItemId)) problems[`line ${lineItemId}`] = ['is not on this return']
      const lines = current.lines.map((line) => {
        const received = given.get(line.lineItemId)
        const total = received ? received.resellable + received.damaged + received.missing : 0
        if (total !== line.quantity) problems[`line ${line.lineItemId}`] = [`resellable, damaged and missing must add up to ${line.quantity} (the line's quantity), not ${total}`]
        return { ...line, received: received ?? null }
      })
      refuseIf(problems)
      return { columns: { lines, dateReceived: new Date(), ...(message !== null && { stateMessage: message }) }, state: 'received', message, event: 'returnReceived' }
    })
  }

  return { receive }
}
