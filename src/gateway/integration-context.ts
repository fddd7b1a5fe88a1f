// What the integration service's concerns (integration-checks.ts, integration-changes.ts,
// integration-calls.ts, integration-records.ts) share: the service's dependencies, an integration as
// presented, and the reads of a row by handle. Rule: it knows none of the concerns; what one concern
// needs of another is passed to its factory, never imported.
import type { FastifyBaseLogger } from 'fastify'
import type { DataLayer, IntegrationRow } from '../db/data-layer.js'
import { environmentReference } from '../env.js'
import { IntegrationConfigError } from '../errors.js'
import type { OrderStore } from '../order-store.js'
import type { ShipmentService } from '../shipments/service.js'
import type { ShipmentStatus } from '../model/shipment.js'
import { formatIsoWithOffset } from '../time.js'
import { TEXT_LIMITS, type TextRule } from '../text.js'
import type { Integration } from './integration.js'
import type { ParcelTracking, ProviderRegistry } from './providers.js'

export const SECRET_MASK = '********'

/**
 * An object of exactly these entries and no prototype: providers index the status maps and settings by
 * outside text (`statusMap[event.status]`), which on a plain object finds `constructor`, `toString`
 * and the rest of Object.prototype; and `__proto__` is a key like any other.
 */
export function ownKeysOnly<T>(entries: Iterable<readonly [string, T]>): Record<string, T> {
  const record: Record<string, T> = Object.create(null)
  for (const [key, value] of entries) record[key] = value
  return record
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

export const SHORT_TEXT: TextRule = { maxLength: TEXT_LIMITS.short }

/** The shared part of one integration service: built once, handed to each concern's factory. */
export function createIntegrationServiceContext(deps: IntegrationServiceDependencies) {
  const { data, registry, timeZone } = deps
  const findRow = (handle: string) => data.findIntegration(handle)

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

  async function requireRow(handle: string): Promise<IntegrationRow> {
    const row = await findRow(handle)
    if (!row) throw new IntegrationConfigError(`handle: no integration "${handle}"`)
    return row
  }

  return { deps, findRow, present, requireRow }
}

export type IntegrationServiceContext = ReturnType<typeof createIntegrationServiceContext>
