// The outbound direction of integrations: pushing a shipment to an integration (or cancelling it there),
// automatically when it reaches a status the integration pushes on, or on demand. Each push is an outbox
// job, so it survives a crash; pushes of one shipment take a lock shared by every process and instance.
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { DataLayer, IntegrationRow, NewOutboxMessage, OutboxRow } from '../db/data-layer.js'
import { IntegrationConfigError, IntegrationError, ShipmentsErrors } from '../errors.js'
import type { ShipmentService } from '../shipments/service.js'
import type { Shipment, ShipmentStatus } from '../model/shipment.js'
import { formatIsoWithOffset } from '../time.js'
import { shortError, type JobHandler, type OutboxDispatcher } from '../outbox/dispatcher.js'
import { cachedRows, FOLLOW_UP_ROWS_MAX_AGE_MS } from '../outbox/cached-rows.js'
import type { IntegrationService } from './integrations.js'
import type { ProviderRegistry } from './providers.js'

export const PUSH_JOB = 'integrationPush'

export type PushAction = 'push' | 'cancel'

/** How a push ended: done, to be retried (with when), or failed; with the error when it did not succeed. */
export interface PushOutcome {
  state: 'done' | 'pending' | 'failed'
  error: string | null
  nextAttemptAt: string | null
  attempts: number
}

export interface PushDependencies {
  data: DataLayer
  registry: ProviderRegistry
  integrations: IntegrationService
  shipments: ShipmentService
  dispatcher: Pick<OutboxDispatcher, 'publish'>
  logger: FastifyBaseLogger
  timeZone: string
  lockTimeoutMs: number
  retryDelaysMs: readonly number[]
}

interface PushPayload {
  integrationId: number
  shipmentId: number
  action: PushAction
}

const pushMessage = (payload: PushPayload, messageId?: string): NewOutboxMessage => ({
  kind: 'job',
  name: PUSH_JOB,
  messageId,
  // One shipment's pushes to one integration go out in the order they were asked for.
  orderingKey: `push:${payload.shipmentId}:${payload.integrationId}`,
  payload: { ...payload },
})

export type PushService = ReturnType<typeof createPushService>

