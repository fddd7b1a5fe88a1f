// Files the package ships beside its code (assets/, drizzle/, package.json), found from the package's
// root: the nearest folder above this module that holds the package's own package.json. The build
// bundles the modules into a few files (scripts/bundle.mjs), so a path relative to one module's place in
// src/ would not hold in dist/; from the root it does, in the repository (src/ run by tsx) and installed.
import { existsSync, readFileSync } from 'node:fs'

let root: URL | undefined

function packageRoot(): URL {
  let at = new URL('./', import.meta.url)
  for (;;) {
    const manifest = new URL('package.json', at)
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'fastify-shipments') return at
    const up = new URL('../', at)
    if (up.href === at.href) throw new Error(`fastify-shipments: no package.json of the package above ${import.meta.url}`)
    at = up
  }
}

/** A file of the package, by its path from the package's root (`assets/fonts/DejaVuSans.ttf`). */
export function packageFile(path: string): URL {
  root ??= packageRoot()
  return new URL(path, root)
}
