// Returns customers start themselves, from the tracking page of a delivered shipment: the return window,
// the host's hook, the lines a parcel offers (what the returns ledger says is returnable, capped by what
// the parcel held), then the one request path of the returns service, and the shop's automatic steps.
import type { FastifyBaseLogger } from 'fastify'
import { ShipmentValidationError } from '../errors.js'
import { textProblem } from '../text.js'
import type { OrderStore, OrderSummary } from '../order-store.js'
import { milestoneOf } from '../model/checkpoints.js'
import type { ShipmentService } from '../shipments/service.js'
import type { Shipment } from '../model/shipment.js'
import type { Return } from '../model/return.js'
import type { ReturnLabelInput, ReturnService } from './service.js'

/** A line a customer may send back from a parcel: at most `quantity` units. */
export interface CustomerReturnLine {
  lineItemId: number
  sku: string | null
  name: string
  /** Offered: what may still be returned of it from this parcel. Chosen: the units the customer sends back. */
  quantity: number
  /** Chosen lines only: the reason picked. */
  reason?: string | undefined
}

/** What the host's hook is asked about: the order, the lines (offered, or chosen on sending) and the parcel. */
export interface CustomerMayReturnInput {
  order: OrderSummary
  lines: CustomerReturnLine[]
  shipment: Shipment
}

/** true: the customer may return these; a string: the reason it refuses, shown to the customer as it is. */
export type CustomerMayReturn = (input: CustomerMayReturnInput) => true | string | Promise<true | string>

/** The label bought at once for a return a customer started, when the shop authorises automatically. */
export type CustomerReturnLabel = Omit<ReturnLabelInput, 'labelFormat'> & { labelFormat?: ReturnLabelInput['labelFormat'] }

export interface CustomerReturnsOptions {
  windowDays: number
  autoAuthorise: boolean
  customerLabel?: CustomerReturnLabel | undefined
  customerMayReturn: CustomerMayReturn | null
}

/** What a parcel's page offers: a form's lines until the window closes, else why not. */
export type CustomerReturnOffer =
  | { open: true; order: OrderSummary; lines: CustomerReturnLine[]; closes: Date }
  | { open: false; reason: string; closes: Date | null }

/** A return a customer started, with what the shop did at once and what the customer is to do next. */
export interface StartedReturn {
  return: Return
  /** A label the shop's automatic authorisation was to buy and could not (the page says it will follow). */
  labelFailed: boolean
}

/** A customer's form refused as a whole (window closed, the host's hook): 403 with the reason. */
export class CustomerReturnRefused extends Error {
  readonly statusCode = 403
  constructor(message: string) {
    super(message)
    this.name = 'CustomerReturnRefused'
  }
}

export interface CustomerReturnDependencies {
  returns: ReturnService
  shipments: Pick<ShipmentService, 'checkpoints' | 'get'>
  orderStore: OrderStore
  logger: FastifyBaseLogger
  clock: () => number
  options: CustomerReturnsOptions
}

export type CustomerReturns = ReturnType<typeof createCustomerReturns>

const DAY_MS = 24 * 60 * 60 * 1000
/** What the host's hook may answer: a reason longer than this is cut (it is shown on a page). */
const MAX_REASON = 500

