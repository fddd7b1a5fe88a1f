// The plugin: checks options, opens or adopts the database, decorates `app.shipments`, mounts the routes.
import fp from 'fastify-plugin'
import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync } from 'fastify'
import { openDatabase } from './db/open.js'
import { ShipmentsEvents } from './model/events.js'
import { resolveOptions, type ResolvedOptions, type ShipmentsPluginOptions } from './options.js'
import type { OrderStore } from './order-store.js'
import { createReferenceOrderStore } from './orders/reference-store.js'
import { createReferenceOrders } from './orders/reference-orders.js'
import { shipmentRoutes } from './shipments/routes.js'
import { createCarrierDetector } from './shipments/carriers.js'
import { createShipmentService, type ShipmentService } from './shipments/service.js'
import { createIntegrationService, type IntegrationService } from './gateway/integrations.js'
import type { DataLayer, NewOutboxMessage, OutboxRow } from './db/data-layer.js'
import { createProviderRegistry, type ParcelTracking, type ProviderRegistry } from './gateway/providers.js'
import { BUILT_IN_PROVIDERS } from './gateway/providers/built-in.js'
import { gatewayRoutes } from './gateway/routes.js'
import type { OrderExchangeService } from './order-exchange/service.js'
import { createExchangeActivityLog } from './order-exchange/activity-log.js'
import { blankShipNotifySettings, missingTrackingFields } from './order-exchange/settings.js'
import { redactedRequest } from './http/redact.js'
import { createShipmentsOverview } from './shipments/overview.js'
import { shipmentsOpenApiDocument } from './openapi.js'
import { createOutboxDispatcher, type JobHandler, type OutboxDispatcher } from './outbox/dispatcher.js'
import { createOutboxService } from './outbox/outbox-service.js'
import { createWebhookService, WEBHOOK_DELIVERY_JOB } from './outbox/webhooks.js'
import { createPushService, PUSH_JOB } from './gateway/push.js'
import { ORDER_ADVANCE_JOB } from './shipments/service.js'
import { ATTENTION_REFRESH_JOB } from './shipments/attention.js'
import { formatIsoWithOffset } from './time.js'
import { createNotificationService, NOTIFICATION_JOB } from './notifications/service.js'
import { createTrackingLinks } from './notifications/tracking-links.js'
import { createDeliveryService, type CustomsGate, type DeliveryService } from './deliveries/service.js'
import type { DeliveryLabelPort } from './deliveries/label-port.js'
import { deliveryRoutes } from './deliveries/routes.js'
import { createBoxService, type BoxService } from './deliveries/boxes.js'
import { createShipFromSetting } from './deliveries/ship-from.js'
import { createShippingRules, type ShippingRulesService } from './rules/service.js'
import { shippingRuleRoutes } from './rules/routes.js'
import { createReturnService, type ReturnService } from './returns/service.js'
import { returnRoutes } from './returns/routes.js'
import { createCustomerReturns } from './returns/customer-returns.js'
import { createDocumentService, loadDocumentEngine, type DocumentService } from './documents/service.js'
import { documentRoutes } from './documents/routes.js'
import { createHealth } from './health/service.js'
import { createSystemOverview } from './health/system.js'
import { healthRoute } from './health/routes.js'
import { loadTelemetry, observeFacts } from './telemetry.js'
import { createPackStation } from './pack-station/service.js'
import { packStationRoutes } from './pack-station/routes.js'
import { createManifestService } from './manifests/service.js'
import { manifestRoutes } from './manifests/routes.js'
import type { FontStack } from './documents/fonts.js'
import { ShipmentsErrors } from './errors.js'
import { decoratorOf, type OrderExchangeRoutes, type PluginServices } from './decorator.js'
import { createLabelBatches, type LabelBatchService } from './batches/service.js'
import { createBatchWorker } from './batches/worker.js'
import { batchRoutes } from './batches/routes.js'
import { createAddressService } from './addresses/service.js'
import { addressRoutes } from './addresses/routes.js'
import { createCustomsService, type CustomsService } from './customs/service.js'
import { customsRoutes } from './customs/routes.js'

/** What the factories below share: the data layer, the logger, the resolved options (of which each service is handed its own part). */
interface ServiceBase {
  data: DataLayer
  logger: FastifyBaseLogger
  options: ResolvedOptions
}

