// The integrations screen's routes: the list, an integration's page, create, change, enable and check.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { IntegrationConfigError, IntegrationError } from '../errors.js'
import type { AnyProviderDefinition, ConnectionCheck } from '../gateway/providers.js'
import type { FieldErrors } from './components.js'
import { integrationErrors, integrationFormValues, integrationListPage, integrationPage, readIntegrationForm, type IntegrationFormValues } from './integration-pages.js'
import { AdminBadRequest, AdminNotFound, formSchema, hide, routePermissions, text, type AdminScreen, type Form } from './screen.js'

export function registerIntegrationRoutes(screen: AdminScreen) {
  const { scope, options, prefix, context, sendPage, noticeOf } = screen
  const { integrations, providers } = options
  const { manage } = routePermissions

  scope.get('/integrations', { schema: hide, config: manage }, async (request, reply) => {
    const list = await integrations.list()
    return sendPage(request, reply, 'Integrations', integrationListPage(context(request, reply), list, providers.list(), (integration) => integrations.isEnabled(integration)))
  })

  const requireProvider = (id: string): AnyProviderDefinition => {
    const provider = providers.get(id)
    if (!provider) throw AdminBadRequest(`No provider "${id}" is registered.`)
    return provider
  }
  /** An integration whose provider is gone still opens, with no settings to edit. */
  const providerOf = (providerId: string | null): AnyProviderDefinition =>
    providers.get(providerId ?? '') ?? { id: providerId ?? 'none', settingsSchema: Type.Object({}), handleGatewayRequest: async () => ({ status: 404 }) }

  async function renderIntegration(
    request: FastifyRequest,
    reply: FastifyReply,
    handle: string | null,
    provider: AnyProviderDefinition | null,
    state: { values?: IntegrationFormValues; errors?: FieldErrors; check?: ConnectionCheck; status?: number } = {},
  ) {
    const integration = handle === null ? null : await integrations.get(handle)
    if (handle !== null && !integration) throw AdminNotFound(`Integration "${handle}"`)
    const effectiveProvider = provider ?? providerOf(integration!.providerId)
    const content = integrationPage(context(request, reply), {
      integration,
      provider: effectiveProvider,
      values: state.values ?? integrationFormValues(integration, effectiveProvider),
      errors: state.errors ?? {},
      flash: noticeOf(request),
      check: state.check ?? null,
      deliveries: integration ? await integrations.recentDeliveries(integration.handle, 50) : [],
      enabled: integration ? integrations.isEnabled(integration) : true,
      gatewayUrl: integration ? `${request.protocol}://${request.host}${options.gatewayPrefix}/handle?integration=${encodeURIComponent(integration.handle)}` : null,
    })
    return sendPage(request, reply, integration ? `Integration ${integration.name}` : 'New integration', content, state.status)
  }

  scope.get<{ Querystring: { provider?: string } }>('/integrations/new', { schema: hide, config: manage }, async (request, reply) =>
    renderIntegration(request, reply, null, requireProvider(text(request.query.provider))),
  )

  scope.post<{ Body: Form }>('/integrations', { schema: formSchema, config: manage }, async (request, reply) => {
    const provider = requireProvider(text(request.body.providerId))
    const { values, input } = readIntegrationForm(request.body, provider)
    try {
      const created = await integrations.create({ ...input, providerId: provider.id })
      return reply.redirect(`${prefix}/integrations/${encodeURIComponent(created.handle)}?notice=created`, 303)
    } catch (error) {
      if (!(error instanceof IntegrationConfigError)) throw error
      return renderIntegration(request, reply, null, provider, { values, errors: integrationErrors(error.fields), status: 422 })
    }
  })

  scope.get<{ Params: { handle: string } }>('/integrations/:handle', { schema: hide, config: manage }, async (request, reply) =>
    renderIntegration(request, reply, request.params.handle, null),
  )

  scope.post<{ Params: { handle: string }; Body: Form }>('/integrations/:handle', { schema: formSchema, config: manage }, async (request, reply) => {
    const existing = await integrations.get(request.params.handle)
    if (!existing) throw AdminNotFound(`Integration "${request.params.handle}"`)
    const { values, input } = readIntegrationForm(request.body, providerOf(existing.providerId))
    try {
      const saved = await integrations.update(existing.handle, input)
      return reply.redirect(`${prefix}/integrations/${encodeURIComponent(saved.handle)}?notice=saved`, 303)
    } catch (error) {
      if (!(error instanceof IntegrationConfigError)) throw error
      return renderIntegration(request, reply, existing.handle, null, { values, errors: integrationErrors(error.fields), status: 422 })
    }
  })

  for (const [action, enabled] of [['enable', true], ['disable', false]] as const) {
    scope.post<{ Params: { handle: string } }>(`/integrations/:handle/${action}`, { schema: formSchema, config: manage }, async (request, reply) => {
      if (!(await integrations.get(request.params.handle))) throw AdminNotFound(`Integration "${request.params.handle}"`)
      await integrations.update(request.params.handle, { enabled })
      return reply.redirect(`${prefix}/integrations/${encodeURIComponent(request.params.handle)}?notice=${enabled ? 'enabled' : 'disabled'}`, 303)
    })
  }

  scope.post<{ Params: { handle: string } }>('/integrations/:handle/check', { schema: formSchema, config: manage }, async (request, reply) => {
    if (!(await integrations.get(request.params.handle))) throw AdminNotFound(`Integration "${request.params.handle}"`)
    let check: ConnectionCheck
    try {
      check = await integrations.checkConnection(request.params.handle)
    } catch (error) {
      request.log.warn({ err: error, integration: request.params.handle }, 'Connection check failed')
      check = { ok: false, message: error instanceof IntegrationError ? error.message : 'The check could not run; the log has the details.' }
    }
    return renderIntegration(request, reply, request.params.handle, null, { check })
  })
}
