// Routes that take any body as raw bytes: every content type, known, unknown, malformed or none.
import type { FastifyInstance, FastifyRequest } from 'fastify'

const TOKEN = "[\\w!#$%&'*+.^`|~-]+"
const WELL_FORMED_MEDIA_TYPE = new RegExp(`^\\s*${TOKEN}/${TOKEN}\\s*(;.*)?$`)

/**
 * Registers, in the calling encapsulated scope, one parser for every content type that hands the
 * handler the body as a Buffer (up to `bodyLimit` bytes, then 413). Fastify answers 415 to a
 * Content-Type it cannot even parse (`xml`, `text/xml, application/xml`, an empty one) before any
 * parser is consulted, so such a header is set aside while the body is read and put back after.
 */
export function acceptRawBodies(scope: FastifyInstance, bodyLimit: number): void {
  const setAside = new WeakMap<FastifyRequest, string>()
  scope.removeAllContentTypeParsers()
  const keepRaw = (_request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void) => done(null, body)
  // '*' alone serves requests without a Content-Type, but Fastify never caches the parser it falls back
  // to, so every request paid for parsing its media type again; a parser matching any type is cached.
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, keepRaw)
  scope.addContentTypeParser(/^/, { parseAs: 'buffer', bodyLimit }, keepRaw)
  // Callback-style hooks: no promise per request on a path that is meant to cost next to nothing.
  scope.addHook('onRequest', (request, _reply, done) => {
    const contentType = request.headers['content-type']
    if (contentType !== undefined && !WELL_FORMED_MEDIA_TYPE.test(contentType)) {
      setAside.set(request, contentType)
      request.headers['content-type'] = 'application/octet-stream'
    }
    done()
  })
  scope.addHook('preValidation', (request, _reply, done) => {
    const original = setAside.get(request)
    if (original !== undefined) request.headers['content-type'] = original
    done()
  })
}
