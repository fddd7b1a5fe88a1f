// Login, sessions and the admin pages: the host's users, a server-side session behind a signed cookie,
// `resolveUser` reading it, a login that returns to a local path only, and the admin pages in a layout.
import { createHash, randomBytes, scryptSync, timingSafeEqual } from 'node:crypto'
import Fastify, { type FastifyRequest } from 'fastify'
import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import { ADMIN_CSRF_COOKIE, fastifyShipments, ShipmentsPermissions, type AdminPage, type ShipmentsUser } from 'fastify-shipments'

interface User extends ShipmentsUser {
  id: number
  name: string
  permissions: string[]
}

// Your users and password hashes live in your database; this host has one, its password from the environment.
const salt = randomBytes(16)
const hash = (password: string) => scryptSync(password, salt, 32)
const accounts = [{ login: 'jane', passwordHash: hash(process.env.ADMIN_PASSWORD ?? 'change-me-now'), user: { id: 1, name: 'Jane', permissions: Object.values(ShipmentsPermissions) } }]
const findUser = (login: string, password: string): User | null => {
  const account = accounts.find((candidate) => candidate.login === login)
  return account && timingSafeEqual(account.passwordHash, hash(password)) ? account.user : null
}

// Sessions on the server: the cookie holds a random id only, so logout and expiry end a session for
// good. One process here; with several instances, keep them in your database or cache instead.
const SESSION_COOKIE = 'session'
const SESSION_MS = 8 * 60 * 60 * 1000
const sessions = new Map<string, { user: User; expiresAt: number }>()

function sessionId(request: FastifyRequest): string | null {
  const signed = request.cookies[SESSION_COOKIE]
  const unsigned = signed ? request.unsignCookie(signed) : null
  return unsigned?.valid ? unsigned.value : null
}

// Binds the admin forms' tokens to the session (a hash: the session id itself never leaves this code).
function sessionHash(request: FastifyRequest): string | null {
  const id = sessionId(request)
  return id ? createHash('sha256').update(id).digest('base64url') : null
}

function resolveUser(request: FastifyRequest): User | null {
  const id = sessionId(request)
  const session = id ? sessions.get(id) : undefined
  if (!id || !session) return null
  if (session.expiresAt <= Date.now()) {
    sessions.delete(id)
    return null
  }
  return session.user
}

/**
 * Where a login returns to: a path on this site only. One `/` and then no second one (so never
 * `//other.example` or a scheme), no backslash (browsers read `/\` as `//`), no whitespace or control
 * character (browsers drop some, NUL and DEL fail a header), no lone surrogate; characters beyond ASCII
 * percent-encoded, as a Location header holds Latin-1 at most. Anything else goes to the admin home.
 */
// eslint-disable-next-line no-control-regex
const NOT_IN_A_PATH = /[\\\s\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
function localPath(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || NOT_IN_A_PATH.test(value)) return '/shipments/admin/shipments'
  return value.replace(/[^\u0000-\u007f]+/g, (characters) => encodeURIComponent(characters))
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`)

// The admin pages inside your own page: no inline script or style (their Content-Security-Policy forbids them);
// the viewport meta lets phones show the pages at their own width, the skip link passes over the chrome.
function layout(page: AdminPage<User>): string {
  const links = page.navigation
    .map((link) => `<a href="${escapeHtml(link.href)}"${link.current ? ' aria-current="page"' : ''}>${escapeHtml(link.label)}${link.count ? ` (${link.count})` : ''}</a>`)
    .join(' ')
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(page.title)} · Shop admin</title>${page.head}</head>
<body><a href="#main">Skip to main content</a><header>Shop admin · ${escapeHtml(page.user.name)} <form method="post" action="/logout"><button>Log out</button></form></header>
<nav aria-label="Shop admin">${links}</nav><main id="main" tabindex="-1">${page.content}</main></body></html>`
}

const loginPage = (returnTo: string, failed: boolean) => `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Log in</title></head><body><main>
${failed ? '<p role="alert">Wrong login or password.</p>' : ''}
<form method="post" action="/login"><input type="hidden" name="returnTo" value="${escapeHtml(returnTo)}">
<label>Login <input name="login" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button>Log in</button></form></main></body></html>`

const ADMIN_PREFIX = '/shipments/admin'
// The login page is never framed (no clickjacking of the form).
const NO_FRAMING = { 'x-frame-options': 'DENY', 'content-security-policy': "frame-ancestors 'none'" }

const app = Fastify({ logger: true, requestTimeout: 10_000, http: { headersTimeout: 10_000, connectionsCheckingInterval: 1_000 } })
await app.register(cookie, { secret: process.env.COOKIE_SECRET ?? randomBytes(32).toString('hex') })
await app.register(fastifyShipments, {
  database: process.env.DATABASE_URL || 'shop.sqlite',
  resolveUser,
  hasPermission: (user: User, permission) => user.permissions.includes(permission),
  // A request without a user is sent to /login?returnTo=<the page>; a form's token dies with its session.
  admin: { prefix: ADMIN_PREFIX, loginUrl: '/login', layout, csrfKey: process.env.SHIPMENTS_CSRF_KEY, csrfSession: sessionHash },
})

// The login form's body parser in a scope of its own: the package's API keeps refusing form bodies.
await app.register(async (login) => {
  await login.register(formbody, { bodyLimit: 4096 })
  login.get<{ Querystring: { returnTo?: string } }>('/login', async (request, reply) =>
    reply.type('text/html; charset=utf-8').headers(NO_FRAMING).send(loginPage(localPath(request.query.returnTo), false)),
  )
  // Throttle this route in production (for instance with @fastify/rate-limit, per address and login).
  login.post('/login', async (request, reply) => {
    const body = request.body as { login?: unknown; password?: unknown; returnTo?: unknown }
    const returnTo = localPath(body.returnTo)
    const user = typeof body.login === 'string' && typeof body.password === 'string' ? findUser(body.login, body.password) : null
    if (!user) return reply.code(401).type('text/html; charset=utf-8').headers(NO_FRAMING).send(loginPage(returnTo, true))
    const id = randomBytes(24).toString('base64url')
    sessions.set(id, { user, expiresAt: Date.now() + SESSION_MS })
    // HttpOnly: no script reads it; SameSite=Strict: no other site's request carries it; Secure over HTTPS.
    reply.setCookie(SESSION_COOKIE, id, { signed: true, httpOnly: true, sameSite: 'strict', secure: request.protocol === 'https', path: '/', maxAge: SESSION_MS / 1000 })
    return reply.redirect(returnTo, 303)
  })
  login.post('/logout', async (request, reply) => {
    const id = sessionId(request)
    if (id) sessions.delete(id)
    // The admin pages' CSRF secret goes with the session: the next login starts with a new one.
    return reply.clearCookie(SESSION_COOKIE, { path: '/' }).clearCookie(ADMIN_CSRF_COOKIE, { path: ADMIN_PREFIX }).redirect('/login', 303)
  })
})

await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })
