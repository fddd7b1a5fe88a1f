// What the service routes beside the shipment API (deliveries, returns) share: their error answers,
// path ids, and a body that failed its schema named field by field, as the shipment API names them.
import type { FastifyError } from 'fastify'
import { Type } from '@sinclair/typebox'
import { readableProblems } from '../http/validation-messages.js'
import { FrameworkErrorSchema, ServiceErrorSchema, ValidationErrorSchema } from './schemas.js'

/** The error answers of a service route, for its response schemas. */
export const SERVICE_ROUTE_ERRORS = {
  400: FrameworkErrorSchema,
  401: FrameworkErrorSchema,
  403: FrameworkErrorSchema,
  404: FrameworkErrorSchema,
  409: FrameworkErrorSchema,
  413: FrameworkErrorSchema,
  415: FrameworkErrorSchema,
  422: Type.Union([ValidationErrorSchema, ServiceErrorSchema]),
  503: FrameworkErrorSchema,
}

/** The error answers of a route that also refuses with a coded 422 in the framework envelope (a suggestion over its limits). */
export const SERVICE_ROUTE_ERRORS_WITH_CODED_422 = { ...SERVICE_ROUTE_ERRORS, 422: Type.Union([ValidationErrorSchema, ServiceErrorSchema, FrameworkErrorSchema]) }

/** Path ids that are not positive 32-bit integers name nothing: a 404, like an unknown id. */
export function pathId(raw: string, notFound: (raw: string) => Error): number {
  const id = /^[1-9]\d{0,9}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(id <= 2_147_483_647)) throw notFound(raw)
  return id
}

/** A request that failed its schema: the fields and their messages, as the per-field envelope shows them. */
export function schemaFieldErrors(error: FastifyError): Record<string, string[]> {
  const found: Record<string, string[]> = {}
  for (const problem of readableProblems(error.validation ?? [])) {
    const missing = (problem.params as { missingProperty?: string } | undefined)?.missingProperty
    const extra = (problem.params as { additionalProperty?: string } | undefined)?.additionalProperty
    const path = [problem.instancePath.replace(/^\//, '').replaceAll('/', '.'), missing ?? extra].filter(Boolean).join('.') || 'body'
    ;(found[path] ??= []).push(extra ? 'is not a field of this request' : (problem.message ?? 'is invalid'))
  }
  return found
}
