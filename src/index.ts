// Public surface of fastify-shipments.
export { fastifyShipments, fastifyShipments as default } from './plugin.js'
export type { ShipmentsDecorator } from './decorator.js'
export type { ShipmentsPluginOptions } from './options.js'
export type { ShipmentsUser, ResolveUser, HasPermission } from './http/access.js'
export type { ShipmentsPrefixes } from './prefixes.js'
export type { ShipmentFieldDefinition } from './shipments/field-layout.js'
export { migrate, openSqliteFile, MIGRATIONS_TABLE, type ShipmentsDatabase, type SqliteDatabase, type PostgresDatabase, type DatabaseHandle } from './db/open.js'
// The Drizzle tables are the subpath exports `fastify-shipments/schema/sqlite` and
// `fastify-shipments/schema/postgres` (and `app.shipments.database.schema`), not exports of this module:
// each loads its Drizzle dialect, which a host that never queries the tables directly need not load.
export { ADVISORY_LOCK_CLASS } from './db/postgres/locks.js'
export {
  ShipmentsErrors,
  GatewayErrors,
  RequestErrorCodes,
  OrderExchangeErrors,
  ShipmentValidationError,
  ShipmentUpdateRejectedError,
  IntegrationError,
  IntegrationSecretError,
  IntegrationConfigError,
  WebhookSubscriptionError,
  NotificationConfigError,
  ShipmentsDatabaseError,
} from './errors.js'
export { TEXT_LIMITS } from './text.js'
/** TypeBox (`@sinclair/typebox` 0.34, the package's own copy), for providers' settings schemas. */
export { Type, type Static } from '@sinclair/typebox'
export { shipmentsOpenApiDocument, type OpenApiDocumentOptions } from './openapi.js'
export type {
  ShipmentsEventMap,
  ShipmentsEvents,
  ShipmentCreatedEvent,
  ShipmentStatusChangedEvent,
  ShipmentDeletedEvent,
  OrderAdvancedEvent,
  ShipNotificationRecordedEvent,
  ChangeSource,
  EventIdentity,
} from './model/events.js'
export { WEBHOOK_EVENT_NAMES, type WebhookEventName } from './outbox/event-names.js'
export type { OutboxService, OutboxMessage, OutboxQuery } from './outbox/outbox-service.js'
export type { WebhookService, WebhookSubscription, WebhookSubscriptionInput, WebhookDelivery } from './outbox/webhooks.js'
export type { PushService, PushOutcome } from './gateway/push.js'
export { DEFAULT_RETRY_DELAYS_MS } from './outbox/options.js'
export { SHIPMENT_STATUSES, type Shipment, type ShipmentStatus, type ShipmentHistoryEntry } from './model/shipment.js'
export type { ShipmentUpdateInput, DateTimeParts } from './shipments/update-input.js'
export { transitionLockName, type DeliveryOutcome } from './db/data-layer.js'
export {
  type ShipmentService,
  type UpdateContext,
  type UpdateResult,
  type ListShipmentsQuery,
  type ShipmentPage,
  type CreateShipmentsOptions,
  type OrderSyncResult,
  CANCELLED_WITH_ORDER,
  RESTORED_WITH_ORDER,
} from './shipments/service.js'
export type { OrderAllocation, AllocatedLine, AttentionOrder, AttentionPage } from './shipments/attention.js'
export { ShipmentsPermissions } from './shipments/routes.js'
export type {
  OrderStore,
  OrderSummary,
  OrderLine,
  OrderLineCustoms,
  CompletedOrder,
  ExportOrder,
  ExportAddress,
  ExportLineItem,
  ExportOrdersQuery,
  ExportOrdersPage,
  ShipNotificationChange,
  ShipNotificationResult,
  TrackingEntry,
} from './order-store.js'
export {
  createReferenceOrderStore,
  UnknownOrderStatusError,
  type OrderFieldDefinition,
  type ReferenceOrderStoreOptions,
} from './orders/reference-store.js'
export {
  ReferenceOrderError,
  MAX_ORDER_LINES,
  type ReferenceOrders,
  type ReferenceOrderInput,
  type ReferenceOrderChanges,
  type ReferenceAddress,
  type ReferenceLineItem,
} from './orders/reference-orders.js'
export type { OrderExchangeOptions, OrderExchangeSettings } from './order-exchange/settings.js'
export type { OrderExchangeService, ExportRequest } from './order-exchange/service.js'
export type { ShipNotifyParameters } from './order-exchange/ship-notice.js'
export {
  defineProvider,
  DuplicateProviderError,
  type ProviderDefinition,
  type PushRequest,
  type PushResult,
  type ProviderContext,
  type ProviderRegistry,
  type GatewayRequest,
  type GatewayResponse,
  type DeliveryLedger,
  type ConnectionCheck,
  type ParcelTracking,
} from './gateway/providers.js'
export { SECRET_MASK, type IntegrationService } from './gateway/integrations.js'
export type { Integration, IntegrationInput, ExternalReference } from './gateway/integration.js'
export { signedWebhookProvider, signWebhook, SIGNED_WEBHOOK_PROVIDER_ID, type ShipmentWebhookEvent } from './gateway/providers/signed-webhook.js'
export { easyPostProvider, signEasyPostEvent, EASYPOST_PROVIDER_ID, EASYPOST_API_BASE_URL, EASYPOST_STATUS_MAP } from './gateway/providers/easypost.js'
export { afterShipProvider, signAfterShipWebhook, AFTERSHIP_PROVIDER_ID, AFTERSHIP_API_BASE_URL, AFTERSHIP_STATUS_MAP } from './gateway/providers/aftership.js'
export { type ExternalEvent } from './shipments/service.js'
export type { AdminOptions, AdminPage, AdminLayout } from './admin/options.js'
export { createCarrierDetector, type CarrierOptions, type CarrierDefinition, type DetectedCarrier } from './shipments/carriers.js'
export { BUILT_IN_SPLIT_RULES, MAX_ITEMS_PER_SHIPMENT, type SplitRule, type SplitRuleLine, type ShipmentItem, type ShipmentItemInput } from './model/items.js'
export { ADMIN_CONTENT_SECURITY_POLICY, ADMIN_CSRF_COOKIE } from './admin/options.js'
export type { ShipmentsAdminRequest } from './admin/fastify-types.js'
export { EXCHANGE_ACTIVITY_KEPT, EXCHANGE_ACTIVITY_PRUNE_EVERY, EXCHANGE_ACTIVITY_REFUSED_KEPT, type ExchangeActivity, type ExchangeActivityLog } from './order-exchange/activity-log.js'
export type { DeliveryRecord } from './gateway/integrations.js'
export { NOTIFICATION_JOB, NOTIFICATION_RECIPIENTS, NOTIFICATION_TRIGGERS, RETURN_TRIGGERS, TEMPLATE_RENDER_LIMIT_MS, type MailMessage, type NotificationsOptions, type NotificationInput, type Notification, type NotificationRecipient, type NotificationTrigger, type ReturnTrigger, type RenderedNotification } from './notifications/service.js'
export { NOTIFICATION_TEMPLATES, type NotificationTemplateName } from './notifications/templates.js'
export { standaloneTrackingLayout, trackingPageFrameworkErrors, trackingPagePolicy, type TrackingPage, type TrackingPageLayout } from './notifications/tracking-page-layout.js'
export type { HealthCheck, HealthReport, HealthStatus } from './health/service.js'
export type { HealthOptions } from './health/options.js'
export { PackStationErrors } from './errors.js'
export type { PackStationService, PackShipment, PackLine, PackLabel, PackCounts, PackScanResult, PackFinishInput, PackFinishResult } from './pack-station/service.js'
export type { DocumentService, PrintJobOptions, PrintJobParcel } from './documents/service.js'
export { MAX_PRINT_JOB_PARCELS } from './documents/service.js'
// The day's manifest.
export { ManifestErrors } from './errors.js'
export { MAX_MANIFEST_LABELS, type ManifestService, type Manifest, type ManifestWithLabels, type EligibleLabels, type EligibleGroup, type ManifestContext } from './manifests/service.js'
export type { ManifestCreatedEvent } from './model/events.js'
export { DeliveryErrors, DocumentErrors, BatchErrors } from './errors.js'
export type { DocumentsOptions, LabelFile } from './documents/options.js'
export type { DocumentFont, FontSource } from './documents/fonts.js'
export type { PackingSlipData, PackingSlipGroup, PackingSlipLine, PickListRow, DocumentShop } from './documents/model.js'
export type { PackingSlipShow } from './documents/model.js'
export type { ParcelEvent, LabelEvent, EstimateChangedEvent, CarrierMilestoneEvent, BatchCompletedEvent } from './model/events.js'
export type { LabelBatchService, LabelBatch, LabelBatchItem, LabelBatchPage, LabelBatchFilter, LabelBatchSelection, LabelBatchInput, LabelBatchContext } from './batches/service.js'
export type { LabelBatchState, LabelBatchItemState, LabelBatchSettings, LabelBatchCounts } from './db/batches.js'
export type { BatchesOptions } from './batches/options.js'
export { CARRIER_MILESTONES, type CarrierMilestone, type Checkpoint, type CheckpointInput } from './model/checkpoints.js'
export { compareDecimals, type DeliveryService, type DeliveryContext, type BuyLabelInput, type RateQuote, type LabelOperation, type LabelPurchaseResult } from './deliveries/service.js'
export { PARCEL_STATUSES, MAX_PARCELS_PER_SHIPMENT, type Parcel, type ParcelInput, type ParcelLabel, type ParcelDimensions, type ParcelStatus, type Measure } from './model/parcel.js'
export { WEIGHT_UNITS, DIMENSION_UNITS, toOunces, toInches, type WeightUnit, type DimensionUnit } from './model/units.js'
export {
  DeliveryProviderError,
  LABEL_FORMATS,
  type DeliveryMethods,
  type CarrierService,
  type DeliveryJournal,
  type DeliveryFailureKind,
  type LabelFormat,
  type LabelPurchaseRequest,
  type ParcelMeasures,
  type PurchasedLabel,
  type RateOffer,
  type RateRequest,
  type RecoveredLabel,
  type ManifestRequest,
  type CreatedManifest,
  type CustomsInfo,
  type CustomsInfoItem,
  type LabelForm,
  type AddressVerification,
} from './gateway/delivery-provider.js'
export type { PostalAddress } from './order-store.js'
export { EASYPOST_DEFAULT_TIMEOUT_MS } from './gateway/providers/easypost-labels.js'
export { binPackingPacker, type Packer, type PackingItem, type PackingBox, type PackedBox, type PackingResult, type PackOptions } from './deliveries/packing.js'
export { MAX_PACKED_UNITS, MAX_PACKED_BOX_TYPES, type BoxService, type Box, type BoxInput, type SuggestedParcel, type ParcelSuggestion, type SuggestionToAccept } from './deliveries/boxes.js'
// Returns (reverse shipments).
export { ReturnErrors } from './errors.js'
export type { ReturnEvent } from './model/events.js'
export {
  returnRefusalMessage,
  type ReturnService,
  type ReturnContext,
  type ReturnLineInput,
  type RequestReturnInput,
  type UpdateReturnInput,
  type ReturnLabelInput,
  type ReceiveReturnInput,
  type ReturnableLine,
} from './returns/service.js'
export type { CustomerMayReturn, CustomerMayReturnInput, CustomerReturnLine, CustomerReturnLabel } from './returns/customer-returns.js'
export { RETURN_STATES, type Return, type ReturnState, type ReturnLineView, type ReturnLabel, type ReturnHistoryEntry, type ReceivedQuantities } from './model/return.js'
// Shipping rules (see docs/shipping-rules.md).
export { RuleErrors } from './errors.js'
export { SHIPPING_RULES_STATE_KEY, type ShippingRulesService, type ParcelDecision, type SavedShippingRules } from './rules/service.js'
export type { ShippingRule, ShippingRuleChoice, ShippingRuleConditions, ShippingRuleDefault, ShippingRules, ParcelFacts, ConditionCheck, RuleMatch } from './rules/model.js'
export type { ShippingRulesInput, ShippingRuleInput } from './rules/validation.js'
export type { ShipmentExplanation, ParcelExplanation, RuleTried } from './rules/explain.js'
// Customs (see docs/shipping-abroad.md).
export { CustomsErrors, CustomsIncompleteError } from './errors.js'
export { CUSTOMS_SETTINGS_STATE_KEY, type CustomsService } from './customs/service.js'
export type { CustomsDeclaration, CustomsSettings, DeclarationItem, ParcelCustoms, SavedCustomsSettings } from './customs/model.js'
export type { CustomsItemInput, DeclarationInput } from './customs/checks.js'
export type { CustomsOptions } from './customs/options.js'
export { EASYPOST_SERVICE_LEVELS } from './gateway/providers/easypost-services.js'
