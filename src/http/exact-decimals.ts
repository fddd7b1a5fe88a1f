// Exact decimals in JSON bodies: a field documented as a decimal string takes a string only. Fastify's
// Ajv coerces a JSON number to the string its schema asks for before any check of the package runs, and
// the number may be rounded already (0.1 + 0.2), so numbers are refused before the schema's validation.
import type { FastifyInstance } from 'fastify'
import { Type, type TSchema } from '@sinclair/typebox'
import { ShipmentValidationError } from '../errors.js'

/** A positive decimal of at most 7 integer digits and 4 decimals, written plainly ("12", "0.5", "3.25"). */
export const POSITIVE_DECIMAL_PATTERN = '^(?:0|[1-9]\\d{0,6})(?:\\.\\d{1,4})?$'
export const DECIMAL_STRING_REQUIRED = 'must be a decimal string such as "1.25" (a number may already be rounded)'

/** The schema of a weight's value or a side's length: a string, never a JSON number. */
export const DecimalString = Type.String({ pattern: POSITIVE_DECIMAL_PATTERN, description: 'An exact positive decimal string, such as "1.25" (a JSON number is refused)' })

const isDecimalString = (schema: TSchema) => schema.type === 'string' && schema.pattern === POSITIVE_DECIMAL_PATTERN
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Adds to `errors` each path of `value` where `schema` asks for a decimal string and something else stands. */
function collectNonStrings(schema: TSchema, value: unknown, path: string, errors: Record<string, string[]>): void {
  if (value === undefined) return
  if (isDecimalString(schema)) {
    if (typeof value !== 'string') errors[path] = [DECIMAL_STRING_REQUIRED]
    return
  }
  for (const branch of (schema.anyOf as TSchema[] | undefined) ?? []) collectNonStrings(branch, value, path, errors)
  if (isRecord(schema.properties) && isRecord(value)) {
    for (const [key, property] of Object.entries(schema.properties as Record<string, TSchema>)) {
      if (Object.hasOwn(value, key)) collectNonStrings(property, value[key], path ? `${path}.${key}` : key, errors)
    }
  }
  if (isRecord(schema.items) && Array.isArray(value)) value.forEach((each, index) => collectNonStrings(schema.items as TSchema, each, path ? `${path}.${index}` : String(index), errors))
}

/** Refuses (422, field by field) a JSON body with anything but a string where the route's body schema has a DecimalString. */
export function refuseNumbersForDecimals(scope: FastifyInstance): void {
  scope.addHook('preValidation', async (request) => {
    const schema = request.routeOptions.schema?.body as TSchema | undefined
    if (!schema) return
    const errors: Record<string, string[]> = {}
    collectNonStrings(schema, request.body, '', errors)
    if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
  })
}
