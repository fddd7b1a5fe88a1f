// What `app.shipments` holds (the decorator hosts see), what the plugin makes besides for its routes, and
// the one from the other. Beneath the plugin, which makes the services and mounts the routes.
import type { DatabaseHandle } from './db/open.js'
import type { ShipmentsEvents } from './model/events.js'
import type { OrderStore } from './order-store.js'
import type { ReferenceOrders } from './orders/reference-orders.js'
import type { ShipmentService } from './shipments/service.js'
import type { IntegrationService } from './gateway/integrations.js'
import type { ProviderRegistry } from './gateway/providers.js'
import type { OrderExchangeService } from './order-exchange/service.js'
import type { OutboxService } from './outbox/outbox-service.js'
import type { WebhookService } from './outbox/webhooks.js'
import type { PushService } from './gateway/push.js'
import type { NotificationService } from './notifications/service.js'
import type { TrackingLinks } from './notifications/tracking-links.js'
import type { DeliveryService } from './deliveries/service.js'
import type { BoxService } from './deliveries/boxes.js'
import type { ShippingRulesService } from './rules/service.js'
import type { ReturnService } from './returns/service.js'
import type { DocumentService } from './documents/service.js'
import type { HealthService } from './health/service.js'
import type { SystemOverviewService } from './health/system.js'
import type { PackStationService } from './pack-station/service.js'
import type { ManifestService } from './manifests/service.js'
import type { AddressService } from './addresses/service.js'
import type { CustomsService } from './customs/service.js'
import type { LabelBatchService } from './batches/service.js'

/** What `app.shipments` holds. */
export interface ShipmentsDecorator {
  /** Create, read, update, soft-delete and restore shipments; every change goes through `update`. */
  shipments: ShipmentService
  /** The order store in use: the host's, or the reference store. */
  orders: OrderStore
  /**
   * Typed creation and change of the reference store's orders and order statuses; null when the host
   * brings its own `orderStore`.
   */
  referenceOrders: ReferenceOrders | null
  /** Typed events, written to the outbox with their change and delivered after the commit, at least once. */
  events: ShipmentsEvents
  /** The outbox: events and follow-up jobs in commit order, for replays and audits; retry a failed job. */
  outbox: OutboxService
  /** Outbound webhook subscriptions: create, change, list, their deliveries and attempts, redeliver. */
  webhooks: WebhookService
  /** Push a shipment to an integration, or cancel it there, now (automatic pushes follow `pushOn`). */
  pushes: { push: PushService['push']; cancel: PushService['cancel'] }
  /**
   * The database the package works on: its engine ('sqlite' or 'postgres'), the Drizzle database, and
   * the package's Drizzle tables for that engine (`schema`). Narrow on `engine` to query the tables.
   */
  database: DatabaseHandle
  /** Integrations stored in the database: create, update, list, external references. */
  integrations: IntegrationService
  /** Customer notifications: definitions (list, create, update, remove), test sends, deliveries. */
  notifications: NotificationService
  /** Public tracking links (`url`, `revoke`, a return's page `returnUrl`); null when the `trackingPage` option is absent. */
  trackingLinks: Pick<TrackingLinks, 'url' | 'revoke' | 'returnUrl'> | null
  /** Providers by id; `register` adds one (duplicate ids are refused). */
  providers: ProviderRegistry
  /** ShipStation's export page and ship notification, or null when `orderExchange` is not configured. */
  orderExchange: OrderExchangeService | null
  /** Parcels, rate quotes, labels bought exactly once, label documents and voids (see docs/deliveries.md). */
  deliveries: DeliveryService
  /** The box catalogue and "suggest parcels" (the packer: the `deliveries.packer` option, binpackingjs by default). */
  boxes: BoxService
  /**
   * Shipping rules (see docs/shipping-rules.md): `current` (the ordered rules and the default), `replace`
   * (the whole list, checked first), `explain` (the dry run: which rule and why, rated on request) and
   * `decide` (what a parcel would be bought with), beside `saved` and `parcelFacts`.
   */
  rules: ShippingRulesService
  /** Returns (RMAs): request against what shipped, the update path, return labels, receiving (see docs/returns.md). */
  returns: ReturnService
  /** Packing slips, pick lists and labels merged with slips, as PDF bytes (see docs/documents.md). */
  documents: DocumentService
  /**
   * The health report: ready or not with reasons (the database, its migrations), and what an operator
   * watches (the outbox's lag and dead letters, who holds claims, ShipStation's last fetch). See docs/operations.md.
   */
  health: HealthService['health']
  /**
   * The pack station: `open(code)` a scanned packing slip, `scan(shipmentId, code, counted)` an item
   * against the shipment, `finish(shipmentId, { counted, weight })` stores the parcel and buys its label
   * by the shipping rules, once (see docs/pack-station.md).
   */
  packStation: PackStationService
  /**
   * The day's manifest (USPS's SCAN form through EasyPost): the labels waiting for one by carrier and
   * ship-from, a manifest made, listed, read, and its form to print (see docs/manifests.md).
   */
  manifests: ManifestService
  /**
   * Label batches: labels for every parcel of many shipments, bought by the shipping rules as a durable
   * job any instance finishes (create, get with its items, list, retry the failed, cancel; see docs/batches.md).
   */
  batches: LabelBatchService
  /**
   * Verified addresses: a shipment's ship-to check (`check`, `verify`, `accept`, `asIs`) and the setting
   * (`setting`, `saveSetting`: off, warn or block; see docs/shipping-abroad.md#verified-addresses).
   */
  addresses: AddressService
  /**
   * Customs (see docs/shipping-abroad.md): the shop's `settings` (`replaceSettings`, whole, checked first)
   * and an international parcel's declaration: `parcelCustoms` (built when none is stored, with its totals
   * and problems), `saveDeclaration` (an edit, whole), `resetDeclaration` (back to the built one).
   */
  customs: CustomsService
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The shipments package's services. */
    shipments: ShipmentsDecorator
  }
}

