// The demo host started by `npm start`: a Fastify app with cookie sessions and the shipments plugin.
import { createHash, randomBytes } from 'node:crypto'
import type { ServerOptions } from 'node:http'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import cookie from '@fastify/cookie'
import rateLimit from '@fastify/rate-limit'
import formbody from '@fastify/formbody'
import { ADMIN_CSRF_COOKIE, fastifyShipments, ShipmentsPermissions, standaloneTrackingLayout, trackingPageFrameworkErrors, type ShipmentsUser } from '../src/index.js'
import { DEMO_ORDER_FIELDS, seedDemoData } from './seed.js'
import { acmeThreePlProvider } from './custom-provider.js'
import { ensureDemoIntegrations } from './demo-integrations.js'
import { createMailCapture, DEMO_MAIL_PAGE_POLICY, ensureDemoNotification, mailPageBody, type MailCapture } from './demo-mail.js'

interface DemoUser extends ShipmentsUser {
  id: number
  username: string
  permissions: readonly string[]
}

// DEMO ONLY: fixed users whose password equals their username. Never run this host in production.
const ALL = Object.values(ShipmentsPermissions)
const DEMO_USERS: readonly DemoUser[] = [
  { id: 1, username: 'admin', permissions: ALL },
  { id: 2, username: 'editor', permissions: [ShipmentsPermissions.viewShipments, ShipmentsPermissions.editShipments] },
  { id: 3, username: 'viewer', permissions: [ShipmentsPermissions.viewShipments] },
]
const SESSION_COOKIE = 'demo_session'
/** Sessions end after this long (8 hours), or at logout, whatever the cookie says. */
export const DEMO_SESSION_TTL_MS = 8 * 60 * 60 * 1000
/** Login attempts allowed per client address and username per minute. */
export const DEMO_LOGIN_ATTEMPTS_PER_MINUTE = 10
/** Login attempts allowed per username per minute, from all addresses together (guesses spread over many). */
export const DEMO_LOGIN_ATTEMPTS_PER_USERNAME_PER_MINUTE = 30
/** Where the admin pages are mounted (the CSRF cookie's path, cleared at logout). */
const ADMIN_PREFIX = '/shipments/admin'
/** The demo's own pages (login, home) are never framed: no clickjacking of the login form. */
const DEMO_PAGE_FRAME_HEADERS = { 'x-frame-options': 'DENY', 'content-security-policy': "frame-ancestors 'none'" }

/**
 * Fastify's `trustProxy` from DEMO_TRUST_PROXY: `true` or a number trusts that many proxies in front
 * (`true`: one), anything else is a comma-separated list of the proxies' addresses or CIDR ranges.
 * Never Fastify's `true` (every hop), whose client address is the first X-Forwarded-For entry: text the
 * client wrote itself, which would let it take a new address, and a new login allowance, per request.
 */
export function demoTrustProxy(value: string | undefined): ((address: string, hop: number) => boolean) | string | false {
  if (value === undefined || value === '' || value === 'false') return false
  const hops = value === 'true' ? 1 : /^\d+$/.test(value) ? Number(value) : null
  // Hop 0 is the peer of the socket, hop 1 the address it forwarded, and so on: trust the first `hops`.
  return hops === null ? value : (_address, hop) => hop < hops
}
/** DEMO ONLY: ShipStation credentials used when SHIPSTATION_USERNAME / SHIPSTATION_PASSWORD are not set. */
export const DEMO_SHIPSTATION_USERNAME = 'shipstation'
export const DEMO_SHIPSTATION_PASSWORD = 'demo-shipstation-password-change-me'
/** DEMO ONLY: the tracking links' signing key when DEMO_TRACKING_SECRET is not set. */
export const DEMO_TRACKING_SECRET = 'demo-tracking-page-secret-change-me-0123456789'

/**
 * The server options docs/getting-started.md recommends to hosts: a request arrives whole, headers and body, within
 * 10 seconds, or the client gets a 408 and its connection (and the body buffered so far, up to
 * `bodyLimit`) is let go. Fastify's default is no deadline at all; Node checks its deadlines every
 * `connectionsCheckingInterval` (30 s by default), here every second, so the 408 comes within 11 s.
 * A deadline runs until the request has arrived, never while a handler works on it.
 */
export const DEMO_SERVER_OPTIONS = {
  requestTimeout: 10_000,
  bodyLimit: 1_048_576,
  http: { headersTimeout: 10_000, connectionsCheckingInterval: 1_000 } satisfies ServerOptions,
}

