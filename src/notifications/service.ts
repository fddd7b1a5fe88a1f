// Customer notifications: stored definitions (statuses, triggers, recipient, subject and body templates),
// and the outbox job that renders and sends one when a shipment reaches a status, the carrier has news or
// a return changes state. The job follows the committed event (`shipmentStatusChanged`, `carrierMilestone`,
// `estimateChanged`, the return events) durably (written with the event's delivered mark, with an id derived from
// the event's), so no notification is lost on a crash or queued twice; the host's `sendMail` sends it.
// Composed of one module per concern over a shared context (notification-context.ts):
// notification-definitions.ts (the stored definitions and their checks), notification-rendering.ts (what
// a template sees, and the render), notification-jobs.ts (the jobs events cause, and their log), and here
// the sending, the part that reads the host's transport (the job that sends, and a test send). The types
// and constants stay importable from here.
import { NotificationConfigError } from '../errors.js'
import { shortError, type JobHandler } from '../outbox/dispatcher.js'
import { toShipment } from '../model/shipment.js'
import { toReturn } from '../model/return.js'
import { EMAIL, isReturnTrigger, type NotifiedChange, type RenderedNotification } from './notification.js'
import { createNotificationServiceContext, type NotificationContextDependencies } from './notification-context.js'
import { createNotificationDefinitions } from './notification-definitions.js'
import { createNotificationRendering } from './notification-rendering.js'
import { createNotificationJobs } from './notification-jobs.js'

export {
  NOTIFICATION_JOB,
  NOTIFICATION_RECIPIENTS,
  NOTIFICATION_TRIGGERS,
  RETURN_TRIGGERS,
  type Notification,
  type NotificationInput,
  type NotificationRecipient,
  type NotificationTrigger,
  type RenderedNotification,
  type ReturnTrigger,
} from './notification.js'
export { TEMPLATE_RENDER_LIMIT_MS } from './template-engines.js'

/** A message for the host's transport. */
export interface MailMessage {
  to: string[]
  subject: string
  html: string
  text: string
  /** The definition's language (a BCP 47 tag), or null. */
  language: string | null
  /** Stable per notification and status change: a transport can use it as the Message-ID, so a resend after a crash is recognisable. */
  messageId: string
  notificationId: number
  /** The shipment it is about; null for a notification on a return. */
  shipmentId: number | null
  /** The return it is about (a return trigger); null for a shipment's. */
  returnId: number | null
}

export interface NotificationsOptions {
  /** Sends one message; throw to have it retried (with backoff: 1 min, doubling, at most 6 h apart, 12 attempts). */
  sendMail: (message: MailMessage) => Promise<void>
}

export interface NotificationServiceDependencies extends NotificationContextDependencies {
  /** null: no transport configured; definitions can be kept, nothing is queued or sent. */
  options: NotificationsOptions | null
}

export type NotificationService = ReturnType<typeof createNotificationService>

