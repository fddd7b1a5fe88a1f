// The returns routes under the shipment API: request, read, update, label, receive.
import type { FastifyError, FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { errorCodeOf, frameworkErrorBody, RequestErrorCodes, ReturnErrors, serviceErrorBody, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError, validationErrorBody } from '../errors.js'
import { readableSchemaError } from '../http/validation-messages.js'
import { boundJsonDepth } from '../http/json-body.js'
import { refuseNumbersForDecimals } from '../http/exact-decimals.js'
import { pathId, schemaFieldErrors, SERVICE_ROUTE_ERRORS } from '../shipments/service-routes.js'
import type { HasPermission, ResolveUser, ShipmentsUser } from '../http/access.js'
import { OrderIdParamsSchema } from '../shipments/schemas.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import type { ReturnState } from '../db/returns.js'
import type { ReturnLabelInput, ReturnService, UpdateReturnInput } from './service.js'
import {
  ReceiveReturnBodySchema,
  RequestReturnBodySchema,
  ReturnHistoryResponseSchema,
  ReturnLabelBodySchema,
  ReturnLabelVoidResponseSchema,
  ReturnListQuerySchema,
  ReturnListResponseSchema,
  ReturnParamsSchema,
  ReturnResponseSchema,
  ReturnableResponseSchema,
  UpdateReturnBodySchema,
} from './schemas.js'

export interface ReturnRoutesOptions {
  service: ReturnService
  resolveUser: ResolveUser
  hasPermission: HasPermission
  clock: () => number
}

const errors = SERVICE_ROUTE_ERRORS

const returnIdOf = (raw: string) => pathId(raw, (value) => new ReturnErrors.ReturnNotFound(value))
const orderIdOf = (raw: string) => pathId(raw, (value) => new ShipmentsErrors.OrderNotFound(value))


const DAY_MS = 24 * 60 * 60 * 1000

export const returnRoutes: FastifyPluginAsync<ReturnRoutesOptions> = async (scope, options) => {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { service, resolveUser, hasPermission } = options

  app.setSchemaErrorFormatter(readableSchemaError)
  app.removeContentTypeParser('text/plain')
  boundJsonDepth(scope)
  refuseNumbersForDecimals(scope)

  const requirePermissions =
    (...permissions: string[]) =>
    async (request: FastifyRequest) => {
      const user = (await resolveUser(request)) ?? null
      if (!user) throw new ShipmentsErrors.Unauthorized()
      for (const permission of permissions) if (!(await hasPermission(user, permission, request))) throw new ShipmentsErrors.Forbidden(permission)
      ;(request as FastifyRequest & { returnsUser?: ShipmentsUser }).returnsUser = user
    }
  const contextOf = (request: FastifyRequest) => {
    const user = (request as FastifyRequest & { returnsUser?: ShipmentsUser }).returnsUser
    return { userId: user ? String(user.id) : null, source: 'api' }
  }

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error.validation && (error.validationContext === 'body' || error.validationContext === 'querystring')) return reply.code(422).send(validationErrorBody(schemaFieldErrors(error)))
    if (error instanceof ShipmentValidationError) return reply.code(422).send(validationErrorBody(error.errors))
    if (error instanceof ShipmentUpdateRejectedError) {
      request.log.warn({ reason: error.message }, 'Returns request refused')
      return reply.code(422).send(serviceErrorBody(error))
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 && error.statusCode !== 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'Returns request failed')
    return reply.code(status).send(status === 500 ? frameworkErrorBody(status, 'An internal error occurred.', RequestErrorCodes.internal) : frameworkErrorBody(status, error.message, errorCodeOf(error, status)))
  })

  const view = requirePermissions(ShipmentsPermissions.viewShipments)
  const manage = requirePermissions(ShipmentsPermissions.manageReturns)
  const buy = requirePermissions(ShipmentsPermissions.manageReturns, ShipmentsPermissions.buyLabels)

  app.get(
    '/returns',
    { onRequest: view, schema: { summary: 'Returns, newest first: by state, order and age, paged by key', querystring: ReturnListQuerySchema, response: { 200: ReturnListResponseSchema, ...errors } } },
    async (request) => {
      const { state, orderId, olderThanDays, beforeId, limit } = request.query
      const pageSize = Math.min(Math.max(1, Number(limit ?? 50)), 200)
      const returns = await service.list({
        state: state as ReturnState | undefined,
        orderId: orderId === undefined ? undefined : Number(orderId),
        createdBefore: olderThanDays === undefined ? undefined : new Date(options.clock() - Number(olderThanDays) * DAY_MS),
        beforeId: beforeId === undefined ? undefined : Number(beforeId),
        limit: pageSize,
      })
      return { success: true as const, returns, nextBeforeId: returns.length === pageSize ? returns[returns.length - 1]!.id : null }
    },
  )

  app.post(
    '/orders/:orderId/returns',
    {
      onRequest: manage,
      schema: { summary: "Request a return of an order's shipped lines (422 naming each line over what is left to return)", params: OrderIdParamsSchema, body: RequestReturnBodySchema, response: { 201: ReturnResponseSchema, ...errors } },
    },
    async (request, reply) => reply.code(201).send({ success: true as const, return: await service.request(orderIdOf(request.params.orderId), request.body, contextOf(request)) }),
  )

  app.get(
    '/orders/:orderId/returnable',
    { onRequest: view, schema: { summary: 'Per order line: shipped, returned and returnable units; the return reasons', params: OrderIdParamsSchema, response: { 200: ReturnableResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, reasons: [...service.reasons], lines: await service.returnable(orderIdOf(request.params.orderId)) }),
  )

  app.get('/returns/:returnId', { onRequest: view, schema: { summary: 'A return', params: ReturnParamsSchema, response: { 200: ReturnResponseSchema, ...errors } } }, async (request) => {
    const found = await service.get(returnIdOf(request.params.returnId))
    if (!found) throw new ReturnErrors.ReturnNotFound(request.params.returnId)
    return { success: true as const, return: found }
  })

  app.get(
    '/returns/:returnId/history',
    { onRequest: view, schema: { summary: "A return's history, newest first", params: ReturnParamsSchema, response: { 200: ReturnHistoryResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, history: await service.history(returnIdOf(request.params.returnId)) }),
  )

  app.post(
    '/returns/:returnId',
    {
      onRequest: manage,
      schema: { summary: 'Change a return: authorise, reject (with a message), in transit, close; or a tracking number entered by hand', params: ReturnParamsSchema, body: UpdateReturnBodySchema, response: { 200: ReturnResponseSchema, ...errors } },
    },
    async (request) => ({ success: true as const, return: await service.update(returnIdOf(request.params.returnId), request.body as UpdateReturnInput, contextOf(request)) }),
  )

  app.post(
    '/returns/:returnId/label',
    { onRequest: buy, schema: { summary: 'Buy the return label, exactly once (EasyPost: a return shipment)', params: ReturnParamsSchema, body: ReturnLabelBodySchema, response: { 200: ReturnResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, return: await service.buyLabel(returnIdOf(request.params.returnId), request.body as ReturnLabelInput, contextOf(request)) }),
  )

  app.post(
    '/returns/:returnId/label/void',
    {
      onRequest: buy,
      schema: { summary: 'Void an unused return label (EasyPost: a refund); a label_sent return is authorised again', params: ReturnParamsSchema, response: { 200: ReturnLabelVoidResponseSchema, ...errors } },
    },
    async (request) => ({ success: true as const, ...(await service.voidLabel(returnIdOf(request.params.returnId), contextOf(request))) }),
  )

  app.post(
    '/returns/:returnId/receive',
    { onRequest: manage, schema: { summary: 'Record what arrived, line by line with its condition (fires returnReceived)', params: ReturnParamsSchema, body: ReceiveReturnBodySchema, response: { 200: ReturnResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, return: await service.receive(returnIdOf(request.params.returnId), request.body, contextOf(request)) }),
  )
}
