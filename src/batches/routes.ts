// The label batch routes under the shipment API: create a batch, read one with a page of its items, list
// them, retry the failed ones, cancel what has not started. Guarded by the permission that buys labels.
import type { FastifyError, FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { BatchErrors, errorCodeOf, frameworkErrorBody, RequestErrorCodes, serviceErrorBody, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError, validationErrorBody } from '../errors.js'
import { readableSchemaError } from '../http/validation-messages.js'
import { boundJsonDepth } from '../http/json-body.js'
import { permissionHooks, type HasPermission, type ResolveUser } from '../http/access.js'
import { LABEL_FORMATS } from '../gateway/delivery-provider.js'
import { MAX_REQUEST_INTEGER, ShipmentStatusSchema } from '../shipments/schemas.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import { pathId, schemaFieldErrors, SERVICE_ROUTE_ERRORS } from '../shipments/service-routes.js'
import type { LabelBatchSelection, LabelBatchService } from './service.js'
import type { DocumentService } from '../documents/service.js'
import { MAX_PRINT_JOB_PARCELS } from '../documents/print-job.js'
import { notPrintedHeader, sendPdf, sendZpl } from '../documents/routes.js'

export interface BatchRoutesOptions {
  service: LabelBatchService
  /** The batch's print job: its labels in pick order, with slips and a pick list as asked. */
  documents: Pick<DocumentService, 'printJob'>
  resolveUser: ResolveUser
  hasPermission: HasPermission
}

const Literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((value) => Type.Literal(value)))
const ITEM_STATES = ['queued', 'bought', 'failed', 'skipped', 'cancelled'] as const
const Id = Type.Integer({ minimum: 1, maximum: MAX_REQUEST_INTEGER })
const Counts = Type.Object(Object.fromEntries(ITEM_STATES.map((state) => [state, Type.Integer()])) as Record<(typeof ITEM_STATES)[number], ReturnType<typeof Type.Integer>>)
const NullableText = Type.Union([Type.String(), Type.Null()])

const BatchSchema = Type.Object({
  id: Type.Integer(),
  state: Literals(['queued', 'running', 'finished', 'cancelled'] as const),
  settings: Type.Object({ suggestParcels: Type.Boolean(), labelFormat: Literals(LABEL_FORMATS) }),
  counts: Counts,
  total: Type.Integer({ description: 'Items in all (one per parcel; one per shipment whose parcels are still to be suggested).' }),
  done: Type.Integer({ description: 'Items that are final: bought, failed, skipped or cancelled.' }),
  userId: NullableText,
  dateCreated: Type.String(),
  dateUpdated: Type.String(),
  dateFinished: NullableText,
})

const ItemSchema = Type.Object({
  id: Type.Integer(),
  position: Type.Integer({ description: 'Pick order: the shipments as given or listed, their parcels in the order added.' }),
  shipmentId: Type.Integer(),
  parcelId: Type.Union([Type.Integer(), Type.Null()]),
  state: Literals(ITEM_STATES),
  rule: NullableText,
  carrier: NullableText,
  service: NullableText,
  operationId: NullableText,
  reason: Type.Union([Type.String({ description: "Why it failed (the carrier's words) or was skipped; while queued, why the last try did not finish." }), Type.Null()]),
  attempts: Type.Integer(),
  nextAttemptAt: NullableText,
})

const CreateBodySchema = Type.Object(
  {
    shipmentIds: Type.Optional(Type.Array(Id, { minItems: 1, maxItems: 10_000, description: 'The shipments, in pick order (at most batches.maxShipments).' })),
    filter: Type.Optional(
      Type.Object(
        { status: Type.Optional(ShipmentStatusSchema), search: Type.Optional(Type.String({ maxLength: 255 })), orderId: Type.Optional(Id) },
        { additionalProperties: false, description: "The shipment list's filter: every shipment it lists now, in its order (at most batches.maxShipments)." },
      ),
    ),
    suggestParcels: Type.Optional(Type.Boolean({ description: 'Suggest parcels from the box catalogue for a shipment that has none (default false: it is skipped).' })),
    labelFormat: Type.Optional(Literals(LABEL_FORMATS)),
  },
  { additionalProperties: false },
)

const BatchParamsSchema = Type.Object({ id: Type.String({ description: 'Label batch id' }) })
const BatchQuerySchema = Type.Object({
  state: Type.Optional(Literals(ITEM_STATES)),
  cursor: Type.Optional(Type.String({ maxLength: 30, description: 'nextCursor of the page before' })),
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
})
const ListQuerySchema = Type.Object({
  beforeId: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_REQUEST_INTEGER, description: 'nextBeforeId of the page before' })),
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
})

const BatchResponseSchema = Type.Object({ success: Type.Literal(true), batch: BatchSchema })
const BatchPageResponseSchema = Type.Object({ success: Type.Literal(true), batch: BatchSchema, items: Type.Array(ItemSchema), nextCursor: NullableText })
const BatchListResponseSchema = Type.Object({ success: Type.Literal(true), batches: Type.Array(BatchSchema), nextBeforeId: Type.Union([Type.Integer(), Type.Null()]) })
const RetryResponseSchema = Type.Object({ success: Type.Literal(true), batch: BatchSchema, retried: Type.Integer() })
const CancelResponseSchema = Type.Object({ success: Type.Literal(true), batch: BatchSchema, cancelled: Type.Integer() })

