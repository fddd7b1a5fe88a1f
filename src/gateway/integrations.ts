// Integrations stored in the database: handle, enabled flag, bound provider, settings and status map.
import { Value } from '@sinclair/typebox/value'
import type { FastifyBaseLogger } from 'fastify'
import type { DataLayer, IntegrationRow, IntegrationValues } from '../db/data-layer.js'
import { environmentReference, MissingEnvironmentVariableError, parseBooleanSetting, resolveEnvironmentValue, resolveEnvironmentValues } from '../env.js'
import { IntegrationConfigError, IntegrationSecretError, ShipmentsDatabaseError, ShipmentsErrors } from '../errors.js'
import type { OrderStore } from '../orders/order-store.js'
import type { ShipmentService } from '../shipments/service.js'
import { isShipmentStatus, type ShipmentStatus } from '../shipments/shipment.js'
import { formatIsoWithOffset } from '../time.js'
import { TEXT_LIMITS, textProblem, type TextRule } from '../text.js'
import type { Integration, IntegrationInput, ExternalReference } from './integration.js'
import type { AnyProviderDefinition, ConnectionCheck, DeliveryLedger, ParcelTracking, ProviderContext, ProviderRegistry } from './providers.js'

export const SECRET_MASK = '********'
const HANDLE_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/

/**
 * An object of exactly these entries and no prototype: providers index the status maps and settings by
 * outside text (`statusMap[event.status]`), which on a plain object finds `constructor`, `toString`
 * and the rest of Object.prototype; and `__proto__` is a key like any other.
 */
function ownKeysOnly<T>(entries: Iterable<readonly [string, T]>): Record<string, T> {
  const record: Record<string, T> = Object.create(null)
  for (const [key, value] of entries) record[key] = value
  return record
}

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

export interface IntegrationServiceDependencies {
  data: DataLayer
  registry: ProviderRegistry
  shipments: ShipmentService
  orders: OrderStore
  logger: FastifyBaseLogger
  timeZone: string
  /** The plugin's clock, handed to providers as `context.now`. */
  clock: () => number
  /** Told after every change saved through this service (caches of integration rows listen). */
  changed?: () => void
  /** Parcels by tracking number, for the tracking providers. */
  parcels?: ParcelTracking | undefined
}

const SHORT_TEXT: TextRule = { maxLength: TEXT_LIMITS.short }
const SETTING_TEXT: TextRule = { maxLength: TEXT_LIMITS.long, multiline: true }

/** How long the gateway may take to see an integration changed by another process or instance. */
export const GATEWAY_CROSS_PROCESS_MS = 250

/** A webhook delivery as the integration's page lists it. */
export interface DeliveryRecord {
  deliveryId: string
  /** ISO 8601 in the site timezone. */
  date: string
  outcome: string
  reason: string | null
}

export type IntegrationService = ReturnType<typeof createIntegrationService>

