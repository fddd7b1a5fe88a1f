// Environment-variable references in settings: "$NAME" or "${NAME}" stands for process.env.NAME.

const REFERENCE = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$/

export class MissingEnvironmentVariableError extends Error {
  constructor(readonly variable: string) {
    super(`Environment variable ${variable} is not set`)
    this.name = 'MissingEnvironmentVariableError'
  }
}

/** The variable a value refers to, or null when the value is a literal. */
export function environmentReference(value: unknown): string | null {
  if (typeof value !== 'string') return null
  const match = REFERENCE.exec(value.trim())
  return match ? (match[1] ?? match[2]) : null
}

/** The value itself, or the variable it refers to; throws when that variable is not set. */
export function resolveEnvironmentValue<T>(value: T, env: NodeJS.ProcessEnv = process.env): T | string {
  const variable = environmentReference(value)
  if (variable === null) return value
  // Own variables only: `$constructor` or `$toString` names an unset variable, not Object.prototype's.
  const resolved = Object.hasOwn(env, variable) ? env[variable] : undefined
  if (resolved === undefined) throw new MissingEnvironmentVariableError(variable)
  return resolved
}

/** Resolves every top-level value of a settings object. */
export function resolveEnvironmentValues(settings: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env) {
  return Object.fromEntries(Object.entries(settings).map(([key, value]) => [key, resolveEnvironmentValue(value, env)]))
}

/** "true", "1", "yes" and "on" (any case) are true; everything else is false. */
export function parseBooleanSetting(value: unknown): boolean {
  if (typeof value === 'boolean') return value
  return typeof value === 'string' && /^(true|1|yes|on)$/i.test(value.trim())
}
