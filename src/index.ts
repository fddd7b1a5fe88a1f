// Public surface of fastify-shipments.
export { fastifyShipments, fastifyShipments as default, type ShipmentsDecorator } from './plugin.js'
export type { ShipmentsPluginOptions, ShipmentsUser, ResolveUser, HasPermission, ShipmentFieldDefinition } from './options.js'
export { migrate, openSqliteFile, MIGRATIONS_TABLE, type ShipmentsDatabase } from './db/sqlite/dialect.js'
export * as schema from './db/sqlite/schema.js'
export { ShipmentsErrors, ShipmentValidationError, ShipmentUpdateRejectedError, IntegrationError, IntegrationConfigError } from './errors.js'
export type {
  ShipmentsEventMap,
  ShipmentsEvents,
  ShipmentCreatedEvent,
  ShipmentStatusChangedEvent,
  ShipmentDeletedEvent,
  OrderAdvancedEvent,
  ChangeSource,
} from './events.js'
export { SHIPMENT_STATUSES, type Shipment, type ShipmentStatus, type ShipmentHistoryEntry } from './shipments/shipment.js'
export type { ShipmentUpdateInput, DateTimeParts } from './shipments/update-input.js'
export {
  transitionLockName,
  type ShipmentService,
  type UpdateContext,
  type UpdateResult,
  type ListShipmentsQuery,
  type ShipmentPage,
  type CreateShipmentsOptions,
} from './shipments/service.js'
export { ShipmentsPermissions } from './shipments/routes.js'
export type { OrderStore, OrderSummary } from './orders/order-store.js'
export { createReferenceOrderStore, UnknownOrderStatusError } from './orders/reference-store.js'
export {
  defineProvider,
  DuplicateProviderError,
  type ProviderDefinition,
  type ProviderContext,
  type ProviderRegistry,
  type GatewayRequest,
  type GatewayResponse,
  type DeliveryLedger,
  type ConnectionCheck,
} from './gateway/providers.js'
export { SECRET_MASK, type Integration, type IntegrationInput, type IntegrationService, type ExternalReference } from './gateway/integrations.js'
export { signedWebhookProvider, signWebhook, SIGNED_WEBHOOK_PROVIDER_ID, type ShipmentWebhookEvent } from './gateway/providers/signed-webhook.js'
export { type ExternalEvent } from './shipments/service.js'