/**
 * The services, made in the order they need each other; the outbox's job handlers and follow-ups, and
 * the hooks between services made later (tracking events to parcels and returns, integration changes to
 * the pushes' cache), are filled in as those services come.
 */
async function createServices(app: FastifyInstance, base: ServiceBase, documentsConfigured: boolean): Promise<PluginServices> {
  const { data, logger, options } = base
  const events = new ShipmentsEvents(logger)
  const orderStore = options.orders.orderStore ?? createReferenceOrderStore(data, { orderFields: options.orders.orderFields })
  // Handlers are added below, once the services they call exist; nothing is dispatched before ready.
  const jobs: Record<string, JobHandler> = {}
  const followUps: Array<(delivered: OutboxRow[]) => Promise<NewOutboxMessage[]>> = []
  const dispatcher = createOutboxDispatcher({
    data,
    events,
    logger,
    options: options.outbox,
    jobs,
    followUpsOf: async (delivered) => (await Promise.all(followUps.map((of) => of(delivered)))).flat(),
  })
  app.addHook('onReady', () => dispatcher.start())
  observeGauges(app, data, options.clock)
  let buildingAttention: Promise<void> = Promise.resolve()
  // Close only what the package opened (the data layer knows); a host's database stays the host's.
  app.addHook('onClose', async () => {
    await buildingAttention
    await dispatcher.stop()
    await data.close()
  })
  const shipments = createShipmentService({
    data,
    dispatcher,
    orderStore,
    logger,
    timeZone: options.timezone,
    shipmentFields: options.shipments.shipmentFields,
    shippedOrderStatus: options.shipments.shippedOrderStatus,
    lockTimeoutMs: options.lockTimeoutMs,
    clock: options.clock,
    cancelWithOrderStatuses: options.shipments.cancelWithOrderStatuses,
    splitRules: options.shipments.splitRules,
    // A store that gives lines is a line-item shop: an order whose shipments hold lines advances once
    // every unit has shipped; one shipped as order-level shipments only advances as a whole (spec 3.5).
    requireFullCoverage: options.shipments.requireFullCoverage ?? (typeof orderStore.orderLines === 'function' ? 'itemized' : false),
    detectCarrier: createCarrierDetector(options.shipments.carriers),
    referenceStore: !options.orders.orderStore,
  })

  const providers = createProviderRegistry([...BUILT_IN_PROVIDERS, ...options.gateway.providers])
  // The pushes' cache of pushing integrations is filled in below; a change saved here drops it at once.
  let integrationsChanged = () => {}
  // Tracking events move parcels through the deliveries service, made below.
  let trackParcel: ParcelTracking['track'] = async () => null
  let trackReturn: NonNullable<ParcelTracking['trackReturn']> = async () => null
  const integrations = createIntegrationService({
    data,
    registry: providers,
    shipments,
    orders: orderStore,
    logger,
    timeZone: options.timezone,
    clock: options.clock,
    changed: () => integrationsChanged(),
    parcels: { track: (event) => trackParcel(event), trackReturn: (event) => trackReturn(event) },
  })
  const exchange = await createOrderExchange(base, { orderStore, shipments, dispatcher, trackParcel: (event) => trackParcel(event) })

  const present = (date: Date) => formatIsoWithOffset(date.getTime(), options.timezone)
  const webhooks = createWebhookService({ data, dispatcher, options: options.webhooks, retryDelaysMs: options.outbox.retryDelaysMs, present })
  const pushes = createPushService({
    data,
    registry: providers,
    integrations,
    shipments,
    dispatcher,
    logger,
    timeZone: options.timezone,
    lockTimeoutMs: options.lockTimeoutMs,
    retryDelaysMs: options.outbox.retryDelaysMs,
  })
  integrationsChanged = pushes.integrationsChanged
  jobs[WEBHOOK_DELIVERY_JOB] = webhooks.deliveryJob
  jobs[PUSH_JOB] = pushes.pushJob
  jobs[ORDER_ADVANCE_JOB] = shipments.orderAdvanceJob
  // A database made before the attention rows existed gets them built once, in the background.
  app.addHook('onReady', () => {
    buildingAttention = shipments.buildAttentionRows().catch((error: unknown) => logger.error({ err: error }, 'Building the attention list failed; it is tried again at the next start'))
  })
  jobs[ATTENTION_REFRESH_JOB] = shipments.attentionRefreshJob
  const trackingLinks = options.trackingPage ? createTrackingLinks(data.notifications, options.trackingPage) : null
  const notifications = createNotificationService({ data, orderStore, logger, timeZone: options.timezone, options: options.notifications, trackingLinks })
  jobs[NOTIFICATION_JOB] = notifications.notificationJob
  followUps.push(webhooks.deliveriesFor, pushes.pushesFor, notifications.notificationsFor)
  const outbox = createOutboxService(data, dispatcher, options.timezone)

  const { deliveries, returns, boxes, rules, labelPort, customs } = createParcelServices(base, { providers, integrations, shipments, orderStore, dispatcher })
  trackParcel = deliveries.trackParcel
  trackReturn = returns.track
  const documents = await createDocuments(base, { shipments, deliveries, orderStore }, documentsConfigured)
  // The form is fetched under the labels' outbound rules (documents.allowPrivateAddresses, labelTimeoutMs).
  const manifests = createManifestService({
    ...{ data, labels: labelPort, shipFrom: deliveries.shipFrom, dispatcher, logger, timeZone: options.timezone, clock: options.clock },
    form: { timeoutMs: options.documents.labelTimeoutMs, allowPrivateAddresses: options.documents.allowPrivateAddresses },
  })
  const batches = createBatchServices(app, base, { shipments, deliveries, boxes, rules, dispatcher })
  const addresses = createAddressService({ data, deliveries, shipments, labels: labelPort, clock: options.clock, timeZone: options.timezone })

  const { health } = createHealth({ data, instanceId: dispatcher.claim.instanceId, clock: options.clock, options: options.health, orderExchange: exchange.service !== null })
  const referenceOrders = options.orders.orderStore ? null : createReferenceOrders(data, options.clock, shipments.orderChanged)
  const packStation = createPackStation({
    shipments,
    orderStore,
    deliveries,
    rules,
    lockShipment: (shipmentId, task) => data.withNamedLock('packStation', shipmentId, options.lockTimeoutMs, task),
  })
  return {
    shipments,
    orders: orderStore,
    referenceOrders,
    events,
    outbox,
    webhooks,
    pushes,
    integrations,
    providers,
    orderExchange: exchange.service,
    orderExchangeRoutes: exchange.routes,
    trackingFieldProblems: exchange.trackingFieldProblems,
    deliveries,
    boxes,
    rules,
    returns,
    documents,
    packStation,
    manifests,
    notifications,
    trackingLinks,
    health,
    system: createSystemOverview({ data, health, clock: options.clock }),
    batches,
    addresses,
    customs,
  }
}

