// The shipment API (spec 4.1 and 7.1) plus the reads an admin panel needs, in an encapsulated scope.
import type {
  FastifyBaseLogger,
  FastifyError,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyRequest,
  FastifySchemaCompiler,
  FastifySchemaValidationError,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorCodeOf, frameworkErrorBody, RequestErrorCodes, serviceErrorBody, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError, validationErrorBody } from '../errors.js'
import { readableSchemaError } from '../http/validation-messages.js'
import type { HasPermission, ResolveUser, ShipmentsUser } from '../http/access.js'
import { boundJsonDepth } from '../http/json-body.js'
import { formatIsoWithOffset } from '../time.js'
import type { ShipmentService } from './service.js'
import {
  CheckpointsResponseSchema,
  AllocationResponseSchema,
  AttentionQuerySchema,
  AttentionResponseSchema,
  CreateBodySchema,
  CreateResponseSchema,
  OrderIdParamsSchema,
  FrameworkErrorSchema,
  HistoryResponseSchema,
  IdParamsSchema,
  ListQuerySchema,
  ListResponseSchema,
  ServiceErrorSchema,
  ShipmentResponseSchema,
  UpdateBodySchema,
  UpdateResponseSchema,
  ValidationErrorSchema,
} from './schemas.js'

/** The permissions the package declares; hosts answer for them in `hasPermission`. */
export const ShipmentsPermissions = {
  viewShipments: 'shipments-viewShipments',
  editShipments: 'shipments-editShipments',
  transitionShipments: 'shipments-transitionShipments',
  /** The admin pages of integrations and ShipStation. */
  manageIntegrations: 'shipments-manageIntegrations',
  /** Buying and voiding labels: they spend money. */
  buyLabels: 'shipments-buyLabels',
  /** Requesting, authorising, rejecting, receiving and closing returns (a return label also needs buyLabels). */
  manageReturns: 'shipments-manageReturns',
} as const

export interface ShipmentRoutesOptions {
  service: ShipmentService
  timeZone: string
  resolveUser: ResolveUser
  hasPermission: HasPermission
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The user `resolveUser` returned, inside the shipment API's scope. */
    shipmentsUser: ShipmentsUser | null
  }
}

const frameworkErrors = { 400: FrameworkErrorSchema, 401: FrameworkErrorSchema, 403: FrameworkErrorSchema, 404: FrameworkErrorSchema }

/**
 * The validator of the two POST routes. Their body schemas type every field for the OpenAPI document,
 * but each field's checks and messages are the spec's per-field 422 envelope, which a schema's 400 would
 * pre-empt: so the body is only required to be an object, refused with the very error Fastify's own
 * validator gives for it ("body must be object"), and a path parameter is a string as the router gives it.
 */
const objectBodyOnly: FastifySchemaCompiler<unknown> = ({ httpPart }) => {
  if (httpPart !== 'body') return () => true
  const validate = (body: unknown): boolean => {
    const valid = typeof body === 'object' && body !== null && !Array.isArray(body)
    validate.errors = valid ? null : [{ instancePath: '', schemaPath: '#/type', keyword: 'type', params: { type: 'object' }, message: 'must be object' }]
    return valid
  }
  validate.errors = null as FastifySchemaValidationError[] | null
  return validate
}

/** Path ids that are not positive integers name no shipment (or order): a 404, like an unknown id. */
function parsePathId(raw: string, notFound: (raw: string) => Error = (value) => new ShipmentsErrors.ShipmentNotFound(value)): number {
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(id)) throw notFound(raw)
  return id
}
const parseShipmentId = (raw: string) => parsePathId(raw)
const parseOrderId = (raw: string) => parsePathId(raw, (value) => new ShipmentsErrors.OrderNotFound(value))

