// The customs routes under the shipment API: the shop's customs settings (read; replaced whole) and a
// parcel's declaration (read, built when none is stored; replaced whole by an edit; reset to the built
// one). Reading needs viewShipments; changing needs editShipments, as the shipping rules and parcels do.
import type { FastifyError, FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { DeliveryErrors, errorCodeOf, frameworkErrorBody, RequestErrorCodes, serviceErrorBody, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError, validationErrorBody } from '../errors.js'
import { readableSchemaError } from '../http/validation-messages.js'
import { boundJsonDepth, objectBodyOnly } from '../http/json-body.js'
import { permissionHooks, type HasPermission, type ResolveUser } from '../http/access.js'
import { pathId, SERVICE_ROUTE_ERRORS } from '../shipments/service-routes.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import { ParcelParamsSchema } from '../deliveries/schemas.js'
import type { DeclarationInput } from './checks.js'
import { CustomsSettingsBodySchema, CustomsSettingsResponseSchema, DeclarationBodySchema, ParcelCustomsResponseSchema } from './schemas.js'
import type { CustomsService } from './service.js'

export interface CustomsRoutesOptions {
  service: CustomsService
  resolveUser: ResolveUser
  hasPermission: HasPermission
}

const errors = SERVICE_ROUTE_ERRORS
const shipmentIdOf = (raw: string) => pathId(raw, (value) => new ShipmentsErrors.ShipmentNotFound(value))
const parcelIdOf = (raw: string) => pathId(raw, (value) => new DeliveryErrors.ParcelNotFound(value))

export const customsRoutes: FastifyPluginAsync<CustomsRoutesOptions> = async (scope, options) => {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { service, resolveUser, hasPermission } = options
  app.setSchemaErrorFormatter(readableSchemaError)
  app.removeContentTypeParser('text/plain')
  boundJsonDepth(scope)

  const { requirePermission, userIdOf } = permissionHooks(resolveUser, hasPermission)
  const view = requirePermission(ShipmentsPermissions.viewShipments)
  const edit = requirePermission(ShipmentsPermissions.editShipments)

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error.validation && error.validationContext === 'body') return reply.code(422).send(validationErrorBody({ body: ['must be an object'] }))
    if (error instanceof ShipmentValidationError) return reply.code(422).send(validationErrorBody(error.errors, error.code))
    if (error instanceof ShipmentUpdateRejectedError) return reply.code(422).send(serviceErrorBody(error))
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 && error.statusCode !== 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'Customs request failed')
    return reply.code(status).send(status === 500 ? frameworkErrorBody(status, 'An internal error occurred.', RequestErrorCodes.internal) : frameworkErrorBody(status, error.message, errorCodeOf(error, status)))
  })

  app.get('/customs-settings', { onRequest: view, schema: { summary: 'The shop\'s customs settings every declaration starts from', response: { 200: CustomsSettingsResponseSchema, ...errors } } }, async () => ({
    success: true as const,
    ...(await service.settings()),
  }))

  app.put(
    '/customs-settings',
    {
      onRequest: edit,
      validatorCompiler: objectBodyOnly,
      schema: { summary: 'Replace the customs settings, whole (checked first: a refusal names each field and saves nothing)', body: CustomsSettingsBodySchema, response: { 200: CustomsSettingsResponseSchema, ...errors } },
    },
    async (request) => ({ success: true as const, ...(await service.replaceSettings(request.body, { userId: userIdOf(request) })) }),
  )

  const declarationPath = '/shipments/:id/parcels/:parcelId/customs'
  const ids = (params: { id: string; parcelId: string }) => [shipmentIdOf(params.id), parcelIdOf(params.parcelId)] as const

  app.get(
    declarationPath,
    {
      onRequest: view,
      schema: {
        summary: "A parcel's customs declaration with its totals and problems (built when none is stored); required: false for a parcel that stays in one country",
        params: ParcelParamsSchema,
        response: { 200: ParcelCustomsResponseSchema, ...errors },
      },
    },
    async (request) => ({ success: true as const, ...(await service.parcelCustoms(...ids(request.params))) }),
  )

  app.put(
    declarationPath,
    {
      onRequest: edit,
      validatorCompiler: objectBodyOnly,
      schema: {
        summary: "Replace a parcel's declaration with an edit, whole (checked first, each line and field named; nothing saved on a refusal); kept until reset",
        params: ParcelParamsSchema,
        body: DeclarationBodySchema,
        response: { 200: ParcelCustomsResponseSchema, ...errors },
      },
    },
    async (request) => ({ success: true as const, ...(await service.saveDeclaration(...ids(request.params), request.body as DeclarationInput)) }),
  )

  app.delete(
    declarationPath,
    { onRequest: edit, schema: { summary: "Drop a parcel's edited declaration: the built one holds again", params: ParcelParamsSchema, response: { 200: ParcelCustomsResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, ...(await service.resetDeclaration(...ids(request.params))) }),
  )
}
