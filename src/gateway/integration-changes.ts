// Creating, changing, reading and removing integrations: each checked before it is saved (see
// integration-checks.ts), a masked secret kept as stored, every change told to the caches of rows.
import type { IntegrationValues } from '../db/data-layer.js'
import { environmentReference } from '../env.js'
import { IntegrationConfigError, ShipmentsDatabaseError } from '../errors.js'
import type { Integration, IntegrationInput } from './integration.js'
import { ownKeysOnly, SECRET_MASK, type IntegrationServiceContext } from './integration-context.js'
import type { IntegrationChecks } from './integration-checks.js'

export function createIntegrationChanges(shared: IntegrationServiceContext, { checkInput }: Pick<IntegrationChecks, 'checkInput'>) {
  const { deps, findRow, present, requireRow } = shared
  const { data, registry } = deps

  const storedEnabled = (enabled: boolean | string | undefined) =>
    typeof enabled === 'string' ? enabled.trim() : String(enabled ?? true)

  const storedValues = (input: IntegrationInput): IntegrationValues => ({
    name: input.name.trim(),
    handle: input.handle,
    enabled: storedEnabled(input.enabled),
    providerId: input.providerId ?? null,
    // Plain objects of own entries (`__proto__` included): Drizzle reads `.constructor` of what it
    // stores, which a null-prototype map (a form's, or one presented here) does not have.
    settings: Object.fromEntries(Object.entries(input.settings ?? {})),
    statusMap: Object.fromEntries(Object.entries(input.statusMap ?? {})),
    outboundStatusMap: Object.fromEntries(Object.entries(input.outboundStatusMap ?? {})),
    pushOn: [...new Set(input.pushOn ?? [])],
    updatedAt: new Date(),
  })

  /**
   * The handle's unique key refused the row: another instance saved an integration with this handle
   * after checkInput looked. The same refusal as when it was there before.
   */
  const handleTakenMeanwhile = (handle: string) => (error: unknown): never => {
    if (error instanceof ShipmentsDatabaseError && error.isUniqueViolation) throw new IntegrationConfigError({ handle: [`"${handle}" is already used`] })
    throw error
  }

  return {
    async create(input: IntegrationInput): Promise<Integration> {
      const defaults = input.statusMap === undefined ? registry.get(input.providerId ?? '')?.defaultStatusMap : undefined
      if (defaults) input = { ...input, statusMap: { ...defaults } }
      await checkInput(input, null)
      const row = await data.insertIntegration(storedValues(input)).catch(handleTakenMeanwhile(input.handle))
      deps.changed?.()
      return present(row)
    },

    /** Changes an integration; keys left out keep their value, and a masked secret keeps the stored one. */
    async update(handle: string, changes: { [K in keyof IntegrationInput]?: IntegrationInput[K] | undefined }): Promise<Integration> {
      const row = await requireRow(handle)
      const stored = ownKeysOnly(Object.entries(row.settings))
      const settings = ownKeysOnly([...Object.entries(stored), ...Object.entries(changes.settings ?? {})])
      for (const [key, value] of Object.entries(changes.settings ?? {})) if (value === SECRET_MASK) settings[key] = stored[key]
      const merged: IntegrationInput = {
        name: changes.name ?? row.name,
        handle: changes.handle ?? row.handle,
        enabled: changes.enabled ?? (environmentReference(row.enabled) ? row.enabled : row.enabled === 'true'),
        providerId: changes.providerId === undefined ? row.providerId : changes.providerId,
        settings,
        statusMap: changes.statusMap ?? row.statusMap,
        outboundStatusMap: changes.outboundStatusMap ?? row.outboundStatusMap,
        pushOn: changes.pushOn ?? row.pushOn,
      }
      await checkInput(merged, row.id)
      const saved = await data.updateIntegration(row.id, storedValues(merged)).catch(handleTakenMeanwhile(merged.handle))
      deps.changed?.()
      return present(saved)
    },

    async get(handle: string): Promise<Integration | null> {
      const row = await findRow(handle)
      return row ? present(row) : null
    },

    async list(): Promise<Integration[]> {
      return (await data.listIntegrations()).map(present)
    },

    async remove(handle: string): Promise<void> {
      await data.deleteIntegration((await requireRow(handle)).id)
      deps.changed?.()
    },
  }
}
