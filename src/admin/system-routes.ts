// The system page's routes: the page, and a failed job retried or dismissed.
import type { FastifyRequest } from 'fastify'
import { systemPage } from './system-pages.js'
import { adminUserId, formSchema, hide, routePermissions, text, type AdminScreen, type Form } from './screen.js'

export function registerSystemRoutes(screen: AdminScreen) {
  const { scope, options, prefix, context, sendPage, noticeOf } = screen
  const { system, outbox } = options
  const { manage } = routePermissions

  scope.get('/system', { schema: hide, config: manage }, async (request, reply) => {
    const content = systemPage(context(request, reply), await system.overview(), noticeOf(request))
    // The page shows the state now: never kept by a cache.
    reply.header('cache-control', 'no-store')
    return sendPage(request, reply, 'System', content)
  })

  const messageIdOf = (request: FastifyRequest<{ Body: Form }>) => text(request.body.messageId)

  scope.post<{ Body: Form }>('/system/jobs/retry', { schema: formSchema, config: manage }, async (request, reply) => {
    const queued = await outbox.retry(messageIdOf(request))
    return reply.redirect(`${prefix}/system?notice=${queued ? 'jobRetried' : 'jobNotFailed'}`, 303)
  })

  scope.post<{ Body: Form }>('/system/jobs/dismiss', { schema: formSchema, config: manage }, async (request, reply) => {
    const dismissed = await outbox.dismiss(messageIdOf(request), adminUserId(request))
    return reply.redirect(`${prefix}/system?notice=${dismissed ? 'jobDismissed' : 'jobNotFailed'}`, 303)
  })
}
