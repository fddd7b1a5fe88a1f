// The providers every host has, whatever it registers: their ids are taken.
import type { AnyProviderDefinition } from '../providers.js'
import { afterShipProvider } from './aftership.js'
import { easyPostProvider } from './easypost.js'
import { signedWebhookProvider } from './signed-webhook.js'

export const BUILT_IN_PROVIDERS: readonly AnyProviderDefinition[] = [signedWebhookProvider, easyPostProvider, afterShipProvider]
