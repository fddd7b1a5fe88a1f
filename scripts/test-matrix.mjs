// The test matrix: the whole tap suite once per engine (SQLite, then PostgreSQL), each pass with its
// engine-only files (and the SQLite pass with the engine-free ones), then the failed tests by name (a CI
// log is often read from its tail), each file's time on each engine (slowest first, so a file that grows is seen when it
// does) and one summary line for both. Locally a PostgreSQL server that cannot be reached
// skips its half with one line; in CI (CI=true) that is a failure.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import pg from 'pg'

const postgresUrl = process.env.SHIPMENTS_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const inCi = /^(1|true)$/i.test(process.env.CI ?? '')
const extraArguments = process.argv.slice(2)

/**
 * Follows tap's TAP output line by line and keeps each failed test's path (file > subtest > assertion).
 * A subtest's name comes on a `# Subtest:` line at its own indentation; its children are four spaces
 * deeper, so the open subtests form a stack indexed by depth. Only leaves are listed: a subtest's
 * closing `not ok` is left out when a failure inside it was listed already.
 */
function failureCollector(engine) {
  /** Per depth: the open subtest's name and how many failures were listed before it opened. */
  const open = []
  const failures = []
  const depthOf = (indent) => indent.length / 4
  return {
    failures,
    line(text) {
      const subtest = /^( *)# Subtest: (.*)$/.exec(text)
      // Off tap's indentation: a test's own output, not tap's.
      if (subtest && Number.isInteger(depthOf(subtest[1]))) {
        open.length = depthOf(subtest[1])
        open.push({ name: subtest[2], listedBefore: failures.length })
        return
      }
      const failed = /^( *)not ok \d+ - (.*?)(?: # time=[\d.]+m?s)?$/.exec(text)
      // tap counts a `not ok` marked TODO or SKIP as that, not as a failure.
      if (!failed || / # (TODO|SKIP)\b/i.test(text) || !Number.isInteger(depthOf(failed[1]))) return
      const depth = depthOf(failed[1])
      const closing = open[depth]
      if (closing?.name === failed[2] && failures.length > closing.listedBefore) return
      failures.push([engine, ...open.slice(0, depth).map((subtest) => subtest.name), failed[2]].join(' > '))
    },
  }
}

/**
 * A test file's time off tap's top-level result line for it (`ok 3 - test/x.test.ts # time=812.3ms`). That
 * is the time from the file's first test on, without its process's start (loading and compiling its
 * imports), so processTimes' figure replaces it where there is one.
 */
function fileTime(text) {
  const result = /^(?:not )?ok \d+ - (\S+\.test\.ts)\b.*# time=([\d.]+)(ms|s)\b/.exec(text)
  if (!result) return null
  return { file: result[1], ms: Number(result[2]) * (result[3] === 's' ? 1000 : 1) }
}

/**
 * Each test file's whole process time, start included, as tap recorded it in .tap/processinfo (one JSON
 * file per process; tap empties the folder when a run starts, so it holds the run that just ended).
 */
function processTimes() {
  const times = new Map()
  const folder = new URL('../.tap/processinfo/', import.meta.url)
  let names = []
  try {
    names = readdirSync(folder).filter((name) => name.endsWith('.json'))
  } catch {
    return times
  }
  for (const name of names) {
    try {
      const info = JSON.parse(readFileSync(new URL(name, folder), 'utf8'))
      if (info.parent === null && typeof info.externalID === 'string' && typeof info.runtime === 'number') times.set(info.externalID, info.runtime)
    } catch {
      // A file tap was still writing, or one of another version's shape: the TAP time stands.
    }
  }
  return times
}

/** Runs tap with the engine's files; resolves with its exit code, its final counts, its failures and each file's time. */
function runTap(engine) {
  return new Promise((resolve) => {
    // test/engine-free/ holds the files that touch no database (the architecture, the docs' snippets, the
    // public types, the pgbench conversion): they run once, with the SQLite half.
    const files = ['test/*.test.ts', `test/${engine}/*.test.ts`, ...(engine === 'sqlite' ? ['test/engine-free/*.test.ts'] : [])]
    // No coverage in the whole suite: it costs about 15 % of every file's CPU and nobody reads its table
    // there. `npx tap test/x.test.ts` on a file or two still prints it (STYLE.md: read it after a change).
    const child = spawn('npx', ['tap', '--disable-coverage', ...extraArguments, ...files], {
      env: { ...process.env, SHIPMENTS_TEST_ENGINE: engine },
      stdio: ['ignore', 'pipe', 'inherit'],
      shell: true,
    })
    let last = null
    let buffered = ''
    const collector = failureCollector(engine)
    const times = new Map()
    const started = Date.now()
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk)
      buffered += chunk.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop()
      for (const line of lines) {
        if (/^# \{ total: \d+/.test(line)) last = line
        collector.line(line)
        const time = fileTime(line)
        if (time) times.set(time.file, time.ms)
      }
    })
    // 'close', not 'exit': the child's stdout is read to its end first (its last line is the count).
    child.on('close', (code) => {
      if (/^# \{ total: \d+/.test(buffered)) last = buffered
      for (const [file, ms] of processTimes()) if (times.has(file)) times.set(file, ms)
      const count = (name) => Number(new RegExp(`${name}: (\\d+)`).exec(last ?? '')?.[1] ?? 0)
      resolve({
        code: code ?? 1,
        total: count('total'),
        pass: count('pass'),
        fail: count('fail'),
        failures: collector.failures,
        engine,
        times,
        wallMs: Date.now() - started,
      })
    })
  })
}

/**
 * Each file's time on each engine, slowest first (by its slower engine), then each half's wall time: files
 * run two or more at a time, so the times add up to more than the wall time. Comment lines (`# `), never
 * like the summary line `.ci/run` reads.
 */
function printFileTimes(results) {
  const withTimes = results.filter((result) => result.times)
  if (withTimes.length === 0) return
  const files = [...new Set(withTimes.flatMap((result) => [...result.times.keys()]))]
  const slowest = (file) => Math.max(...withTimes.map((result) => result.times.get(file) ?? 0))
  files.sort((a, b) => slowest(b) - slowest(a) || a.localeCompare(b))
  const seconds = (ms) => (ms === undefined ? '-' : (ms / 1000).toFixed(1)).padStart(10)
  const width = Math.max(...files.map((file) => file.length))
  console.log(`# Time per file, slowest first (seconds):`)
  console.log(`#   ${'file'.padEnd(width)}${withTimes.map((result) => result.engine.padStart(10)).join('')}`)
  for (const file of files) console.log(`#   ${file.padEnd(width)}${withTimes.map((result) => seconds(result.times.get(file))).join('')}`)
  const sum = (result) => [...result.times.values()].reduce((total, ms) => total + ms, 0)
  console.log(`#   ${'(sum of the files)'.padEnd(width)}${withTimes.map((result) => seconds(sum(result))).join('')}`)
  console.log(`#   ${'(wall time of the half)'.padEnd(width)}${withTimes.map((result) => seconds(result.wallMs)).join('')}`)
}

async function dropDatabase(name) {
  const client = new pg.Client({ connectionString: postgresUrl })
  try {
    await client.connect()
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
  } catch (error) {
    console.log(`# The PostgreSQL test template ${name} could not be dropped: ${error.message}`)
  } finally {
    await client.end().catch(() => undefined)
  }
}

async function postgresReachable() {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 5000 })
  try {
    await client.connect()
    await client.query('SELECT 1')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => undefined)
  }
}