/**
 * The gauges read from the database (the outbox's backlog and oldest due message, the attention list),
 * registered with the host's meter provider when the plugin is ready (so an SDK registered before
 * `app.ready()` is used) and removed when it closes.
 */
function observeGauges(app: FastifyInstance, data: DataLayer, clock: () => number): void {
  let stopObserving = () => {}
  app.addHook('onReady', () => {
    stopObserving = observeFacts(async () => {
      const now = clock()
      const facts = await data.healthFacts(new Date(now), 10_000)
      const waited = facts.oldestDueAt === null ? 0 : Math.max(0, now - facts.oldestDueAt.getTime()) / 1000
      return { backlog: facts.backlog, oldestPendingAgeSeconds: waited, attentionOrders: facts.attentionOrders }
    })
  })
  app.addHook('onClose', () => stopObserving())
}

/** ShipStation's order exchange (its service, its routes, Basic auth), loaded here for a host that sets it up. */
async function createOrderExchange(
  { data, logger, options }: ServiceBase,
  deps: { orderStore: OrderStore; shipments: ShipmentService; dispatcher: OutboxDispatcher; trackParcel: ParcelTracking['track'] },
): Promise<{ service: OrderExchangeService | null; routes: OrderExchangeRoutes | null; trackingFieldProblems: string[] }> {
  const settings = options.orderExchange
  if (!settings) return { service: null, routes: null, trackingFieldProblems: [] }
  const [{ createOrderExchangeService }, { orderExchangeRoutes }] = await Promise.all([import('./order-exchange/service.js'), import('./order-exchange/routes.js')])
  const service = createOrderExchangeService({
    settings,
    orderStore: deps.orderStore,
    shipments: deps.shipments,
    dispatcher: deps.dispatcher,
    logger,
    timeZone: options.timezone,
    activity: createExchangeActivityLog({ data, logger, timeZone: options.timezone, clock: options.clock }),
    lockOrder: (orderId, task) => data.withNamedLock('shipNotice', orderId, options.lockTimeoutMs, task),
    parcels: { track: deps.trackParcel },
  })
  const blankSettings = blankShipNotifySettings(settings)
  if (blankSettings.length > 0) logger.warn({ settings: blankSettings }, 'Order exchange: blank settings; ship notifications will fail with 500')
  // Decidable for the reference store only: a host's order store keeps its fields its own way.
  const trackingFieldProblems = !options.orders.orderStore ? missingTrackingFields(settings, options.orders.orderFields) : []
  for (const problem of trackingFieldProblems) logger.warn(`Order exchange: ${problem}; ship notifications cannot store their tracking numbers there`)
  return { service, routes: orderExchangeRoutes, trackingFieldProblems }
}

