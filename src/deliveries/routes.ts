// The deliveries routes under the shipment API: parcels, rates, label purchase, documents and voids.
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyPluginAsync, FastifyRequest, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { DeliveryErrors, errorCodeOf, frameworkErrorBody, RequestErrorCodes, serviceErrorBody, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError, validationErrorBody } from '../errors.js'
import { readableSchemaError } from '../http/validation-messages.js'
import { boundJsonDepth } from '../http/json-body.js'
import { refuseNumbersForDecimals } from '../http/exact-decimals.js'
import { pathId, schemaFieldErrors, SERVICE_ROUTE_ERRORS_WITH_CODED_422 } from '../shipments/service-routes.js'
import { permissionHooks, type HasPermission, type ResolveUser } from '../http/access.js'
import type { ParcelInput } from '../model/parcel.js'
import { IdParamsSchema } from '../shipments/schemas.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import {
  BoxBodySchema,
  BoxListResponseSchema,
  BoxParamsSchema,
  BoxResponseSchema,
  SuccessSchema,
  AcceptSuggestionBodySchema,
  AcceptSuggestionResponseSchema,
  SuggestBodySchema,
  SuggestResponseSchema,
  BuyBodySchema,
  BuyResponseSchema,
  LabelQuerySchema,
  LabelResponseSchema,
  FormsResponseSchema,
  OperationsResponseSchema,
  ParcelBodySchema,
  ParcelListResponseSchema,
  ParcelParamsSchema,
  ParcelResponseSchema,
  RatesBodySchema,
  RatesResponseSchema,
  VoidResponseSchema,
  ShipFromBodySchema,
  ShipFromResponseSchema,
} from './schemas.js'
import type { PostalAddress } from '../order-store.js'
import type { LabelFormat } from '../gateway/delivery-provider.js'
import type { BoxInput, BoxService, SuggestionToAccept } from './boxes.js'
import type { BuyLabelInput, DeliveryService } from './service.js'

export interface DeliveryRoutesOptions {
  service: DeliveryService
  boxes: BoxService
  resolveUser: ResolveUser
  hasPermission: HasPermission
}

// A coded 422 too: rates and labels refused by the ship-to gate (SHIPMENTS_ADDRESS_UNDELIVERABLE).
const errors = SERVICE_ROUTE_ERRORS_WITH_CODED_422

const shipmentIdOf = (raw: string) => pathId(raw, (value) => new ShipmentsErrors.ShipmentNotFound(value))
const parcelIdOf = (raw: string) => pathId(raw, (value) => new DeliveryErrors.ParcelNotFound(value))
const boxIdOf = (raw: string) => pathId(raw, (value) => new DeliveryErrors.BoxNotFound(value))

/** The scope the routes are registered in, with TypeBox's types. */
type DeliveryApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>
/** A route's permission check (see requirePermission). */
type Guard = (request: FastifyRequest) => Promise<void>

/** What each group of routes is given: the scope, the checks of each permission, the user of a request. */
interface DeliveryRouteScope {
  app: DeliveryApp
  view: Guard
  edit: Guard
  buy: Guard
  userIdOf: (request: FastifyRequest) => string | null
}

export const deliveryRoutes: FastifyPluginAsync<DeliveryRoutesOptions> = async (scope, options) => {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { resolveUser, hasPermission } = options

  app.setSchemaErrorFormatter(readableSchemaError)
  app.removeContentTypeParser('text/plain')
  boundJsonDepth(scope)
  refuseNumbersForDecimals(scope)
  app.addHook('preValidation', async (request) => {
    if (request.method === 'POST' && request.body === undefined) request.body = {}
  })

  const { requirePermission, userIdOf } = permissionHooks(resolveUser, hasPermission)

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error.validation && error.validationContext === 'body') return reply.code(422).send(validationErrorBody(schemaFieldErrors(error)))
    if (error instanceof ShipmentValidationError) return reply.code(422).send(validationErrorBody(error.errors, error.code))
    if (error instanceof ShipmentUpdateRejectedError) {
      request.log.warn({ reason: error.message }, 'Deliveries request refused')
      return reply.code(422).send(serviceErrorBody(error))
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 && error.statusCode !== 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'Deliveries request failed')
    return reply.code(status).send(status === 500 ? frameworkErrorBody(status, 'An internal error occurred.', RequestErrorCodes.internal) : frameworkErrorBody(status, error.message, errorCodeOf(error, status)))
  })

  const view = requirePermission(ShipmentsPermissions.viewShipments)
  const edit = requirePermission(ShipmentsPermissions.editShipments)
  const buy = requirePermission(ShipmentsPermissions.buyLabels)

  const routes: DeliveryRouteScope = { app, view, edit, buy, userIdOf }
  registerParcelRoutes(routes, options)
  registerLabelRoutes(routes, options)
  registerBoxRoutes(routes, options)
  registerShipFromRoutes(routes, options)
  // Last, as before: the OpenAPI document lists the paths in the order they were registered.
  registerLabelOperationRoutes(routes, options)
}

