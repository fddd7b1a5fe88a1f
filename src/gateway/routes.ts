// The public integration gateway (spec 4.2): resolves an integration by handle and hands the raw
// request to its provider. Anonymous at framework level; providers authenticate.
import { inSpan, instruments } from '../telemetry.js'
import type { FastifyError, FastifyPluginAsync, FastifyReply } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { errorCodeOf, frameworkErrorBody, GatewayErrors, IntegrationError, IntegrationSecretError, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import { FrameworkErrorSchema } from '../shipments/schemas.js'
import { acceptRawBodies } from '../http/raw-body.js'
import type { IntegrationService } from './integrations.js'
import type { GatewayResponse, ProviderContext, ProviderRegistry } from './providers.js'

export interface GatewayRoutesOptions {
  integrations: IntegrationService
  registry: ProviderRegistry
  bodyLimit: number
}


/**
 * The message of an integration-level refusal, or null for a failure of the provider itself. Besides
 * IntegrationError, what the shipment service refuses a provider's update for is the sender's doing:
 * a value the update's validation rejects (named by field), a shipment or order that is not there, a
 * transition refused while saving (another update in progress).
 */
function refusalMessage(error: unknown): string | null {
  if (error instanceof IntegrationError) return error.message
  if (error instanceof ShipmentValidationError) {
    const details = Object.entries(error.errors).map(([field, messages]) => `${field}: ${messages.join(' ')}`)
    return `Invalid webhook payload: ${details.join('; ')}`
  }
  if (error instanceof ShipmentUpdateRejectedError) return error.message
  if (error instanceof ShipmentsErrors.ShipmentNotFound || error instanceof ShipmentsErrors.OrderNotFound) return (error as Error).message
  return null
}

/** The framework envelope: `message` (default the error's own) under the error's code. */
function sendError(reply: FastifyReply, status: number, error: { code?: unknown; validation?: unknown; message: string }, message = error.message) {
  return reply.code(status).send(frameworkErrorBody(status, message, errorCodeOf(error, status)))
}

export const gatewayRoutes: FastifyPluginAsync<GatewayRoutesOptions> = async (scope, options) => {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { integrations, registry } = options

  // The gateway never parses a body: every content type, known or not, arrives as raw bytes.
  acceptRawBodies(scope, options.bodyLimit)

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'Gateway request failed')
    return sendError(reply, status, status === 500 ? new GatewayErrors.RequestFailed() : error)
  })

  app.route({
    method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/handle',
    schema: {
      summary: 'Hand a request to the integration named in the query (spec 4.2)',
      querystring: Type.Object({ integration: Type.Optional(Type.String()) }, { additionalProperties: true }),
      // No response schemas: the provider's response passes through unchanged, whatever its status,
      // and a schema for 400 would reshape a provider's own 400 body. Gateway errors are FrameworkErrorSchema.
      description: `Errors: ${JSON.stringify(FrameworkErrorSchema)}`,
    },
    handler: async (request, reply) => {
      const handle = request.query.integration
      if (!handle) return sendError(reply, 400, new GatewayErrors.IntegrationMissing())
      const row = await integrations.findStored(handle)
      if (!row) return sendError(reply, 404, new GatewayErrors.UnknownIntegration(handle))
      if (!integrations.isEnabled(row)) return sendError(reply, 400, new GatewayErrors.IntegrationDisabled(handle))
      const provider = row.providerId ? registry.get(row.providerId) : undefined
      if (!provider) return sendError(reply, 400, new GatewayErrors.NoProvider(handle))

      // No closure per request: the provider's logger is made from these bindings when first used.
      const bindings = { integration: handle, provider: provider.id }
      let context: ProviderContext | undefined
      let response: GatewayResponse
      // Inbound events counted by provider and outcome (accepted, refused, failed), for operators' dashboards.
      const counted = (outcome: string) => instruments().trackingEvents.add(1, { 'shipments.provider': provider.id, 'shipments.outcome': outcome })
      try {
        const providerContext = integrations.contextFor(row, request.log, bindings)
        context = providerContext
        const gatewayRequest = provider.handleGatewayRequest.bind(provider)
        response = await inSpan('shipments.gateway.request', { 'shipments.provider': provider.id }, () => gatewayRequest(
          {
            method: request.method,
            url: request.url,
            query: request.query as Record<string, string | string[] | undefined>,
            headers: request.headers,
            rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          },
          providerContext,
        ))
      } catch (error) {
        const log = context?.logger ?? request.log.child(bindings)
        // The host's to fix, logged (setting and variable, never a value) where the settings were read;
        // the sender learns only that the integration is not configured.
        if (error instanceof IntegrationSecretError) return sendError(reply, 400, error)
        const refusal = refusalMessage(error)
        counted(refusal !== null ? 'refused' : 'failed')
        if (refusal !== null) {
          // A request refused by the provider or by the update it made (a bad signature, an unknown
          // order, a value the update refuses) is the sender's fault: a warning without a stack, so an
          // anonymous caller cannot fill the error log.
          log.warn({ reason: refusal, retryable: error instanceof IntegrationError && error.retryable }, 'Integration request refused')
          return sendError(reply, 400, error as Error, refusal)
        }
        log.error({ err: error }, 'Integration request failed')
        return sendError(reply, 400, new GatewayErrors.RequestFailed())
      }
      counted((response.status ?? 200) < 400 ? 'accepted' : 'refused')
      const passThrough = reply as FastifyReply
      passThrough.code(response.status ?? 200)
      if (response.headers) passThrough.headers(response.headers)
      return passThrough.send(response.body ?? '')
    },
  })
}