/** What the plugin makes at registration: the decorator's services and what only the routes need besides. */
export interface PluginServices extends Omit<ShipmentsDecorator, 'database' | 'pushes' | 'trackingLinks'> {
  pushes: PushService
  trackingLinks: TrackingLinks | null
  /** The order exchange's routes, loaded with its service; null when `orderExchange` is not configured. */
  orderExchangeRoutes: OrderExchangeRoutes | null
  /** What the reference store lacks for the exchange's tracking fields, shown on the admin's ShipStation page. */
  trackingFieldProblems: string[]
  /** The admin's system page: health, failed jobs and provider calls, versions. */
  system: SystemOverviewService
}

export type OrderExchangeRoutes = typeof import('./order-exchange/routes.js')['orderExchangeRoutes']

/** What `app.shipments` shows of the services. */
export function decoratorOf(services: PluginServices, database: DatabaseHandle): ShipmentsDecorator {
  const { pushes, trackingLinks } = services
  return {
    shipments: services.shipments,
    orders: services.orders,
    referenceOrders: services.referenceOrders,
    events: services.events,
    outbox: services.outbox,
    webhooks: services.webhooks,
    pushes: { push: pushes.push, cancel: pushes.cancel },
    database,
    integrations: services.integrations,
    providers: services.providers,
    orderExchange: services.orderExchange,
    deliveries: services.deliveries,
    boxes: services.boxes,
    rules: services.rules,
    returns: services.returns,
    documents: services.documents,
    health: services.health,
    packStation: services.packStation,
    manifests: services.manifests,
    batches: services.batches,
    addresses: services.addresses,
    customs: services.customs,
    notifications: services.notifications,
    trackingLinks: trackingLinks && { url: trackingLinks.url, revoke: trackingLinks.revoke, returnUrl: trackingLinks.returnUrl },
  }
}
