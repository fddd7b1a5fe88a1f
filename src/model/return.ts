// Returns as clients see them: the return, its lines, its label and its history.
import type { ReceivedQuantities, ReturnHistoryRow, ReturnRow, ReturnState } from '../db/returns.js'
import { formatIsoWithOffset } from '../time.js'

export { RETURN_STATES, type ReturnState, type ReceivedQuantities } from '../db/returns.js'

/** The states as people read them (admin pages, notification templates' `return.stateLabel`). */
export const RETURN_STATE_LABELS: Readonly<Record<ReturnState, string>> = {
  requested: 'Requested',
  authorised: 'Authorised',
  rejected: 'Rejected',
  label_sent: 'Label sent',
  in_transit: 'In transit',
  received: 'Received',
  closed: 'Closed',
}

export interface ReturnLineView {
  lineItemId: number
  quantity: number
  reason: string
  note: string | null
  /** What arrived, by condition; null until the return is received. */
  received: ReceivedQuantities | null
}

export interface ReturnLabel {
  url: string
  format: string | null
  cost: { amount: string; currency: string } | null
  operationId: string
}

export interface Return {
  id: number
  orderId: number
  reference: string
  state: ReturnState
  lines: ReturnLineView[]
  /** The message of the last change that gave one (a rejection's reason, say). */
  stateMessage: string | null
  trackingNumber: string | null
  trackingUrl: string | null
  carrier: string | null
  service: string | null
  /** The return label, once bought; null for a return the customer ships themselves. */
  label: ReturnLabel | null
  /** True while a label purchase's outcome is not known yet (buying again finishes it, never buys twice). */
  labelPending: boolean
  /** When what arrived was recorded; null before. */
  dateReceived: string | null
  dateCreated: string
  dateUpdated: string
}

export interface ReturnHistoryEntry {
  id: number
  fromState: string | null
  toState: string
  message: string | null
  userId: string | null
  source: string
  dateCreated: string
}

export function toReturn(row: ReturnRow, timeZone: string): Return {
  const at = (date: Date) => formatIsoWithOffset(date.getTime(), timeZone)
  return {
    id: row.id,
    orderId: row.orderId,
    reference: row.reference,
    state: row.state,
    lines: row.lines.map((line) => ({ lineItemId: line.lineItemId, quantity: line.quantity, reason: line.reason, note: line.note, received: line.received })),
    stateMessage: row.stateMessage,
    trackingNumber: row.trackingNumber,
    trackingUrl: row.trackingUrl,
    carrier: row.carrier,
    service: row.service,
    label:
      row.labelState === 'purchased' && row.labelUrl !== null && row.labelOperationId !== null
        ? {
            url: row.labelUrl,
            format: row.labelFormat,
            cost: row.labelCost !== null && row.labelCurrency !== null ? { amount: row.labelCost, currency: row.labelCurrency } : null,
            operationId: row.labelOperationId,
          }
        : null,
    labelPending: row.labelState === 'pending',
    dateReceived: row.dateReceived ? at(row.dateReceived) : null,
    dateCreated: at(row.createdAt),
    dateUpdated: at(row.updatedAt),
  }
}

export function toHistoryEntry(row: ReturnHistoryRow, timeZone: string): ReturnHistoryEntry {
  return {
    id: row.id,
    fromState: row.fromState,
    toState: row.toState,
    message: row.message,
    userId: row.userId,
    source: row.source,
    dateCreated: formatIsoWithOffset(row.createdAt.getTime(), timeZone),
  }
}