/** A shipment's parcels: listed, added, changed, removed. */
function registerParcelRoutes({ app, view, edit, userIdOf }: DeliveryRouteScope, { service }: DeliveryRoutesOptions): void {
  app.get(
    '/shipments/:id/parcels',
    { onRequest: view, schema: { summary: "A shipment's parcels", params: IdParamsSchema, response: { 200: ParcelListResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, parcels: await service.listParcels(shipmentIdOf(request.params.id)) }),
  )

  app.post(
    '/shipments/:id/parcels',
    { onRequest: edit, schema: { summary: 'Add a parcel to a shipment', params: IdParamsSchema, body: ParcelBodySchema, response: { 201: ParcelResponseSchema, ...errors } } },
    async (request, reply) => {
      // The schema leaves the units strings: the service checks them, each refusal under its field (a 422).
      const parcel = await service.addParcel(shipmentIdOf(request.params.id), request.body as ParcelInput, { userId: userIdOf(request) })
      return reply.code(201).send({ success: true as const, parcel })
    },
  )

  app.post(
    '/shipments/:id/parcels/:parcelId',
    { onRequest: edit, schema: { summary: 'Change a parcel (refused with 409 while it has a label)', params: ParcelParamsSchema, body: ParcelBodySchema, response: { 200: ParcelResponseSchema, ...errors } } },
    async (request) => ({
      success: true as const,
      parcel: await service.updateParcel(shipmentIdOf(request.params.id), parcelIdOf(request.params.parcelId), request.body as ParcelInput, { userId: userIdOf(request) }),
    }),
  )

  app.delete(
    '/shipments/:id/parcels/:parcelId',
    { onRequest: edit, schema: { summary: 'Remove a parcel (refused with 409 while it has a label)', params: ParcelParamsSchema, response: { 200: ParcelResponseSchema, ...errors } } },
    async (request) => ({
      success: true as const,
      parcel: await service.removeParcel(shipmentIdOf(request.params.id), parcelIdOf(request.params.parcelId), { userId: userIdOf(request) }),
    }),
  )
}

/** A parcel's rates, its label bought, fetched and voided. */
function registerLabelRoutes({ app, view, edit, buy, userIdOf }: DeliveryRouteScope, { service }: DeliveryRoutesOptions): void {
  app.post(
    '/shipments/:id/parcels/:parcelId/rates',
    { onRequest: edit, schema: { summary: 'Quote rates for a parcel (stored with an expiry), cheapest first', params: ParcelParamsSchema, body: RatesBodySchema, response: { 200: RatesResponseSchema, ...errors } } },
    async (request) => ({
      success: true as const,
      quotes: await service.quoteRates(shipmentIdOf(request.params.id), parcelIdOf(request.params.parcelId), request.body),
      addressWarning: await service.addressChecks.warningFor(shipmentIdOf(request.params.id)),
    }),
  )

  app.post(
    '/shipments/:id/parcels/:parcelId/label',
    { onRequest: buy, schema: { summary: 'Buy a label for a parcel, exactly once', params: ParcelParamsSchema, body: BuyBodySchema, response: { 200: BuyResponseSchema, ...errors } } },
    async (request) => {
      const result = await service.buyLabel(shipmentIdOf(request.params.id), parcelIdOf(request.params.parcelId), request.body as BuyLabelInput, { userId: userIdOf(request) })
      return { success: true as const, ...result, addressWarning: await service.addressChecks.warningFor(result.parcel.shipmentId) }
    },
  )

  app.get(
    '/shipments/:id/parcels/:parcelId/label',
    { onRequest: view, schema: { summary: "A parcel's label, in its format or converted", params: ParcelParamsSchema, querystring: LabelQuerySchema, response: { 200: LabelResponseSchema, ...errors } } },
    async (request) => {
      const shipmentId = shipmentIdOf(request.params.id)
      const parcelId = parcelIdOf(request.params.parcelId)
      const document = await service.labelDocument(shipmentId, parcelId, (request.query.format as LabelFormat | undefined) ?? 'PDF')
      return { success: true as const, ...document }
    },
  )

  app.post(
    '/shipments/:id/parcels/:parcelId/label/void',
    { onRequest: buy, schema: { summary: "Void a parcel's label (a refund asked of the carrier)", params: ParcelParamsSchema, response: { 200: VoidResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, ...(await service.voidLabel(shipmentIdOf(request.params.id), parcelIdOf(request.params.parcelId), { userId: userIdOf(request) })) }),
  )
}

/** Suggested parcels and the box catalogue. */
function registerBoxRoutes({ app, view, edit, userIdOf }: DeliveryRouteScope, options: DeliveryRoutesOptions): void {
  app.post(
    '/shipments/:id/parcels/suggest',
    {
      onRequest: edit,
      schema: { summary: "Suggest parcels: the shipment's units packed into the fewest boxes of the catalogue", params: IdParamsSchema, body: SuggestBodySchema, response: { 200: SuggestResponseSchema, ...SERVICE_ROUTE_ERRORS_WITH_CODED_422 } },
    },
    async (request) => ({ success: true as const, ...(await options.boxes.suggestParcels(shipmentIdOf(request.params.id), request.body, { userId: userIdOf(request) })) }),
  )
  app.post(
    '/shipments/:id/parcels/accept-suggestion',
    {
      onRequest: edit,
      schema: {
        summary: 'Accept a suggestion as it was shown: its parcels created, not packed again (409 when the shipment or the boxes changed since)',
        params: IdParamsSchema,
        body: AcceptSuggestionBodySchema,
        response: { 201: AcceptSuggestionResponseSchema, ...SERVICE_ROUTE_ERRORS_WITH_CODED_422 },
      },
    },
    async (request, reply) => {
      const parcels = await options.boxes.acceptSuggestion(shipmentIdOf(request.params.id), request.body as SuggestionToAccept, { userId: userIdOf(request) })
      return reply.code(201).send({ success: true as const, parcels })
    },
  )

  app.get('/boxes', { onRequest: view, schema: { summary: 'The box catalogue', response: { 200: BoxListResponseSchema, ...errors } } }, async () => ({
    success: true as const,
    boxes: await options.boxes.listBoxes(),
  }))
  app.post('/boxes', { onRequest: edit, schema: { summary: 'Add a box to the catalogue', body: BoxBodySchema, response: { 201: BoxResponseSchema, ...errors } } }, async (request, reply) =>
    reply.code(201).send({ success: true as const, box: await options.boxes.createBox(request.body as BoxInput) }),
  )
  app.post(
    '/boxes/:boxId',
    { onRequest: edit, schema: { summary: 'Change a box', params: BoxParamsSchema, body: BoxBodySchema, response: { 200: BoxResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, box: await options.boxes.updateBox(boxIdOf(request.params.boxId), request.body as BoxInput) }),
  )
  app.delete(
    '/boxes/:boxId',
    { onRequest: edit, schema: { summary: 'Remove a box (parcels packed in it keep their size and weight)', params: BoxParamsSchema, response: { 200: SuccessSchema, ...errors } } },
    async (request) => {
      await options.boxes.removeBox(boxIdOf(request.params.boxId))
      return { success: true as const }
    },
  )
}

/** Where parcels ship from. */
function registerShipFromRoutes({ app, view, edit }: DeliveryRouteScope, { service }: DeliveryRoutesOptions): void {
  app.get('/ship-from', { onRequest: view, schema: { summary: 'Where parcels ship from', response: { 200: ShipFromResponseSchema, ...errors } } }, async () => {
    const { address, source } = await service.shipFrom()
    return { success: true as const, shipFrom: address, source }
  })
  app.put(
    '/ship-from',
    { onRequest: edit, schema: { summary: 'Set where parcels ship from (null: back to the deliveries.shipFrom option)', body: ShipFromBodySchema, response: { 200: ShipFromResponseSchema, ...errors } } },
    async (request) => {
      try {
        const { address, source } = await service.setShipFrom(request.body.shipFrom as PostalAddress | null)
        return { success: true as const, shipFrom: address, source }
      } catch (error) {
        // The body's one field: its problems are named under it, as a schema's would be.
        if (!(error instanceof ShipmentValidationError)) throw error
        throw new ShipmentValidationError(Object.fromEntries(Object.entries(error.errors).map(([field, messages]) => [field === 'shipFrom' ? field : `shipFrom.${field}`, messages])))
      }
    },
  )
}

/** A parcel's label operations with their attempt logs. */
function registerLabelOperationRoutes({ app, view }: DeliveryRouteScope, { service }: DeliveryRoutesOptions): void {
  app.get(
    '/shipments/:id/parcels/:parcelId/label/operations',
    { onRequest: view, schema: { summary: "A parcel's label operations with their attempt logs", params: ParcelParamsSchema, response: { 200: OperationsResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, operations: await service.labelOperations(shipmentIdOf(request.params.id), parcelIdOf(request.params.parcelId)) }),
  )
  app.get(
    '/shipments/:id/parcels/:parcelId/forms',
    { onRequest: view, schema: { summary: "The customs forms the provider returned with a parcel's international label", params: ParcelParamsSchema, response: { 200: FormsResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, ...(await service.labelForms(shipmentIdOf(request.params.id), parcelIdOf(request.params.parcelId))) }),
  )
}
