// The data-layer contract of the gateway's integrations: their rows, the deliveries they received and
// the shipments' references at each of them.

export interface IntegrationRow {
  id: number
  name: string
  handle: string
  /** "true"/"false", or an environment-variable reference such as "$WEBHOOKS_ENABLED". */
  enabled: string
  providerId: string | null
  settings: Record<string, unknown>
  /** External status code to internal shipment status (inbound). */
  statusMap: Record<string, string>
  /** Internal shipment status to the integration's own code (outbound, sent by a push). */
  outboundStatusMap: Record<string, string>
  /** Shipment statuses whose reaching pushes the shipment to the integration. */
  pushOn: string[]
  createdAt: Date
  updatedAt: Date
}

/** What became of a recorded delivery: `applied` (the default of a record without one), `stale`, `unmapped-status`, ... */
export interface DeliveryOutcome {
  outcome: string
  reason?: string
}

/** A webhook delivery recorded for an integration (dedupe ledger), with what became of it. */
export interface DeliveryRow {
  deliveryId: string
  outcome: Record<string, unknown>
  createdAt: Date
}

export type IntegrationValues = Omit<IntegrationRow, 'id' | 'createdAt'>

export interface ExternalReferenceRow {
  integrationHandle: string
  externalId: string | null
  externalUrl: string | null
  /** The outbound direction: the last push or cancel attempted, its error (null when it succeeded), the attempts made. */
  lastPushAt: Date | null
  lastPushError: string | null
  pushAttempts: number
}

/** Integrations, their recorded deliveries and the external references of shipments. */
export interface IntegrationsStore {
  findIntegration(handle: string): Promise<IntegrationRow | undefined>
  listIntegrations(): Promise<IntegrationRow[]>
  insertIntegration(values: IntegrationValues): Promise<IntegrationRow>
  updateIntegration(id: number, values: IntegrationValues): Promise<IntegrationRow>
  deleteIntegration(id: number): Promise<void>
  /**
   * Records a delivery that changes no shipment (its effect-bearing twin is commitShipmentChange's
   * `delivery`); false when it was recorded before (a unique key decides a race).
   */
  recordDelivery(integrationId: number, deliveryId: string, outcome: DeliveryOutcome): Promise<boolean>
  /** The newest deliveries recorded for an integration, newest first. */
  recentDeliveries(integrationId: number, limit: number): Promise<DeliveryRow[]>

  setExternalReference(shipmentId: number, integrationId: number, externalId: string | null, externalUrl: string | null): Promise<void>
  externalReferences(shipmentId: number): Promise<ExternalReferenceRow[]>
}
