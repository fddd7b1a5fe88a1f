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