export interface DemoHostOptions {
  /** A SQLite file name or a postgres:// connection string. */
  database: string
  cookieSecret?: string
  logger?: FastifyServerOptions['logger']
  /** The clock of session expiry (milliseconds since the epoch). Default Date.now. */
  clock?: () => number
  /**
   * The site's origin for the tracking links in mails. Default DEMO_BASE_URL, else
   * http://127.0.0.1:3000 (`npm start` passes its listen address).
   */
  baseUrl?: string
  /** Where sent mail goes. Default a new capture of the newest 50 messages. */
  mailbox?: MailCapture
  /** DEMO_TRUST_PROXY's value (see demoTrustProxy). Default the environment variable. */
  trustProxy?: string
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`)

/** Where a login returns to when it names no usable place. */
const DEFAULT_RETURN_TO = '/shipments/admin/shipments'
/**
 * Not in a place to return to: a backslash (browsers read `/\` as `//`), whitespace and control
 * characters (browsers drop some, so `/<tab>/x` would become `//x`; NUL and DEL fail a header), and
 * unpaired surrogates (no encoding holds one).
 */
// eslint-disable-next-line no-control-regex
const NOT_IN_RETURN_PATH = /[\\\s\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * Where a login returns to: a path on this site only (`/` and then anything but `/`, so never a scheme
 * or `//other.example`). Characters beyond ASCII are percent-encoded, as a browser sends them: a
 * Location header holds Latin-1 at most, and anything else would fail the answer after the login.
 */
function localPath(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || NOT_IN_RETURN_PATH.test(value)) return DEFAULT_RETURN_TO
  return value.replace(/[^\u0000-\u007f]+/g, (characters) => encodeURIComponent(characters))
}

function demoPage(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/shipments/admin/assets/admin.css"></head>
<body class="shipments-admin shipments-admin-standalone"><main>${body}</main></body></html>
`
}

/** DEMO ONLY: the login form. The users and their passwords are on the page. */
function loginPage(returnTo: string, error: string | null): string {
  return demoPage(
    'Log in: fastify-shipments demo',
    `<h1>Log in</h1>
${error ? `<div class="notice notice-error" role="alert">${escapeHtml(error)}</div>` : ''}
<form method="post" action="/login">
<input type="hidden" name="returnTo" value="${escapeHtml(returnTo)}">
<div class="field"><label for="username">Username</label><input type="text" id="username" name="username" autocomplete="username" required></div>
<div class="field"><label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required></div>
<button type="submit" class="primary">Log in</button>
</form>
<p class="hint">DEMO ONLY: users admin, editor and viewer; each password equals the username.</p>`,
  )
}

function homePage(username: string | null): string {
  return demoPage(
    'fastify-shipments demo',
    `<h1>fastify-shipments demo</h1>
<p>${username ? `Logged in as <strong>${escapeHtml(username)}</strong>.` : '<a href="/login">Log in</a> to open the admin pages.'}</p>
<h2>Store admin pages</h2>
<ul>
<li><a href="/shipments/admin/overview">Overview</a></li>
<li><a href="/shipments/admin/shipments">Shipments</a></li>
<li><a href="/shipments/admin/orders/1">Order 1001: its shipments</a></li>
<li><a href="/shipments/admin/integrations">Integrations</a></li>
<li><a href="/shipments/admin/webhooks">Webhooks</a></li>
<li><a href="/shipments/admin/notifications">Notifications</a></li>
<li><a href="/shipments/admin/shipstation">ShipStation</a></li>
</ul>
<h2>Demo extras</h2>
<ul>
<li><a href="/demo/mail">Sent mail</a>: the customer notifications the demo "sent" (captured, never delivered)</li>
</ul>`,
  )
}

export async function buildDemoHost(options: DemoHostOptions) {
  const clock = options.clock ?? Date.now
  // trustProxy: behind a TLS-terminating proxy, request.protocol is the client's (for Secure cookies),
  // and request.ip the address the proxy saw (for the login throttle).
  const trustProxy = demoTrustProxy(options.trustProxy ?? process.env.DEMO_TRUST_PROXY)
  // A tracking link with broken percent-encoding is refused by the router before the page's routes run:
  // only this server option turns it into the page's own not-found page.
  const app = Fastify({ ...DEMO_SERVER_OPTIONS, logger: options.logger ?? true, trustProxy, frameworkErrors: trackingPageFrameworkErrors() })
  await app.register(cookie, { secret: options.cookieSecret ?? process.env.DEMO_COOKIE_SECRET ?? 'demo-cookie-secret-change-me' })
  // Login throttling, the way a host should: per client address and username, and per username from
  // all addresses together, on the login route only (the route's preHandler asks both counts).
  await app.register(rateLimit, { global: false })

  // Server-side sessions: the cookie carries a random id, so logout and expiry end a session even for
  // someone who kept a copy of the cookie.
  const session = demoSessions(clock)

  // DEMO ONLY: ShipStation's Custom Store credentials, from the environment with demo defaults.
  process.env.SHIPSTATION_USERNAME ??= DEMO_SHIPSTATION_USERNAME
  process.env.SHIPSTATION_PASSWORD ??= DEMO_SHIPSTATION_PASSWORD
  // DEMO ONLY: the tracking links' key, from the environment with a demo default.
  process.env.DEMO_TRACKING_SECRET ??= DEMO_TRACKING_SECRET
  const mailbox = options.mailbox ?? createMailCapture()

  await registerDemoShipments(app, options, session, mailbox)
  await registerLoginRoutes(app, session, clock)
  registerDemoPages(app, session, mailbox)

  await app.ready()
  await seedDemoData(app)
  await ensureDemoIntegrations(app)
  await ensureDemoNotification(app)
  return app
}

/** The demo's server-side sessions: the cookie carries a random id, kept here with its user and expiry. */
function demoSessions(clock: () => number) {
  const sessions = new Map<string, { username: string; expiresAt: number }>()
  const sessionOf = (request: FastifyRequest) => {
    const raw = request.cookies[SESSION_COOKIE]
    const unsigned = raw ? request.unsignCookie(raw) : null
    return unsigned?.valid && unsigned.value ? unsigned.value : null
  }
  const sessionFingerprint = (id: string | null) => (id ? createHash('sha256').update(id).digest('base64url') : null)
  const resolveUser = (request: FastifyRequest): DemoUser | null => {
    const id = sessionOf(request)
    const session = id ? sessions.get(id) : undefined
    if (!id || !session) return null
    if (session.expiresAt <= clock()) {
      sessions.delete(id)
      return null
    }
    return DEMO_USERS.find((user) => user.username === session.username) ?? null
  }
  const cookieOptions = (request: FastifyRequest) => ({
    signed: true,
    httpOnly: true,
    // Strict: no cross-site request carries the session, so no other site can act as the admin (CSRF).
    sameSite: 'strict' as const,
    secure: request.protocol === 'https',
    path: '/',
  })
  return { sessions, sessionOf, sessionFingerprint, resolveUser, cookieOptions }
}

type DemoSessions = ReturnType<typeof demoSessions>

/** The shipments plugin as the demo configures it: ShipStation, custom fields, the admin pages, mail to the capture. */
async function registerDemoShipments(app: FastifyInstance, options: DemoHostOptions, session: DemoSessions, mailbox: MailCapture) {
  const { sessionOf, sessionFingerprint, resolveUser } = session

  await app.register(fastifyShipments, {
    database: options.database,
    timezone: process.env.SITE_TIMEZONE ?? 'UTC',
    orderFields: DEMO_ORDER_FIELDS,
    orderExchange: {
      username: '$SHIPSTATION_USERNAME',
      password: '$SHIPSTATION_PASSWORD',
      pageSize: process.env.SHIPSTATION_PAGE_SIZE ?? 25,
      storeField: 'store',
      shippedStatus: 'shipped',
      trackingField: { matrix: 'shippingInfo', carrier: 'carrier', service: 'service', trackingNumber: 'trackingNumber' },
      acceptQueryCredentials: true,
      updateShipments: true,
    },
    shipmentFields: [
      { handle: 'packageCount', type: 'number' },
      { handle: 'giftWrapped', type: 'boolean' },
      { handle: 'warehouse', type: 'text', maxLength: 64 },
    ],
    providers: [acmeThreePlProvider],
    // Parcels ship from a US warehouse: orders 1003 (Germany) and 1004 (Japan) cross a border, and their
    // parcels get customs declarations signed by the shop's shipping desk.
    deliveries: { shipFrom: { name: 'Demo Shop Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' } },
    customs: { signer: 'Demo Shop Shipping' },
    // The store admins' pages under /shipments/admin; without a session they send users to /login.
    // The history names users by their login ("by admin"), not by the id it records.
    // csrfSession: a form's token dies with the session it was made in (a hash: the id itself stays here).
    admin: { prefix: ADMIN_PREFIX, loginUrl: '/login', csrfSession: (request) => sessionFingerprint(sessionOf(request)), userName: (userId) => DEMO_USERS.find((user) => String(user.id) === userId)?.username ?? null },
    // Customer notifications go to the capture (the /demo/mail page), never to a real mailbox.
    notifications: { sendMail: mailbox.sendMail },
    // Customers start returns from the tracking page for 30 days after delivery; the shop authorises them.
    returns: { windowDays: 30 },
    trackingPage: {
      secret: '$DEMO_TRACKING_SECRET',
      baseUrl: options.baseUrl ?? process.env.DEMO_BASE_URL ?? 'http://127.0.0.1:3000',
      // The host's layout hook: the shop's own header around the package's page.
      layout: (page) => standaloneTrackingLayout({ ...page, body: `<header class="demo-shop"><strong>Demo shop</strong>: where is my parcel?</header>${page.body}` }),
    },
    resolveUser,
    hasPermission: (user: DemoUser, permission: string) => user.permissions.includes(permission),
  })
}

/** DEMO ONLY: the login route (throttled per address and per username) and the login page. */
async function registerLoginRoutes(app: FastifyInstance, session: DemoSessions, clock: () => number) {
  const { sessions, cookieOptions } = session

  const LoginBody = {
    type: 'object',
    properties: { username: { type: 'string', maxLength: 64 }, password: { type: 'string', maxLength: 256 } },
    required: ['username', 'password'],
  } as const
  // The login route takes JSON (API clients) and the login page's form, in a scope of its own so the
  // form parser reaches no other route (the package's API keeps answering 415 to forms).
  const usernameOf = (request: FastifyRequest) => String((request.body as { username?: unknown } | undefined)?.username ?? '')
  // Two counts, the address's first: an attempt it refuses does not count against the username, so
  // one address cannot lock a user out for everyone (it takes three, each at its own limit).
  const loginLimits = [
    app.createRateLimit({ max: DEMO_LOGIN_ATTEMPTS_PER_MINUTE, timeWindow: 60_000, keyGenerator: (request) => `address|${request.ip}|${usernameOf(request)}` }),
    app.createRateLimit({ max: DEMO_LOGIN_ATTEMPTS_PER_USERNAME_PER_MINUTE, timeWindow: 60_000, keyGenerator: (request) => `username|${usernameOf(request)}` }),
  ]
  await app.register(async (login) => {
    await login.register(formbody, { bodyLimit: 4096 })
    login.post<{ Body: { username: string; password: string } }>(
      '/login',
      {
        schema: { body: LoginBody },
        // preHandler: the keys need the parsed body (the username).
        preHandler: async (request, reply) => {
          for (const limitOf of loginLimits) {
            const limit = await limitOf(request)
            if (!limit.isAllowed && limit.isExceeded) {
              return reply
                .code(429)
                .header('retry-after', limit.ttlInSeconds)
                .send({ statusCode: 429, error: 'Too Many Requests', message: `Rate limit exceeded, retry in ${limit.ttlInSeconds} seconds` })
            }
          }
        },
      },
      async (request, reply) => {
        const { username, password } = request.body
        // A browser's form gets pages back (a redirect); an API client gets JSON.
        const fromForm = (request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')
        const returnTo = localPath((request.body as { returnTo?: unknown }).returnTo)
        const user = DEMO_USERS.find((candidate) => candidate.username === username)
        if (!user || password !== user.username) {
          if (fromForm) return reply.code(401).type('text/html; charset=utf-8').headers(DEMO_PAGE_FRAME_HEADERS).send(loginPage(returnTo, 'Invalid username or password.'))
          return reply.code(401).send({ success: false, error: 'Invalid username or password.' })
        }
        const id = randomBytes(24).toString('base64url')
        sessions.set(id, { username: user.username, expiresAt: clock() + DEMO_SESSION_TTL_MS })
        reply.setCookie(SESSION_COOKIE, id, { ...cookieOptions(request), maxAge: DEMO_SESSION_TTL_MS / 1000 })
        if (fromForm) return reply.redirect(returnTo, 303)
        return { success: true, user: { id: user.id, username: user.username, permissions: user.permissions } }
      },
    )
  })

  app.get<{ Querystring: { returnTo?: string } }>('/login', async (request, reply) =>
    reply.type('text/html; charset=utf-8').headers(DEMO_PAGE_FRAME_HEADERS).send(loginPage(localPath(request.query.returnTo), null)),
  )
}

/** The demo's own pages: home, the captured mail, and logout. */
function registerDemoPages(app: FastifyInstance, session: DemoSessions, mailbox: MailCapture) {
  const { sessions, sessionOf, resolveUser, cookieOptions } = session

  app.get('/', async (request, reply) => reply.type('text/html; charset=utf-8').headers(DEMO_PAGE_FRAME_HEADERS).send(homePage(resolveUser(request)?.username ?? null)))

  // DEMO ONLY: the captured mail, for those who may manage notifications (the mails hold customer addresses).
  app.get('/demo/mail', async (request, reply) => {
    const user = resolveUser(request)
    if (!user) return reply.redirect(`/login?returnTo=${encodeURIComponent('/demo/mail')}`, 303)
    reply.type('text/html; charset=utf-8').header('content-security-policy', DEMO_MAIL_PAGE_POLICY).header('cache-control', 'no-store')
    if (!user.permissions.includes(ShipmentsPermissions.manageIntegrations)) {
      return reply.code(403).send(demoPage('Forbidden', `<h1>Forbidden</h1><p>The sent mail is for users who may manage notifications (${ShipmentsPermissions.manageIntegrations}).</p>`))
    }
    return reply.send(demoPage('Sent mail: fastify-shipments demo', `<p><a href="/">Demo home</a></p>${mailPageBody(mailbox.messages())}`))
  })

  app.post('/logout', async (request, reply: FastifyReply) => {
    const id = sessionOf(request)
    if (id) sessions.delete(id)
    reply.clearCookie(SESSION_COOKIE, cookieOptions(request))
    // The admin pages' CSRF secret goes too: the next login starts with a new one.
    reply.clearCookie(ADMIN_CSRF_COOKIE, { path: ADMIN_PREFIX })
    return { success: true }
  })
}

const isMain = import.meta.url === `file://${process.argv[1]}`
if (isMain) {
  const port = Number(process.env.PORT ?? 3000)
  const host = process.env.HOST ?? '127.0.0.1'
  // DATABASE_URL=postgres://... runs the demo on PostgreSQL; otherwise a SQLite file.
  const database = process.env.DATABASE_URL || (process.env.SHIPMENTS_DEMO_DB ?? '.data/demo.sqlite')
  // Links in mails name the address the demo listens on (a wildcard address is reached on localhost).
  const linkHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host
  const app = await buildDemoHost({ database, baseUrl: process.env.DEMO_BASE_URL ?? `http://${linkHost}:${port}` })
  await app.listen({ port, host })
  const base = `http://${linkHost}:${port}`
  console.log(`
fastify-shipments demo host on ${base} (database: ${app.shipments.database.engine === 'postgres' ? 'PostgreSQL' : database})

!!! DEMO ONLY: users admin, editor and viewer; each password equals the username. !!!

Admin pages: ${base}/ (log in at ${base}/login)
Sent mail (captured, never delivered): ${base}/demo/mail

Try:
  curl -s -c /tmp/demo-cookies -H 'content-type: application/json' \\
       -d '{"username":"admin","password":"admin"}' ${base}/login
  curl -s -b /tmp/demo-cookies '${base}/shipments/api/shipments?status=new'
  curl -s -b /tmp/demo-cookies -H 'content-type: application/json' \\
       -d '{"status":"shipped","carrier":"UPS","trackingNumber":"1Z999AA10123456784","trackingUrl":"ups.com/track?num=1Z999AA10123456784"}' \\
       ${base}/shipments/api/shipments/1
  curl -s -b /tmp/demo-cookies ${base}/shipments/api/shipments/1/history

  # a signed carrier event through the gateway (integration demo-webhooks, Standard Webhooks):
  npx tsx examples/webhook-sender.ts --order 1003 --status in_transit --tracking JD014600003828
  # the custom ACME provider (bearer token):
  curl -s -H "authorization: Bearer $DEMO_ACME_TOKEN" -H 'content-type: application/json' \\
       -d '{"shipmentReference":"1004-s001","state":"PICKING"}' \\
       '${base}/actions/shipments/gateway/handle?integration=acme-3pl'

  # ShipStation Custom Store (user ${process.env.SHIPSTATION_USERNAME}, password from SHIPSTATION_PASSWORD):
  curl -s -u "$SHIPSTATION_USERNAME:$SHIPSTATION_PASSWORD" '${base}/actions/shippingplatformconnect/orders/process?action=export&page=1'
  curl -s -u "$SHIPSTATION_USERNAME:$SHIPSTATION_PASSWORD" -X POST -H 'content-type: text/xml' \\
       --data '<ShipNotice><OrderNumber>1001</OrderNumber><Carrier>UPS</Carrier></ShipNotice>' \\
       '${base}/actions/shippingplatformconnect/orders/process?action=shipnotify&order_number=1001&carrier=UPS&service=Ground&tracking_number=1Z999AA10123456784'
  (export DEMO_ACME_TOKEN, SHIPSTATION_USERNAME and SHIPSTATION_PASSWORD first; the demo defaults are in CONTRIBUTING.md)
`)
}
