// The order exchange endpoint (spec 4.3, 4.4, 5, 7.3): ShipStation's Custom Store URL, HTTP Basic,
// errors as an HTML page or JSON, in an encapsulated scope with its own body handling.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import basicAuth from '@fastify/basic-auth'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { errorCodeOf, frameworkErrorBody, HTTP_ERROR_NAMES, OrderExchangeErrors, RequestErrorCodes } from '../errors.js'
import { pageParameter, type OrderExchangeService } from './service.js'
import type { OrderExchangeSettings } from './settings.js'
import { parseParameterBody, readShipNotifyParameters } from './ship-notice.js'
import { acceptRawBodies } from '../http/raw-body.js'
import { DRY_RUN_HEADER } from './doctor.js'

export interface OrderExchangeRoutesOptions {
  service: OrderExchangeService
  settings: OrderExchangeSettings
}

const REALM = 'ShipStation'
/** What @fastify/basic-auth sends with its 401s, sent with ours too. */
const CHALLENGE = `Basic realm="${REALM}", charset="UTF-8"`
const QUERY_USER = 'SS-UserName'
const QUERY_PASSWORD = 'SS-Password'

/** Equal-length digests, so the comparison takes the same time whatever the lengths and never throws. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest()
  return timingSafeEqual(digest(given), digest(expected))
}

/** JSON when the client's first preference is JSON (as the platform decides), an HTML page otherwise. */
function wantsJson(request: FastifyRequest): boolean {
  const first = (request.headers.accept ?? '').split(',')[0].split(';')[0].trim().toLowerCase()
  return first === 'application/json' || first.endsWith('+json')
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

function sendError(request: FastifyRequest, reply: FastifyReply, status: number, message: string, errorCode: string) {
  const name = HTTP_ERROR_NAMES[status] ?? 'Error'
  if (wantsJson(request)) return reply.code(status).type('application/json; charset=utf-8').send(frameworkErrorBody(status, message, errorCode))
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .send(
      `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${status} ${escapeHtml(name)}</title></head>` +
        `<body><h1>${escapeHtml(name)}</h1><p>${escapeHtml(message)}</p></body></html>\n`,
    )
}

const QuerySchema = Type.Object(
  {
    action: Type.Optional(Type.String()),
    start_date: Type.Optional(Type.String()),
    end_date: Type.Optional(Type.String()),
    page: Type.Optional(Type.String()),
    store: Type.Optional(Type.String()),
    order_number: Type.Optional(Type.String()),
    carrier: Type.Optional(Type.String()),
    service: Type.Optional(Type.String()),
    tracking_number: Type.Optional(Type.String()),
    /** `true`: the ship notification is checked and not applied (the connection doctor's dry run). */
    dry_run: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)

declare module 'fastify' {
  interface FastifyRequest {
    /** What the order exchange's activity log records of this request, filled in as it is answered. */
    exchangeActivity: { authenticated?: true | undefined; orderNumber?: string | null | undefined; ordersExported?: number | undefined; reason?: string | undefined } | null
  }
}

export const orderExchangeRoutes: FastifyPluginAsync<OrderExchangeRoutesOptions> = async (scope, options) => {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { service, settings } = options

  // Every request is recorded before its answer leaves, refusals included (a wrong password is the
  // first reason orders do not show up): the answer's status, and the short reason the client got.
  app.decorateRequest('exchangeActivity', null)
  app.addHook('onSend', async (request, reply, payload) => {
    const query = (request.query ?? {}) as Record<string, unknown>
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined)
    const noted = request.exchangeActivity ?? {}
    const action = text(query.action) ?? (Buffer.isBuffer(request.body) ? parseParameterBody(request.body.toString('utf8'), request.headers['content-type'] ?? '').action : undefined)
    await service.activity.record({
      action,
      page: action === 'export' ? pageParameter(text(query.page)) : null,
      orderNumber: noted.orderNumber ?? text(query.order_number),
      ordersExported: noted.ordersExported ?? null,
      statusCode: reply.statusCode,
      reason: noted.reason ?? null,
      authenticated: noted.authenticated === true,
    })
    return payload
  })

  // Ship notifications come as XML under any content type, or none: the body is read as bytes and
  // interpreted by the action, never refused with a 415.
  acceptRawBodies(scope, settings.bodyLimit)

  const checkCredentials = (username: string, password: string) =>
    // Both comparisons always run: which of the two was wrong is not observable.
    Number(sameSecret(username, settings.username)) & Number(sameSecret(password, settings.password))

  await app.register(basicAuth, {
    strictCredentials: false,
    authenticate: { realm: REALM },
    validate: async (username, password) => {
      if (!checkCredentials(username, password)) throw new OrderExchangeErrors.Unauthorized()
    },
  })

  /** Basic auth from the header; with `acceptQueryCredentials`, SS-UserName / SS-Password from the query or headers. */
  async function authenticate(request: FastifyRequest, reply: FastifyReply) {
    if (settings.acceptQueryCredentials) {
      const query = request.query as Record<string, unknown>
      const fromQuery = typeof query[QUERY_USER] === 'string' || typeof query[QUERY_PASSWORD] === 'string'
      const source = fromQuery ? query : { [QUERY_USER]: request.headers['ss-username'], [QUERY_PASSWORD]: request.headers['ss-password'] }
      const username = source[QUERY_USER]
      const password = source[QUERY_PASSWORD]
      if (typeof username === 'string' || typeof password === 'string') {
        if (checkCredentials(String(username ?? ''), String(password ?? ''))) return
        reply.header('www-authenticate', CHALLENGE)
        throw new OrderExchangeErrors.Unauthorized()
      }
    }
    await new Promise<void>((resolve, reject) => app.basicAuth(request, reply, (error?: Error) => (error ? reject(error) : resolve())))
  }

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500
    if (status === 401) {
      request.log.info({ code: error.code }, 'Order exchange: authentication failed')
      return refuse(request, reply, 401, new OrderExchangeErrors.Unauthorized())
    }
    const coded = typeof error.code === 'string' && error.code.startsWith('SHIPMENTS_EXCHANGE_')
    if (status >= 500 && !coded) request.log.error({ err: error }, 'Order exchange request failed')
    else request.log.info({ code: error.code, reason: error.message }, 'Order exchange request refused')
    return refuse(request, reply, status, status >= 500 && !coded ? { code: RequestErrorCodes.internal, message: 'An internal error occurred.' } : error)
  })

  /** Sends the error and notes its message as the activity log's reason. */
  function refuse(request: FastifyRequest, reply: FastifyReply, status: number, error: { code?: unknown; validation?: unknown; message: string }) {
    const { message } = error
    request.exchangeActivity = { ...request.exchangeActivity, reason: message }
    return sendError(request, reply, status, message, errorCodeOf(error, status))
  }

  app.route({
    method: ['GET', 'POST'],
    url: '/process',
    // Noted once the credentials held: only then does the activity log keep text the request chose.
    onRequest: [authenticate, async (request) => void (request.exchangeActivity = { authenticated: true })],
    // A parameter sent twice counts once, with its first value (`page=2&page=3` is page 2).
    preValidation: async (request) => {
      const query = request.query as Record<string, unknown>
      for (const key of Object.keys(query)) if (Array.isArray(query[key])) query[key] = query[key][0]
    },
    schema: {
      summary: 'ShipStation Custom Store: export orders (action=export) or record a shipment (action=shipnotify)',
      querystring: QuerySchema,
      response: { 200: Type.Object({ success: Type.Literal(true) }, { description: 'shipnotify; export answers text/xml' }) },
    },
    handler: async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : undefined
      // Parameters come from the query or the body (spec 4.4): `action` too, from a form or JSON body.
      const action = request.query.action ?? (body ? parseParameterBody(body.toString('utf8'), request.headers['content-type'] ?? '').action : undefined)
      if (!action) throw new OrderExchangeErrors.MissingAction()
      if (action === 'export') {
        const { xml, orders } = await service.exportDocument({
          startDate: request.query.start_date,
          endDate: request.query.end_date,
          page: request.query.page,
          store: request.query.store,
          origin: `${request.protocol}://${request.host}`,
        })
        request.exchangeActivity = { ...request.exchangeActivity, ordersExported: orders }
        // A string under text/xml is sent as it is; the response schema describes shipnotify's JSON.
        // Says to the connection doctor that ship notifications here take a dry run (see doctor.ts).
        reply.header(DRY_RUN_HEADER, 'true')
        return (reply as FastifyReply).type('text/xml; charset=utf-8').send(xml)
      }
      if (action === 'shipnotify') {
        const parameters = readShipNotifyParameters(request.query, body, request.headers['content-type'])
        request.exchangeActivity = { ...request.exchangeActivity, orderNumber: parameters.orderNumber }
        if (request.query.dry_run === 'true') {
          // Everything a notification is checked for, the order found, nothing written.
          await service.checkShipNotify(parameters)
          request.exchangeActivity = { ...request.exchangeActivity, reason: 'dry run: checked, not applied' }
          return { success: true as const }
        }
        await service.shipNotify(parameters)
        return { success: true as const }
      }
      throw new OrderExchangeErrors.UnknownAction()
    },
  })
}
