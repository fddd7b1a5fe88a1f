// The types the docs show are the types the package exports: every `interface Name { ... }` in a
// TypeScript block of README.md or docs/ whose name the package exports lists exactly the exported
// type's properties (own ones plus those of what it extends), and the permissions listed in
// docs/options.md are the keys of `ShipmentsPermissions`. Regression: docs/orders.md's OrderLine had
// lost `weight`, `dimensions` and `location`, and the permissions listed four keys of six.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'
import { ShipmentsPermissions } from '../../src/index.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]

/** The package's exported types by name, with every property name (inherited ones included). */
function exportedTypes(): Map<string, Set<string>> {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.build.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!
  const program = ts.createProgram([join(root, 'src/index.ts')], { ...config.options, noEmit: true })
  const checker = program.getTypeChecker()
  const index = checker.getSymbolAtLocation(program.getSourceFile(join(root, 'src/index.ts'))!)!
  const types = new Map<string, Set<string>>()
  for (const exported of checker.getExportsOfModule(index)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    if (!(symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias))) continue
    const type = checker.getDeclaredTypeOfSymbol(symbol)
    if (!(type.flags & ts.TypeFlags.Object) && !type.isIntersection()) continue
    types.set(exported.name, new Set(checker.getPropertiesOfType(type).map((property) => property.name)))
  }
  return types
}

interface DocInterface {
  page: string
  name: string
  own: string[]
  /** What it extends, as written. */
  heritage: ts.ExpressionWithTypeArguments[]
}

function docInterfaces(): DocInterface[] {
  const found: DocInterface[] = []
  for (const page of pages) {
    const text = readFileSync(join(root, page), 'utf8')
    for (const block of text.matchAll(/```tsx?[^\n]*\n([\s\S]*?)```/g)) {
      const source = ts.createSourceFile('block.ts', block[1]!, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
      for (const statement of source.statements) {
        if (!ts.isInterfaceDeclaration(statement)) continue
        const own = statement.members.flatMap((member) => (member.name && (ts.isIdentifier(member.name) || ts.isStringLiteral(member.name)) ? [member.name.text] : []))
        found.push({ page, name: statement.name.text, own, heritage: statement.heritageClauses?.flatMap((clause) => [...clause.types]) ?? [] })
      }
    }
  }
  return found
}

/** The properties a doc interface inherits, or undefined when what it extends is not read here. */
function inherited(heritage: ts.ExpressionWithTypeArguments[], types: Map<string, Set<string>>): Set<string> | undefined {
  const names = new Set<string>()
  for (const base of heritage) {
    const baseName = base.expression.getText(base.getSourceFile())
    if (baseName === 'Omit' && base.typeArguments?.length === 2) {
      const [of, keys] = base.typeArguments as unknown as [ts.TypeNode, ts.TypeNode]
      const props = types.get(of.getText(of.getSourceFile()))
      if (!props) return undefined
      const left = new Set([...keys.getText(keys.getSourceFile()).matchAll(/'([^']+)'/g)].map((match) => match[1]!))
      for (const name of props) if (!left.has(name)) names.add(name)
      continue
    }
    const props = types.get(baseName)
    if (!props || base.typeArguments) return undefined
    for (const name of props) names.add(name)
  }
  return names
}

const types = exportedTypes()
const documented = docInterfaces().filter((each) => types.has(each.name))

t.ok(documented.length >= 20, `the docs show ${documented.length} of the package's exported interfaces`)
for (const each of documented) {
  t.test(`${each.page}: interface ${each.name}`, async (t) => {
    const exported = types.get(each.name)!
    const base = inherited(each.heritage, types)
    const shown = new Set([...each.own, ...(base ?? [])])
    t.same([...each.own].filter((name) => !exported.has(name)), [], 'every property shown exists on the exported type')
    if (base) t.same([...exported].filter((name) => !shown.has(name)).sort(), [], 'every property of the exported type is shown')
  })
}

t.test('docs/options.md lists every permission of ShipmentsPermissions, with its value', async (t) => {
  const text = readFileSync(join(root, 'docs/options.md'), 'utf8')
  const listing = /exported as `ShipmentsPermissions`:\s*`(\{[^`]*\})`/.exec(text)
  t.ok(listing, 'the listing is there')
  const listed = Object.fromEntries([...listing![1]!.matchAll(/(\w+): '([^']+)'/g)].map((match) => [match[1], match[2]]))
  t.same(listed, { ...ShipmentsPermissions })
})

t.test('each reference page opens with what it is for and its three most used calls', async (t) => {
  // Journeys (followed top to bottom) and the upgrade notes are not reference pages.
  const notReference = new Set(['docs/getting-started.md', 'docs/upgrading.md', 'docs/your-own-order-store.md', 'docs/test-without-a-carrier.md', 'docs/shipping-a-days-orders.md', 'docs/shipping-abroad.md'])
  for (const page of pages.filter((page) => page.startsWith('docs/') && !notReference.has(page))) {
    const opening = readFileSync(join(root, page), 'utf8').split('\n').slice(0, 16).join('\n')
    const most = /^\*\*Most used:\*\* (.+)$/m.exec(opening)
    t.ok(most, `${page} names its most used calls near the top`)
    if (most) t.ok((most[1]!.match(/`[^`]+`/g) ?? []).length >= 3, `${page}: three of them, as code`)
  }
})

t.test("every journey the README lists holds a complete program the docs' snippets test type-checks", async (t) => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  const journeys = readme.slice(readme.indexOf('**Journeys**'), readme.indexOf('**Reference**'))
  const linked = [...journeys.matchAll(/\]\((docs\/[^)#]+\.md)\)/g)].map((match) => match[1]!)
  t.ok(linked.length >= 4, `the README lists ${linked.length} journeys`)
  for (const page of linked) t.match(readFileSync(join(root, page), 'utf8'), /```ts compile\n[\s\S]*?\nimport /, `${page} has a whole program in a compile block`)
})