/** Parcels, rates and labels; returns (which buy their labels through the deliveries' port); boxes and packing; the shipping rules; customs (the gate of rates and labels). */
function createParcelServices(
  { data, logger, options }: ServiceBase,
  deps: { providers: ProviderRegistry; integrations: IntegrationService; shipments: ShipmentService; orderStore: OrderStore; dispatcher: OutboxDispatcher },
): { deliveries: DeliveryService; returns: ReturnService; boxes: BoxService; rules: ShippingRulesService; labelPort: DeliveryLabelPort; customs: CustomsService } {
  const { providers, integrations, shipments, orderStore, dispatcher } = deps
  const shipFrom = createShipFromSetting({ data, option: options.deliveries.shipFrom ?? null })
  // Customs stands above deliveries and borrows their label port: its gate is filled in once it exists.
  let declarationFor: CustomsGate['declarationFor'] = async () => undefined
  const { labelPort, ...deliveries } = createDeliveryService({
    data,
    registry: providers,
    integrations,
    shipments,
    orderStore,
    dispatcher,
    logger,
    timeZone: options.timezone,
    clock: options.clock,
    lockTimeoutMs: options.lockTimeoutMs,
    shipFrom,
    quoteLifetimeMs: options.deliveries.quoteLifetimeMs,
    addressVerification: options.addresses.verification,
    customs: { declarationFor: (request) => declarationFor(request) },
  })
  const { declarationFor: customsGate, ...customs } = createCustomsService({ data, shipments, orderStore, labels: labelPort, referenceStore: !options.orders.orderStore, defaults: options.customs, clock: options.clock, timeZone: options.timezone })
  declarationFor = customsGate
  const returns = createReturnService({ data, orderStore, dispatcher, labels: labelPort, logger, timeZone: options.timezone, lockTimeoutMs: options.lockTimeoutMs, reasons: options.returns.reasons })
  const { packer, packingTimeoutMs } = options.deliveries
  const boxes = createBoxService({ data, shipments, orderStore, referenceStore: !options.orders.orderStore, deliveries, packer, packingTimeoutMs, timeZone: options.timezone })
  // The rules check integrations (and their services) through the label port when they are saved.
  const rules = createShippingRules({ data, deliveries, shipments, orderStore, labels: labelPort, clock: options.clock, timeZone: options.timezone })
  return { deliveries, returns, boxes, rules, labelPort, customs }
}

/**
 * Label batches: the service, and the worker every instance runs (started when ready, stopped on close
 * before the data layer closes; `batches.worker: false` runs none here).
 */
function createBatchServices(
  app: FastifyInstance,
  { data, logger, options }: ServiceBase,
  deps: { shipments: ShipmentService; deliveries: DeliveryService; boxes: BoxService; rules: ShippingRulesService; dispatcher: OutboxDispatcher },
): LabelBatchService {
  const worker = createBatchWorker({ data, rules: deps.rules, deliveries: deps.deliveries, boxes: deps.boxes, dispatcher: deps.dispatcher, logger, options: options.batches, timeZone: options.timezone })
  app.addHook('onReady', () => worker.start())
  app.addHook('preClose', () => worker.stop())
  return createLabelBatches({ data, shipments: deps.shipments, options: options.batches, timeZone: options.timezone, clock: options.clock, created: () => worker.wake() })
}

