// The demo host started by `npm start`: a Fastify app with cookie sessions and the shipments plugin.
import Fastify, { type FastifyRequest, type FastifyServerOptions } from 'fastify'
import cookie from '@fastify/cookie'
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
/** DEMO ONLY: ShipStation credentials used when SHIPSTATION_USERNAME / SHIPSTATION_PASSWORD are not set. */
export const DEMO_SHIPSTATION_USERNAME = 'shipstation'
export const DEMO_SHIPSTATION_PASSWORD = 'demo-shipstation-password-change-me'

export interface DemoHostOptions {
  /** A SQLite file name or a postgres:// connection string. */
  database: string
  cookieSecret?: string
  logger?: FastifyServerOptions['logger']
}

export async function buildDemoHost(options: DemoHostOptions) {
  const app = Fastify({ logger: options.logger ?? true })
  await app.register(cookie, { secret: options.cookieSecret ?? process.env.DEMO_COOKIE_SECRET ?? 'demo-cookie-secret-change-me' })

  const resolveUser = (request: FastifyRequest): DemoUser | null => {
    const raw = request.cookies[SESSION_COOKIE]
    if (!raw) return null
    const unsigned = request.unsignCookie(raw)
    return unsigned.valid ? (DEMO_USERS.find((user) => user.username === unsigned.value) ?? null) : null
  }

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

  app.post<{ Body: { username?: unknown; password?: unknown } }>('/login', async (request, reply) => {
    const { username, password } = request.body ?? {}
    const user = DEMO_USERS.find((candidate) => candidate.username === username)
    if (!user || typeof password !== 'string' || password !== user.username) {
      return reply.code(401).send({ success: false, error: 'Invalid username or password.' })
    }
    reply.setCookie(SESSION_COOKIE, user.username, { signed: true, httpOnly: true, sameSite: 'lax', path: '/' })
    return { success: true, user: { id: user.id, username: user.username, permissions: user.permissions } }
  })

  app.post('/logout', async (_request, reply) => {
    reply.clearCookie(SESSION_COOKIE, { path: '/' })
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
