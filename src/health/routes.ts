// The health report as a route for load balancers, where the `health.path` option mounts it: answered
// without a user (a load balancer does not log in), 200 when ready and 503 when not, the same report as
// `app.shipments.health()`. Nothing in it is a secret: check names, states and counts.
import type { FastifyPluginAsync } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { HealthService } from './service.js'

const HealthReportSchema = Type.Object({
  ready: Type.Boolean(),
  instanceId: Type.String(),
  checkedAt: Type.String(),
  checks: Type.Array(
    Type.Object({
      name: Type.String(),
      status: Type.Union([Type.Literal('ok'), Type.Literal('warn'), Type.Literal('fail')]),
      detail: Type.String(),
    }),
  ),
})

export const healthRoute: FastifyPluginAsync<{ path: string; health: HealthService['health'] }> = async (app, { path, health }) => {
  app.get(path, { schema: { hide: true, response: { 200: HealthReportSchema, 503: HealthReportSchema } } }, async (_request, reply) => {
    const report = await health()
    // Never cached by a proxy: a load balancer reads it for what it is now.
    reply.header('cache-control', 'no-store')
    return reply.code(report.ready ? 200 : 503).send(report)
  })
}
