// Integration providers: their typed definition, the context they work in, and the registry by id.
import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import type { Static, TObject } from '@sinclair/typebox'
import type { DeliveryOutcome } from '../db/data-layer.js'
import type { OrderStore } from '../order-store.js'
import type { ShipmentService } from '../shipments/service.js'
import type { Shipment, ShipmentStatus } from '../model/shipment.js'
import type { DeliveryMethods } from './delivery-provider.js'
import type { Integration } from './integration.js'

/** The request as it reached the gateway: nothing parsed, so signatures can be checked over the raw bytes. */
export interface GatewayRequest {
  method: string
  url: string
  query: Record<string, string | string[] | undefined>
  headers: IncomingHttpHeaders
  /** The body exactly as received; empty when there was none. */
  rawBody: Buffer
}

/** What the gateway sends back, unchanged. A plain object or array body is sent as JSON. */
export interface GatewayResponse {
  status?: number | undefined
  headers?: Record<string, string> | undefined
  body?: string | Buffer | Record<string, unknown> | unknown[] | undefined
}

/**
 * The integration's dedupe ledger of webhook deliveries. A delivery that changes a shipment is recorded
 * by the update itself: pass `{ delivery: { integrationId, deliveryId } }` to `shipments.update`, so the
 * mark commits in the same transaction as its effect (a crash loses both, and the sender's retry
 * applies) and a delivery seen before comes back `duplicate: true`, having changed nothing.
 */
export interface DeliveryLedger {
  /**
   * Records a delivery that changes no shipment (an unmapped status, say) with what became of it, shown
   * on the integration's page; false when it was recorded before (a unique key decides a race).
   */
  record(deliveryId: string, outcome: DeliveryOutcome): Promise<boolean>
}

/**
 * Parcels moved by tracking events: the parcel holding a tracking number goes to `shipped` or
 * `delivered` (never back); the answer says whether every parcel of its shipment is out.
 */
export interface ParcelTracking {
  track(event: { trackingNumber: string; status: ShipmentStatus; code: string; integration: string }): Promise<{ shipmentId: number; parcelId: number; parcelStatus: string; everyParcelShipped: boolean } | null>
  /**
   * A return holding the number (its label's, or one entered by hand) moves to in transit, or to received
   * when the carrier delivered it, forward only; null when no open return holds it. Tried before shipments.
   */
  trackReturn?(event: { trackingNumber: string; status: ShipmentStatus; code: string; integration: string }): Promise<{ returnId: number; state: string } | null>
}

export interface ProviderContext<Settings = Record<string, unknown>> {
  integration: Integration
  /** The integration's settings with environment references resolved. Never log them. */
  settings: Settings
  /** The shipment service: every change goes through its update path (validation, mutex, history). */
  shipments: ShipmentService
  orders: OrderStore
  deliveries: DeliveryLedger
  logger: FastifyBaseLogger
  /** The current time in milliseconds since the epoch: the plugin's `clock` option (default Date.now). */
  now(): number
  /** Parcels by tracking number (the built-in tracking providers move them); absent in a context made by hand. */
  parcels?: ParcelTracking | undefined
}

export interface ConnectionCheck {
  ok: boolean
  message?: string | undefined
}

/** What a push or cancel sends: the shipment, its status in the integration's own code, and where it lives there. */
export interface PushRequest {
  shipment: Shipment
  /** The outbound status map's code for the shipment's status, or null when the map has none. */
  externalStatus: string | null
  /** The shipment's id and page at the integration, when known. */
  externalId: string | null
  externalUrl: string | null
}

/** What a push may answer: the shipment's id and page at the integration, kept as its external reference. */
export interface PushResult {
  externalId?: string | null | undefined
  externalUrl?: string | null | undefined
}

