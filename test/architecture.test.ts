// The layering of src/: no import cycles, and nothing above src/db/ reaches a driver or a dialect.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const sourceRoot = fileURLToPath(new URL('../src', import.meta.url))

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name)
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : []
  })
}

/** Every module specifier a file imports or re-exports, type-only imports included. */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'/g), ...text.matchAll(/import\('([^']+)'\)/g)].map((match) => match[1])
}

const files = sourceFiles(sourceRoot)
const graph = new Map(
  files.map((file) => [
    file,
    specifiers(file)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))),
  ]),
)

t.test('no import cycles in src/ (type-only imports count)', async (t) => {
  const cycles: string[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === 'done') return
    if (state.get(file) === 'visiting') {
      cycles.push([...path.slice(path.indexOf(file)), file].map((each) => relative(sourceRoot, each)).join(' -> '))
      return
    }
    state.set(file, 'visiting')
    for (const next of graph.get(file) ?? []) visit(next, [...path, file])
    state.set(file, 'done')
  }
  for (const file of files) visit(file, [])
  t.same(cycles, [])
})

t.test('the public entry reaches no driver statically: a host installs only its own engine', async (t) => {
  const drivers = /^(better-sqlite3|pg|drizzle-orm\/(better-sqlite3|node-postgres))$/
  const reached = new Set<string>()
  const visit = (file: string) => {
    if (reached.has(file)) return
    reached.add(file)
    // Static imports and re-exports that are not type-only; `import()` is dynamic and loads on use.
    const text = readFileSync(file, 'utf8')
    for (const [, specifier] of text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(?!type\s)[^'"]*?from\s+'([^']+)'/g)) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))
    }
  }
  visit(join(sourceRoot, 'index.ts'))
  const offenders = [...reached].flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)\s+(?!type\s)[^'"]*?from\s+'([^']+)'/g)]
      .map((match) => match[1])
      .filter((specifier) => drivers.test(specifier))
      .map((specifier) => `${relative(sourceRoot, file)} imports ${specifier}`),
  )
  t.same(offenders, [])
  t.ok(reached.size > 20, 'the walk followed the entry through the package')
})

t.test('services, routes and providers import no driver and no dialect: only src/db/ does', async (t) => {
  const engineSpecific = /^(better-sqlite3|pg|drizzle-orm\/(better-sqlite3|node-postgres|sqlite-core|pg-core)(\/.*)?)$/
  const offenders = files
    .filter((file) => !relative(sourceRoot, file).startsWith('db/') && relative(sourceRoot, file) !== 'index.ts')
    .flatMap((file) =>
      specifiers(file)
        .filter((specifier) => engineSpecific.test(specifier) || /\/db\/(sqlite|postgres)\//.test(specifier))
        .map((specifier) => `${relative(sourceRoot, file)} imports ${specifier}`),
    )
  t.same(offenders, [])
})

t.test('imports run down the layers: what two layers share is a leaf, never one of them', async (t) => {
  const layerOf = (file: string) => relative(sourceRoot, file).split('/')[0]!.replace(/\.ts$/, '')
  // Who may not import whom: the data layer knows no service, the outbox no gateway, nothing but the
  // plugin and the admin pages themselves knows the admin pages. (The data layer may name the order
  // store's contract types: the shapes it reads and writes.)
  const forbidden: Record<string, string[]> = {
    db: ['outbox', 'gateway', 'shipments', 'admin', 'notifications', 'order-exchange', 'deliveries', 'returns', 'documents', 'plugin', 'options'],
    outbox: ['gateway', 'admin', 'order-exchange'],
    notifications: ['admin', 'gateway'],
    gateway: ['admin'],
    shipments: ['admin', 'gateway'],
    deliveries: ['admin', 'documents'],
    returns: ['admin'],
    documents: ['admin'],
    'order-exchange': ['admin'],
  }
  const crossings: string[] = []
  for (const [file, targets] of graph) {
    const from = layerOf(file)
    for (const target of targets) {
      if ((forbidden[from] ?? []).includes(layerOf(target))) crossings.push(`${relative(sourceRoot, file)} -> ${relative(sourceRoot, target)}`)
    }
  }
  t.same(crossings, [])
})
