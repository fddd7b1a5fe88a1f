// The build's second step (`npm run build`, after tsc): the modules tsc wrote to dist/ bundled into one file
// per entry point and a few shared chunks (esbuild, ES modules, code splitting), so a host's import links a
// few dozen files instead of some 170: about 104 ms instead of 184 on this machine class, against 60 for
// Fastify's own import (CONTRIBUTING, "Startup and installed size"). Dynamic imports stay dynamic (each a
// chunk of its own), so what loads on first use still does; dependencies stay external (the host installs
// them). The declarations (.d.ts) stay as tsc wrote them, one per module. Files shipped beside the code are
// found from the package's root (src/package-files.ts), never from a module's own place.
import { build } from 'esbuild'
import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

const dist = 'dist'
const staging = 'dist-bundle'
// The package's entry points (package.json `exports` and `bin`), and the data layer's opening, which the
// outbox bench imports from the build.
const entries = ['index.js', 'cli.js', 'db/sqlite/schema.js', 'db/postgres/schema.js', 'testing/index.js', 'db/open.js']

rmSync(staging, { recursive: true, force: true })
await build({
  entryPoints: entries.map((entry) => join(dist, entry)),
  outdir: staging,
  outbase: dist,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
})

/** Every file under `folder`, as paths relative to it. */
const filesOf = (folder) =>
  readdirSync(folder, { recursive: true }).map(String).filter((path) => statSync(join(folder, path)).isFile())

// tsc's JavaScript goes; its declarations stay; the bundles take the entries' places.
for (const file of filesOf(dist)) if (file.endsWith('.js')) rmSync(join(dist, file))
for (const file of filesOf(staging)) {
  const target = join(dist, file)
  mkdirSync(dirname(target), { recursive: true })
  renameSync(join(staging, file), target)
}
rmSync(staging, { recursive: true, force: true })
console.log(`bundled ${entries.length} entry points into ${filesOf(dist).filter((file) => file.endsWith('.js')).length} files under ${relative('.', dist)}/`)
