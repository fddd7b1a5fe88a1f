// A customer notification's definition as the service takes and returns it, what sends one (statuses,
// carrier milestones, a later estimate, a return's events), who receives it, and what one renders to.
import type { ShipmentStatus } from '../model/shipment.js'
import { CARRIER_MILESTONES, type Checkpoint } from '../model/checkpoints.js'

/** The return events a notification can be sent on (a trigger is the event's name). */
export const RETURN_TRIGGERS = ['returnRequested', 'returnAuthorised', 'returnRejected', 'returnLabelSent', 'returnReceived', 'returnClosed'] as const
export type ReturnTrigger = (typeof RETURN_TRIGGERS)[number]

/**
 * What besides a status sends a notification: a carrier's scan reaching a milestone, an estimate moved
 * later, or a return's change of state.
 */
export const NOTIFICATION_TRIGGERS = [...CARRIER_MILESTONES, 'estimateLater', ...RETURN_TRIGGERS] as const
export type NotificationTrigger = (typeof NOTIFICATION_TRIGGERS)[number]

export const NOTIFICATION_RECIPIENTS = ['customer', 'addresses', 'customerAndAddresses'] as const
export type NotificationRecipient = (typeof NOTIFICATION_RECIPIENTS)[number]

export interface NotificationInput {
  name: string
  enabled?: boolean | undefined
  /** Shipment statuses whose reaching sends it (may be empty when `triggers` is not). */
  statuses: ShipmentStatus[]
  /** Carrier milestones (a new scan out for delivery, attempted, ...), `estimateLater` and return events that send it. */
  triggers?: NotificationTrigger[] | undefined
  /**
   * `customer`: the order's email (OrderSummary.email); `addresses`: the fixed list (staff notices);
   * `customerAndAddresses`: both, the addresses as further recipients.
   */
  recipient: NotificationRecipient
  addresses?: string[] | undefined
  /** Liquid templates: the subject and the text body are plain text, the HTML body escapes every output. */
  subject: string
  html: string
  text: string
  language?: string | null | undefined
}

export interface Notification extends Omit<NotificationInput, 'enabled' | 'addresses' | 'language' | 'triggers'> {
  id: number
  enabled: boolean
  triggers: NotificationTrigger[]
  addresses: string[]
  language: string | null
  dateCreated: string
  dateUpdated: string
}

export interface RenderedNotification {
  to: string[]
  subject: string
  html: string
  text: string
}

export const NOTIFICATION_JOB = 'customerNotification'

export const isReturnTrigger = (name: string): name is ReturnTrigger => (RETURN_TRIGGERS as readonly string[]).includes(name)

/** What a notification is sent for: a status change, the carrier's news or a return's change (a trigger). */
export interface NotifiedChange {
  from: string | null
  to: string
  message: string | null
  trigger?: NotificationTrigger | undefined
  checkpoint?: Checkpoint | undefined
  estimate?: { from: string | null; to: string | null } | undefined
}

// A deliberately plain address rule: one @, no spaces or angle brackets; the transport has the last word.
export const EMAIL = /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/
