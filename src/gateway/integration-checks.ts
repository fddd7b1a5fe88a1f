// The checks an integration passes before it is saved: its name, handle, enabled flag, status maps,
// pushes and its provider's settings (environment references read, the provider's schema applied).
import { typeBoxValue } from '../lazy.js'
import { environmentReference, resolveEnvironmentValue, type MissingEnvironmentVariableError } from '../env.js'
import { IntegrationConfigError } from '../errors.js'
import { isShipmentStatus } from '../model/shipment.js'
import { TEXT_LIMITS, textProblem, type TextRule } from '../text.js'
import type { IntegrationInput } from './integration.js'
import { SHORT_TEXT, type IntegrationServiceContext } from './integration-context.js'

const HANDLE_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/
const SETTING_TEXT: TextRule = { maxLength: TEXT_LIMITS.long, multiline: true }

export function createIntegrationChecks(shared: IntegrationServiceContext) {
  const { deps, findRow } = shared
  const { registry } = deps

  /**
   * Checks an integration before it is saved; throws one IntegrationConfigError naming every problem
   * found, each under its field (`name`, `handle`, `settings.secret`, `statusMap.in_transit`...).
   */
  async function checkInput(input: IntegrationInput, existingId: number | null): Promise<void> {
    const problems: Record<string, string[]> = {}
    const add = (field: string, message: string) => void (problems[field] ??= []).push(message)
    await collectProblems(input, existingId, add)
    if (Object.keys(problems).length > 0) throw new IntegrationConfigError(problems)
  }

  async function collectProblems(input: IntegrationInput, existingId: number | null, add: (field: string, message: string) => void): Promise<void> {
    if (typeof input.name !== 'string' || input.name.trim() === '') add('name', 'must not be empty')
    else {
      const nameProblem = textProblem(input.name.trim(), SHORT_TEXT)
      if (nameProblem) add('name', nameProblem)
    }
    if (typeof input.handle !== 'string' || !HANDLE_PATTERN.test(input.handle)) {
      add('handle', 'lowercase letters, digits, "-" and "_", starting with a letter or digit, at most 64')
    } else {
      const clash = await findRow(input.handle)
      if (clash && clash.id !== existingId) add('handle', `"${input.handle}" is already used`)
    }
    if (input.enabled !== undefined && typeof input.enabled !== 'boolean' && environmentReference(input.enabled) === null) {
      add('enabled', 'must be a boolean or an environment reference such as "$WEBHOOKS_ENABLED"')
    }
    for (const [code, status] of Object.entries(input.statusMap ?? {})) {
      const codeProblem = code === '' ? 'external codes must not be empty' : textProblem(code, SHORT_TEXT)
      if (codeProblem) add('statusMap', code === '' ? codeProblem : `an external code ${codeProblem}`)
      else if (!isShipmentStatus(status)) add(`statusMap.${code}`, `"${status}" is not a shipment status`)
    }
    for (const [status, code] of Object.entries(input.outboundStatusMap ?? {})) {
      if (!isShipmentStatus(status)) {
        add('outboundStatusMap', `"${status}" is not a shipment status`)
        continue
      }
      const codeProblem = typeof code !== 'string' || code === '' ? 'must be a non-empty string' : textProblem(code, SHORT_TEXT)
      if (codeProblem) add(`outboundStatusMap.${status}`, codeProblem)
    }
    const pushOn = Array.isArray(input.pushOn ?? []) ? (input.pushOn ?? []) : null
    if (pushOn === null) add('pushOn', 'must be a list of shipment statuses')
    for (const status of pushOn ?? []) {
      if (!isShipmentStatus(status)) add('pushOn', `"${String(status)}" is not a shipment status`)
    }
    if (input.providerId == null) {
      if ((pushOn ?? []).length > 0) add('pushOn', 'needs a provider that can push shipments')
      return
    }
    const provider = registry.get(input.providerId)
    if (!provider) return add('providerId', `no provider "${input.providerId}" is registered`)
    for (const status of pushOn ?? []) {
      const method = status === 'cancelled' ? 'cancelShipment' : 'pushShipment'
      if (!provider[method]) add('pushOn', `the provider "${provider.id}" has no ${method}()`)
    }
    // Each setting on its own: an unset variable or a text that breaks the rule is named, and the
    // schema checks the rest (a setting already refused is not refused again as missing).
    const resolved: Record<string, unknown> = {}
    const refused = new Set<string>()
    for (const [key, value] of Object.entries(input.settings ?? {})) {
      const problem = typeof value === 'string' ? textProblem(value, SETTING_TEXT) : null
      if (problem) {
        add(`settings.${key}`, problem)
        refused.add(key)
        continue
      }
      try {
        resolved[key] = resolveEnvironmentValue(value)
      } catch (error) {
        // resolveEnvironmentValue throws one kind of error: an unset variable.
        add(`settings.${key}`, (error as MissingEnvironmentVariableError).message)
        refused.add(key)
      }
    }
    const named = new Set<string>()
    for (const error of typeBoxValue().Value.Errors(provider.settingsSchema, typeBoxValue().Value.Default(provider.settingsSchema, structuredClone(resolved)))) {
      const path = error.path.replace(/^\//, '').replaceAll('/', '.')
      const field = path === '' ? 'settings' : `settings.${path}`
      // One message per setting (a missing string is also "not a string"); the schema's own wording when it has one.
      if (named.has(field) || refused.has(path.split('.')[0]!)) continue
      named.add(field)
      const { errorMessage } = error.schema as { errorMessage?: unknown }
      add(field, typeof errorMessage === 'string' ? errorMessage : error.message)
    }
  }

  return { checkInput }
}

export type IntegrationChecks = ReturnType<typeof createIntegrationChecks>
