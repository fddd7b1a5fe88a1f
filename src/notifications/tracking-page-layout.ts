// The customers' tracking page's parts a host uses without mounting it: the layout hook's types, the
// standalone layout, the page's Content-Security-Policy and the framework-error handler for its malformed
// links. Apart from the page's routes (tracking-page.ts), which load only when the page is mounted.
import { createHash } from 'node:crypto'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { escapeHtml } from '../html.js'

/** What the layout hook gets: the page's title, its body (safe markup) and the language. */
export interface TrackingPage {
  /** Plain text (it holds the shipment's reference): escape it. */
  title: string
  /** Markup, escaped already. */
  body: string
  /** A language tag such as `en`. */
  language: string
}

export type TrackingPageLayout = (page: TrackingPage) => string | Promise<string>

/** A standalone page, for hosts without a layout of their own. */
export function standaloneTrackingLayout(page: TrackingPage): string {
  return `<!doctype html><html lang="${escapeHtml(page.language)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(page.title)}</title><style>${STYLE}</style></head><body><main class="tracking">${page.body}</main></body></html>`
}

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1f2933}.tracking{max-width:40rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px #0002}' +
  '.shop{margin:0 0 .25rem;color:#52606d;font-weight:600}h1{font-size:1.5rem;margin:0 0 .25rem}.status{font-size:1.25rem;font-weight:600}.timeline{list-style:none;padding:0;border-left:3px solid #d0d5dd;margin:1rem 0}' +
  '.timeline li{padding:.25rem 0 .75rem 1rem}.timeline time{color:#52606d;font-size:.9rem;display:block}table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #e4e7eb}' +
  '.shipment{border-top:1px solid #e4e7eb;margin-top:1.5rem;padding-top:.5rem}.progress{display:flex;list-style:none;padding:0;margin:1rem 0;gap:.25rem}' +
  '.progress li{flex:1;padding-top:.4rem;border-top:6px solid #d0d5dd;font-size:.85rem;color:#52606d}.progress li.done{border-color:#2f855a;color:#1f2933;font-weight:600}' +
  '.estimate{font-size:1.1rem}.button{display:inline-block;padding:.6rem 1.1rem;background:#1f6feb;color:#fff;border-radius:6px;text-decoration:none;font-weight:600}' +
  '.checkpoints{list-style:none;padding:0;margin:1rem 0}.checkpoints li{padding:.5rem 0;border-bottom:1px solid #e4e7eb}.checkpoints li:first-child strong{color:#2f855a}' +
  '.checkpoints .place,.checkpoints time{display:block;color:#52606d;font-size:.9rem}@media (max-width:30rem){.tracking{margin:0;border-radius:0}.progress li{font-size:.75rem}}'

/** The standalone layout's stylesheet, allowed by its hash: the page needs no 'unsafe-inline'. */
const STYLE_SOURCE = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`

/**
 * The page runs no script and loads nothing but its own styles and images: a page that only shows text
 * needs nothing more, and an injected tag (were escaping ever to fail) could do nothing. A host layout
 * may add stylesheets and images of its own origin; one that needs more sets `contentSecurityPolicy`.
 */
export function trackingPagePolicy(frameAncestors: readonly string[], formAction: "'none'" | "'self'" = "'none'"): string {
  return [
    "default-src 'none'",
    `style-src 'self' ${STYLE_SOURCE}`,
    "img-src 'self' data:",
    "font-src 'self'",
    "base-uri 'none'",
    // Only the return form posts, and only to this site (its page's policy says 'self').
    `form-action ${formAction}`,
    `frame-ancestors ${frameAncestors.length === 0 ? "'none'" : frameAncestors.join(' ')}`,
  ].join('; ')
}

/** A mounted page's answer to a malformed link, for trackingPageFrameworkErrors. */
export interface BadLinkAnswer {
  prefix: string
  answer(reply: FastifyReply): Promise<unknown>
}

// By the instance the package was registered on: the request a framework error handler gets belongs to
// the root instance, and a test process holds many apps.
export const badLinkAnswers = new WeakMap<object, BadLinkAnswer[]>()

type FrameworkErrorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void

/** The host's layout failed while drawing an error page: a plain 500, whichever way the request came. */
export function layoutFailed(request: FastifyRequest, reply: FastifyReply, error: unknown) {
  request.log.error({ err: error }, 'The tracking page layout failed')
  return reply.code(500).type('text/plain; charset=utf-8').send('Something went wrong on our side. Please try again later.')
}

/**
 * A `frameworkErrors` server option for hosts of the tracking page: Fastify's router refuses a link with
 * broken percent-encoding (`/shipments/track/%E0%A4%A`) with a JSON 400 before any hook or route of the
 * page runs, and only the server's options can catch it. Under the tracking page's prefix this answers
 * the page's HTML not-found page with its security headers; every other framework error goes to
 * `otherwise`, or gets Fastify's own answer. The package must be registered on the root instance.
 *
 * `Fastify({ frameworkErrors: trackingPageFrameworkErrors() })`
 */
export function trackingPageFrameworkErrors(otherwise?: FrameworkErrorHandler): FrameworkErrorHandler {
  return (error, request, reply) => {
    // Only the bad URL: a token over the router's parameter limit reaches the page's own catch-all route.
    if (error.code === 'FST_ERR_BAD_URL') {
      const path = (request.raw.url ?? '').split('?')[0]
      const page = badLinkAnswers.get(request.server)?.find(({ prefix }) => path === prefix || path.startsWith(`${prefix}/`))
      if (page) {
        void page.answer(reply).catch((failure: unknown) => layoutFailed(request, reply, failure))
        return
      }
    }
    if (otherwise) return otherwise(error, request, reply)
    void reply.send(error)
  }
}