/**
 * The documents service. The PDF libraries and fonts load with the first document, so a host that
 * prints none never pays for them. A host that sets the documents option has them loaded and parsed
 * here instead: a font of its own that cannot be read fails ready(), naming it, and the first document
 * waits for no parse (the event-loop budget of a request). Without the option the stack is DejaVu
 * alone, which cannot fail but for a broken install (then the document's request fails, with the
 * load's error).
 */
async function createDocuments(
  { data, logger, options }: ServiceBase,
  deps: { shipments: ShipmentService; deliveries: DeliveryService; orderStore: OrderStore },
  documentsConfigured: boolean,
): Promise<DocumentService> {
  let fontStack: Promise<FontStack> | null = null
  const loadFonts = () =>
    (fontStack ??= loadDocumentEngine().then((engine) => {
      try {
        return engine.createFontStack(options.documents.fonts, options.documents.missingGlyphs)
      } catch (error) {
        throw new ShipmentsErrors.InvalidOption('documents.fonts', (error as Error).message)
      }
    }).catch((error: unknown) => {
      fontStack = null
      throw error
    }))
  if (documentsConfigured) await loadFonts()
  return createDocumentService({
    fonts: loadFonts,
    shipments: deps.shipments,
    deliveries: deps.deliveries,
    customs: data.customs,
    orderStore: deps.orderStore,
    options: options.documents,
    logger,
    timeZone: options.timezone,
    clock: options.clock,
  })
}

// Every surface logs its request line with credential-like query parameters masked (SS-Password,
// a provider's token, however spelled).
// (Fastify types register-level serializers as returning strings; pino takes the object as it does on routes.)
const logSerializers = { req: redactedRequest } as unknown as Record<string, (value: unknown) => string>

/** Mounts every surface, each given its service and its own options: the API, the gateway, the pages, the exchange. */
async function mountRoutes(app: FastifyInstance, base: ServiceBase, services: PluginServices): Promise<void> {
  const { options } = base
  const access = { resolveUser: options.resolveUser, hasPermission: options.hasPermission }
  await app.register(shipmentRoutes, { prefix: options.prefixes.shipmentApi, logSerializers, service: services.shipments, timeZone: options.timezone, ...access })
  await app.register(deliveryRoutes, { prefix: options.prefixes.shipmentApi, logSerializers, service: services.deliveries, boxes: services.boxes, ...access })
  await app.register(returnRoutes, { prefix: options.prefixes.shipmentApi, logSerializers, service: services.returns, ...access, clock: options.clock })
  await app.register(documentRoutes, { prefix: options.prefixes.shipmentApi, logSerializers, service: services.documents, ...access })
  await app.register(packStationRoutes, { prefix: options.prefixes.shipmentApi, logSerializers, service: services.packStation, ...access })
  await app.register(shippingRuleRoutes, { prefix: options.prefixes.shipmentApi, logSerializers, service: services.rules, ...access })
  await app.register(manifestRoutes, { prefix: options.prefixes.shipmentApi, logSerializers, service: services.manifests, ...access })
  await app.register(batchRoutes, { prefix: options.prefixes.shipmentApi, logSerializers, service: services.batches, documents: services.documents, ...access })
  await app.register(addressRoutes, { prefix: options.prefixes.shipmentApi, logSerializers, service: services.addresses, ...access })
  await app.register(customsRoutes, { prefix: options.prefixes.shipmentApi, logSerializers, service: services.customs, ...access })
  await app.register(gatewayRoutes, {
    prefix: options.prefixes.gateway,
    logSerializers,
    integrations: services.integrations,
    registry: services.providers,
    bodyLimit: options.gateway.bodyLimit,
  })
  await mountTrackingPage(app, base, services)
  if (options.health.path) await app.register(healthRoute, { path: options.health.path, health: services.health })
  if (options.openapi) {
    const document = await shipmentsOpenApiDocument({
      prefixes: options.prefixes,
      orderExchange: services.orderExchange !== null,
      trackingPage: options.trackingPage?.prefix ?? null,
      customerReturns: options.returns.windowDays > 0,
    })
    app.get(options.openapi.path, { schema: { hide: true } }, async () => document)
  }
  await mountAdmin(app, base, services)
  if (services.orderExchange && options.orderExchange && services.orderExchangeRoutes) {
    await app.register(services.orderExchangeRoutes, {
      prefix: options.prefixes.orderExchange,
      logSerializers,
      service: services.orderExchange,
      settings: options.orderExchange,
    })
  }
}