const errors = SERVICE_ROUTE_ERRORS
const batchIdOf = (raw: string) => pathId(raw, (value) => new BatchErrors.BatchNotFound(value))

export const batchRoutes: FastifyPluginAsync<BatchRoutesOptions> = async (scope, options) => {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { service, resolveUser, hasPermission } = options

  app.setSchemaErrorFormatter(readableSchemaError)
  app.removeContentTypeParser('text/plain')
  boundJsonDepth(scope)
  app.addHook('preValidation', async (request) => {
    if (request.method === 'POST' && request.body === undefined) request.body = {}
  })

  const { requirePermission, userIdOf } = permissionHooks(resolveUser, hasPermission)

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error.validation && error.validationContext === 'body') return reply.code(422).send(validationErrorBody(schemaFieldErrors(error)))
    if (error instanceof ShipmentValidationError) return reply.code(422).send(validationErrorBody(error.errors))
    if (error instanceof ShipmentUpdateRejectedError) return reply.code(422).send(serviceErrorBody(error))
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 && error.statusCode !== 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'Label batch request failed')
    return reply.code(status).send(status === 500 ? frameworkErrorBody(status, 'An internal error occurred.', RequestErrorCodes.internal) : frameworkErrorBody(status, error.message, errorCodeOf(error, status)))
  })

  // Buying labels in a batch spends what buying one does: the same permission, also to read and steer a batch.
  const buy = requirePermission(ShipmentsPermissions.buyLabels)

  app.post(
    '/label-batches',
    {
      onRequest: buy,
      schema: {
        summary: "Buy labels for the chosen shipments' parcels by the shipping rules, as a durable job",
        body: CreateBodySchema,
        response: { 201: BatchResponseSchema, ...errors },
      },
    },
    async (request, reply) => {
      const { shipmentIds, filter, suggestParcels, labelFormat } = request.body
      const selection = (shipmentIds !== undefined ? { shipmentIds, filter } : { filter }) as LabelBatchSelection
      const batch = await service.create(selection, { suggestParcels, labelFormat }, { userId: userIdOf(request) })
      return reply.code(201).send({ success: true as const, batch })
    },
  )

  app.get(
    '/label-batches',
    { onRequest: buy, schema: { summary: 'Label batches, newest first', querystring: ListQuerySchema, response: { 200: BatchListResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, ...(await service.list(request.query)) }),
  )

  app.get(
    '/label-batches/:id',
    {
      onRequest: buy,
      schema: { summary: 'A label batch: its counts and a page of its items in pick order', params: BatchParamsSchema, querystring: BatchQuerySchema, response: { 200: BatchPageResponseSchema, ...errors } },
    },
    async (request) => ({ success: true as const, ...(await service.get(batchIdOf(request.params.id), request.query)) }),
  )

  app.post(
    '/label-batches/:id/retry',
    { onRequest: buy, schema: { summary: 'Queue the failed items of a label batch again (never buys a parcel twice)', params: BatchParamsSchema, response: { 200: RetryResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, ...(await service.retry(batchIdOf(request.params.id))) }),
  )

  const PrintQuerySchema = Type.Object(
    {
      format: Type.Optional(Type.Union([Type.Literal('pdf'), Type.Literal('zpl')], { default: 'pdf', description: 'pdf: one PDF, each label at its own page size; zpl: the labels bought as ZPL in one file' })),
      slips: Type.Optional(Type.Boolean({ description: "PDF only: each shipment's packing slip after its labels" })),
      pickList: Type.Optional(Type.Boolean({ description: 'PDF only: a pick list of the batch first' })),
    },
    { additionalProperties: false },
  )

  app.get(
    '/label-batches/:id/print',
    {
      onRequest: buy,
      schema: {
        summary: "A batch's print job: the labels it bought in pick order (one PDF, or one ZPL file), with packing slips and a pick list as asked",
        params: BatchParamsSchema,
        querystring: PrintQuerySchema,
        response: { 200: { description: 'The print job: a PDF, or a ZPL file.', content: { 'application/pdf': { schema: Type.String({ format: 'binary' }) }, 'text/plain': { schema: Type.String() } } }, ...errors },
      },
    },
    async (request, reply) => {
      const id = batchIdOf(request.params.id)
      const { format = 'pdf', slips, pickList } = request.query
      const parcels = await service.boughtParcels(id, MAX_PRINT_JOB_PARCELS)
      const include = format === 'pdf' ? { slips: slips === true, pickList: pickList === true } : undefined
      const notPrinted: string[] = []
      const bytes = await options.documents.printJob(parcels, { format, notPrinted, ...(include && { include }) })
      notPrintedHeader(reply, notPrinted)
      return format === 'pdf' ? sendPdf(reply, bytes, `label-batch-${id}.pdf`) : sendZpl(reply, bytes, `label-batch-${id}.zpl`)
    },
  )

  app.post(
    '/label-batches/:id/cancel',
    { onRequest: buy, schema: { summary: 'Cancel the items of a label batch not started yet', params: BatchParamsSchema, response: { 200: CancelResponseSchema, ...errors } } },
    async (request) => ({ success: true as const, ...(await service.cancel(batchIdOf(request.params.id))) }),
  )
}
