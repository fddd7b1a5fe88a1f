// JSON bodies with a bounded structure: nesting is counted in one pass over the text before it is
// parsed, so a body shaped to exhaust the parser's or a later stage's stack is refused with a 400.
import type { FastifyInstance, FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify'
import createError from '@fastify/error'

/** The deepest nesting of arrays and objects a JSON body may have. */
export const MAX_JSON_DEPTH = 32

const TooDeep = createError('SHIPMENTS_JSON_TOO_DEEP', `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`, 400)

/** The deepest nesting of `text`, stopping as soon as it passes `limit`. Linear, no allocation. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0
  let inString = false
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (inString) {
      if (code === 0x5c) index++ // a backslash: the next character is escaped
      else if (code === 0x22) inString = false
    } else if (code === 0x22) inString = true
    else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return true
    } else if (code === 0x5d || code === 0x7d) depth--
  }
  return false
}

/** Replaces the scope's JSON parser by Fastify's own (prototype-poisoning checks included) behind the depth check. */
export function boundJsonDepth(scope: FastifyInstance): void {
  const parse = scope.getDefaultJsonParser('error', 'error')
  scope.removeContentTypeParser('application/json')
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (jsonDepthExceeds(body as string, MAX_JSON_DEPTH)) return done(new TooDeep(), undefined)
    return parse(request, body as string, done)
  })
}

/**
 * A validator compiler that only requires the body to be an object, for routes whose service checks the
 * rest and names each field (`rules[2].choice.days`, `items[1].tariffNumber`). Fastify's Ajv would drop
 * unknown keys silently (removeAdditional): a misspelt field dropped would change what is saved. The
 * route's body schema still documents the shape (OpenAPI).
 */
export const objectBodyOnly: FastifySchemaCompiler<unknown> = ({ httpPart }) => {
  if (httpPart !== 'body') return () => true
  const validate = (body: unknown): boolean => {
    const valid = typeof body === 'object' && body !== null && !Array.isArray(body)
    validate.errors = valid ? null : [{ instancePath: '', schemaPath: '#/type', keyword: 'type', params: { type: 'object' }, message: 'must be object' }]
    return valid
  }
  validate.errors = null as FastifySchemaValidationError[] | null
  return validate
}
