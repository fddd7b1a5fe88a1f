// Schema validation failures as a reader wants them: one message per field. Ajv reports a union (TypeBox's
// union of literals, a value or null) branch by branch ("must be equal to constant" once per constant,
// then "must match a schema in anyOf"); these are folded into one message naming what is allowed.
import type { FastifySchemaValidationError } from 'fastify'

export interface ValidationProblem {
  /** Where, as Ajv names it (`/state`, `/lines/0/quantity`; empty for the whole part). */
  instancePath: string
  message: string
  params: Record<string, unknown>
}

const UNION_KEYWORDS = new Set(['anyOf', 'oneOf'])

/** The allowed values of a union's branches and of `enum`, and the types its other branches take. */
function allowedOf(problems: readonly FastifySchemaValidationError[]): { values: string[]; types: string[] } {
  const values: string[] = []
  const types: string[] = []
  for (const problem of problems) {
    const params = problem.params as { allowedValue?: unknown; allowedValues?: unknown[]; type?: unknown }
    if (problem.keyword === 'const') values.push(String(params.allowedValue))
    else if (problem.keyword === 'enum') values.push(...(params.allowedValues ?? []).map(String))
    else if (problem.keyword === 'type') types.push(String(params.type))
  }
  return { values, types }
}

/** One problem per field where Ajv gave one per union branch; other problems as they are. */
export function readableProblems(errors: readonly FastifySchemaValidationError[]): ValidationProblem[] {
  const byPath = new Map<string, FastifySchemaValidationError[]>()
  for (const error of errors) byPath.set(error.instancePath, [...(byPath.get(error.instancePath) ?? []), error])
  const problems: ValidationProblem[] = []
  for (const [instancePath, found] of byPath) {
    const union = found.some((problem) => UNION_KEYWORDS.has(problem.keyword))
    const { values, types } = allowedOf(found)
    if (values.length > 0 && (union || found.every((problem) => problem.keyword === 'enum'))) {
      const orType = types.length > 0 ? ` (or ${types.join(' or ')})` : ''
      problems.push({ instancePath, message: `must be one of: ${values.join(', ')}${orType}`, params: { allowedValues: values } })
    } else if (union && types.length > 0 && types.length === found.length - 1) {
      problems.push({ instancePath, message: `must be ${types.join(' or ')}`, params: { types } })
    } else {
      // A union of objects and the like: what its branches said, without the union's own summary.
      const kept = union ? found.filter((problem) => !UNION_KEYWORDS.has(problem.keyword)) : found
      for (const problem of kept.length > 0 ? kept : found) problems.push({ instancePath, message: problem.message ?? 'is invalid', params: problem.params as Record<string, unknown> })
    }
  }
  return problems
}

/**
 * A `schemaErrorFormatter` for a route scope: the framework's 400 message names each field with what it
 * must be, `body/status must be one of: a, b, c`.
 */
export function readableSchemaError(errors: FastifySchemaValidationError[], dataVar: string): Error {
  return new Error(readableProblems(errors).map((problem) => `${dataVar}${problem.instancePath} ${problem.message}`).join(', '))
}
