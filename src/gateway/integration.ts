// Integrations as the services present them: the shapes providers and hosts see.
import type { ShipmentStatus } from '../shipments/shipment.js'

/** An integration as the service returns it: secret settings are masked unless they are env references. */
export interface Integration {
  id: number
  name: string
  handle: string
  /** A boolean, or the environment reference it is read from (e.g. "$WEBHOOKS_ENABLED"). */
  enabled: boolean | string
  providerId: string | null
  settings: Record<string, unknown>
  statusMap: Record<string, ShipmentStatus>
  dateCreated: string
  dateUpdated: string
}

export interface IntegrationInput {
  name: string
  handle: string
  enabled?: boolean | string
  providerId?: string | null
  settings?: Record<string, unknown>
  statusMap?: Record<string, string>
}

export interface ExternalReference {
  integrationHandle: string
  externalId: string | null
  externalUrl: string | null
}
