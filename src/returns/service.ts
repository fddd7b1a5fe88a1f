// Returns (RMAs) as reverse shipments in the allocation ledger: what a return may hold is what shipped
// minus what other returns hold, checked under the order's lock; one update path with history and
// events; a return label bought exactly once through a delivery provider; receiving line by line.
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { DataLayer, NewOutboxMessage, OutboxRow, ReturnPlan } from '../db/data-layer.js'
import type { ReceivedQuantities, ReturnLedger, ReturnLine, ReturnListQuery, ReturnRow, ReturnState } from '../db/returns.js'
import { RETURN_STATES } from '../db/returns.js'
import { parcelColumns } from '../deliveries/parcel.js'
import type { LabelPort } from '../deliveries/service.js'
import { TEXT_LIMITS, textProblem, type TextRule } from '../text.js'
import { ReturnErrors, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import type { DeliveryProviderAt } from '../deliveries/service.js'
import { DeliveryProviderError, LABEL_FORMATS, unknownOutcomeReason, type LabelFormat, type LabelPurchaseRequest, type PurchasedLabel } from '../gateway/delivery-provider.js'
import type { OrderStore } from '../orders/order-store.js'
import type { OutboxDispatcher } from '../outbox/dispatcher.js'
import { toHistoryEntry, toReturn, type Return, type ReturnHistoryEntry } from './return.js'

/** Who changes a return and through what: `api`, `admin`, a host's own word; an integration's handle for tracking. */
export interface ReturnContext {
  userId?: string | null | undefined
  source?: string | undefined
}

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

/** The one update path of a return: a state, a message, a tracking number entered by hand. */
export interface UpdateReturnInput {
  state?: ReturnState | undefined
  message?: string | null | undefined
  trackingNumber?: string | undefined
  trackingUrl?: string | null | undefined
  carrier?: string | null | undefined
}

export interface ReturnLabelInput {
  integration: string
  carrier: string
  service: string
  /** The parcel the customer sends back. */
  weight: { value: string; unit: string }
  dimensions?: { length: string; width: string; height: string; unit: string } | null | undefined
  labelFormat?: LabelFormat | undefined
}

export interface ReceiveReturnInput {
  /** What arrived of each line of the return, by condition; together they account for the line's quantity. */
  lines: Array<{ lineItemId: number } & Partial<ReceivedQuantities>>
  message?: string | null | undefined
}

/** Per order line: what shipped, what returns hold, and what may still be returned. */
export interface ReturnableLine {
  lineItemId: number
  sku: string | null
  name: string | null
  shipped: number
  returned: number
  returnable: number
}

export interface ReturnServiceDependencies {
  data: DataLayer
  orderStore: OrderStore
  dispatcher: Pick<OutboxDispatcher, 'claim' | 'deliver'>
  labels: LabelPort
  logger: FastifyBaseLogger
  timeZone: string
  lockTimeoutMs: number
  reasons: readonly string[]
}

export type ReturnService = ReturnType<typeof createReturnService>

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
/** States in which a bought label is unused, so it may be voided: once in transit the carrier has it. */
const VOIDABLE: readonly ReturnState[] = ['label_sent', 'authorised', 'rejected']
/** States in which what arrived may be recorded. */
const RECEIVABLE: readonly ReturnState[] = ['authorised', 'label_sent', 'in_transit', 'received']
/** The events of state changes; other changes are in the history only. */
const EVENT_OF: Partial<Record<ReturnState, string>> = { requested: 'returnRequested', authorised: 'returnAuthorised', rejected: 'returnRejected', closed: 'returnClosed' }
const MAX_LINES = 500
const MAX_TEXT = 2000

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const isCount = (value: unknown, min: number): value is number => Number.isInteger(value) && (value as number) >= min && (value as number) <= 2_147_483_647

/** A note or message: it may span lines. */
const NOTE: TextRule = { maxLength: MAX_TEXT, multiline: true }
/** A carrier, a service, an integration's handle: one line. */
const SHORT: TextRule = { maxLength: TEXT_LIMITS.short }

/** The package's text rule (src/text.ts): control characters and bidirectional overrides refused, never stored. */
function optionalText(value: unknown, field: string, errors: Record<string, string[]>, rule: TextRule = NOTE): string | null {
  if (value === undefined || value === null || value === '') return null
  const problem = typeof value === 'string' ? textProblem(value, rule) : `must be text of at most ${rule.maxLength} characters`
  if (problem) {
    ;(errors[field] ??= []).push(problem)
    return null
  }
  return value as string
}

function refuseIf(errors: Record<string, string[]>): void {
  if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
}

/** "Line 12: 3 to return, 1 of 2 shipped left to return." */
export function returnRefusalMessage(lineItemId: number, quantity: number, ledger: ReturnLedger): string {
  const shipped = ledger.shipped.get(lineItemId) ?? 0
  const left = Math.max(0, shipped - (ledger.returned.get(lineItemId) ?? 0))
  return shipped === 0
    ? `Line ${lineItemId}: ${quantity} to return, none of it shipped.`
    : `Line ${lineItemId}: ${quantity} to return, ${left} of ${shipped} shipped left to return.`
}

export function createReturnService(deps: ReturnServiceDependencies) {
  const { data, dispatcher, timeZone, labels } = deps
  const present = (row: ReturnRow) => toReturn(row, timeZone)
  const who = (context: ReturnContext) => ({ userId: context.userId ?? null, source: context.source ?? 'api' })

  async function requireReturn(id: number): Promise<ReturnRow> {
    const row = Number.isInteger(id) && id > 0 ? await data.returns.find(id) : undefined
    if (!row) throw new ReturnErrors.ReturnNotFound(id)
    return row
  }

  const eventMessage =
    (name: string, extra: { from: string | null; to: string; message: string | null; userId: string | null; source: string }) =>
    (row: ReturnRow): NewOutboxMessage[] => [{ kind: 'event', name, orderingKey: `return:${row.id}`, payload: { return: present(row), ...extra } }]

  async function committed(outcome: { row: ReturnRow; messages: OutboxRow[] } | undefined, id: number): Promise<Return> {
    if (!outcome) throw new ReturnErrors.ReturnNotFound(id)
    await dispatcher.deliver(outcome.messages)
    return present(outcome.row)
  }

  /**
   * The one way a return changes: under the order's lock, from the return as it is there. `decide` answers
   * the columns and the target state (null: the state stays), or throws to refuse; a history row is
   * written for every change, and the state's event when it has one (`event` overrides).
   */
  async function change(
    id: number,
    context: ReturnContext,
    decide: (current: ReturnRow, ledger: ReturnLedger) => { columns: ReturnPlan['columns']; state: ReturnState | null; message: string | null; event?: string | null; action?: string } | null,
  ): Promise<Return> {
    const { userId, source } = who(context)
    const outcome = await data.returns.change({ returnId: id }, (current, ledger) => {
      const decided = decide(current!, ledger)
      // Already there (a repeated request, a late tracking event): nothing is written, no history, no event.
      if (decided === null) return {}
      const to = decided.state ?? current!.state
      const event = decided.event !== undefined ? decided.event : decided.state !== null && decided.state !== current!.state ? (EVENT_OF[decided.state] ?? null) : null
      const extra = { from: current!.state, to, message: decided.message, userId, source }
      return {
        columns: { ...decided.columns, ...(decided.state !== null && { state: decided.state }) },
        history: { fromState: current!.state, toState: decided.action ?? to, message: decided.message, userId, source },
        ...(event && { messages: eventMessage(event, extra), claimFor: dispatcher.claim }),
      }
    })
    return committed(outcome, id)
  }

  function checkState(row: ReturnRow, to: ReturnState, allowed: readonly ReturnState[]): void {
    if (!allowed.includes(row.state)) throw new ReturnErrors.InvalidTransition(row.id, row.state, to)
  }

  // ---- requesting ----

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

  // ---- the update path ----

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

  // ---- receiving ----

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

  // ---- the return label ----

  /** Runs `task` holding the return's label lock, across processes and instances. */
  async function withLabelLock<T>(id: number, task: () => Promise<T>): Promise<T> {
    try {
      return await data.withNamedLock('returnLabel', id, deps.lockTimeoutMs, task)
    } catch (error) {
      if ((error as { lockName?: unknown })?.lockName === `returnLabel:${id}`) throw new ReturnErrors.LabelBusy(id)
      throw error
    }
  }

  function parseLabelInput(input: unknown): { integration: string; carrier: string; service: string; labelFormat: LabelFormat; parcel: ReturnType<typeof parcelColumns> } {
    if (!isObject(input)) throw new ShipmentValidationError({ body: ['must be an object'] })
    const errors: Record<string, string[]> = {}
    for (const key of Object.keys(input)) if (!['integration', 'carrier', 'service', 'weight', 'dimensions', 'labelFormat'].includes(key)) errors[key] = ['is not a field of a return label']
    for (const field of ['integration', 'carrier', 'service'] as const) {
      const value = input[field]
      if (typeof value !== 'string' || value.trim() === '') errors[field] = ['is required, at most 255 characters']
      else optionalText(value, field, errors, SHORT)
    }
    const labelFormat = (input.labelFormat ?? 'PDF') as LabelFormat
    if (!(LABEL_FORMATS as readonly string[]).includes(labelFormat)) errors.labelFormat = [`must be one of ${LABEL_FORMATS.join(', ')}`]
    let parcel: ReturnType<typeof parcelColumns> = {}
    try {
      parcel = parcelColumns({ weight: input.weight, ...(input.dimensions !== undefined && { dimensions: input.dimensions }) }, true)
    } catch (error) {
      if (!(error instanceof ShipmentValidationError)) throw error
      Object.assign(errors, error.errors)
    }
    refuseIf(errors)
    return { integration: input.integration as string, carrier: input.carrier as string, service: input.service as string, labelFormat, parcel }
  }

  /**
   * Buys the return label exactly once, as outbound labels are bought: the operation id is committed on
   * the return before the provider is called (EasyPost: a shipment with `is_return`), the provider's id as
   * soon as it is known, and a purchase whose outcome was lost is looked up there, never bought again.
   */
  async function buyLabel(id: number, input: ReturnLabelInput, context: ReturnContext = {}): Promise<Return> {
    const parsed = parseLabelInput(input)
    const row = await requireReturn(id)
    const at = await labels.deliveryProvider(parsed.integration)
    const { from, to } = await labels.addresses(row.orderId)
    return withLabelLock(id, async () => {
      let current = await requireReturn(id)
      if (current.labelState === 'purchased' || (current.labelOperationId === null && current.trackingNumber !== null)) throw new ReturnErrors.LabelExists(id)
      const resumed = current.labelOperationId !== null
      if (!resumed) {
        checkState(current, 'label_sent', ['authorised'])
        if (!(await data.returns.beginLabel(id, { operationId: randomUUID(), integrationId: at.row.id, carrier: parsed.carrier, service: parsed.service }))) throw new ReturnErrors.LabelBusy(id)
        current = await requireReturn(id)
      }
      const operationId = current.labelOperationId!
      const operationAt: DeliveryProviderAt = current.labelIntegrationId === at.row.id || current.labelIntegrationId === null ? at : await labels.deliveryProviderById(current.labelIntegrationId)
      const journal = {
        ...labels.journalFor(operationId),
        // The provider's id is kept on the return (the purchase has no parcel).
        externalIdKnown: (externalId: string) => data.returns.updateLabel(id, { labelExternalId: externalId }),
      }
      const request: LabelPurchaseRequest = {
        operationId,
        shipmentReference: current.reference,
        parcelId: 0,
        parcel: labels.measures({ weight: parsed.parcel.weight!, weightUnit: parsed.parcel.weightUnit!, length: parsed.parcel.length ?? null, width: parsed.parcel.width ?? null, height: parsed.parcel.height ?? null, dimensionUnit: parsed.parcel.dimensionUnit ?? null }),
        from,
        to,
        isReturn: true,
        // A purchase whose outcome is unknown is finished as it was first asked, never a second one beside it.
        carrier: current.carrier ?? parsed.carrier,
        service: current.service ?? parsed.service,
        labelFormat: parsed.labelFormat,
        externalId: current.labelExternalId,
      }
      const recover = async (): Promise<PurchasedLabel | null> => {
        const externalId = (await data.returns.find(id))?.labelExternalId
        if (!externalId) return null
        const found = await operationAt.provider.deliveries.recoverLabel({ ...request, externalId }, operationAt.context, journal)
        return found.state === 'purchased' ? found.label : null
      }
      const finish = (label: PurchasedLabel) =>
        change(id, context, (latest) => ({
          columns: {
            labelState: 'purchased',
            labelExternalId: label.externalId,
            trackingNumber: label.trackingNumber,
            trackingUrl: label.trackingUrl,
            carrier: label.carrier,
            service: label.service,
            labelUrl: label.labelUrl,
            labelFormat: label.labelFormat,
            labelCost: label.cost,
            labelCurrency: label.currency,
          },
          // A label bought for a return rejected meanwhile is kept (it was paid for); the state stays.
          state: latest.state === 'authorised' ? 'label_sent' : null,
          action: 'label_sent',
          message: `${label.carrier} ${label.service} ${label.trackingNumber} (${label.cost} ${label.currency})`,
          // The customer's label is out: mails that carry it (notifications on returnLabelSent) follow it.
          event: latest.state === 'authorised' ? 'returnLabelSent' : null,
        }))
      if (resumed) {
        try {
          const label = await recover()
          if (label) return finish(label)
        } catch (error) {
          if (!(error instanceof DeliveryProviderError)) throw error
          throw new ReturnErrors.LabelOutcomeUnknown(id, unknownOutcomeReason(undefined, error))
        }
      }
      try {
        const label = await operationAt.provider.deliveries.purchaseLabel({ ...request, externalId: (await data.returns.find(id))?.labelExternalId ?? null }, operationAt.context, journal)
        return await finish(label)
      } catch (error) {
        if (!(error instanceof DeliveryProviderError)) {
          deps.logger.error({ err: error, operationId, returnId: id }, 'Return label purchase failed with an unexpected error; its outcome is reconciled on the next try')
          throw new ReturnErrors.LabelOutcomeUnknown(id, unknownOutcomeReason(error))
        }
        if (error.kind === 'refused') {
          // Nothing was bought: the return is free for another purchase (or a tracking number by hand).
          await data.returns.updateLabel(id, { labelOperationId: null, labelExternalId: null, labelIntegrationId: null, labelState: null, carrier: null, service: null })
          throw labels.refusal(error)
        }
        let label: PurchasedLabel | null = null
        let lookupFailure: unknown
        try {
          label = await recover()
        } catch (lookupError) {
          lookupFailure = lookupError
          deps.logger.warn({ err: lookupError, operationId, returnId: id }, 'Return label: the lookup after an unknown outcome failed too')
        }
        if (label) return finish(label)
        throw new ReturnErrors.LabelOutcomeUnknown(id, unknownOutcomeReason(error, lookupFailure))
      }
    })
  }

  /**
   * Voids a return label bought and not used (the return still `label_sent`, or authorised or rejected
   * since), as outbound labels are voided: the provider is asked for the refund first (EasyPost: a refund
   * of the return shipment), then the label leaves the return in one change with its history row and
   * `returnLabelVoided`; a `label_sent` return is authorised again, free for another label or a tracking
   * number by hand. A refusal by the provider changes nothing.
   */
  async function voidLabel(id: number, context: ReturnContext = {}): Promise<{ return: Return; refundStatus: string }> {
    await requireReturn(id)
    return withLabelLock(id, async () => {
      const current = await requireReturn(id)
      if (current.labelState !== 'purchased' || current.labelExternalId === null || current.labelIntegrationId === null || !VOIDABLE.includes(current.state)) {
        throw new ReturnErrors.LabelNotVoidable(id, current.state)
      }
      const at = await labels.deliveryProviderById(current.labelIntegrationId)
      let refundStatus: string
      try {
        ;({ refundStatus } = await at.provider.deliveries.voidLabel({ externalId: current.labelExternalId }, at.context, labels.journalFor(current.labelOperationId!)))
      } catch (error) {
        if (error instanceof DeliveryProviderError) throw labels.refusal(error)
        throw error
      }
      const voided = await change(id, context, (latest) => ({
        columns: {
          labelState: null,
          labelOperationId: null,
          labelExternalId: null,
          labelIntegrationId: null,
          labelUrl: null,
          labelFormat: null,
          labelCost: null,
          labelCurrency: null,
          trackingNumber: null,
          trackingUrl: null,
          carrier: null,
          service: null,
        },
        state: latest.state === 'label_sent' ? 'authorised' : null,
        action: 'label_voided',
        message: `Refund ${refundStatus}${current.trackingNumber ? ` (${current.carrier ?? 'carrier'} ${current.trackingNumber})` : ''}`,
        event: 'returnLabelVoided',
      }))
      return { return: voided, refundStatus }
    })
  }

  // ---- tracking ----

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

  // ---- reads ----

  async function returnable(orderId: number): Promise<ReturnableLine[]> {
    const order = Number.isInteger(orderId) && orderId > 0 ? await deps.orderStore.findOrder(orderId) : null
    if (!order) throw new ShipmentsErrors.OrderNotFound(orderId)
    const [ledger, lines] = await Promise.all([data.returns.ledger(order.id), deps.orderStore.orderLines?.(order.id) ?? null])
    const ids = new Set([...(lines ?? []).map((line) => line.id), ...ledger.shipped.keys()])
    return [...ids].map((lineItemId) => {
      const line = lines?.find((each) => each.id === lineItemId)
      const shipped = ledger.shipped.get(lineItemId) ?? 0
      const returned = ledger.returned.get(lineItemId) ?? 0
      return { lineItemId, sku: line?.sku ?? null, name: line?.name ?? null, shipped, returned, returnable: Math.max(0, shipped - returned) }
    })
  }

  async function list(query: Partial<Omit<ReturnListQuery, 'limit'>> & { limit?: number | undefined } = {}): Promise<Return[]> {
    const limit = Math.min(Math.max(1, query.limit ?? 50), 200)
    return (await data.returns.list({ ...query, limit })).map(present)
  }

  return {
    /** The reasons a return line may give (the `returns.reasons` option). */
    reasons: [...deps.reasons] as readonly string[],
    /** Requests a return of an order's lines: 422 naming each line over what shipped minus what other returns hold. */
    request: requestReturn,
    get: async (id: number): Promise<Return | null> => {
      const row = Number.isInteger(id) && id > 0 ? await data.returns.find(id) : undefined
      return row ? present(row) : null
    },
    /** Newest first: by state, order, age (`createdBefore`), paged by `beforeId`. */
    list,
    /** The returns of an order, oldest first. */
    ofOrder: async (orderId: number): Promise<Return[]> => (await data.returns.ofOrder(orderId)).map(present),
    /** Newest first. */
    history: async (id: number): Promise<ReturnHistoryEntry[]> => {
      await requireReturn(id)
      return (await data.returns.history(id)).map((row) => toHistoryEntry(row, timeZone))
    },
    returnable,
    update,
    receive,
    buyLabel,
    voidLabel,
    track,
  }
}
