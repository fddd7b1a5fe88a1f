// What calls an integration works with: its row as the gateway reads it (kept until it changes), whether
// it is on now, and the context a provider runs in (settings resolved now, secrets refused when empty).
import type { FastifyBaseLogger } from 'fastify'
import type { IntegrationRow } from '../db/data-layer.js'
import { environmentReference, MissingEnvironmentVariableError, parseBooleanSetting, resolveEnvironmentValue, resolveEnvironmentValues } from '../env.js'
import { IntegrationSecretError } from '../errors.js'
import type { OrderStore } from '../order-store.js'
import type { ShipmentService } from '../shipments/service.js'
import type { Integration } from './integration.js'
import type { AnyProviderDefinition, ConnectionCheck, DeliveryLedger, ParcelTracking, ProviderContext } from './providers.js'
import type { IntegrationServiceContext } from './integration-context.js'

/**
 * What a provider works with for one call. A class rather than an object literal: the gateway makes one
 * per request, and a literal with a getter and a fresh ledger closure cost a fifth of a bare dispatch.
 * The logger is made on first use: most requests never log, and a child logger is not free.
 */
class CallContext implements ProviderContext {
  #logger: FastifyBaseLogger | undefined
  readonly #parentLogger: FastifyBaseLogger
  readonly #bindings: Record<string, unknown>
  constructor(
    readonly integration: Integration,
    readonly settings: Record<string, unknown>,
    readonly deliveries: DeliveryLedger,
    readonly shipments: ShipmentService,
    readonly orders: OrderStore,
    readonly parcels: ParcelTracking | undefined,
    readonly now: () => number,
    parentLogger: FastifyBaseLogger,
    bindings: Record<string, unknown>,
  ) {
    this.#parentLogger = parentLogger
    this.#bindings = bindings
  }

  get logger(): FastifyBaseLogger {
    return (this.#logger ??= this.#parentLogger.child(this.#bindings))
  }
}

/** How long the gateway may take to see an integration changed by another process or instance. */
export const GATEWAY_CROSS_PROCESS_MS = 250

export function createIntegrationCalls(shared: IntegrationServiceContext) {
  const { deps, findRow, present, requireRow } = shared
  const { data, registry } = deps

  // The gateway reads its integration on every request, which cost a third of a bare dispatch. Rows
  // are kept until anything is written through this instance, or, for writes by another process or
  // instance, for at most GATEWAY_CROSS_PROCESS_MS (the data layer's change stamp).
  const changeStamp = data.createChangeStamp(GATEWAY_CROSS_PROCESS_MS)
  let gatewayRows = { stamp: '', byHandle: new Map<string, IntegrationRow | undefined>() }
  async function findForGateway(handle: string): Promise<IntegrationRow | undefined> {
    const stamp = await changeStamp()
    if (gatewayRows.stamp !== stamp) gatewayRows = { stamp, byHandle: new Map() }
    if (!gatewayRows.byHandle.has(handle)) {
      const row = await findRow(handle)
      // Unknown handles are remembered too (a probe must not cost a query each), within bounds.
      if (gatewayRows.stamp !== stamp) return row
      if (gatewayRows.byHandle.size >= 1000) gatewayRows.byHandle.clear()
      gatewayRows.byHandle.set(handle, row)
    }
    return gatewayRows.byHandle.get(handle)
  }

  /** Integrations whose `enabled` names an unset variable, warned about once per process. */
  const unsetEnabledWarned = new Set<string>()

  /**
   * The settings with environment references read now. A secret setting (the provider's
   * `secretSettings`) that is given but reads empty, blank or unset refuses the call: never a signature
   * checked or made with an empty key because `$VAR` was set to "" when the process started.
   */
  function resolvedSettings(row: IntegrationRow): Record<string, unknown> {
    const secrets = registry.get(row.providerId ?? '')?.secretSettings ?? []
    for (const key of secrets) {
      const stored = row.settings[key]
      if (stored === undefined || stored === null) continue
      let value: unknown
      try {
        value = resolveEnvironmentValue(stored)
      } catch {
        value = undefined
      }
      if (typeof value !== 'string' || value.trim() === '') throw new IntegrationSecretError(row.handle, key, environmentReference(stored))
    }
    return resolveEnvironmentValues(row.settings)
  }

  /** Presented integrations by id, reused by the gateway until the row changes. */
  const presented = new Map<number, { version: number; integration: Integration; deliveries: DeliveryLedger }>()

  const ledgerFor = (integrationId: number): DeliveryLedger => ({
    record: (deliveryId, outcome) => data.recordDelivery(integrationId, deliveryId, outcome),
  })

  return {
    /**
     * Whether the integration is on now; an environment reference is read at every call. A reference to
     * an unset variable is off, with a warning naming the variable (once per integration and process).
     */
    isEnabled(integration: Pick<IntegrationRow, 'enabled' | 'handle'> | Integration): boolean {
      try {
        return parseBooleanSetting(resolveEnvironmentValue(integration.enabled))
      } catch (error) {
        // resolveEnvironmentValue throws one kind of error: an unset variable.
        if (!unsetEnabledWarned.has(integration.handle)) {
          unsetEnabledWarned.add(integration.handle)
          const { variable } = error as MissingEnvironmentVariableError
          deps.logger.warn(
            { integration: integration.handle, variable },
            `Integration ${integration.handle} is disabled: its enabled setting reads the environment variable ${variable}, which is not set`,
          )
        }
        return false
      }
    },

    /** The integration row as stored (secrets included): for the gateway only, never for output. */
    findStored: findForGateway,

    /**
     * The context a provider works in, with settings resolved now (environment variables may change);
     * its logger is a child of `logger` with `bindings`, made on first use.
     */
    contextFor(row: IntegrationRow, logger: FastifyBaseLogger, bindings: Record<string, unknown>): ProviderContext {
      let cached = presented.get(row.id)
      if (!cached || cached.version !== row.updatedAt.getTime()) {
        // Shared between requests, so frozen: one provider call cannot change what the next one sees.
        const integration = present(row)
        Object.freeze(integration.settings)
        Object.freeze(integration.statusMap)
        Object.freeze(integration.outboundStatusMap)
        Object.freeze(integration.pushOn)
        cached = { version: row.updatedAt.getTime(), integration: Object.freeze(integration), deliveries: ledgerFor(row.id) }
        presented.set(row.id, cached)
      }
      let settings: Record<string, unknown>
      try {
        settings = resolvedSettings(row)
      } catch (error) {
        // Every path that calls the integration comes through here (the gateway, label purchases,
        // return labels, pushes, the connection check): the host learns which setting and variable to
        // fix, whoever asked. Never the value.
        if (error instanceof IntegrationSecretError) {
          logger.warn(
            { ...bindings, setting: error.setting, variable: error.variable },
            `Integration ${row.handle} refused a request: its secret setting ${error.setting} ${error.variable ? `reads the environment variable ${error.variable}, which is empty or not set` : 'is empty'}`,
          )
        }
        throw error
      }
      return new CallContext(cached.integration, settings, cached.deliveries, deps.shipments, deps.orders, deps.parcels, deps.clock, logger, bindings)
    },

    async checkConnection(handle: string): Promise<ConnectionCheck> {
      const row = await requireRow(handle)
      const provider: AnyProviderDefinition | undefined = registry.get(row.providerId ?? '')
      if (!provider) return { ok: false, message: `Integration ${handle} has no provider.` }
      if (!provider.checkConnection) return { ok: true, message: 'The provider has no connection check.' }
      return provider.checkConnection(this.contextFor(row, deps.logger, { integration: handle }))
    },
  }
}