export function createCustomerReturns(deps: CustomerReturnDependencies) {
  const { returns, shipments, options } = deps

  /**
   * When the parcel was delivered: the carrier's first "delivered" scan; a shipped parcel without any
   * carrier scan (a shop without tracking) counts from its ship date. null: not delivered yet.
   */
  async function deliveredAt(shipment: Shipment): Promise<Date | null> {
    if (shipment.status !== 'shipped' || !shipment.enabled || shipment.dateDeleted !== null) return null
    const checkpoints = await shipments.checkpoints(shipment.id)
    const delivered = checkpoints.find((checkpoint) => milestoneOf(checkpoint) === 'delivered')
    if (delivered) return new Date(delivered.occurredAtUtc)
    return checkpoints.length === 0 && shipment.dateShipped ? new Date(shipment.dateShipped) : null
  }

  async function askHost(input: CustomerMayReturnInput): Promise<string | null> {
    if (!options.customerMayReturn) return null
    const answer = await options.customerMayReturn(input)
    if (answer === true) return null
    return typeof answer === 'string' && answer.trim() !== '' ? answer.slice(0, MAX_REASON) : 'The shop does not accept a return of this order online. Please contact the shop.'
  }

  /** null: the shop offers no returns to customers (window 0); the page shows nothing of them. */
  async function offer(shipment: Shipment): Promise<CustomerReturnOffer | null> {
    if (options.windowDays === 0) return null
    const delivered = await deliveredAt(shipment)
    if (!delivered) return { open: false, reason: 'Returns can be started here once the parcel is delivered.', closes: null }
    const closes = new Date(delivered.getTime() + options.windowDays * DAY_MS)
    if (deps.clock() > closes.getTime()) return { open: false, reason: `The return window closed on ${closes.toISOString().slice(0, 10)}. Please contact the shop.`, closes }
    if (shipment.items.length === 0) return { open: false, reason: 'Returns of this order are arranged with the shop. Please contact the shop.', closes }
    const order = await deps.orderStore.findOrder(shipment.orderId)
    if (!order) return { open: false, reason: 'Returns of this order are arranged with the shop. Please contact the shop.', closes }
    // What the ledger says is returnable, capped by what this parcel held of each line.
    const returnable = new Map((await returns.returnable(shipment.orderId)).map((line) => [line.lineItemId, line.returnable]))
    const inParcel = new Map<number, CustomerReturnLine>()
    for (const item of shipment.items) {
      const seen = inParcel.get(item.lineItemId)
      inParcel.set(item.lineItemId, { lineItemId: item.lineItemId, sku: item.sku, name: item.name, quantity: (seen?.quantity ?? 0) + item.quantity })
    }
    const lines = [...inParcel.values()]
      .map((line) => ({ ...line, quantity: Math.min(line.quantity, returnable.get(line.lineItemId) ?? 0) }))
      .filter((line) => line.quantity > 0)
    if (lines.length === 0) return { open: false, reason: 'Everything in this parcel is on a return already.', closes }
    const refusal = await askHost({ order, lines, shipment })
    if (refusal !== null) return { open: false, reason: refusal, closes }
    return { open: true, order, lines, closes }
  }

  /**
   * The form's lines (`quantity.<lineId>`, `reason.<lineId>`, `note.<lineId>`) against the offer: a 422
   * naming each line by its name when over what the parcel offers; at least one unit.
   */
  function parseForm(form: Record<string, string>, offered: readonly CustomerReturnLine[], shipment: Shipment): CustomerReturnLine[] {
    const errors: Record<string, string[]> = {}
    const chosen: CustomerReturnLine[] = []
    for (const line of offered) {
      const raw = (form[`quantity.${line.lineItemId}`] ?? '0').trim()
      const quantity = /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN
      const field = `quantity.${line.lineItemId}`
      if (!Number.isInteger(quantity)) errors[field] = [`${line.name}: the quantity must be a whole number.`]
      else if (quantity > line.quantity) errors[field] = [`${line.name}: ${quantity} to return, ${line.quantity} left to return.`]
      else if (quantity > 0) {
        const reason = form[`reason.${line.lineItemId}`] ?? ''
        if (!returns.reasons.includes(reason)) errors[`reason.${line.lineItemId}`] = [`${line.name}: choose a reason.`]
        else chosen.push({ ...line, quantity, reason })
      }
    }
    // A line of the parcel no longer offered (another return took it since the form was shown).
    for (const item of shipment.items) {
      const raw = form[`quantity.${item.lineItemId}`]
      if (offered.some((line) => line.lineItemId === item.lineItemId) || raw === undefined || !/^\s*0*[1-9]\d{0,8}\s*$/.test(raw)) continue
      errors[`quantity.${item.lineItemId}`] = [`${item.name}: ${Number(raw)} to return, 0 left to return.`]
    }
    if (Object.keys(errors).length === 0 && chosen.length === 0) errors.lines = ['Choose at least one item to return.']
    const noteProblem = textProblem((form.note ?? '').trim(), { maxLength: 2000, multiline: true })
    if (noteProblem) errors.note = [`Your note ${noteProblem}`]
    if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
    return chosen
  }

  /**
   * Starts the customer's return: the offer checked again (window, hook, parcel), the request through the
   * returns service (the ledger under the order's lock; source `customer`), then, when the shop says so,
   * authorised and its label bought (source `automatic`). A label that cannot be bought leaves the return
   * authorised: the shop sends it.
   */
  async function start(shipment: Shipment, form: Record<string, string>): Promise<StartedReturn> {
    const current = await offer(shipment)
    if (current === null || !current.open) throw new CustomerReturnRefused(current?.reason ?? 'Returns are not started online. Please contact the shop.')
    const lines = parseForm(form, current.lines, shipment)
    const refusal = await askHost({ order: current.order, lines, shipment })
    if (refusal !== null) throw new CustomerReturnRefused(refusal)
    const note = (form.note ?? '').trim() || null
    let created: Return
    try {
      created = await returns.request(
        shipment.orderId,
        { lines: lines.map((line) => ({ lineItemId: line.lineItemId, quantity: line.quantity, reason: line.reason!, note })) },
        { userId: null, source: 'customer' },
      )
    } catch (error) {
      // Another return took units meanwhile: the ledger's refusal, with the line's name for the customer.
      if (!(error instanceof ShipmentValidationError)) throw error
      const errors: Record<string, string[]> = {}
      for (const [field, messages] of Object.entries(error.errors)) {
        const line = lines[Number(field.split('.')[1])]
        errors[line ? `quantity.${line.lineItemId}` : field] = messages.map((message) => (line ? message.replace(/^Line \d+:/, `${line.name}:`) : message))
      }
      throw new ShipmentValidationError(errors, { cause: error })
    }
    if (!options.autoAuthorise) return { return: created, labelFailed: false }
    let result = await returns.update(created.id, { state: 'authorised' }, { userId: null, source: 'automatic' })
    if (!options.customerLabel) return { return: result, labelFailed: false }
    try {
      result = await returns.buyLabel(created.id, { labelFormat: 'PDF', ...options.customerLabel }, { userId: null, source: 'automatic' })
      return { return: result, labelFailed: false }
    } catch (error) {
      deps.logger.warn({ err: error, returnId: created.id }, "A customer's return label could not be bought; the return stays authorised for the shop to send one")
      return { return: (await returns.get(created.id)) ?? result, labelFailed: true }
    }
  }

  return { offer, start, reasons: returns.reasons }
}
