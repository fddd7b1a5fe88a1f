// The gateway's options: the host's integration providers (beside the built-in ones) and the largest
// request body the gateway reads.
import { Type, type Static } from '@sinclair/typebox'
import { providerDefinitionProblem, type AnyProviderDefinition } from './providers.js'
import { BUILT_IN_PROVIDERS } from './providers/built-in.js'

/** The plugin options the gateway owns. */
export interface GatewayOptions {
  /** Integration providers besides the built-in ones (signed-webhook, easypost, aftership). Ids must be unique. */
  providers?: AnyProviderDefinition[] | undefined
  /** Largest gateway request body in bytes; beyond it the gateway answers 413. Default 1 MiB. */
  gatewayBodyLimit?: number | undefined
}

/** The plain-data options of the gateway, checked with the plugin's other plain data. */
export const GatewayOptionsSchema = Type.Object({
  gatewayBodyLimit: Type.Integer({ minimum: 1, default: 1_048_576 }),
})

export interface ResolvedGatewayOptions {
  /** The host's providers (the built-in ones are not among them). */
  providers: AnyProviderDefinition[]
  bodyLimit: number
}

/** The host's providers, checked before the plain data: each a valid definition, no id twice. Default none. */
export function takeProviders(providers: unknown, fail: (option: string, reason: string) => never): AnyProviderDefinition[] {
  providers = providers === undefined ? [] : providers
  if (!Array.isArray(providers)) fail('providers', 'must be an array of provider definitions')
  const providerIds = new Set<string>(BUILT_IN_PROVIDERS.map((provider) => provider.id))
  for (const [index, provider] of (providers as unknown[]).entries()) {
    const problem = providerDefinitionProblem(provider)
    if (problem) fail(`providers.${index}`, problem)
    const { id } = provider as AnyProviderDefinition
    if (providerIds.has(id)) fail(`providers.${index}`, `the provider id "${id}" is already registered`)
    providerIds.add(id)
  }
  return providers as AnyProviderDefinition[]
}

/** The gateway's options once the plain data passed its schema. */
export function resolveGatewayOptions(providers: AnyProviderDefinition[], data: Static<typeof GatewayOptionsSchema>): ResolvedGatewayOptions {
  return { providers, bodyLimit: data.gatewayBodyLimit }
}
