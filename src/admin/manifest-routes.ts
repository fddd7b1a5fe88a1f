// The manifests screen's routes: the page (today's labels waiting per integration, the manifests made), a
// manifest created from a carrier's row, and the form printed through the service (under the outbound rules).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ManifestErrors } from '../errors.js'
import { manifestPage } from './manifest-pages.js'
import { adminUserId, formSchema, hide, positiveId, refusalOf, routePermissions, text, type AdminScreen, type Form } from './screen.js'

export function registerManifestRoutes(screen: AdminScreen) {
  const { scope, options, prefix, context, sendPage, noticeOf } = screen
  const { integrations } = options
  const { buyLabels } = routePermissions
  const limit = 50

  async function render(request: FastifyRequest, reply: FastifyReply, problem: string | null = null, status = 200) {
    const query = request.query as Record<string, unknown>
    const beforeRaw = text(query.beforeId)
    const before = /^[1-9]\d{0,9}$/.test(beforeRaw) ? Number(beforeRaw) : undefined
    const sellers = (await integrations.list()).filter((integration) => integrations.isEnabled(integration) && options.providers.get(integration.providerId ?? '')?.deliveries)
    const eligible = []
    for (const integration of sellers) {
      try {
        eligible.push({ integration: integration.handle, labels: await options.manifests.eligible({ integration: integration.handle }), problem: null })
      } catch (error) {
        // One integration that cannot be read (a context that fails) costs its own section only.
        const refusal = refusalOf(error)
        if (!refusal) throw error
        eligible.push({ integration: integration.handle, labels: null, problem: refusal })
      }
    }
    const manifests = await options.manifests.list({ limit, before })
    const content = manifestPage(context(request, reply), { eligible, manifests, nextBeforeId: manifests.length === limit ? manifests[manifests.length - 1]!.id : null, problem, flash: noticeOf(request) })
    return sendPage(request, reply, 'Manifests', content, status)
  }

  scope.get('/manifests', { schema: hide, config: buyLabels }, async (request, reply) => render(request, reply))

  scope.post<{ Body: Form }>('/manifests', { schema: formSchema, config: buyLabels }, async (request, reply) => {
    try {
      await options.manifests.create(
        { integration: text(request.body.integration), carrier: text(request.body.carrier), date: text(request.body.date) || undefined },
        { userId: adminUserId(request) },
      )
    } catch (error) {
      // A refusal (the carrier's words, labels taken meanwhile, none left) shows at the top of the page.
      const refusal = refusalOf(error)
      if (refusal) return render(request, reply, refusal, (error as { statusCode?: number }).statusCode ?? 422)
      throw error
    }
    return reply.redirect(`${prefix}/manifests?notice=manifestCreated`, 303)
  })

  scope.get<{ Params: { id: string } }>('/manifests/:id/form', { schema: hide, config: buyLabels }, async (request, reply) => {
    const id = positiveId(request.params.id, () => new ManifestErrors.NotFound(request.params.id))
    const bytes = await options.manifests.form(id)
    return reply.header('content-type', 'application/pdf').header('content-disposition', `inline; filename="manifest-${id}.pdf"`).header('cache-control', 'private, no-store').send(bytes)
  })
}