export interface ProviderDefinition<Schema extends TObject = TObject> {
  /** Unique id; integrations are bound to a provider by it. */
  id: string
  name?: string | undefined
  /** TypeBox schema of the integration's settings, checked when the integration is saved. */
  settingsSchema: Schema
  /** Settings never returned by the integrations service and never logged. */
  secretSettings?: readonly (keyof Static<Schema> & string)[] | undefined
  /**
   * The status map a new integration of this provider starts with: `integrations.create` stores it when
   * no `statusMap` is given, and the admin's new-integration form shows it to edit.
   */
  defaultStatusMap?: Readonly<Record<string, ShipmentStatus>> | undefined
  /** Handles one gateway request. Throw IntegrationError for a message the caller should see. */
  handleGatewayRequest(request: GatewayRequest, context: ProviderContext<Static<Schema>>): Promise<GatewayResponse>
  /** Optional: checks that the remote side is reachable with these settings. */
  checkConnection?(context: ProviderContext<Static<Schema>>): Promise<ConnectionCheck>
  /**
   * Optional: sends the shipment to the integration (create or update it there). Throw
   * `IntegrationError` with `retryable: true` for a failure worth retrying (a timeout, a 503); any other
   * error stops the push, recorded on the shipment's external reference.
   */
  pushShipment?(request: PushRequest, context: ProviderContext<Static<Schema>>): Promise<PushResult | void>
  /** Optional: cancels the shipment at the integration; errors as for `pushShipment`. */
  cancelShipment?(request: PushRequest, context: ProviderContext<Static<Schema>>): Promise<PushResult | void>
  /** Optional: rates, labels bought exactly once, label documents and voids (see delivery-provider.ts). */
  deliveries?: DeliveryMethods<ProviderContext<Static<Schema>>> | undefined
}

/** Declares a provider with its settings typed from its schema. */
export function defineProvider<Schema extends TObject>(definition: ProviderDefinition<Schema>): ProviderDefinition<Schema> {
  return definition
}

export class DuplicateProviderError extends Error {
  constructor(readonly providerId: string) {
    super(`A provider with the id "${providerId}" is already registered`)
    this.name = 'DuplicateProviderError'
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyProviderDefinition = ProviderDefinition<any>

export interface ProviderRegistry {
  register(provider: AnyProviderDefinition): void
  get(id: string): AnyProviderDefinition | undefined
  list(): AnyProviderDefinition[]
}

/** Why `value` is not a provider definition, or null when it is one. */
export function providerDefinitionProblem(value: unknown): string | null {
  const candidate = value as Partial<ProviderDefinition> | null
  if (typeof candidate !== 'object' || candidate === null) return 'must be an object'
  if (typeof candidate.id !== 'string' || !/^[a-z0-9][a-z0-9._-]*$/i.test(candidate.id)) return 'needs an id of letters, digits, ".", "_" or "-"'
  if (typeof candidate.handleGatewayRequest !== 'function') return `"${candidate.id}" needs handleGatewayRequest()`
  if (typeof candidate.settingsSchema !== 'object' || candidate.settingsSchema?.type !== 'object') {
    return `"${candidate.id}" needs a TypeBox object settingsSchema`
  }
  for (const method of ['checkConnection', 'pushShipment', 'cancelShipment'] as const) {
    if (candidate[method] !== undefined && typeof candidate[method] !== 'function') return `"${candidate.id}": ${method} must be a function`
  }
  if (candidate.deliveries !== undefined) {
    const deliveries = candidate.deliveries as unknown as Record<string, unknown> | null
    if (typeof deliveries !== 'object' || deliveries === null) return `"${candidate.id}": deliveries must be an object`
    for (const method of ['purchaseLabel', 'recoverLabel', 'voidLabel'] as const) {
      if (typeof deliveries[method] !== 'function') return `"${candidate.id}": deliveries.${method} must be a function`
    }
    for (const method of ['quoteRates', 'labelDocument', 'createManifest'] as const) {
      if (deliveries[method] !== undefined && typeof deliveries[method] !== 'function') return `"${candidate.id}": deliveries.${method} must be a function`
    }
    const carriers = deliveries.manifestCarriers
    if (carriers !== undefined && !(Array.isArray(carriers) && carriers.every((carrier) => typeof carrier === 'string' && carrier !== ''))) {
      return `"${candidate.id}": deliveries.manifestCarriers must be a list of carrier names`
    }
  }
  return null
}

export function createProviderRegistry(initial: readonly AnyProviderDefinition[] = []): ProviderRegistry {
  const providers = new Map<string, AnyProviderDefinition>()
  const registry: ProviderRegistry = {
    register(provider) {
      const problem = providerDefinitionProblem(provider)
      if (problem) throw new TypeError(`Invalid provider: ${problem}`)
      if (providers.has(provider.id)) throw new DuplicateProviderError(provider.id)
      providers.set(provider.id, provider)
    },
    get: (id) => providers.get(id),
    list: () => [...providers.values()],
  }
  for (const provider of initial) registry.register(provider)
  return registry
}