console.log('# Engine: SQLite')
const results = [await runTap('sqlite')]
if (await postgresReachable()) {
  console.log(`# Engine: PostgreSQL (${new URL(postgresUrl).host})`)
  // One migrated database for the whole half, which every test host's database copies (see
  // test/fixtures/database.ts); dropped when the half ends.
  const template = `shipments_template_${process.pid}_${Date.now() % 1_000_000}`
  process.env.SHIPMENTS_TEST_TEMPLATE = template
  try {
    results.push(await runTap('postgres'))
  } finally {
    await dropDatabase(template)
  }
} else if (inCi) {
  console.log(`# PostgreSQL at ${new URL(postgresUrl).host} cannot be reached: CI never skips the PostgreSQL half.`)
  results.push({ code: 1, total: 1, pass: 0, fail: 1, failures: ['postgres > the server could not be reached'] })
} else {
  console.log(`# PostgreSQL at ${new URL(postgresUrl).host} cannot be reached: the PostgreSQL half of the suite is skipped (set SHIPMENTS_TEST_POSTGRES_URL).`)
}

printFileTimes(results)

const failures = results.flatMap((result) => result.failures)
if (failures.length > 0) {
  console.log(`# Failed (${failures.length}):`)
  for (const path of failures.slice(0, 40)) console.log(`#   ${path}`)
  if (failures.length > 40) console.log(`#   ... and ${failures.length - 40} more`)
}
const sum = (key) => results.reduce((total, result) => total + result[key], 0)
console.log(`# { total: ${sum('total')}, pass: ${sum('pass')}, fail: ${sum('fail')} }`)
process.exit(results.some((result) => result.code !== 0) ? 1 : 0)
