// The manifests' routes under the shipment API: the day's labels waiting for a manifest, a manifest made,
// listed, read, and its form printed. Under the permission that guards label purchase.
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorCodeOf, frameworkErrorBody, ManifestErrors, RequestErrorCodes, serviceErrorBody, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError, validationErrorBody } from '../errors.js'
import { readableSchemaError } from '../http/validation-messages.js'
import { boundJsonDepth } from '../http/json-body.js'
import type { HasPermission, ResolveUser, ShipmentsUser } from '../http/access.js'
import { pathId, schemaFieldErrors, SERVICE_ROUTE_ERRORS } from '../shipments/service-routes.js'
import { FrameworkErrorSchema, IdParamsSchema, ServiceErrorSchema, ValidationErrorSchema } from '../shipments/schemas.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import type { ManifestService } from './service.js'

export interface ManifestRoutesOptions {
  service: ManifestService
  resolveUser: ResolveUser
  hasPermission: HasPermission
}

const errors = { ...SERVICE_ROUTE_ERRORS, 422: Type.Union([ValidationErrorSchema, ServiceErrorSchema, FrameworkErrorSchema]), 502: FrameworkErrorSchema }

const DateText = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: "A day, YYYY-MM-DD in the shop's time zone (default: today)" })

const ManifestSchema = Type.Object({
  id: Type.Integer(),
  integration: Type.String(),
  carrier: Type.String(),
  shipFrom: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('created'), Type.Literal('failed')]),
  externalId: Type.Union([Type.String(), Type.Null()]),
  parcelCount: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()], { description: "Why it failed, in the provider's words" }),
  userId: Type.Union([Type.String(), Type.Null()]),
  formAvailable: Type.Boolean({ description: 'Whether GET /manifests/:id/form has a form to print' }),
  dateCreated: Type.String(),
  dateUpdated: Type.String(),
})

const ManifestWithLabelsSchema = Type.Intersect([ManifestSchema, Type.Object({ labels: Type.Array(Type.Object({ parcelId: Type.Integer(), operationId: Type.String() })) })])

const EligibleResponseSchema = Type.Object({
  integration: Type.String(),
  date: Type.String(),
  truncated: Type.Boolean(),
  groups: Type.Array(
    Type.Object({
      carrier: Type.String(),
      shipFrom: Type.String(),
      needsManifest: Type.Boolean({ description: 'false: the provider makes no manifest for this carrier; its labels need none' }),
      reason: Type.Union([Type.String(), Type.Null()]),
      count: Type.Integer(),
      labels: Type.Array(Type.Object({ shipmentId: Type.Integer(), parcelId: Type.Integer(), operationId: Type.String(), trackingNumber: Type.String(), dateBought: Type.String() })),
    }),
  ),
})

export const EligibleQuerySchema = Type.Object({ integration: Type.String({ minLength: 1, maxLength: 255 }), date: Type.Optional(DateText) }, { additionalProperties: false })
export const ManifestBodySchema = Type.Object(
  { integration: Type.String({ minLength: 1, maxLength: 255 }), carrier: Type.String({ minLength: 1, maxLength: 100 }), date: Type.Optional(DateText) },
  { additionalProperties: false },
)
const ListQuerySchema = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })), before: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })) },
  { additionalProperties: false },
)

function sendPdf(reply: FastifyReply, bytes: Buffer, filename: string) {
  return reply.header('content-type', 'application/pdf').header('content-disposition', `inline; filename="${filename}"`).header('cache-control', 'private, no-store').send(bytes)
}

const manifestIdOf = (raw: string) => pathId(raw, (value) => new ManifestErrors.NotFound(value))

export const manifestRoutes: FastifyPluginAsync<ManifestRoutesOptions> = async (scope, options) => {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { service, resolveUser, hasPermission } = options

  app.setSchemaErrorFormatter(readableSchemaError)
  app.removeContentTypeParser('text/plain')
  boundJsonDepth(scope)

  // The permission that guards label purchase: a manifest hands the day's labels to the carrier.
  const buy = async (request: FastifyRequest) => {
    const user = (await resolveUser(request)) ?? null
    if (!user) throw new ShipmentsErrors.Unauthorized()
    if (!(await hasPermission(user, ShipmentsPermissions.buyLabels, request))) throw new ShipmentsErrors.Forbidden(ShipmentsPermissions.buyLabels)
    ;(request as FastifyRequest & { manifestsUser?: ShipmentsUser }).manifestsUser = user
  }
  const userIdOf = (request: FastifyRequest) => {
    const user = (request as FastifyRequest & { manifestsUser?: ShipmentsUser }).manifestsUser
    return user ? String(user.id) : null
  }

  app.setErrorHandler(async (error: FastifyError, request, reply: FastifyReply) => {
    if (error.validation && (error.validationContext === 'body' || error.validationContext === 'querystring')) return reply.code(422).send(validationErrorBody(schemaFieldErrors(error)))
    if (error instanceof ShipmentValidationError) return reply.code(422).send(validationErrorBody(error.errors))
    if (error instanceof ShipmentUpdateRejectedError) return reply.code(422).send(serviceErrorBody(error))
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 && error.statusCode !== 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'Manifest request failed')
    else if (status >= 422) request.log.warn({ err: error }, 'Manifest request refused')
    return reply.code(status).send(status === 500 ? frameworkErrorBody(status, 'An internal error occurred.', RequestErrorCodes.internal) : frameworkErrorBody(status, error.message, errorCodeOf(error, status)))
  })

  app.get(
    '/manifests/eligible',
    { onRequest: buy, schema: { summary: "The day's labels of an integration waiting for a manifest, by carrier and ship-from", querystring: EligibleQuerySchema, response: { 200: EligibleResponseSchema, ...errors } } },
    async (request) => service.eligible(request.query),
  )

  app.post(
    '/manifests',
    {
      onRequest: buy,
      schema: {
        summary: "Make the manifest of the day's labels of one carrier (USPS's SCAN form through EasyPost)",
        body: ManifestBodySchema,
        response: { 201: ManifestWithLabelsSchema, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await service.create(request.body, { userId: userIdOf(request) })),
  )

  app.get(
    '/manifests',
    { onRequest: buy, schema: { summary: 'Manifests, newest first', querystring: ListQuerySchema, response: { 200: Type.Object({ manifests: Type.Array(ManifestSchema) }), ...errors } } },
    async (request) => ({ manifests: await service.list(request.query) }),
  )

  app.get(
    '/manifests/:id',
    { onRequest: buy, schema: { summary: 'A manifest with its labels', params: IdParamsSchema, response: { 200: ManifestWithLabelsSchema, ...errors } } },
    async (request) => {
      const id = manifestIdOf(request.params.id)
      const manifest = await service.get(id)
      if (!manifest) throw new ManifestErrors.NotFound(id)
      return manifest
    },
  )

  app.get(
    '/manifests/:id/form',
    {
      onRequest: buy,
      schema: {
        summary: "A manifest's form to print (PDF), fetched from the provider's file host",
        params: IdParamsSchema,
        response: { 200: { description: 'The form, a PDF.', content: { 'application/pdf': { schema: Type.String({ format: 'binary' }) } } }, ...errors },
      },
    },
    async (request, reply) => {
      const id = manifestIdOf(request.params.id)
      const bytes = await service.form(id)
      return sendPdf(reply, bytes, `manifest-${id}.pdf`)
    },
  )
}
