// The version tells the truth: package.json's version is the newest dated section of CHANGELOG.md (an
// "Unreleased" section above it holds what is not released yet), package-lock.json agrees, the upgrade
// page has a section for it, and no page of the docs names a version newer than the package's.
// Regression: the tarball said 0.2.0 while the docs spoke of "before 0.3" and the CHANGELOG's
// "Unreleased" held a whole release.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')
const read = (path: string) => readFileSync(join(root, path), 'utf8')
const pkg = JSON.parse(read('package.json')) as { version: string }
const changelog = read('CHANGELOG.md')

/** Compares dotted versions; a missing part counts as 0 (`0.3` is `0.3.0`). */
const compare = (a: string, b: string) => {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)]
  for (let index = 0; index < 3; index++) if ((x[index] ?? 0) !== (y[index] ?? 0)) return (x[index] ?? 0) - (y[index] ?? 0)
  return 0
}

t.test('the newest dated CHANGELOG section is the package version', async (t) => {
  const sections = [...changelog.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?/gm)].map((match) => ({ name: match[1]!, date: match[2] }))
  t.equal(sections[0]?.name, 'Unreleased', 'the first section is Unreleased')
  t.equal(sections[0]?.date, undefined, 'Unreleased has no date')
  const released = sections.filter((section) => section.date !== undefined)
  t.equal(released[0]?.name, pkg.version, 'the newest dated section is package.json\'s version')
  t.same(
    released.map((section) => section.name),
    [...released.map((section) => section.name)].sort((a, b) => compare(b, a)),
    'dated sections run newest first',
  )
  t.same(
    released.map((section) => section.date),
    [...released.map((section) => section.date)].sort().reverse(),
    'and their dates too',
  )
})

t.test('package-lock.json has the same version', async (t) => {
  const lock = JSON.parse(read('package-lock.json')) as { version: string; packages: Record<string, { version?: string }> }
  t.equal(lock.version, pkg.version)
  t.equal(lock.packages['']?.version, pkg.version)
})

t.test('docs/upgrading.md has a section for the version', async (t) => {
  t.match(read('docs/upgrading.md'), new RegExp(`^## From [0-9.]+ to ${pkg.version.replaceAll('.', '\\.')}$`, 'm'))
})

t.test('no page names a version newer than the package', async (t) => {
  const pages = ['README.md', 'CONTRIBUTING.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]
  // A version as prose names it: "before 0.3", "since 0.3.0", "from 0.2.0 to 0.3.0", "0.2.0's default",
  // "fastify-shipments@0.3". Bare numbers are measurements ("from 0.450 to 0.480") or other packages'
  // versions, so a two-part number counts only after before/since/after/until, and a number right
  // after another package's name (`@fastify/cookie` from 11.1.1) is that package's.
  const mention =
    /(?<![\d.])(?:\b(?:before|since|after|until)\s+v?(\d+\.\d+(?:\.\d+)?)|\b(?:in|from|to)\s+v?(\d+\.\d+\.\d+)|fastify-shipments@(\d+\.\d+(?:\.\d+)?)|(\d+\.\d+\.\d+)'s)(?![\d.]*\d)/g
  const newer: string[] = []
  let seen = 0
  for (const page of pages) {
    const text = read(page)
    for (const match of text.matchAll(mention)) {
      if (/`[^`\s]+`\s*$/.test(text.slice(Math.max(0, match.index - 60), match.index))) continue
      seen++
      const version = match[1] ?? match[2] ?? match[3] ?? match[4]!
      if (compare(version, pkg.version) > 0) newer.push(`${page}: ${match[0]}`)
    }
  }
  t.ok(seen > 5, `the pages name versions (${seen} found), so the pattern reads them`)
  t.same(newer, [], 'none newer than the package')
})
