// The documents under the shipment API: GET routes answering application/pdf, under the view permission.
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { DeliveryErrors, errorCodeOf, frameworkErrorBody, RequestErrorCodes, serviceErrorBody, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError, validationErrorBody } from '../errors.js'
import { readableProblems } from '../http/validation-messages.js'
import type { HasPermission, ResolveUser } from '../http/access.js'
import { FrameworkErrorSchema, IdParamsSchema, ServiceErrorSchema, ValidationErrorSchema } from '../shipments/schemas.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import { MAX_PRINT_JOB_PARCELS, type DocumentService } from './service.js'

export interface DocumentRoutesOptions {
  service: DocumentService
  resolveUser: ResolveUser
  hasPermission: HasPermission
}

const pdf = (description: string) => ({ description, content: { 'application/pdf': { schema: Type.String({ format: 'binary' }) } } })

const errors = {
  400: FrameworkErrorSchema,
  401: FrameworkErrorSchema,
  403: FrameworkErrorSchema,
  404: FrameworkErrorSchema,
  422: Type.Union([ValidationErrorSchema, ServiceErrorSchema, FrameworkErrorSchema]),
  502: FrameworkErrorSchema,
}

/** `?ids=1,2,3`: the ids of a batch, in order. */
export const BatchQuerySchema = Type.Object(
  { ids: Type.String({ minLength: 1, maxLength: 12_000, description: 'Shipment ids separated by commas, in the order the documents follow (at most documents.maxBatchSize, 200 by default).' }) },
  { additionalProperties: false },
)

const Id = Type.Integer({ minimum: 1, maximum: 2_147_483_647 })

/** The body of a print job: the parcels in pick order, what goes with them, the format. */
export const PrintJobBodySchema = Type.Object(
  {
    parcels: Type.Array(Type.Object({ shipmentId: Id, parcelId: Id }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: MAX_PRINT_JOB_PARCELS,
      description: 'The parcels in the order their labels print (pick order).',
    }),
    include: Type.Optional(
      Type.Object(
        {
          slips: Type.Optional(Type.Boolean({ description: "Each shipment's packing slip after its last label (PDF only)." })),
          pickList: Type.Optional(Type.Boolean({ description: 'The pick list of the shipments first (PDF only).' })),
        },
        { additionalProperties: false },
      ),
    ),
    format: Type.Union([Type.Literal('pdf'), Type.Literal('zpl')], { description: 'pdf: one PDF, each label at its own page size; zpl: the labels bought as ZPL in one file.' }),
  },
  { additionalProperties: false },
)

/** Path ids that are not positive 32-bit integers name nothing: a 404, like an unknown id. */
function shipmentIdOf(raw: string): number {
  const id = /^[1-9]\d{0,9}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(id <= 2_147_483_647)) throw new ShipmentsErrors.ShipmentNotFound(raw)
  return id
}

function parcelIdOf(raw: string): number {
  const id = /^[1-9]\d{0,9}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(id <= 2_147_483_647)) throw new DeliveryErrors.ParcelNotFound(raw)
  return id
}

const ParcelParamsSchema = Type.Object({ id: Type.String({ description: 'Shipment id' }), parcelId: Type.String({ description: 'Parcel id' }) })

/**
 * What a print job left out (a ZPL file cannot hold an international parcel's PDF forms and invoice), as
 * the `x-shipments-not-printed` header: ASCII, bounded.
 */
export function notPrintedHeader(reply: FastifyReply, notPrinted: readonly string[]) {
  if (notPrinted.length === 0) return reply
  const text = notPrinted.join('; ').replace(/[^\x20-\x7e]/g, '?')
  return reply.header('x-shipments-not-printed', text.length > 2000 ? `${text.slice(0, 1990)} (more)` : text)
}

/** The batch's ids: anything that is not a list of positive integers is a 422 on `ids`. */
function idsOf(raw: string): number[] {
  const parts = raw.split(',').map((part) => part.trim())
  const bad = parts.find((part) => !/^[1-9]\d{0,9}$/.test(part) || Number(part) > 2_147_483_647)
  if (bad !== undefined) throw new ShipmentValidationError({ ids: [`"${bad.slice(0, 40)}" is not a shipment id (ids are positive integers separated by commas).`] })
  return parts.map(Number)
}

export function sendPdf(reply: FastifyReply, bytes: Buffer, filename: string) {
  // The file name is ASCII (references are sanitised) and quoted; no header injection can ride on it.
  const safe = filename.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 120)
  return reply
    .header('content-type', 'application/pdf')
    .header('content-disposition', `inline; filename="${safe}"`)
    .header('cache-control', 'private, no-store')
    .send(bytes)
}

/** ZPL goes to a thermal printer as a file: a download, never shown inline. */
export function sendZpl(reply: FastifyReply, bytes: Buffer, filename: string) {
  return reply.header('content-type', 'text/plain; charset=us-ascii').header('content-disposition', `attachment; filename="${filename}"`).header('cache-control', 'private, no-store').send(bytes)
}

