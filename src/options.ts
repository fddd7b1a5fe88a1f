// The plugin's options, composed: each feature owns its options (type, schema, defaults, checks) in its
// own `options.ts`; this module assembles them into `ShipmentsPluginOptions`, keeps the few every part
// shares (the database, the site's timezone and clock, locks, prefixes, the host's user hooks), and
// resolves them all at registration, failing with an error naming the first bad option.
import { Type, type Static } from '@sinclair/typebox'
import { typeBoxValue } from './lazy.js'
import { ShipmentsErrors } from './errors.js'
import { isValidTimeZone } from './time.js'
import { engineOf, type ShipmentsDatabase } from './db/open.js'
import type { HasPermission, ResolveUser, ShipmentsUser } from './http/access.js'
import { prefixesWithDefaults, type DEFAULT_PREFIXES, type ShipmentsPrefixes } from './prefixes.js'
import { checkOrderStore, OrderOptionsSchema, resolveOrderOptions, type OrderOptions, type ResolvedOrderOptions } from './orders/options.js'
import { resolveShipmentOptions, ShipmentOptionsSchema, takeShipmentHooks, type ResolvedShipmentOptions, type ShipmentOptions } from './shipments/options.js'
import { OutboxOptionsSchema, type OutboxOptions, type ResolvedOutboxOptions } from './outbox/options.js'
import { HealthOptionsSchema, type HealthOptions, type ResolvedHealthOptions } from './health/options.js'
import { GatewayOptionsSchema, resolveGatewayOptions, takeProviders, type GatewayOptions, type ResolvedGatewayOptions } from './gateway/options.js'
import type { NotificationsOptions } from './notifications/service.js'
import { resolveNotificationsOptions, resolveTrackingPageOptions, type ResolvedTrackingPageOptions, type TrackingPageOptions } from './notifications/options.js'
import type { OrderExchangeOptions, OrderExchangeSettings } from './order-exchange/settings.js'
import { resolveOrderExchangeOptions } from './order-exchange/options.js'
import { DeliveriesOptionsSchema, resolveDeliveriesOptions, takePacker, type DeliveriesOptions, type ResolvedDeliveriesOptions } from './deliveries/options.js'
import { resolveReturnsOptions, ReturnsOptionsSchema, takeCustomerMayReturn, type ResolvedReturnsOptions, type ReturnsOptions } from './returns/options.js'
import { resolveDocumentsOptions, type DocumentsOptions, type ResolvedDocumentsOptions } from './documents/options.js'
import { resolveAdminOptions, type AdminOptions, type ResolvedAdminOptions } from './admin/options.js'
import { BatchesOptionsSchema, type BatchesOptions, type ResolvedBatchesOptions } from './batches/options.js'
import { AddressesOptionsSchema, type AddressesOptions, type ResolvedAddressesOptions } from './addresses/options.js'
import { CustomsOptionsSchema, type CustomsOptions, type ResolvedCustomsOptions } from './customs/options.js'

const PrefixSchema = Type.String({ pattern: '^(/[^/?#]+)*$' })

/** Schema of the plain-data options every part shares; functions and the database are checked beside it. */
const SharedOptionsSchema = Type.Object({
  migrate: Type.Boolean({ default: true }),
  prefixes: Type.Object(
    {
      shipmentApi: Type.Optional(PrefixSchema),
      gateway: Type.Optional(PrefixSchema),
      orderExchange: Type.Optional(PrefixSchema),
    },
    { additionalProperties: false, default: {} },
  ),
  timezone: Type.String({ default: 'UTC' }),
  lockTimeoutMs: Type.Integer({ minimum: 1, default: 10_000 }),
  groupCommit: Type.Boolean({ default: false }),
  lockDirectory: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
  openapi: Type.Optional(Type.Object({ path: Type.String({ pattern: '^(/[^/?#]+)+$' }) }, { additionalProperties: false })),
})

/** Every plain-data option: the shared ones and each feature's, checked in one pass. */
const DataOptionsSchema = Type.Object({
  ...SharedOptionsSchema.properties,
  ...ShipmentOptionsSchema.properties,
  ...OrderOptionsSchema.properties,
  ...GatewayOptionsSchema.properties,
  ...OutboxOptionsSchema.properties,
  ...DeliveriesOptionsSchema.properties,
  ...ReturnsOptionsSchema.properties,
  ...HealthOptionsSchema.properties,
  ...BatchesOptionsSchema.properties,
  ...AddressesOptionsSchema.properties,
  ...CustomsOptionsSchema.properties,
})

