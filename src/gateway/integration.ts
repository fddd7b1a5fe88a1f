// Integrations as the services present them: the shapes providers and hosts see.
import type { ShipmentStatus } from '../model/shipment.js'

/** An integration as the service returns it: secret settings are masked unless they are env references. */
export interface Integration {
  id: number
  name: string
  handle: string
  /** A boolean, or the environment reference it is read from (e.g. "$WEBHOOKS_ENABLED"). */
  enabled: boolean | string
  providerId: string | null
  settings: Record<string, unknown>
  /** Inbound: the integration's status code to the shipment status it means. */
  statusMap: Record<string, ShipmentStatus>
  /** Outbound: a shipment status to the integration's own code, sent with a push. */
  outboundStatusMap: Partial<Record<ShipmentStatus, string>>
  /** Shipment statuses whose reaching pushes the shipment to the integration (cancelled: cancels it there). */
  pushOn: ShipmentStatus[]
  dateCreated: string
  dateUpdated: string
}

export interface IntegrationInput {
  name: string
  handle: string
  enabled?: boolean | string | undefined
  providerId?: string | null | undefined
  settings?: Record<string, unknown> | undefined
  statusMap?: Record<string, string> | undefined
  outboundStatusMap?: Record<string, string> | undefined
  pushOn?: string[] | undefined
}

export interface ExternalReference {
  integrationHandle: string
  externalId: string | null
  externalUrl: string | null
  /** The outbound direction: when the last push or cancel was attempted, and its error (null: it succeeded). */
  lastPushAt: string | null
  lastPushError: string | null
  pushAttempts: number
}
