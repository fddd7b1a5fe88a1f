// The pack station's routes under the shipment API: a slip opened, an item scanned, a parcel finished
// (its label bought by the shipping rules). Guarded by the label purchase's permission: a station buys labels.
import type { FastifyError, FastifyPluginAsync, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { errorCodeOf, frameworkErrorBody, PackStationErrors, RequestErrorCodes, serviceErrorBody, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError, validationErrorBody } from '../errors.js'
import { readableSchemaError } from '../http/validation-messages.js'
import { boundJsonDepth } from '../http/json-body.js'
import { DecimalString, refuseNumbersForDecimals } from '../http/exact-decimals.js'
import { LABEL_FORMATS, type LabelFormat } from '../gateway/delivery-provider.js'
import { WEIGHT_UNITS } from '../model/units.js'
import type { HasPermission, ResolveUser, ShipmentsUser } from '../http/access.js'
import { IdParamsSchema } from '../shipments/schemas.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import { pathId, schemaFieldErrors, SERVICE_ROUTE_ERRORS_WITH_CODED_422 } from '../shipments/service-routes.js'
import { SHIPMENT_STATUSES } from '../model/shipment.js'
import type { PackStationService } from './service.js'

export interface PackStationRoutesOptions {
  service: PackStationService
  resolveUser: ResolveUser
  hasPermission: HasPermission
}

const Literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((value) => Type.Literal(value)))
const NullableString = Type.Union([Type.String(), Type.Null()])

const CountsSchema = Type.Array(
  Type.Object({ lineItemId: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), quantity: Type.Integer({ minimum: 0, maximum: 2_147_483_647 }) }, { additionalProperties: false }),
  { maxItems: 500, description: 'The units counted so far per order line, as the station keeps them (the server keeps no count)' },
)
const ScanCode = Type.String({ minLength: 1, maxLength: 255, description: 'What the scanner typed' })

const PackLineSchema = Type.Object({
  lineItemId: Type.Integer(),
  name: Type.String(),
  sku: NullableString,
  barcode: NullableString,
  code: Type.Union([Type.String(), Type.Null()], { description: 'What a scan of this line must read: its barcode, else its SKU' }),
  needed: Type.Integer(),
  counted: Type.Integer(),
})
const PackLabelSchema = Type.Object({
  parcelId: Type.Integer(),
  url: Type.String({ description: "The label file (the provider's URL); GET .../shipments/{id}/parcels/{parcelId}/label gives it in another format" }),
  format: Type.String(),
  carrier: NullableString,
  service: NullableString,
  trackingNumber: NullableString,
})
const PackShipmentSchema = Type.Object({
  id: Type.Integer(),
  reference: Type.String(),
  orderId: Type.Integer(),
  status: Literals(SHIPMENT_STATUSES),
  lines: Type.Array(PackLineSchema),
  complete: Type.Boolean({ description: 'Every line counted in full' }),
  weight: Type.Union([Type.Object({ value: Type.String(), unit: Type.String() }), Type.Null()], { description: "The one parcel's weight, to confirm; null: none yet" }),
  labels: Type.Array(PackLabelSchema),
})

export const PackOpenBodySchema = Type.Object({ code: ScanCode }, { additionalProperties: false })
export const PackScanBodySchema = Type.Object({ code: ScanCode, counted: CountsSchema }, { additionalProperties: false })
export const PackFinishBodySchema = Type.Object(
  {
    counted: CountsSchema,
    weight: Type.Optional(Type.Object({ value: DecimalString, unit: Literals(WEIGHT_UNITS) }, { additionalProperties: false })),
    labelFormat: Type.Optional(Literals(LABEL_FORMATS)),
  },
  { additionalProperties: false },
)
const OpenResponseSchema = Type.Object({ success: Type.Literal(true), shipment: PackShipmentSchema })
const ScanResponseSchema = Type.Object({ success: Type.Literal(true), shipment: PackShipmentSchema, line: PackLineSchema })
const FinishResponseSchema = Type.Object({
  success: Type.Literal(true),
  shipment: PackShipmentSchema,
  bought: Type.Integer({ description: 'Labels bought by this call; 0 when every parcel had its label already' }),
  labels: Type.Array(PackLabelSchema),
})

const errors = SERVICE_ROUTE_ERRORS_WITH_CODED_422
const shipmentIdOf = (raw: string) => pathId(raw, (value) => new PackStationErrors.UnknownShipment(value))

export const packStationRoutes: FastifyPluginAsync<PackStationRoutesOptions> = async (scope, options) => {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { service, resolveUser, hasPermission } = options

  app.setSchemaErrorFormatter(readableSchemaError)
  app.removeContentTypeParser('text/plain')
  boundJsonDepth(scope)
  refuseNumbersForDecimals(scope)

  const station = async (request: FastifyRequest) => {
    const user = (await resolveUser(request)) ?? null
    if (!user) throw new ShipmentsErrors.Unauthorized()
    if (!(await hasPermission(user, ShipmentsPermissions.buyLabels, request))) throw new ShipmentsErrors.Forbidden(ShipmentsPermissions.buyLabels)
    ;(request as FastifyRequest & { packStationUser?: ShipmentsUser }).packStationUser = user
  }
  const userIdOf = (request: FastifyRequest) => {
    const user = (request as FastifyRequest & { packStationUser?: ShipmentsUser }).packStationUser
    return user ? String(user.id) : null
  }

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error.validation && error.validationContext === 'body') return reply.code(422).send(validationErrorBody(schemaFieldErrors(error)))
    if (error instanceof ShipmentValidationError) return reply.code(422).send(validationErrorBody(error.errors, error.code))
    if (error instanceof ShipmentUpdateRejectedError) {
      request.log.warn({ reason: error.message }, 'Pack station request refused')
      return reply.code(422).send(serviceErrorBody(error))
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 && error.statusCode !== 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'Pack station request failed')
    return reply.code(status).send(status === 500 ? frameworkErrorBody(status, 'An internal error occurred.', RequestErrorCodes.internal) : frameworkErrorBody(status, error.message, errorCodeOf(error, status)))
  })

  app.post(
    '/pack-station/open',
    { onRequest: station, schema: { summary: "Pack station: open the shipment of a scanned packing slip (its reference)", body: PackOpenBodySchema, response: { 200: OpenResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, shipment: await service.open(request.body.code) }),
  )

  app.post(
    '/pack-station/shipments/:id/scan',
    {
      onRequest: station,
      schema: { summary: "Pack station: count a scanned item (its barcode, else its SKU) against the shipment", params: IdParamsSchema, body: PackScanBodySchema, response: { 200: ScanResponseSchema, ...errors } },
    },
    async (request) => ({ success: true as const, ...(await service.scan(shipmentIdOf(request.params.id), request.body.code, request.body.counted)) }),
  )

  app.post(
    '/pack-station/shipments/:id/finish',
    {
      onRequest: station,
      schema: { summary: 'Pack station: store the parcel with its weight and buy its label by the shipping rules, once', params: IdParamsSchema, body: PackFinishBodySchema, response: { 200: FinishResponseSchema, ...errors } },
    },
    async (request) => {
      const { counted, weight, labelFormat } = request.body
      const result = await service.finish(shipmentIdOf(request.params.id), { counted, weight, labelFormat: labelFormat as LabelFormat | undefined }, { userId: userIdOf(request) })
      return { success: true as const, ...result }
    },
  )
}