export const shipmentRoutes: FastifyPluginAsync<ShipmentRoutesOptions> = async (scope, options) => {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { service, resolveUser, hasPermission } = options

  app.decorateRequest('shipmentsUser', null)
  app.setSchemaErrorFormatter(readableSchemaError)
  // The API speaks JSON only: a text body is a 415, not a string that fails validation later.
  app.removeContentTypeParser('text/plain')
  boundJsonDepth(scope)
  // A POST without a body is an update that changes nothing, not a malformed request.
  app.addHook('preValidation', async (request) => {
    if (request.method === 'POST' && request.body === undefined) request.body = {}
  })

  /** onRequest hook: 401 without a user, 403 without `permission`, before the body is even read. */
  const requirePermission = (permission: string) => async (request: FastifyRequest) => {
    const user = (await resolveUser(request)) ?? null
    if (!user) throw new ShipmentsErrors.Unauthorized()
    if (!(await hasPermission(user, permission, request))) throw new ShipmentsErrors.Forbidden(permission)
    request.shipmentsUser = user
  }

  /**
   * A body the framework refused (400 malformed, 413, 415) on an update of an unknown shipment: the
   * documented order puts the 404 first (routes with a shipment id only). Only refused bodies pay for this lookup; a good one reaches
   * the update, which answers the 404 itself.
   */
  async function unknownShipmentBeforeBody(error: FastifyError, request: FastifyRequest): Promise<FastifyError> {
    const bodyRefused = error.validationContext === 'body' || error.code?.startsWith('FST_ERR_CTP_') || error.code === 'SHIPMENTS_JSON_TOO_DEEP'
    // Only the update names a shipment: on the order route a refused body is the framework's 400/413/415.
    const rawId = (request.params as { id?: string }).id
    if (!bodyRefused || request.method !== 'POST' || !request.shipmentsUser || rawId === undefined) return error
    try {
      if (!(await service.get(parseShipmentId(rawId)))) return new ShipmentsErrors.ShipmentNotFound(rawId)
    } catch (lookupError) {
      return lookupError as FastifyError
    }
    return error
  }

  app.setErrorHandler(async (caught: FastifyError, request, reply) => {
    const error = await unknownShipmentBeforeBody(caught, request)
    if (error instanceof ShipmentValidationError) return reply.code(422).send(validationErrorBody(error.errors))
    if (error instanceof ShipmentUpdateRejectedError) {
      // A lock wait is the caller's to retry; a failed save was already logged with its cause by the service.
      request.log.warn({ reason: error.message }, 'Shipment update rejected')
      return reply.code(422).send(serviceErrorBody(error))
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500
    if (status === 500) {
      request.log.error({ err: error }, 'Shipment API request failed')
      return reply.code(status).send(frameworkErrorBody(status, 'An internal error occurred.', RequestErrorCodes.internal))
    }
    return reply.code(status).send(frameworkErrorBody(status, error.message, errorCodeOf(error, status)))
  })

  const viewShipments = requirePermission(ShipmentsPermissions.viewShipments)
  const api: ShipmentApi = { app, options, requirePermission, viewShipments }
  registerShipmentRoutes(api)
  registerOrderRoutes(api)
  registerShipmentRecordRoutes(api)
}

/** What the API's groups of routes share: the scope (hooks and error handler in place), the permission checks. */
interface ShipmentApi {
  app: FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>
  options: ShipmentRoutesOptions
  /** onRequest hook: 401 without a user, 403 without `permission`, before the body is even read. */
  requirePermission: (permission: string) => (request: FastifyRequest) => Promise<void>
  /** The reads' onRequest hook (viewShipments). */
  viewShipments: (request: FastifyRequest) => Promise<void>
}

/** A shipment's update (the transition permission asked with it), a shipment read, and the list. */
function registerShipmentRoutes(api: ShipmentApi) {
  const { app, options, requirePermission, viewShipments } = api
  const { service, hasPermission } = options

  app.post(
    '/shipments/:id',
    {
      onRequest: requirePermission(ShipmentsPermissions.editShipments),
      validatorCompiler: objectBodyOnly,
      schema: {
        summary: 'Update a shipment, optionally changing its status (spec 4.1)',
        params: IdParamsSchema,
        body: Type.Optional(UpdateBodySchema),
        response: {
          200: UpdateResponseSchema,
          422: Type.Union([ValidationErrorSchema, ServiceErrorSchema]),
          413: FrameworkErrorSchema,
          415: FrameworkErrorSchema,
          ...frameworkErrors,
        },
      },
    },
    async (request) => {
      const user = request.shipmentsUser!
      // The transition permission is asked up front when the body names a status: a user who holds it
      // needs no authorization hook, which spares the change a read of the shipment before its write.
      // One who does not is refused only when the status really changes (the same status is no transition).
      const hasStatus = (request.body as { status?: unknown } | undefined)?.status != null
      const mayTransition = hasStatus && (await hasPermission(user, ShipmentsPermissions.transitionShipments, request))
      const { shipment } = await service.update(parseShipmentId(request.params.id), request.body ?? {}, {
        userId: String(user.id),
        authorizeTransition: mayTransition
          ? undefined
          : () => {
              throw new ShipmentsErrors.Forbidden(ShipmentsPermissions.transitionShipments)
            },
      })
      return { success: true as const, shipment }
    },
  )

  app.get(
    '/shipments/:id',
    {
      onRequest: viewShipments,
      schema: { summary: 'Read one shipment', params: IdParamsSchema, response: { 200: ShipmentResponseSchema, ...frameworkErrors } },
    },
    async (request) => {
      const id = parseShipmentId(request.params.id)
      const shipment = await service.get(id)
      if (!shipment) throw new ShipmentsErrors.ShipmentNotFound(id)
      return { success: true as const, shipment }
    },
  )

  app.get(
    '/shipments',
    {
      onRequest: viewShipments,
      schema: {
        summary: 'List shipments, by order and status, paged',
        querystring: ListQuerySchema,
        response: { 200: ListResponseSchema, ...frameworkErrors },
      },
    },
    async (request) => {
      const page = await service.list(request.query)
      return {
        success: true as const,
        shipments: page.shipments,
        pagination: {
          page: page.page,
          perPage: page.perPage,
          total: page.total,
          pages: Math.ceil(page.total / page.perPage),
        },
      }
    },
  )
}

/** An order's shipments created, its allocation, and the attention list of completed orders. */
function registerOrderRoutes(api: ShipmentApi) {
  const { app, options, requirePermission, viewShipments } = api
  const { service } = options

  app.post(
    '/orders/:orderId/shipments',
    {
      onRequest: requirePermission(ShipmentsPermissions.editShipments),
      validatorCompiler: objectBodyOnly,
      schema: {
        summary: "Create shipments of an order: order-level ones, one holding given lines, or what a split rule makes of what is left",
        params: OrderIdParamsSchema,
        body: Type.Optional(CreateBodySchema),
        response: { 200: CreateResponseSchema, 422: ValidationErrorSchema, 413: FrameworkErrorSchema, 415: FrameworkErrorSchema, ...frameworkErrors },
      },
    },
    async (request) => {
      const { count, items, rule } = (request.body ?? {}) as { count?: unknown; items?: unknown; rule?: unknown }
      if (count !== undefined && !(Number.isSafeInteger(count) && (count as number) >= 1 && (count as number) <= 100)) {
        throw new ShipmentValidationError({ count: ['Count must be an integer from 1 to 100.'] })
      }
      if (rule !== undefined && typeof rule !== 'string') throw new ShipmentValidationError({ rule: ['Rule must be the name of a split rule.'] })
      const shipments = await service.create(parseOrderId(request.params.orderId), {
        count: count as number | undefined,
        items: items as never,
        rule,
        userId: String(request.shipmentsUser!.id),
      })
      return { success: true as const, shipments }
    },
  )

  app.get(
    '/orders/:orderId/allocation',
    {
      onRequest: viewShipments,
      schema: {
        summary: "An order's lines with what its active shipments hold and what is left to allocate",
        params: OrderIdParamsSchema,
        response: { 200: AllocationResponseSchema, ...frameworkErrors },
      },
    },
    async (request) => {
      const { order, lines } = await service.allocation(parseOrderId(request.params.orderId))
      return { success: true as const, order: { id: order.id, reference: order.reference }, lines }
    },
  )

  app.get(
    '/attention',
    {
      onRequest: viewShipments,
      schema: {
        summary: 'Completed orders whose active shipments do not hold every shippable line',
        querystring: AttentionQuerySchema,
        response: { 200: AttentionResponseSchema, ...frameworkErrors },
      },
    },
    async (request) => {
      const page = await service.attention(request.query)
      return {
        success: true as const,
        orders: page.orders.map((order) => ({ ...order, dateOrdered: order.dateOrdered ? formatIsoWithOffset(order.dateOrdered.getTime(), options.timeZone) : null })),
        pagination: { page: page.page, perPage: page.perPage, total: page.total, pages: Math.ceil(page.total / page.perPage) },
      }
    },
  )
}

/** A shipment's records: its status history and its carrier checkpoints. */
function registerShipmentRecordRoutes(api: ShipmentApi) {
  const { app, options, viewShipments } = api
  const { service } = options

  app.get(
    '/shipments/:id/history',
    {
      onRequest: viewShipments,
      schema: {
        summary: 'Status history of a shipment, newest first',
        params: IdParamsSchema,
        response: { 200: HistoryResponseSchema, ...frameworkErrors },
      },
    },
    async (request) => ({ success: true as const, history: await service.history(parseShipmentId(request.params.id)) }),
  )

  app.get(
    '/shipments/:id/checkpoints',
    {
      onRequest: viewShipments,
      schema: {
        summary: "The carrier's checkpoints of a shipment and its parcels, in the carrier's time order (oldest first)",
        description: 'Every scan a tracking service reported, kept once each; at most the newest 500.',
        params: IdParamsSchema,
        response: { 200: CheckpointsResponseSchema, ...frameworkErrors },
      },
    },
    async (request) => ({ success: true as const, checkpoints: await service.checkpoints(parseShipmentId(request.params.id)) }),
  )
}