export function createPushService(deps: PushDependencies) {
  const { data, registry, integrations, logger } = deps

  const findById = async (id: number): Promise<IntegrationRow | undefined> => (await data.listIntegrations()).find((row) => row.id === id)
  const methodOf = (action: PushAction) => (action === 'cancel' ? 'cancelShipment' : 'pushShipment')
  // Integrations that push on some status; a change to pushOn is seen within FOLLOW_UP_ROWS_MAX_AGE_MS.
  const pushingIntegrations = cachedRows(async () => (await data.listIntegrations()).filter((row) => row.pushOn.length > 0), FOLLOW_UP_ROWS_MAX_AGE_MS)

  async function pushOnce(payload: PushPayload): Promise<{ ok: true } | { ok: false; error: string; retryable: boolean }> {
    const row = await findById(payload.integrationId)
    if (!row) return { ok: false, error: 'The integration was deleted.', retryable: false }
    if (!integrations.isEnabled(row)) return { ok: false, error: `The integration ${row.handle} is disabled.`, retryable: false }
    const provider = registry.get(row.providerId ?? '')
    const method = provider?.[methodOf(payload.action)]
    if (!provider || !method) return { ok: false, error: `The integration ${row.handle} cannot ${payload.action} shipments.`, retryable: false }
    const shipment = await deps.shipments.get(payload.shipmentId)
    if (!shipment) return { ok: false, error: `Shipment ${payload.shipmentId} no longer exists.`, retryable: false }

    const reference = (await data.externalReferences(shipment.id)).find((entry) => entry.integrationHandle === row.handle)
    const attemptedAt = new Date()
    try {
      const answer = await method.call(
        provider,
        {
          shipment,
          externalStatus: (row.outboundStatusMap as Record<string, string>)[shipment.status] ?? null,
          externalId: reference?.externalId ?? null,
          externalUrl: reference?.externalUrl ?? null,
        },
        integrations.contextFor(row, logger, { integration: row.handle }),
      )
      await data.outbox.recordPushAttempt(shipment.id, row.id, attemptedAt, null, answer ?? {})
      return { ok: true }
    } catch (error) {
      const retryable = error instanceof IntegrationError && error.retryable
      const reason = shortError(error)
      await data.outbox.recordPushAttempt(shipment.id, row.id, attemptedAt, reason, {})
      if (!(error instanceof IntegrationError)) logger.error({ err: error, integration: row.handle, shipmentId: shipment.id }, 'A push to an integration failed')
      return { ok: false, error: reason, retryable }
    }
  }

  const pushJob: JobHandler = {
    retryDelayMs: (attempt) => deps.retryDelaysMs[attempt - 1] ?? null,
    async run(row) {
      const payload = row.payload as unknown as PushPayload
      // Never two pushes of one shipment at once, whichever process or instance runs them.
      const result = await data.withNamedLock('shipmentPush', payload.shipmentId, deps.lockTimeoutMs, () => pushOnce(payload))
      if (result.ok) return { state: 'done' }
      return { state: result.retryable ? 'retry' : 'failed', error: result.error }
    },
  }

  /** The automatic pushes delivered events cause: a shipment reaching a status an integration pushes on. */
  async function pushesFor(events: OutboxRow[]): Promise<NewOutboxMessage[]> {
    const changes = events.filter((event) => event.name === 'shipmentStatusChanged')
    if (changes.length === 0) return []
    const pushing = (await pushingIntegrations.get()).filter((row) => integrations.isEnabled(row))
    const jobs: NewOutboxMessage[] = []
    for (const event of changes) {
      const { shipment, to, sourceIntegration } = event.payload as { shipment: Shipment; to: ShipmentStatus; sourceIntegration: string | null }
      for (const row of pushing) {
        // A change the integration itself reported is not sent back to it.
        if (!row.pushOn.includes(to) || row.handle === sourceIntegration) continue
        const action: PushAction = to === 'cancelled' ? 'cancel' : 'push'
        if (!registry.get(row.providerId ?? '')?.[methodOf(action)]) continue
        jobs.push(pushMessage({ integrationId: row.id, shipmentId: shipment.id, action }, `${event.messageId}:push:${row.id}`))
      }
    }
    return jobs
  }

  /** Pushes (or cancels) now, through the outbox: one attempt is made before this returns; retries follow. */
  async function pushNow(handle: string, shipmentId: number, action: PushAction): Promise<PushOutcome> {
    const row = await integrations.findStored(handle)
    if (!row) throw new IntegrationConfigError(`handle: no integration "${handle}"`)
    if (!(await deps.shipments.get(shipmentId))) throw new ShipmentsErrors.ShipmentNotFound(shipmentId)
    if (!registry.get(row.providerId ?? '')?.[methodOf(action)]) {
      throw new IntegrationConfigError(`providerId: the provider of ${handle} cannot ${action} shipments`)
    }
    const message = pushMessage({ integrationId: row.id, shipmentId, action }, randomUUID())
    await deps.dispatcher.publish([message])
    const after = await data.outbox.find(message.messageId!)
    return {
      state: after?.state === 'done' ? 'done' : after?.state === 'failed' ? 'failed' : 'pending',
      error: after?.lastError ?? null,
      nextAttemptAt: after?.state === 'pending' ? formatIsoWithOffset(after.availableAt.getTime(), deps.timeZone) : null,
      attempts: after?.attempts ?? 0,
    }
  }

  return {
    pushJob,
    pushesFor,
    /** Drops the cached pushing integrations (one was saved or removed through this instance). */
    integrationsChanged: () => pushingIntegrations.invalidate(),
    /** Sends the shipment to the integration now. */
    push: (handle: string, shipmentId: number) => pushNow(handle, shipmentId, 'push'),
    /** Cancels the shipment at the integration now. */
    cancel: (handle: string, shipmentId: number) => pushNow(handle, shipmentId, 'cancel'),
  }
}
