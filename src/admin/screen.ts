// What each admin screen's route module gets from the shared registration in routes.ts: the scope (its
// hooks already added), the page sender and page context, the permission each route asks for, and the
// form and path helpers every screen reads its input with.
import type { SystemOverviewService } from '../health/system.js'
import type { OutboxService } from '../outbox/outbox-service.js'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import type { HasPermission, ResolveUser } from '../http/access.js'
import type { ShipmentService } from '../shipments/service.js'
import type { SplitRule } from '../model/items.js'
import type { IntegrationService } from '../gateway/integrations.js'
import type { ProviderRegistry } from '../gateway/providers.js'
import type { OrderStore } from '../order-store.js'
import type { ReturnService } from '../returns/service.js'
import type { OrderExchangeService } from '../order-exchange/service.js'
import type { NotificationService } from '../notifications/service.js'
import type { TrackingLinks } from '../notifications/tracking-links.js'
import type { ShipmentFieldDefinition } from '../shipments/field-layout.js'
import type { ShipmentsOverviewQuery } from '../shipments/overview.js'
import type { DeliveryService } from '../deliveries/service.js'
import type { BoxService } from '../deliveries/boxes.js'
import type { ShippingRulesService } from '../rules/service.js'
import type { DocumentService } from '../documents/service.js'
import type { PackStationService } from '../pack-station/service.js'
import type { ManifestService } from '../manifests/service.js'
import type { WebhookService } from '../outbox/webhooks.js'
import type { LabelBatchService } from '../batches/service.js'
import type { AddressService } from '../addresses/service.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import type { SafeHtml } from '../html.js'
import type { CustomsService } from '../customs/service.js'
import type { ResolvedAdminOptions } from './options.js'
import type { PageContext } from './shipment-pages.js'


export interface AdminRoutesOptions {
  admin: ResolvedAdminOptions
  shipments: ShipmentService
  integrations: IntegrationService
  webhooks: WebhookService
  providers: ProviderRegistry
  orders: OrderStore
  orderExchange: OrderExchangeService | null
  /** Where the order exchange is mounted, for the URL to paste into ShipStation. */
  orderExchangePrefix: string
  /** Why ship notifications cannot store tracking numbers (missingTrackingFields; empty for a host order store). */
  trackingFieldProblems: readonly string[]
  /** Where the gateway is mounted, for the URL an integration page gives to paste into the sending service. */
  gatewayPrefix: string
  /** The overview page's figures. */
  overview: ShipmentsOverviewQuery
  resolveUser: ResolveUser
  hasPermission: HasPermission
  timeZone: string
  shipmentFields: ShipmentFieldDefinition[]
  /** The host's split rules by name, offered beside the built-in ones on the order page. */
  splitRules: Readonly<Record<string, SplitRule>>
  notifications: NotificationService
  /** null without the `trackingPage` option: the shipment page shows no public link. */
  trackingLinks: Pick<TrackingLinks, 'url' | 'revoke'> | null
  /** Parcels, rates and labels; the box catalogue and suggestions. */
  deliveries: DeliveryService
  boxes: BoxService
  /** The shipping rules: their screen and the shipment page's "Which rule and why". */
  rules: ShippingRulesService
  /** Returns: the list, a return's page, the order page's returns section. */
  returns: ReturnService
  /** The plugin's clock (the returns list's age filter). */
  clock: () => number
  /** Packing slips, pick lists and labels (PDF), for the shipment page's and the list's print buttons. */
  documents: DocumentService
  /** The pack station's page: slips opened, items counted, labels bought by the rules. */
  packStation: PackStationService
  /** The system page: health, failed jobs and provider calls, versions. */
  system: SystemOverviewService
  /** Failed jobs retried or dismissed from the system page. */
  outbox: Pick<OutboxService, 'retry' | 'dismiss'>
  /** The day's manifests: the labels waiting, a manifest made, its form printed. */
  manifests: ManifestService
  /** Label batches: bought from the shipment list, followed on their progress page. */
  batches: LabelBatchService
  /** Verified addresses: the shipment page's address panel and the setting's section of the Shipping rules page. */
  addresses: AddressService
  /** Customs: the settings page and the shipment page's declarations. */
  customs: CustomsService
}

/** The shared registration's part in every screen: built once per scope by adminRoutes. */
export interface AdminScreen {
  /** The admin pages' encapsulated scope: cookies, form bodies, CSRF, headers and the permission hook are in place. */
  scope: FastifyInstance
  options: AdminRoutesOptions
  prefix: string
  /** Whether the order store gives lines (the attention list needs them). */
  storeHasLines: boolean
  /** The page context (a new CSRF token): one per page. */
  context: (request: FastifyRequest, reply: FastifyReply) => PageContext
  /** Sends a page inside the host's layout (or the standalone one). */
  sendPage: (request: FastifyRequest, reply: FastifyReply, title: string, content: SafeHtml, status?: number) => Promise<FastifyReply>
  /** The notice a redirect asked for by name, or null. */
  noticeOf: (request: FastifyRequest) => string | null
  /** Order references by order id (`#id` shows for one the store no longer knows). */
  orderReferencesOf: (request: FastifyRequest, orderIds: Iterable<number>) => Promise<Map<number, string>>
}

/** The permission each admin route asks for (the route's `config`); the onRequest hook checks it. */
export const routePermissions = {
  view: { shipmentsAdminPermission: ShipmentsPermissions.viewShipments },
  edit: { shipmentsAdminPermission: ShipmentsPermissions.editShipments },
  transition: { shipmentsAdminPermission: ShipmentsPermissions.transitionShipments },
  manage: { shipmentsAdminPermission: ShipmentsPermissions.manageIntegrations },
  buyLabels: { shipmentsAdminPermission: ShipmentsPermissions.buyLabels },
}
export const hide = { hide: true }

const FormBody = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))
export const formSchema = { hide: true, body: FormBody }
export type Form = Record<string, string | string[]>
export const text = (value: unknown) => (typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '')

/** A path id that is not a positive integer names nothing: a 404. */
export function positiveId(raw: string, notFound: () => Error): number {
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(id)) throw notFound()
  return id
}

export const AdminNotFound = (what: string) => Object.assign(new Error(`${what} not found.`), { statusCode: 404, code: 'SHIPMENTS_ADMIN_NOT_FOUND' })
export const AdminBadRequest = (message: string) => Object.assign(new Error(message), { statusCode: 400, code: 'SHIPMENTS_ADMIN_BAD_REQUEST' })

export const shipmentId = (raw: string) => positiveId(raw, () => new ShipmentsErrors.ShipmentNotFound(raw))

/** A refusal the admin can act on (the carrier's own words included), or null for an error to rethrow. */
export const refusalOf = (error: unknown): string | null => {
  if (error instanceof ShipmentUpdateRejectedError) return error.message
  if (error instanceof ShipmentValidationError) return Object.entries(error.errors).map(([name, messages]) => `${name}: ${messages.join(' ')}`).join('; ')
  const status = (error as { statusCode?: unknown })?.statusCode
  return typeof status === 'number' && status >= 400 && status < 500 && status !== 404 ? (error as Error).message : status === 503 ? (error as Error).message : null
}
export const adminUserId = (request: FastifyRequest) => String(request.shipmentsAdmin!.user.id)

/** How many of a subscription's (or a notification's) deliveries its page lists, newest first. */
export const RECENT_DELIVERIES = 50