export function createIntegrationService(deps: IntegrationServiceDependencies) {
  const { data, registry, timeZone } = deps
  const findRow = (handle: string) => data.findIntegration(handle)

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

  function present(row: IntegrationRow): Integration {
    const secrets = new Set<string>(registry.get(row.providerId ?? '')?.secretSettings ?? [])
    const settings = ownKeysOnly(
      Object.entries(row.settings).map(([key, value]) => [
        key,
        secrets.has(key) && environmentReference(value) === null && value !== '' ? SECRET_MASK : value,
      ]),
    )
    return {
      id: row.id,
      name: row.name,
      handle: row.handle,
      enabled: environmentReference(row.enabled) ? row.enabled : row.enabled === 'true',
      providerId: row.providerId,
      settings,
      statusMap: ownKeysOnly(Object.entries(row.statusMap)) as Record<string, ShipmentStatus>,
      outboundStatusMap: ownKeysOnly(Object.entries(row.outboundStatusMap)) as Partial<Record<ShipmentStatus, string>>,
      pushOn: row.pushOn as ShipmentStatus[],
      dateCreated: formatIsoWithOffset(row.createdAt.getTime(), timeZone),
      dateUpdated: formatIsoWithOffset(row.updatedAt.getTime(), timeZone),
    }
  }

  /**
   * Checks an integration before it is saved; throws one IntegrationConfigError naming every problem
   * found, each under its field (`name`, `handle`, `settings.secret`, `statusMap.in_transit`...).
   */
  async function checkInput(input: IntegrationInput, existingId: number | null): Promise<void> {
    const problems: Record<string, string[]> = {}
    const add = (field: string, message: string) => void (problems[field] ??= []).push(message)
    await collectProblems(input, existingId, add)
    if (Object.keys(problems).length > 0) throw new IntegrationConfigError(problems)
  }

  async function collectProblems(input: IntegrationInput, existingId: number | null, add: (field: string, message: string) => void): Promise<void> {
    if (typeof input.name !== 'string' || input.name.trim() === '') add('name', 'must not be empty')
    else {
      const nameProblem = textProblem(input.name.trim(), SHORT_TEXT)
      if (nameProblem) add('name', nameProblem)
    }
    if (typeof input.handle !== 'string' || !HANDLE_PATTERN.test(input.handle)) {
      add('handle', 'lowercase letters, digits, "-" and "_", starting with a letter or digit, at most 64')
    } else {
      const clash = await findRow(input.handle)
      if (clash && clash.id !== existingId) add('handle', `"${input.handle}" is already used`)
    }
    if (input.enabled !== undefined && typeof input.enabled !== 'boolean' && environmentReference(input.enabled) === null) {
      add('enabled', 'must be a boolean or an environment reference such as "$WEBHOOKS_ENABLED"')
    }
    for (const [code, status] of Object.entries(input.statusMap ?? {})) {
      const codeProblem = code === '' ? 'external codes must not be empty' : textProblem(code, SHORT_TEXT)
      if (codeProblem) add('statusMap', code === '' ? codeProblem : `an external code ${codeProblem}`)
      else if (!isShipmentStatus(status)) add(`statusMap.${code}`, `"${status}" is not a shipment status`)
    }
    for (const [status, code] of Object.entries(input.outboundStatusMap ?? {})) {
      if (!isShipmentStatus(status)) {
        add('outboundStatusMap', `"${status}" is not a shipment status`)
        continue
      }
      const codeProblem = typeof code !== 'string' || code === '' ? 'must be a non-empty string' : textProblem(code, SHORT_TEXT)
      if (codeProblem) add(`outboundStatusMap.${status}`, codeProblem)
    }
    const pushOn = Array.isArray(input.pushOn ?? []) ? (input.pushOn ?? []) : null
    if (pushOn === null) add('pushOn', 'must be a list of shipment statuses')
    for (const status of pushOn ?? []) {
      if (!isShipmentStatus(status)) add('pushOn', `"${String(status)}" is not a shipment status`)
    }
    if (input.providerId == null) {
      if ((pushOn ?? []).length > 0) add('pushOn', 'needs a provider that can push shipments')
      return
    }
    const provider = registry.get(input.providerId)
    if (!provider) return add('providerId', `no provider "${input.providerId}" is registered`)
    for (const status of pushOn ?? []) {
      const method = status === 'cancelled' ? 'cancelShipment' : 'pushShipment'
      if (!provider[method]) add('pushOn', `the provider "${provider.id}" has no ${method}()`)
    }
    // Each setting on its own: an unset variable or a text that breaks the rule is named, and the
    // schema checks the rest (a setting already refused is not refused again as missing).
    const resolved: Record<string, unknown> = {}
    const refused = new Set<string>()
    for (const [key, value] of Object.entries(input.settings ?? {})) {
      const problem = typeof value === 'string' ? textProblem(value, SETTING_TEXT) : null
      if (problem) {
        add(`settings.${key}`, problem)
        refused.add(key)
        continue
      }
      try {
        resolved[key] = resolveEnvironmentValue(value)
      } catch (error) {
        // resolveEnvironmentValue throws one kind of error: an unset variable.
        add(`settings.${key}`, (error as MissingEnvironmentVariableError).message)
        refused.add(key)
      }
    }
    const named = new Set<string>()
    for (const error of Value.Errors(provider.settingsSchema, Value.Default(provider.settingsSchema, structuredClone(resolved)))) {
      const path = error.path.replace(/^\//, '').replaceAll('/', '.')
      const field = path === '' ? 'settings' : `settings.${path}`
      // One message per setting (a missing string is also "not a string"); the schema's own wording when it has one.
      if (named.has(field) || refused.has(path.split('.')[0]!)) continue
      named.add(field)
      const { errorMessage } = error.schema as { errorMessage?: unknown }
      add(field, typeof errorMessage === 'string' ? errorMessage : error.message)
    }
  }

  const storedEnabled = (enabled: boolean | string | undefined) =>
    typeof enabled === 'string' ? enabled.trim() : String(enabled ?? true)

  async function requireRow(handle: string): Promise<IntegrationRow> {
    const row = await findRow(handle)
    if (!row) throw new IntegrationConfigError(`handle: no integration "${handle}"`)
    return row
  }

  const ledgerFor = (integrationId: number): DeliveryLedger => ({
    record: (deliveryId, outcome) => data.recordDelivery(integrationId, deliveryId, outcome),
  })

  const storedValues = (input: IntegrationInput): IntegrationValues => ({
    name: input.name.trim(),
    handle: input.handle,
    enabled: storedEnabled(input.enabled),
    providerId: input.providerId ?? null,
    // Plain objects of own entries (`__proto__` included): Drizzle reads `.constructor` of what it
    // stores, which a null-prototype map (a form's, or one presented here) does not have.
    settings: Object.fromEntries(Object.entries(input.settings ?? {})),
    statusMap: Object.fromEntries(Object.entries(input.statusMap ?? {})),
    outboundStatusMap: Object.fromEntries(Object.entries(input.outboundStatusMap ?? {})),
    pushOn: [...new Set(input.pushOn ?? [])],
    updatedAt: new Date(),
  })

  /**
   * The handle's unique key refused the row: another instance saved an integration with this handle
   * after checkInput looked. The same refusal as when it was there before.
   */
  const handleTakenMeanwhile = (handle: string) => (error: unknown): never => {
    if (error instanceof ShipmentsDatabaseError && error.isUniqueViolation) throw new IntegrationConfigError({ handle: [`"${handle}" is already used`] })
    throw error
  }

  return {
    async create(input: IntegrationInput): Promise<Integration> {
      const defaults = input.statusMap === undefined ? registry.get(input.providerId ?? '')?.defaultStatusMap : undefined
      if (defaults) input = { ...input, statusMap: { ...defaults } }
      await checkInput(input, null)
      const row = await data.insertIntegration(storedValues(input)).catch(handleTakenMeanwhile(input.handle))
      deps.changed?.()
      return present(row)
    },

    /** Changes an integration; keys left out keep their value, and a masked secret keeps the stored one. */
    async update(handle: string, changes: { [K in keyof IntegrationInput]?: IntegrationInput[K] | undefined }): Promise<Integration> {
      const row = await requireRow(handle)
      const stored = ownKeysOnly(Object.entries(row.settings))
      const settings = ownKeysOnly([...Object.entries(stored), ...Object.entries(changes.settings ?? {})])
      for (const [key, value] of Object.entries(changes.settings ?? {})) if (value === SECRET_MASK) settings[key] = stored[key]
      const merged: IntegrationInput = {
        name: changes.name ?? row.name,
        handle: changes.handle ?? row.handle,
        enabled: changes.enabled ?? (environmentReference(row.enabled) ? row.enabled : row.enabled === 'true'),
        providerId: changes.providerId === undefined ? row.providerId : changes.providerId,
        settings,
        statusMap: changes.statusMap ?? row.statusMap,
        outboundStatusMap: changes.outboundStatusMap ?? row.outboundStatusMap,
        pushOn: changes.pushOn ?? row.pushOn,
      }
      await checkInput(merged, row.id)
      const saved = await data.updateIntegration(row.id, storedValues(merged)).catch(handleTakenMeanwhile(merged.handle))
      deps.changed?.()
      return present(saved)
    },

    async get(handle: string): Promise<Integration | null> {
      const row = await findRow(handle)
      return row ? present(row) : null
    },

    async list(): Promise<Integration[]> {
      return (await data.listIntegrations()).map(present)
    },

    async remove(handle: string): Promise<void> {
      await data.deleteIntegration((await requireRow(handle)).id)
      deps.changed?.()
    },

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

    present,

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

    /** Records where a shipment lives at an integration (its id and page there). */
    async setExternalReference(shipmentId: number, handle: string, reference: { externalId?: string | null | undefined; externalUrl?: string | null | undefined }) {
      if (!(await deps.shipments.get(shipmentId))) throw new ShipmentsErrors.ShipmentNotFound(shipmentId)
      const rules: Array<['externalId' | 'externalUrl', TextRule]> = [
        ['externalId', SHORT_TEXT],
        ['externalUrl', { maxLength: TEXT_LIMITS.url }],
      ]
      for (const [key, rule] of rules) {
        const value = reference[key]
        const problem = typeof value === 'string' ? textProblem(value, rule) : null
        if (problem) throw new IntegrationConfigError(`${key}: ${problem}`)
      }
      const integrationId = (await requireRow(handle)).id
      await data.setExternalReference(shipmentId, integrationId, reference.externalId ?? null, reference.externalUrl ?? null)
    },

    /**
     * The integration's newest recorded deliveries, newest first. A delivery's outcome is what its
     * record says (applied, duplicate, stale, rejected); a record without one is a delivery applied.
     */
    async recentDeliveries(handle: string, limit = 50): Promise<DeliveryRecord[]> {
      const row = await requireRow(handle)
      const rows = await data.recentDeliveries(row.id, Math.min(500, Math.max(1, Math.floor(limit))))
      return rows.map((delivery) => ({
        deliveryId: delivery.deliveryId,
        date: formatIsoWithOffset(delivery.createdAt.getTime(), timeZone),
        outcome: typeof delivery.outcome.outcome === 'string' ? delivery.outcome.outcome : 'applied',
        reason: typeof delivery.outcome.reason === 'string' ? delivery.outcome.reason : null,
      }))
    },

    async externalReferences(shipmentId: number): Promise<ExternalReference[]> {
      return (await data.externalReferences(shipmentId)).map((row) => ({
        ...row,
        lastPushAt: row.lastPushAt ? formatIsoWithOffset(row.lastPushAt.getTime(), timeZone) : null,
      }))
    },
  }
}
