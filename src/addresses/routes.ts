// The routes of verified addresses under the shipment API: a shipment's ship-to check read, verified now,
// its correction accepted or the address shipped as is; and the address verification setting. Reading
// needs viewShipments; verifying (a provider call), deciding and the setting need editShipments, the
// permission that guards rates, boxes and the shipping rules.
import type { FastifyError, FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { errorCodeOf, frameworkErrorBody, RequestErrorCodes, serviceErrorBody, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError, validationErrorBody } from '../errors.js'
import { readableSchemaError } from '../http/validation-messages.js'
import { boundJsonDepth } from '../http/json-body.js'
import { permissionHooks, type HasPermission, type ResolveUser } from '../http/access.js'
import { pathId, schemaFieldErrors, SERVICE_ROUTE_ERRORS_WITH_CODED_422 } from '../shipments/service-routes.js'
import { IdParamsSchema } from '../shipments/schemas.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import { AddressCheckSchema, AddressVerificationBodySchema, AddressVerificationSettingSchema, VerifyBodySchema } from './schemas.js'
import type { AddressService } from './service.js'

export interface AddressRoutesOptions {
  service: AddressService
  resolveUser: ResolveUser
  hasPermission: HasPermission
}

const errors = SERVICE_ROUTE_ERRORS_WITH_CODED_422
const shipmentIdOf = (raw: string) => pathId(raw, (value) => new ShipmentsErrors.ShipmentNotFound(value))

export const addressRoutes: FastifyPluginAsync<AddressRoutesOptions> = async (scope, options) => {
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
    if (error instanceof ShipmentValidationError) return reply.code(422).send(validationErrorBody(error.errors))
    if (error instanceof ShipmentUpdateRejectedError) return reply.code(422).send(serviceErrorBody(error))
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 && error.statusCode !== 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'Address verification request failed')
    return reply.code(status).send(status === 500 ? frameworkErrorBody(status, 'An internal error occurred.', RequestErrorCodes.internal) : frameworkErrorBody(status, error.message, errorCodeOf(error, status)))
  })

  app.get(
    '/address-verification',
    { onRequest: view, schema: { summary: 'The address verification setting: off, warn or block, and the integration that verifies', response: { 200: AddressVerificationSettingSchema, ...errors } } },
    async () => ({ success: true as const, ...(await service.setting()) }),
  )
  app.put(
    '/address-verification',
    {
      onRequest: edit,
      schema: {
        summary: 'Save the address verification setting (the integration must sell labels and verify addresses; a refusal saves nothing)',
        body: AddressVerificationBodySchema,
        response: { 200: AddressVerificationSettingSchema, ...errors },
      },
    },
    async (request) => ({ success: true as const, ...(await service.saveSetting(request.body, { userId: userIdOf(request) })) }),
  )

  const check = { params: IdParamsSchema, response: { 200: AddressCheckSchema, ...errors } }
  app.get('/shipments/:id/address-check', { onRequest: view, schema: { summary: "The shipment's ship-to check: the carrier's verdict, its corrections, whether it still holds", ...check } }, async (request) => ({
    success: true as const,
    ...(await service.check(shipmentIdOf(request.params.id))),
  }))
  app.post(
    '/shipments/:id/address-check',
    { onRequest: edit, schema: { summary: "Verify the order's shipping address now through the provider, storing the verdict (an earlier decision is cleared)", body: VerifyBodySchema, ...check } },
    async (request) => ({ success: true as const, ...(await service.verify(shipmentIdOf(request.params.id), request.body ?? {})) }),
  )
  app.post(
    '/shipments/:id/address-check/accept',
    { onRequest: edit, schema: { summary: "Accept the carrier's correction: it becomes the shipment's own ship-to (the host's order is not changed)", ...check } },
    async (request) => ({ success: true as const, ...(await service.accept(shipmentIdOf(request.params.id))) }),
  )
  app.post(
    '/shipments/:id/address-check/as-is',
    { onRequest: edit, schema: { summary: 'Ship to the address as it is, knowingly (block mode then lets an undeliverable verdict through)', ...check } },
    async (request) => ({ success: true as const, ...(await service.asIs(shipmentIdOf(request.params.id))) }),
  )
}
