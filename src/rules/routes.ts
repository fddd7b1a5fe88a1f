// The shipping rules' routes under the shipment API: the rules read and replaced whole, and the dry run
// of a shipment ("which rule and why", rated on request). Reading needs viewShipments; saving the rules
// and rating (which stores quotes) need editShipments, the permission that guards boxes and ship-from.
import type { FastifyError, FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { errorCodeOf, frameworkErrorBody, RequestErrorCodes, serviceErrorBody, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError, validationErrorBody } from '../errors.js'
import { readableSchemaError } from '../http/validation-messages.js'
import { boundJsonDepth, objectBodyOnly } from '../http/json-body.js'
import { permissionHooks, type HasPermission, type ResolveUser } from '../http/access.js'
import { pathId, schemaFieldErrors, SERVICE_ROUTE_ERRORS_WITH_CODED_422 } from '../shipments/service-routes.js'
import { FrameworkErrorSchema } from '../shipments/schemas.js'
import { IdParamsSchema } from '../shipments/schemas.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import { ExplainQuerySchema, ExplanationResponseSchema, RulesBodySchema, RulesResponseSchema } from './schemas.js'
import type { ShippingRulesService } from './service.js'
import type { ShippingRulesInput } from './validation.js'

export interface ShippingRuleRoutesOptions {
  service: ShippingRulesService
  resolveUser: ResolveUser
  hasPermission: HasPermission
}

// A coded 422 too: a rated dry run refused by the ship-to gate (SHIPMENTS_ADDRESS_UNDELIVERABLE).
const errors = { ...SERVICE_ROUTE_ERRORS_WITH_CODED_422, 502: FrameworkErrorSchema }

// The rules' body is only required to be an object (objectBodyOnly): the service checks the rest and names
// each rule; Ajv would drop a misspelt `conditions` silently and make a rule that matches every parcel.
const shipmentIdOf = (raw: string) => pathId(raw, (value) => new ShipmentsErrors.ShipmentNotFound(value))

export const shippingRuleRoutes: FastifyPluginAsync<ShippingRuleRoutesOptions> = async (scope, options) => {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { service, resolveUser, hasPermission } = options
  app.setSchemaErrorFormatter(readableSchemaError)
  app.removeContentTypeParser('text/plain')
  boundJsonDepth(scope)

  const { requirePermission, userIdOf } = permissionHooks(resolveUser, hasPermission)
  const view = requirePermission(ShipmentsPermissions.viewShipments)
  const edit = requirePermission(ShipmentsPermissions.editShipments)

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error.validation && error.validationContext === 'body') return reply.code(422).send(validationErrorBody(schemaFieldErrors(error)))
    if (error instanceof ShipmentValidationError) return reply.code(422).send(validationErrorBody(error.errors, error.code))
    if (error instanceof ShipmentUpdateRejectedError) return reply.code(422).send(serviceErrorBody(error))
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 && error.statusCode !== 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'Shipping rules request failed')
    return reply.code(status).send(status === 500 ? frameworkErrorBody(status, 'An internal error occurred.', RequestErrorCodes.internal) : frameworkErrorBody(status, error.message, errorCodeOf(error, status)))
  })

  app.get('/shipping-rules', { onRequest: view, schema: { summary: 'The shipping rules, in order, and the default', response: { 200: RulesResponseSchema, ...errors } } }, async () => ({
    success: true as const,
    ...(await service.saved()),
  }))

  app.put(
    '/shipping-rules',
    {
      onRequest: edit,
      validatorCompiler: objectBodyOnly,
      schema: {
        summary: 'Replace the shipping rules and the default, whole (checked first: a refusal names each rule and field, and saves nothing)',
        body: RulesBodySchema,
        response: { 200: RulesResponseSchema, ...errors },
      },
    },
    // Only an object so far (objectBodyOnly): the service checks every rule before anything is written.
    async (request) => ({ success: true as const, ...(await service.replace(request.body as ShippingRulesInput, { userId: userIdOf(request) })) }),
  )

  app.get(
    '/shipments/:id/shipping-rules',
    {
      onRequest: view,
      schema: {
        summary: "Which rule and why: each parcel's facts, the rules tried with their checks, the rule or default that applies; with rate=true the offer it would take (nothing is bought)",
        params: IdParamsSchema,
        querystring: ExplainQuerySchema,
        response: { 200: ExplanationResponseSchema, ...errors },
      },
    },
    async (request) => {
      const rate = request.query.rate === true
      // Rating asks the carrier and stores quotes, as asking for rates does: it needs the same permission.
      if (rate) await edit(request)
      return { success: true as const, ...(await service.explain(shipmentIdOf(request.params.id), { rate })) }
    },
  )
}
