// The house's rules: no import cycles in src/, nothing above src/db/ reaches a driver or a dialect, every
// import runs down the floors, and no source file or function grows past what a reader takes in at once.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

const sourceRoot = fileURLToPath(new URL('../../src', import.meta.url))

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

/**
 * The floors of src/, lowest first (CONTRIBUTING, "The layers of src/"). A room is a top-level folder or
 * file of src/; an import goes to its own room or to a room on a lower floor, never up and never
 * sideways, except between the leaves, which share the ground floor and import each other freely.
 */
const FLOORS: readonly (readonly string[])[] = [
  ['errors', 'text', 'time', 'env', 'html', 'message-id', 'in-chunks', 'lazy', 'package-files', 'prefixes', 'order-store', 'signing', 'http', 'telemetry', 'testing'],
  ['db'],
  ['model'],
  ['outbox'],
  ['orders'],
  ['shipments'],
  ['gateway'],
  ['deliveries'],
  ['addresses'],
  ['rules', 'customs'],
  ['returns'],
  ['notifications'],
  ['order-exchange'],
  ['documents'],
  ['health'],
  ['pack-station'],
  ['manifests'],
  ['batches'],
  ['admin'],
  ['options', 'openapi'],
  ['decorator'],
  ['plugin'],
  ['index', 'cli'],
]

const roomOf = (file: string) => relative(sourceRoot, file).split('/')[0]!.replace(/\.ts$/, '')
const floorOf = (room: string) => FLOORS.findIndex((rooms) => rooms.includes(room))

t.test('every room of src/ stands on a floor', async (t) => {
  const rooms = [...new Set(files.map(roomOf))].sort()
  t.same(rooms.filter((room) => floorOf(room) < 0), [], 'a new folder or top-level module is given its floor here and in CONTRIBUTING')
  t.same(FLOORS.flat().filter((room) => !rooms.includes(room)), [], 'no floor names a room that is gone')
})

t.test('imports run down the floors: what two rooms share sits beneath both', async (t) => {
  const crossings: string[] = []
  for (const [file, targets] of graph) {
    const from = roomOf(file)
    for (const target of targets) {
      const to = roomOf(target)
      if (to === from || (floorOf(to) === 0 && floorOf(from) === 0)) continue
      if (floorOf(to) >= floorOf(from)) crossings.push(`${relative(sourceRoot, file)} -> ${relative(sourceRoot, target)}`)
    }
  }
  t.same(crossings, [])
})

t.test('only the plugin and the public entry compose the options', async (t) => {
  const composition = join(sourceRoot, 'options.ts')
  const importers = [...graph].filter(([, targets]) => targets.includes(composition)).map(([file]) => relative(sourceRoot, file))
  t.same(importers.filter((file) => !['plugin.ts', 'index.ts', 'openapi.ts'].includes(file)), [])
})

/** Every TypeScript source the package keeps: the library, the bench, the demo host and the scripts. */
const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url))
function keptSourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name)
    if (name === 'build' || name === 'node_modules') return []
    return statSync(path).isDirectory() ? keptSourceFiles(path) : /\.(ts|mjs)$/.test(path) ? [path] : []
  })
}
const keptSources = ['src', 'bench', 'examples', 'scripts'].flatMap((folder) => keptSourceFiles(join(repositoryRoot, folder)))

t.test('no source file over 500 lines', async (t) => {
  const long = keptSources
    .map((file) => ({ file: relative(repositoryRoot, file), lines: readFileSync(file, 'utf8').replace(/\n$/, '').split('\n').length }))
    .filter(({ lines }) => lines > 500)
  t.same(long, [])
})

t.test('no function over 150 lines (factory closures included)', async (t) => {
  const long: string[] = []
  for (const file of keptSources) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line
        if (last - first + 1 > 150) long.push(`${relative(repositoryRoot, file)}:${first + 1} (${last - first + 1} lines)`)
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
  }
  t.same(long, [])
  t.ok(keptSources.length > 100, 'the walk found the sources')
})