export const documentRoutes: FastifyPluginAsync<DocumentRoutesOptions> = async (scope, options) => {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { service, resolveUser, hasPermission } = options

  const view = async (request: FastifyRequest) => {
    const user = (await resolveUser(request)) ?? null
    if (!user) throw new ShipmentsErrors.Unauthorized()
    if (!(await hasPermission(user, ShipmentsPermissions.viewShipments, request))) throw new ShipmentsErrors.Forbidden(ShipmentsPermissions.viewShipments)
  }

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error.validation && error.validationContext === 'querystring') {
      const [problem] = readableProblems(error.validation)
      return reply.code(422).send(validationErrorBody({ ids: [`${problem?.instancePath.replace(/^\//, '') || 'querystring'} ${problem?.message ?? 'is invalid'}`.trim()] }))
    }
    if (error.validation && error.validationContext === 'body') {
      // A print job's body: each problem under its top-level field (parcels, include, format).
      const errors: Record<string, string[]> = {}
      for (const problem of readableProblems(error.validation)) {
        const path = problem.instancePath.replace(/^\//, '')
        const field = path.split('/')[0] || 'body'
        ;(errors[field] ??= []).push(`${path.replaceAll('/', '.') || 'body'} ${problem.message ?? 'is invalid'}`.trim())
      }
      return reply.code(422).send(validationErrorBody(errors))
    }
    if (error instanceof ShipmentValidationError) return reply.code(422).send(validationErrorBody(error.errors))
    if (error instanceof ShipmentUpdateRejectedError) return reply.code(422).send(serviceErrorBody(error))
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 && error.statusCode !== 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'Document request failed')
    else if (status === 502) request.log.warn({ err: error }, 'Document request failed')
    return reply.code(status).send(status === 500 ? frameworkErrorBody(status, 'An internal error occurred.', RequestErrorCodes.internal) : frameworkErrorBody(status, error.message, errorCodeOf(error, status)))
  })

  app.get(
    '/shipments/:id/packing-slip',
    { onRequest: view, schema: { summary: "A shipment's packing slip (PDF)", params: IdParamsSchema, response: { 200: pdf('The packing slip, a PDF.'), ...errors } } },
    async (request, reply) => {
      const id = shipmentIdOf(request.params.id)
      return sendPdf(reply, await service.packingSlip(id), `packing-slip-${id}.pdf`)
    },
  )

  app.get(
    '/shipments/:id/parcels/:parcelId/commercial-invoice',
    {
      onRequest: view,
      schema: { summary: "An international parcel's commercial invoice (PDF), from its customs declaration", params: ParcelParamsSchema, response: { 200: pdf('The commercial invoice, a PDF.'), ...errors } },
    },
    async (request, reply) => {
      const id = shipmentIdOf(request.params.id)
      const parcelId = parcelIdOf(request.params.parcelId)
      return sendPdf(reply, await service.commercialInvoice(id, parcelId), `commercial-invoice-${id}-${parcelId}.pdf`)
    },
  )

  const batch = (path: string, summary: string, make: (ids: number[]) => Promise<Buffer>, name: string) =>
    app.get(
      path,
      { onRequest: view, schema: { summary, querystring: BatchQuerySchema, response: { 200: pdf(`${summary}, a PDF.`), ...errors } } },
      async (request, reply) => {
        const ids = idsOf(request.query.ids)
        return sendPdf(reply, await make(ids), ids.length === 1 ? `${name}-${ids[0]}.pdf` : `${name}-${ids.length}-shipments.pdf`)
      },
    )
  batch('/documents/packing-slips', 'The packing slips of a batch of shipments', (ids) => service.packingSlips(ids), 'packing-slips')
  batch('/documents/pick-list', 'The pick list of a batch of shipments: SKUs summed, sorted by location', (ids) => service.pickList(ids), 'pick-list')
  batch('/documents/labels', 'The labels of a batch of shipments with their packing slips, merged', (ids) => service.labels(ids), 'labels')

  app.post(
    '/documents/print-job',
    {
      onRequest: view,
      schema: {
        summary: 'One print job: the labels of parcels in pick order as one PDF (with a pick list and packing slips when asked) or one ZPL file',
        body: PrintJobBodySchema,
        response: {
          200: { description: 'The print job: a PDF, or a ZPL file.', content: { 'application/pdf': { schema: Type.String({ format: 'binary' }) }, 'text/plain': { schema: Type.String() } } },
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const { parcels, include, format } = request.body
      const notPrinted: string[] = []
      const bytes = await service.printJob(parcels, { include, format, notPrinted })
      notPrintedHeader(reply, notPrinted)
      const name = `print-job-${parcels.length}-parcel${parcels.length === 1 ? '' : 's'}`
      if (format === 'pdf') return sendPdf(reply, bytes, `${name}.pdf`)
      return sendZpl(reply, bytes, `${name}.zpl`)
    },
  )
}
