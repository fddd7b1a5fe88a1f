// Every optional property of the public types admits `undefined`, so hosts compiling with
// `exactOptionalPropertyTypes` (a default of `tsc --init`) may write `{ layout: cond ? undefined : fn }`
// or `{ secret: process.env.X }`. Regression: options and service inputs were `?: T`, which such a
// host cannot pass an `undefined` to. Walks every type reachable from src/index.ts with the compiler.
import { fileURLToPath } from 'node:url'
import { dirname, join, relative } from 'node:path'
import t from 'tap'
import ts from 'typescript'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')
// Internal types a public signature happens to reach (the data layer behind createReferenceOrderStore,
// the outbox's job results): hosts never write them.
const INTERNAL = ['src/db/', 'src/outbox/dispatcher.ts']

/** `file:line name?: type` of each optional property, reachable from the package's index, that refuses undefined. */
function optionalPropertiesWithoutUndefined(): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.build.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!
  const program = ts.createProgram([join(root, 'src/index.ts')], { ...config.options, noEmit: true })
  const checker = program.getTypeChecker()
  const found = new Set<string>()
  const seen = new Set<ts.Type>()
  const isPublic = (node: ts.Node) => {
    const file = relative(root, node.getSourceFile().fileName)
    return file.startsWith('src/') && !INTERNAL.some((prefix) => file.startsWith(prefix))
  }
  const admitsUndefined = (node: ts.TypeNode) => {
    const type = checker.getTypeFromTypeNode(node)
    if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.Undefined)) return true
    return type.isUnion() && type.types.some((member) => (member.flags & ts.TypeFlags.Undefined) !== 0)
  }
  function visit(type: ts.Type, depth: number): void {
    if (seen.has(type) || depth > 14) return
    seen.add(type)
    if (type.isUnionOrIntersection()) return type.types.forEach((member) => visit(member, depth + 1))
    for (const argument of type.aliasTypeArguments ?? []) visit(argument, depth + 1)
    if (!(type.flags & ts.TypeFlags.Object)) return
    if ((type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference) checker.getTypeArguments(type as ts.TypeReference).forEach((argument) => visit(argument, depth + 1))
    const declarations = type.getSymbol()?.declarations ?? []
    if (declarations.length > 0 && !declarations.some((declaration) => declaration.getSourceFile().fileName.startsWith(join(root, 'src')))) return
    for (const property of type.getProperties()) {
      const declaration = property.valueDeclaration ?? property.declarations?.[0]
      if (!declaration || !declaration.getSourceFile().fileName.startsWith(join(root, 'src'))) continue
      if ((ts.isPropertySignature(declaration) || ts.isPropertyDeclaration(declaration)) && declaration.questionToken && declaration.type && isPublic(declaration) && !admitsUndefined(declaration.type)) {
        const file = declaration.getSourceFile()
        const line = file.getLineAndCharacterOfPosition(declaration.getStart()).line + 1
        found.add(`${relative(root, file.fileName)}:${line} ${property.name}?: ${declaration.type.getText()}`)
      }
      visit(checker.getTypeOfSymbol(property), depth + 1)
    }
    for (const signature of [...type.getCallSignatures(), ...type.getConstructSignatures()]) {
      for (const parameter of signature.getParameters()) visit(checker.getTypeOfSymbol(parameter), depth + 1)
      visit(signature.getReturnType(), depth + 1)
    }
    for (const index of [type.getNumberIndexType(), type.getStringIndexType()]) if (index) visit(index, depth + 1)
  }
  const index = checker.getSymbolAtLocation(program.getSourceFile(join(root, 'src/index.ts'))!)!
  for (const exported of checker.getExportsOfModule(index)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    if (symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class)) visit(checker.getDeclaredTypeOfSymbol(symbol), 0)
    if (symbol.flags & ts.SymbolFlags.Value) visit(checker.getTypeOfSymbol(symbol), 0)
  }
  return [...found].sort()
}

t.test('every optional property of the public types admits undefined (exactOptionalPropertyTypes hosts)', async (t) => {
  t.same(optionalPropertiesWithoutUndefined(), [], 'declare them `?: T | undefined`')
})

/** The package index's exports, by name, from one compiler program shared by the tests below. */
let indexExports: { checker: ts.TypeChecker; byName: Map<string, ts.Symbol> } | undefined
function exportsOfIndex() {
  if (indexExports) return indexExports
  const program = ts.createProgram([join(root, 'src/index.ts')], { noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext })
  const checker = program.getTypeChecker()
  const index = checker.getSymbolAtLocation(program.getSourceFile(join(root, 'src/index.ts'))!)!
  indexExports = { checker, byName: new Map(checker.getExportsOfModule(index).map((symbol) => [symbol.name, symbol])) }
  return indexExports
}

// Regression: the line-item types the README names (order lines, allocation, the attention list, split
// rules) were declared but not exported, so a host could not name what `allocation()` or `attention()`
// return, nor write an order store's `orderLines`/`listCompletedOrders` against the package's types.
t.test('the line-item types the README names are exported from the package index', async (t) => {
  const { byName } = exportsOfIndex()
  const lineItemTypes = ['OrderLine', 'CompletedOrder', 'OrderAllocation', 'AllocatedLine', 'AttentionOrder', 'AttentionPage', 'SplitRule', 'SplitRuleLine', 'ShipmentItem', 'ShipmentItemInput']
  t.same(lineItemTypes.filter((name) => !byName.has(name)), [], 'export them as types from src/index.ts')
})

// Regression: `shipments.update()` applies `items` and `enabled`, but ShipmentUpdateInput did not declare
// them, so a host building its input as that type could not pass them.
t.test('ShipmentUpdateInput declares items and enabled, which shipments.update() applies', async (t) => {
  const { checker, byName } = exportsOfIndex()
  const input = checker.getDeclaredTypeOfSymbol(checker.getAliasedSymbol(byName.get('ShipmentUpdateInput')!))
  const declared = (name: string) => {
    const property = input.getProperty(name)
    return property ? checker.typeToString(checker.getTypeOfSymbol(property)) : null
  }
  t.same(
    { items: declared('items'), enabled: declared('enabled') },
    { items: 'ShipmentItemInput[] | null | undefined', enabled: 'boolean | null | undefined' },
  )
})