/** The public tracking page, where the `trackingPage` option mounts it; customers start returns there when the shop sets a return window. */
async function mountTrackingPage(app: FastifyInstance, { logger, options }: ServiceBase, services: PluginServices): Promise<void> {
  const { trackingPage } = options
  const { trackingLinks, shipments, returns, orders: orderStore } = services
  if (!trackingPage || !trackingLinks) return
  const { trackingPageRoutes } = await import('./notifications/tracking-page.js')
  await app.register(trackingPageRoutes, {
    prefix: trackingPage.prefix,
    links: trackingLinks,
    shipments,
    orders: orderStore,
    timeZone: options.timezone,
    layout: trackingPage.layout,
    frameAncestors: trackingPage.frameAncestors,
    contentSecurityPolicy: trackingPage.contentSecurityPolicy,
    shopName: trackingPage.shopName,
    customerReturns:
      options.returns.windowDays > 0
        ? {
            customerReturns: createCustomerReturns({ returns, shipments, orderStore, logger, clock: options.clock, options: options.returns }),
            returns,
            prefix: trackingPage.prefix,
            baseUrl: trackingPage.baseUrl,
            rateLimit: options.returns.customerRateLimit,
            clock: options.clock,
          }
        : undefined,
    mountedOn: { server: app, prefix: trackingPage.prefix },
  })
}

/** The store admins' pages (a quarter of the package's code), loaded here for a host that mounts them. */
async function mountAdmin(app: FastifyInstance, { data, options }: ServiceBase, services: PluginServices): Promise<void> {
  if (!options.admin) return
  const { adminRoutes } = await import('./admin/routes.js')
  await app.register(adminRoutes, {
    prefix: options.admin.prefix,
    logSerializers,
    admin: options.admin,
    shipments: services.shipments,
    integrations: services.integrations,
    webhooks: services.webhooks,
    providers: services.providers,
    orders: services.orders,
    orderExchange: services.orderExchange,
    orderExchangePrefix: options.prefixes.orderExchange,
    trackingFieldProblems: services.trackingFieldProblems,
    gatewayPrefix: options.prefixes.gateway,
    overview: createShipmentsOverview({ data, timeZone: options.timezone, clock: options.clock }),
    resolveUser: options.resolveUser,
    hasPermission: options.hasPermission,
    timeZone: options.timezone,
    shipmentFields: options.shipments.shipmentFields,
    splitRules: options.shipments.splitRules,
    notifications: services.notifications,
    trackingLinks: services.trackingLinks,
    deliveries: services.deliveries,
    boxes: services.boxes,
    rules: services.rules,
    returns: services.returns,
    manifests: services.manifests,
    clock: options.clock,
    documents: services.documents,
    packStation: services.packStation,
    system: services.system,
    outbox: services.outbox,
    batches: services.batches,
    addresses: services.addresses,
    customs: services.customs,
  })
}

// `any`: hosts register with their own user type, which `resolveUser` returns and `hasPermission` takes.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const shipmentsPlugin: FastifyPluginAsync<ShipmentsPluginOptions<any>> = async (app, rawOptions) => {
  const options = resolveOptions(rawOptions)
  // OpenTelemetry's API, when the host registered its SDK before the plugin (see telemetry.ts).
  await loadTelemetry()
  const logger = app.log.child({ plugin: 'fastify-shipments' })
  const { data, handle } = await openDatabase(options.database, options.migrate, {
    lockDirectory: options.lockDirectory,
    groupCommit: options.groupCommit,
    onLockCompromised: (lockName, error) => logger.warn({ err: error, lockName }, 'A lock was lost'),
    onCheckpointError: (error) => logger.warn({ err: error }, 'The SQLite checkpoint worker failed; checkpoints run inside commits again'),
    onPoolError: (error) => logger.error({ err: error }, 'A pooled database connection failed'),
  })
  const base: ServiceBase = { data, logger, options }
  const services = await createServices(app, base, rawOptions.documents !== undefined)
  app.decorate('shipments', decoratorOf(services, handle))
  await mountRoutes(app, base, services)
}

/** Register with `app.register(fastifyShipments, options)`. */
export const fastifyShipments = fp(shipmentsPlugin, { name: 'fastify-shipments', fastify: '5.x' })
