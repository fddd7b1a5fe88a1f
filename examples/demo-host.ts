// The demo host started by `npm start`: a Fastify app with cookie sessions and the shipments plugin.
import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import cookie from '@fastify/cookie'
import rateLimit from '@fastify/rate-limit'
import { fastifyShipments, ShipmentsPermissions, type ShipmentsUser } from '../src/index.js'
import { DEMO_ORDER_FIELDS, seedDemoData } from './seed.js'
import { acmeThreePlProvider } from './custom-provider.js'
import { ensureDemoIntegrations } from './demo-integrations.js'

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
/** DEMO ONLY: ShipStation credentials used when SHIPSTATION_USERNAME / SHIPSTATION_PASSWORD are not set. */
export const DEMO_SHIPSTATION_USERNAME = 'shipstation'
export const DEMO_SHIPSTATION_PASSWORD = 'demo-shipstation-password-change-me'

export interface DemoHostOptions {
  /** A SQLite file name or a postgres:// connection string. */
  database: string
  cookieSecret?: string
  logger?: FastifyServerOptions['logger']
  /** The clock of session expiry (milliseconds since the epoch). Default Date.now. */
  clock?: () => number
}

export async function buildDemoHost(options: DemoHostOptions) {
  const clock = options.clock ?? Date.now
  // trustProxy: behind a TLS-terminating proxy, request.protocol is the client's (for Secure cookies).
  const app = Fastify({ logger: options.logger ?? true, trustProxy: process.env.DEMO_TRUST_PROXY === 'true' })
  await app.register(cookie, { secret: options.cookieSecret ?? process.env.DEMO_COOKIE_SECRET ?? 'demo-cookie-secret-change-me' })
  // Login throttling, the way a host should: per client address and username, on the login route only.
  // preHandler: the key needs the parsed body (the username).
  await app.register(rateLimit, { global: false, hook: 'preHandler' })

  // Server-side sessions: the cookie carries a random id, so logout and expiry end a session even for
  // someone who kept a copy of the cookie.
  const sessions = new Map<string, { username: string; expiresAt: number }>()
  const sessionOf = (request: FastifyRequest) => {
    const raw = request.cookies[SESSION_COOKIE]
    const unsigned = raw ? request.unsignCookie(raw) : null
    return unsigned?.valid && unsigned.value ? unsigned.value : null
  }
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

  // DEMO ONLY: ShipStation's Custom Store credentials, from the environment with demo defaults.
  process.env.SHIPSTATION_USERNAME ??= DEMO_SHIPSTATION_USERNAME
  process.env.SHIPSTATION_PASSWORD ??= DEMO_SHIPSTATION_PASSWORD

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
    resolveUser,
    hasPermission: (user: DemoUser, permission: string) => user.permissions.includes(permission),
  })

  const LoginBody = {
    type: 'object',
    properties: { username: { type: 'string', maxLength: 64 }, password: { type: 'string', maxLength: 256 } },
    required: ['username', 'password'],
  } as const
  app.post<{ Body: { username: string; password: string } }>(
    '/login',
    {
      schema: { body: LoginBody },
      config: {
        rateLimit: {
          max: DEMO_LOGIN_ATTEMPTS_PER_MINUTE,
          timeWindow: 60_000,
          keyGenerator: (request: FastifyRequest) => `${request.ip}|${String((request.body as { username?: unknown } | undefined)?.username ?? '')}`,
        },
      },
    },
    async (request, reply) => {
      const { username, password } = request.body
      const user = DEMO_USERS.find((candidate) => candidate.username === username)
      if (!user || password !== user.username) {
        return reply.code(401).send({ success: false, error: 'Invalid username or password.' })
      }
      const id = randomBytes(24).toString('base64url')
      sessions.set(id, { username: user.username, expiresAt: clock() + DEMO_SESSION_TTL_MS })
      reply.setCookie(SESSION_COOKIE, id, { ...cookieOptions(request), maxAge: DEMO_SESSION_TTL_MS / 1000 })
      return { success: true, user: { id: user.id, username: user.username, permissions: user.permissions } }
    },
  )

  app.post('/logout', async (request, reply: FastifyReply) => {
    const id = sessionOf(request)
    if (id) sessions.delete(id)
    reply.clearCookie(SESSION_COOKIE, cookieOptions(request))
    return { success: true }
  })

  await app.ready()
  await seedDemoData(app)
  await ensureDemoIntegrations(app)
  return app
}

const isMain = import.meta.url === `file://${process.argv[1]}`
if (isMain) {
  const port = Number(process.env.PORT ?? 3000)
  const host = process.env.HOST ?? '127.0.0.1'
  // DATABASE_URL=postgres://... runs the demo on PostgreSQL; otherwise a SQLite file.
  const database = process.env.DATABASE_URL || (process.env.SHIPMENTS_DEMO_DB ?? '.data/demo.sqlite')
  const app = await buildDemoHost({ database })
  await app.listen({ port, host })
  const base = `http://${host}:${port}`
  console.log(`
fastify-shipments demo host on ${base} (database: ${app.shipments.database.engine === 'postgres' ? 'PostgreSQL' : database})

!!! DEMO ONLY: users admin, editor and viewer; each password equals the username. !!!

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
  curl -s -H 'authorization: Bearer demo-acme-token-change-me' -H 'content-type: application/json' \\
       -d '{"shipmentReference":"1004-s001","state":"PICKING"}' \\
       '${base}/actions/shipments/gateway/handle?integration=acme-3pl'

  # ShipStation Custom Store (user ${process.env.SHIPSTATION_USERNAME}, password from SHIPSTATION_PASSWORD):
  curl -s -u "$SHIPSTATION_USERNAME:$SHIPSTATION_PASSWORD" '${base}/actions/shippingplatformconnect/orders/process?action=export&page=1'
  curl -s -u "$SHIPSTATION_USERNAME:$SHIPSTATION_PASSWORD" -X POST -H 'content-type: text/xml' \\
       --data '<ShipNotice><OrderNumber>1001</OrderNumber><Carrier>UPS</Carrier></ShipNotice>' \\
       '${base}/actions/shippingplatformconnect/orders/process?action=shipnotify&order_number=1001&carrier=UPS&service=Ground&tracking_number=1Z999AA10123456784'
  (export SHIPSTATION_USERNAME and SHIPSTATION_PASSWORD first; the demo defaults are in the README)
`)
}
