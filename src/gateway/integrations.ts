// Integrations stored in the database: handle, enabled flag, bound provider, settings and status map.
// Composed of one module per concern, each a factory over the shared context (integration-context.ts):
// integration-checks.ts (what an integration must pass before it is saved), integration-changes.ts
// (creating, changing, reading and removing), integration-calls.ts (the gateway's rows, the enabled
// check, a provider's call context) and integration-records.ts (external references, deliveries).
// The types and constants stay importable from here.
import { createIntegrationServiceContext, type IntegrationServiceDependencies } from './integration-context.js'
import { createIntegrationChecks } from './integration-checks.js'
import { createIntegrationChanges } from './integration-changes.js'
import { createIntegrationCalls } from './integration-calls.js'
import { createIntegrationRecords } from './integration-records.js'

export { SECRET_MASK, type IntegrationServiceDependencies } from './integration-context.js'
export { GATEWAY_CROSS_PROCESS_MS } from './integration-calls.js'
export type { DeliveryRecord } from './integration-records.js'

export type IntegrationService = ReturnType<typeof createIntegrationService>

export function createIntegrationService(deps: IntegrationServiceDependencies) {
  const shared = createIntegrationServiceContext(deps)
  const { present } = shared
  const { checkInput } = createIntegrationChecks(shared)
  const { create, update, get, list, remove } = createIntegrationChanges(shared, { checkInput })
  const { isEnabled, findStored, contextFor, checkConnection } = createIntegrationCalls(shared)
  const { setExternalReference, recentDeliveries, externalReferences } = createIntegrationRecords(shared)

  return {
    create,
    update,
    get,
    list,
    remove,
    isEnabled,
    findStored,
    present,
    contextFor,
    checkConnection,
    setExternalReference,
    recentDeliveries,
    externalReferences,
  }
}