export function createNotificationService(deps: NotificationServiceDependencies) {
  const { data, timeZone } = deps
  const shared = createNotificationServiceContext(deps)
  const { engines, requireRow } = shared
  // A host with a transport renders mail: its engines load at registration (off the import), as before.
  if (deps.options !== null) void engines().catch(() => undefined)
  const { list, get, create, update, createFromTemplate, remove } = createNotificationDefinitions(shared)
  const { shipmentScope, returnScope, render } = createNotificationRendering(shared)
  const { notificationsFor, deliveries } = createNotificationJobs(shared, { canSend: deps.options !== null })

  const notificationJob: JobHandler = {
    retryDelayMs: (attempt) => (attempt > 11 ? null : Math.min(60_000 * 2 ** (attempt - 1), 6 * 60 * 60 * 1000)),
    async run(job) {
      // A job on a return carries `returnId` in place of `shipmentId`.
      const { notificationId, shipmentId, returnId, from, to, message, trigger, checkpoint, estimate } = job.payload as unknown as { notificationId: number; shipmentId?: number; returnId?: number } & NotifiedChange
      const [definition, row, returnRow] = await Promise.all([
        data.notifications.find(notificationId),
        returnId === undefined ? data.findShipment(shipmentId!) : undefined,
        returnId === undefined ? undefined : data.returns.find(returnId),
      ])
      // A definition deleted or disabled since, or its shipment or return gone: nothing to send, and nothing to retry.
      if (!definition) return { state: 'skipped', reason: 'the notification was deleted before it was sent.' }
      if (!definition.enabled) return { state: 'skipped', reason: 'the notification was disabled before it was sent.' }
      if (returnId === undefined ? !row : !returnRow) return { state: 'skipped', reason: `the ${returnId === undefined ? 'shipment' : 'return'} was deleted before it was sent.` }
      if (!deps.options) return { state: 'skipped', reason: 'no mail transport is configured (notifications.sendMail).' }
      const change: NotifiedChange = { from, to, message, trigger, checkpoint, estimate }
      let rendered: RenderedNotification
      try {
        rendered = await render(definition, returnRow ? await returnScope(toReturn(returnRow, timeZone), change) : await shipmentScope(toShipment(row!, timeZone), change))
      } catch (error) {
        // Out of time may be the machine's load, not the template: tried again later (a hostile
        // template costs its limit once per attempt). Every other render error is the template's own.
        const outOfTime = /render limit exceeded/.test(shortError(error))
        return { state: outOfTime ? 'retry' : 'failed', error: `The template could not be rendered: ${shortError(error)}` }
      }
      if (rendered.to.length === 0) return { state: 'failed', error: 'No recipient: the order has no valid customer email.' }
      try {
        await deps.options.sendMail({ ...rendered, language: definition.language, messageId: `<${job.messageId}@fastify-shipments>`, notificationId, shipmentId: shipmentId ?? null, returnId: returnId ?? null })
      } catch (error) {
        deps.logger.warn({ err: error, notificationId, shipmentId, returnId }, 'Sending a customer notification failed; it will be retried')
        return { state: 'retry', error: shortError(error) }
      }
      return { state: 'done' }
    },
  }

  return {
    notificationsFor,
    notificationJob,
    /** Whether a transport is configured (`notifications.sendMail`). */
    canSend: deps.options !== null,

    list,
    get,
    create,
    update,
    createFromTemplate,
    remove,

    /**
     * Renders the definition against a real shipment (as if it had just reached its status), or a real
     * return (`{ returnId }`, as if it had just reached its state), and, with a transport, sends it to
     * `to` (default: the definition's recipients). Returns what was rendered.
     */
    async sendTest(id: number, about: number | { returnId: number }, to?: string[]): Promise<RenderedNotification & { sent: boolean }> {
      const definition = await requireRow(id)
      let rendered: RenderedNotification
      let shipmentId: number | null = null
      let returnId: number | null = null
      if (typeof about === 'number') {
        const row = Number.isSafeInteger(about) ? await data.findShipment(about) : undefined
        if (!row) throw new NotificationConfigError('shipmentId', `no shipment ${about}`)
        const shipment = toShipment(row, timeZone)
        shipmentId = shipment.id
        rendered = await render(definition, await shipmentScope(shipment, { from: null, to: shipment.status, message: null }))
      } else {
        const row = Number.isSafeInteger(about?.returnId) ? await data.returns.find(about.returnId) : undefined
        if (!row) throw new NotificationConfigError('returnId', `no return ${String(about?.returnId)}`)
        const entry = toReturn(row, timeZone)
        returnId = entry.id
        const trigger = definition.triggers.find(isReturnTrigger)
        rendered = await render(definition, await returnScope(entry, { from: null, to: entry.state, message: entry.stateMessage, trigger }))
      }
      const recipients = to ?? rendered.to
      for (const address of recipients) if (!EMAIL.test(address)) throw new NotificationConfigError('to', `"${address}" is not an email address`)
      if (!deps.options || recipients.length === 0) return { ...rendered, to: recipients, sent: false }
      await deps.options.sendMail({ ...rendered, to: recipients, language: definition.language, messageId: `<test-${Date.now()}-${id}@fastify-shipments>`, notificationId: id, shipmentId, returnId })
      return { ...rendered, to: recipients, sent: true }
    },

    deliveries,
  }
}
