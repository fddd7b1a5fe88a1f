// The notification jobs: the ones a batch of delivered events causes (one per enabled definition the
// change or the carrier's news concerns, each on its own ordering key), and a definition's jobs with their
// attempt logs, as the admin pages list them. The job that sends is service.ts's.
import type { NewOutboxMessage, OutboxRow } from '../db/data-layer.js'
import type { Shipment } from '../model/shipment.js'
import type { Checkpoint } from '../model/checkpoints.js'
import { formatIsoWithOffset } from '../time.js'
import type { Return } from '../model/return.js'
import { isReturnTrigger, NOTIFICATION_JOB, type NotificationTrigger, type NotifiedChange, type ReturnTrigger } from './notification.js'
import type { NotificationServiceContext } from './notification-context.js'

/** `canSend`: whether a transport is configured; without one, nothing is queued. */
export function createNotificationJobs(shared: NotificationServiceContext, { canSend }: { canSend: boolean }) {
  const { deps, enabledDefinitions } = shared
  const { data, timeZone } = deps

  /** The trigger an event of the carrier's news is, or null. */
  function triggerOf(event: OutboxRow): { trigger: NotificationTrigger; shipment: Shipment; change: NotifiedChange } | null {
    if (event.name === 'carrierMilestone') {
      const { shipment, milestone, checkpoint } = event.payload as { shipment: Shipment; milestone: NotificationTrigger; checkpoint: Checkpoint }
      return { trigger: milestone, shipment, change: { from: null, to: shipment.status, message: checkpoint.message, trigger: milestone, checkpoint } }
    }
    if (event.name === 'estimateChanged' && (event.payload as { movedLater?: unknown }).movedLater === true) {
      const { shipment, from, to } = event.payload as { shipment: Shipment; from: string | null; to: string | null }
      return { trigger: 'estimateLater', shipment, change: { from: null, to: shipment.status, message: null, trigger: 'estimateLater', estimate: { from, to } } }
    }
    return null
  }

  /**
   * The jobs a batch of delivered events causes: one per enabled definition of the status reached, and
   * one per enabled definition of a carrier milestone or a later estimate.
   */
  async function notificationsFor(events: OutboxRow[]): Promise<NewOutboxMessage[]> {
    if (!canSend) return []
    const changes = events.filter((event) => event.name === 'shipmentStatusChanged')
    const news = events.flatMap((event) => {
      const found = triggerOf(event)
      return found ? [{ event, ...found }] : []
    })
    const returnChanges = events.filter((event) => isReturnTrigger(event.name))
    if (changes.length === 0 && news.length === 0 && returnChanges.length === 0) return []
    const definitions = await enabledDefinitions.get()
    /**
     * One job per enabled definition `wanted` picks, each on its own ordering key: a mail failing for
     * hours holds up nothing but this notification of this shipment (or return).
     */
    const jobsFor = (event: OutboxRow, subject: string, wanted: (definition: (typeof definitions)[number]) => boolean, payload: Record<string, unknown>) =>
      definitions.filter(wanted).map(
        (definition): NewOutboxMessage => ({
          kind: 'job',
          name: NOTIFICATION_JOB,
          messageId: `${event.messageId}:notification:${definition.id}`,
          orderingKey: `notification:${definition.id}:${subject}`,
          payload: { notificationId: definition.id, ...payload, eventId: event.messageId },
        }),
      )
    return [
      ...returnChanges.flatMap((event) => {
        const { return: entry, from, to, message } = event.payload as { return: Return; from: string | null; to: string; message: string | null }
        const trigger = event.name as ReturnTrigger
        return jobsFor(event, `return:${entry.id}`, (definition) => definition.triggers.includes(trigger), { returnId: entry.id, from, to, message, trigger })
      }),
      ...news.flatMap(({ event, trigger, shipment, change }) =>
        jobsFor(event, `shipment:${shipment.id}`, (definition) => definition.triggers.includes(trigger), { shipmentId: shipment.id, ...change }),
      ),
      ...changes.flatMap((event) => {
        const { shipment, from, to, message } = event.payload as { shipment: Shipment; from: string; to: string; message: string | null }
        return jobsFor(event, `shipment:${shipment.id}`, (definition) => definition.statuses.includes(to), { shipmentId: shipment.id, from, to, message })
      }),
    ]
  }

  return {
    notificationsFor,

    /** The notification's jobs, newest first, each with its attempt log (for the admin pages). */
    async deliveries(id: number, limit = 50) {
      const rows = await data.outbox.list({ name: NOTIFICATION_JOB, orderingKeyPrefix: `notification:${id}:`, newestFirst: true, limit })
      return Promise.all(
        rows.map(async (row) => ({
          id: row.messageId,
          // A job is about a shipment or (a return trigger) a return: the other is null.
          shipmentId: (row.payload as { shipmentId?: number }).shipmentId ?? null,
          returnId: (row.payload as { returnId?: number }).returnId ?? null,
          // The status reached, or the return's state for a return trigger.
          toStatus: (row.payload as { to: string }).to,
          state: row.state,
          attempts: (await data.outbox.attempts(row.id)).map((attempt) => ({
            date: formatIsoWithOffset(attempt.attemptedAt.getTime(), timeZone),
            error: attempt.error,
          })),
          lastError: row.lastError,
          dateCreated: formatIsoWithOffset(row.createdAt.getTime(), timeZone),
        })),
      )
    },
  }
}