export interface ShipmentsPluginOptions<User extends ShipmentsUser = ShipmentsUser> extends ShipmentOptions, OrderOptions, GatewayOptions, OutboxOptions, HealthOptions, BatchesOptions, AddressesOptions, CustomsOptions {
  /**
   * A SQLite file name or a PostgreSQL connection string (`postgres://...`), which the package opens and
   * closes; or the host's Drizzle database over better-sqlite3 or a node-postgres Pool, left open.
   */
  database: ShipmentsDatabase | string
  /** Apply the package's migrations at registration. Default true. */
  migrate?: boolean | undefined
  /** Returns the logged-in user of a request, or null. Default: nobody is logged in. */
  resolveUser?: ResolveUser<User> | undefined
  /** Answers whether `user` holds `permission`. Default: deny. */
  hasPermission?: HasPermission<User> | undefined
  /** Where the surfaces are mounted. */
  prefixes?: ShipmentsPrefixes | undefined
  /** IANA timezone of the site. Default 'UTC'. */
  timezone?: string | undefined
  /** How long a transition waits for the shipment's mutex before giving up. Default 10000. */
  lockTimeoutMs?: number | undefined
  /**
   * PostgreSQL: changes that arrive while the instance's previous group commits share one transaction
   * and one commit, each rolled back alone if it fails (docs/engines.md, "Group commit"). Default false:
   * every change has a transaction of its own, which measured faster on the bench's machine (the
   * server already flushes concurrent commits together). SQLite always groups its commits.
   */
  groupCommit?: boolean | undefined
  /**
   * SQLite only: directory of the cross-process lock files (the migration lock, and one per shipment
   * being pushed to an integration; transitions need none, SQLite's write lock serializes them across
   * processes). Default: `<database file>-locks` beside the SQLite file. null keeps those locks inside
   * this process (only for a single process per database file). PostgreSQL locks in the database and
   * ignores it.
   */
  lockDirectory?: string | null | undefined
  /**
   * The time, in milliseconds since the epoch, for what depends on "now": relative dates (`now`,
   * `today`, `tomorrow`, `yesterday`), the times an update writes (`dateUpdated`, `dateShipped`, the
   * history row's date), and a provider's `context.now()` (the signed-webhook tolerance). Default
   * `Date.now`; a host or a test with its own clock sets it. Lock waits always use the real time.
   */
  clock?: (() => number) | undefined
  /** Serve the OpenAPI 3.1 document of the package's routes at `path` (a GET). Default: not served. */
  openapi?: { path: string } | undefined
  /**
   * Parcels, rates and labels: `shipFrom` (where parcels ship from; rates and labels need it) and
   * `quoteLifetimeMs` (how long a rate quote may be bought, default 15 minutes), `packingTimeoutMs` (how long
   * one "suggest parcels" may pack, default 10 s, then a 422) and `packer` (replaces binpackingjs).
   */
  deliveries?: DeliveriesOptions | undefined
  /**
   * Returns: `reasons`, the codes a return line may give (default damaged, defective, wrong_item,
   * not_as_described, no_longer_needed, other).
   */
  returns?: ReturnsOptions | undefined
  /**
   * Customer notifications: `sendMail(message)` sends one rendered message (nodemailer, an API...).
   * Without it definitions can be kept, but nothing is queued or sent.
   */
  notifications?: NotificationsOptions | undefined
  /**
   * The public tracking page: `secret` (at least 32 characters, or an environment reference such as
   * "$TRACKING_SECRET") signs the links, `baseUrl` (the site's origin) makes them absolute for mails,
   * `prefix` (default `/shipments/track`) mounts the page, `layout(page)` wraps it in the host's chrome
   * (default: a standalone page). Not mounted when absent.
   */
  trackingPage?: TrackingPageOptions | undefined
  /** ShipStation's Custom Store endpoint (interface B); not mounted when absent. */
  orderExchange?: OrderExchangeOptions | undefined
  /**
   * The store admins' pages (shipments, an order's shipments, integrations, ShipStation), mounted
   * under `admin.prefix`; not mounted when absent.
   */
  admin?: AdminOptions<User> | undefined
  /** Packing slips, pick lists and merged labels (PDF): the shop, what the slip shows, fonts, limits, hooks. See docs/documents.md. */
  documents?: DocumentsOptions | undefined
}

/** The options resolved: what every part shares at the top, then each feature's own, for it alone. */
export interface ResolvedOptions {
  database: ShipmentsDatabase | string
  migrate: boolean
  lockDirectory: string | null | undefined
  prefixes: typeof DEFAULT_PREFIXES
  openapi: { path: string } | undefined
  timezone: string
  lockTimeoutMs: number
  groupCommit: boolean
  clock: () => number
  resolveUser: ResolveUser
  hasPermission: HasPermission
  shipments: ResolvedShipmentOptions
  orders: ResolvedOrderOptions
  outbox: ResolvedOutboxOptions['outbox']
  webhooks: ResolvedOutboxOptions['webhooks']
  gateway: ResolvedGatewayOptions
  notifications: NotificationsOptions | null
  trackingPage: ResolvedTrackingPageOptions | null
  orderExchange: OrderExchangeSettings | null
  deliveries: ResolvedDeliveriesOptions
  returns: ResolvedReturnsOptions
  documents: ResolvedDocumentsOptions
  admin: ResolvedAdminOptions | null
  health: ResolvedHealthOptions
  batches: ResolvedBatchesOptions
  addresses: ResolvedAddressesOptions
  customs: ResolvedCustomsOptions
}

