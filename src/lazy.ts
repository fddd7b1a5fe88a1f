// Loading on first use: the modules a host may never need (PDF, templates, tracking-number detection)
// stay out of the package's import, which then costs little more than Fastify's own.
import { createRequire } from 'node:module'

/**
 * A loader that imports once: concurrent first callers share the one import, and a failed import is
 * tried again on the next call (a package installed meanwhile is picked up), its error naming what
 * was being loaded and keeping the import's error as its cause.
 */
export function onFirstUse<T>(what: string, load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = null
      throw new Error(`fastify-shipments could not load ${what}: ${(error as Error)?.message ?? String(error)}`, { cause: error })
    }))
}

/**
 * The same for a CommonJS package a synchronous caller needs (the carrier detector, the ship notice's
 * parser): required on the first call, so the caller stays synchronous. `require` is atomic, so there
 * is no concurrent first use to share; a failure is tried again on the next call.
 */
export function requireOnFirstUse<T>(what: string, specifier: string): () => T {
  let loaded: T | null = null
  return () => {
    if (loaded === null) {
      try {
        loaded = createRequire(import.meta.url)(specifier) as T
      } catch (error) {
        throw new Error(`fastify-shipments could not load ${what}: ${(error as Error)?.message ?? String(error)}`, { cause: error })
      }
    }
    return loaded
  }
}

/**
 * Which of `packages` cannot be found from the package: an optional peer dependency the host has not
 * installed. A package found whose `exports` name no CommonJS entry counts as installed.
 */
export function missingPackages(packages: readonly string[]): string[] {
  const require = createRequire(import.meta.url)
  return packages.filter((name) => {
    try {
      require.resolve(name)
      return false
    } catch (error) {
      return (error as { code?: string }).code === 'MODULE_NOT_FOUND'
    }
  })
}

/**
 * `onFirstUse` for a feature built on optional peer dependencies (package.json's peerDependenciesMeta):
 * when the import fails because some of `packages` are not installed, the error is `refuse(missing)`,
 * a coded error naming what to install, rather than a module-not-found. Tried again on the next call,
 * so a host that installs them meanwhile needs no restart.
 */
export function onFirstUseOfPeers<T>(what: string, packages: readonly string[], refuse: (missing: string[]) => Error, load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = null
      const missing = missingPackages(packages)
      if (missing.length > 0) throw Object.assign(refuse(missing), { cause: error })
      throw new Error(`fastify-shipments could not load ${what}: ${(error as Error)?.message ?? String(error)}`, { cause: error })
    }))
}

/**
 * TypeBox's Value module (a schema's defaults and errors), required on first use: the option checks at
 * registration and a few requests use it, the import does not (it cost some 12 ms of the package's
 * import, issue 50's ratio to Fastify's). Its CommonJS build: TypeBox marks schemas with global symbols
 * (`Symbol.for('TypeBox.Kind')`...), so it reads the schemas the ES build made; the package registers
 * no format or type of its own, the one state the two builds would not share.
 */
export const typeBoxValue = requireOnFirstUse<typeof import('@sinclair/typebox/value')>('TypeBox values', '@sinclair/typebox/value')
