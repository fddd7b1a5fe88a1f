// The documentation's code cannot rot: every TypeScript block of README.md and docs/*.md marked
// ```ts compile (see CONTRIBUTING.md, "Code in the documentation") is type-checked, each block its own
// file, in one tsc run, against the package as built for npm (its declarations, resolved through its
// package.json `exports`) in a project with `tsc --init`'s own defaults (strict,
// noUncheckedIndexedAccess, exactOptionalPropertyTypes, module nodenext) and Node's types.
import t from 'tap'
import { execFile } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { promisify } from 'node:util'
import { allSnippets, COMPILE_FENCE, documentationFiles } from '../fixtures/doc-snippets.js'

// Building the declarations and the type check take a minute or two on a busy machine.
t.setTimeout(10 * 60 * 1000)

const execute = promisify(execFile)
const repository = new URL('../../', import.meta.url).pathname
const tsc = join(repository, 'node_modules/.bin/tsc')
const snippets = allSnippets(repository)

t.test('the documentation has compilable snippets where a host needs them', async (t) => {
  const sources = snippets.map((snippet) => snippet.source)
  t.ok(sources.some((source) => source.startsWith('README.md:')), "the README's minimal host")
  for (const page of ['docs/notifications.md', 'docs/orders.md', 'docs/gateway.md', 'docs/getting-started.md']) {
    t.ok(sources.some((source) => source.startsWith(`${page}:`)), `${page} has a ${COMPILE_FENCE} block`)
  }
  for (const snippet of snippets) t.match(snippet.code, /^import /m, `${snippet.source} is a whole file, with its imports`)
})

t.test('every compilable snippet type-checks against the built package under tsc --init defaults', async (t) => {
  // Inside the repository (tap's fixtures live under .tap/), so the package's own dependencies
  // (fastify, drizzle-orm, @types/node...) resolve from the repository's node_modules, as a host's would.
  const project = t.testdir()
  const installed = join(project, 'node_modules/fastify-shipments')
  mkdirSync(installed, { recursive: true })
  copyFileSync(join(repository, 'package.json'), join(installed, 'package.json'))
  await execute(tsc, ['-p', join(repository, 'tsconfig.build.json'), '--emitDeclarationOnly', '--outDir', join(installed, 'dist')], { cwd: repository })

  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'snippets', private: true, type: 'module' }))
  await execute(tsc, ['--init', '--types', 'node'], { cwd: project })
  const tsconfig = readFileSync(join(project, 'tsconfig.json'), 'utf8')
  for (const option of ['"strict": true', '"noUncheckedIndexedAccess": true', '"exactOptionalPropertyTypes": true', '"module": "nodenext"']) {
    t.ok(tsconfig.includes(option), `tsc --init wrote ${option}`)
  }

  const files = snippets.map((snippet, index) => {
    const file = `snippet-${String(index + 1).padStart(2, '0')}.ts`
    writeFileSync(join(project, file), snippet.code)
    return { file, snippet }
  })
  const output = await execute(tsc, ['--noEmit', '--pretty', 'false'], { cwd: project, maxBuffer: 10 * 1024 * 1024 }).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string; message: string }) => error.stdout || error.message,
  )
  for (const { file, snippet } of files) {
    // tsc's lines are the snippet's (line 1 is the line after the opening fence): named as the markdown's.
    const errors = output
      .split('\n')
      .filter((line) => line.startsWith(`${file}(`))
      .map((line) => line.replace(/^[^(]+\((\d+),(\d+)\)/, (_, row: string, column: string) => `${snippet.file}:${snippet.fenceLine + Number(row)}:${column}`))
    t.same(errors, [], `${snippet.source} (${snippet.heading}) compiles`)
  }
  const elsewhere = output.split('\n').filter((line) => line.trim() !== '' && !files.some(({ file }) => line.startsWith(`${file}(`)) && !line.startsWith(' '))
  t.same(elsewhere, [], 'no error outside the snippets (the package declarations, the project)')
})

/** GitHub's anchor of a heading: lowercased, punctuation but `-` and `_` dropped, spaces as `-`. */
const anchorOf = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replaceAll(' ', '-')

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>()
  let fenced = false
  for (const line of readFileSync(join(repository, file), 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    else if (!fenced && /^#{1,6} /.test(line)) anchors.add(anchorOf(line.replace(/^#+ /, '')))
  }
  return anchors
}

t.test('every link between the README, the docs pages, CONTRIBUTING.md and CHANGELOG.md names a page and a heading that exist', async (t) => {
  for (const file of [...documentationFiles(repository), 'CONTRIBUTING.md', 'CHANGELOG.md']) {
    // Links outside code: fenced blocks and inline code are left out.
    const text = readFileSync(join(repository, file), 'utf8').replace(/^```[^]*?^```/gm, '').replace(/`[^`\n]*`/g, '')
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue
      const [path, anchor] = target!.split('#') as [string, string | undefined]
      const linked = path === '' ? file : normalize(join(dirname(file), path))
      t.ok(existsSync(join(repository, linked)), `${file}: ${target} names a file that exists`)
      if (anchor && linked.endsWith('.md')) t.ok(anchorsOf(linked).has(anchor), `${file}: ${target} names a heading of ${linked}`)
    }
  }
})
