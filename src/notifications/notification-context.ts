// What the notification service's concerns (notification-definitions.ts, notification-rendering.ts,
// notification-jobs.ts and the sending in service.ts) share: the dependencies they read, the template
// engines, the enabled definitions as cached, and the read of a definition by id. Rule: it knows none of
// the concerns; what one concern needs of another is passed to its factory, never imported.
import type { FastifyBaseLogger } from 'fastify'
import type { DataLayer, NotificationRow } from '../db/data-layer.js'
import { NotificationConfigError } from '../errors.js'
import { cachedRows, FOLLOW_UP_ROWS_MAX_AGE_MS } from '../outbox/cached-rows.js'
import type { OrderStore } from '../order-store.js'
import type { TrackingLinks } from './tracking-links.js'
import { templateEnginesOnFirstUse } from './template-engines.js'

/** The notification service's dependencies but its transport, which service.ts declares (NotificationServiceDependencies). */
export interface NotificationContextDependencies {
  data: DataLayer
  orderStore: OrderStore
  logger: FastifyBaseLogger
  timeZone: string
  trackingLinks: TrackingLinks | null
}

/** The shared part of one notification service: built once, handed to each concern's factory. */
export function createNotificationServiceContext(deps: NotificationContextDependencies) {
  const { data } = deps
  const engines = templateEnginesOnFirstUse()
  const enabledDefinitions = cachedRows(async () => (await data.notifications.list()).filter((row) => row.enabled), FOLLOW_UP_ROWS_MAX_AGE_MS)

  async function requireRow(id: number): Promise<NotificationRow> {
    const row = Number.isSafeInteger(id) ? await data.notifications.find(id) : undefined
    if (!row) throw new NotificationConfigError('id', `no notification ${id}`)
    return row
  }

  return { deps, engines, enabledDefinitions, requireRow }
}

export type NotificationServiceContext = ReturnType<typeof createNotificationServiceContext>