function fail(option: string, reason: string): never {
  throw new ShipmentsErrors.InvalidOption(option, reason)
}

/** The plain data with its defaults, or a failure naming the first unknown key or the first value the schema refuses. */
function checkedData(data: Record<string, unknown>): Static<typeof DataOptionsSchema> {
  const unknownKey = Object.keys(data).find((key) => !Object.hasOwn(DataOptionsSchema.properties, key))
  if (unknownKey) fail(unknownKey, 'is not an option of this plugin')
  const withDefaults = typeBoxValue().Value.Default(DataOptionsSchema, structuredClone(data)) as Record<string, unknown>
  const firstError = typeBoxValue().Value.Errors(DataOptionsSchema, withDefaults).First()
  if (firstError) {
    const path = firstError.path.replace(/^\//, '').replaceAll('/', '.')
    fail(path, firstError.message)
  }
  return withDefaults as Static<typeof DataOptionsSchema>
}

/**
 * Validates the options and fills in defaults; throws an error naming the first bad option. The
 * function-bearing options are checked first, then the plain data in one pass, then what depends on
 * several options at once.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function resolveOptions(raw: ShipmentsPluginOptions<any> | undefined): ResolvedOptions {
  const options = (raw ?? {}) as unknown as Record<string, unknown>
  const { database, resolveUser, hasPermission, orderStore, providers, orderExchange, admin, clock = Date.now, splitRules, carriers, notifications, trackingPage, documents, ...data } = options
  // Fastify passes its own keys (prefix, logLevel...) along with the plugin's options.
  for (const key of ['prefix', 'logLevel', 'logSerializers']) delete data[key]

  const packer = takePacker(data, fail)
  const customerMayReturn = takeCustomerMayReturn(data, fail)
  const engine = engineOf(database)
  if ('problem' in engine) fail('database', engine.problem)
  if (resolveUser !== undefined && typeof resolveUser !== 'function') fail('resolveUser', 'must be a function')
  if (hasPermission !== undefined && typeof hasPermission !== 'function') fail('hasPermission', 'must be a function')
  if (typeof clock !== 'function') fail('clock', 'must be a function returning milliseconds since the epoch')
  checkOrderStore(orderStore, fail)
  const notificationOptions = resolveNotificationsOptions(notifications, fail)
  const trackingPageOptions = resolveTrackingPageOptions(trackingPage, fail)
  const shipmentHooks = takeShipmentHooks(carriers, splitRules, fail)
  const hostProviders = takeProviders(providers, fail)
  const orderExchangeSettings = resolveOrderExchangeOptions(orderExchange, orderStore, fail)
  const adminOptions = admin === undefined ? null : resolveAdminOptions(admin, fail)

  const checked = checkedData(data)
  if (!isValidTimeZone(checked.timezone)) fail('timezone', `"${checked.timezone}" is not an IANA timezone`)
  const shipments = resolveShipmentOptions(shipmentHooks, checked, fail)
  const orders = resolveOrderOptions(orderStore, checked, fail)
  const returns = resolveReturnsOptions(customerMayReturn, checked, trackingPageOptions !== null, fail)
  const deliveries = resolveDeliveriesOptions(packer, checked)

  return {
    database: database as ShipmentsDatabase | string,
    migrate: checked.migrate,
    lockDirectory: checked.lockDirectory,
    prefixes: prefixesWithDefaults(checked.prefixes),
    openapi: checked.openapi,
    timezone: checked.timezone,
    lockTimeoutMs: checked.lockTimeoutMs,
    groupCommit: checked.groupCommit,
    clock: clock as () => number,
    resolveUser: (resolveUser as ResolveUser | undefined) ?? (() => null),
    hasPermission: (hasPermission as HasPermission | undefined) ?? (() => false),
    shipments,
    orders,
    outbox: checked.outbox,
    webhooks: checked.webhooks,
    gateway: resolveGatewayOptions(hostProviders, checked),
    notifications: notificationOptions,
    trackingPage: trackingPageOptions,
    orderExchange: orderExchangeSettings,
    deliveries,
    returns,
    documents: resolveDocumentsOptions(documents, deliveries.shipFrom, fail),
    admin: adminOptions,
    health: checked.health,
    batches: checked.batches,
    addresses: checked.addresses,
    customs: checked.customs,
  }
}
