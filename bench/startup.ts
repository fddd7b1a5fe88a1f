// `npm run bench` (and `npm run bench:startup`): the cost of importing the package against importing
// Fastify alone, each in fresh node processes (a module is loaded once per process, so a second import
// in the same process measures nothing). Prints the figure and writes it to bench/results/startup.json.
import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 9)
if (!Number.isSafeInteger(RUNS) || RUNS < 1) throw new Error(`BENCH_STARTUP_RUNS must be a positive integer, not "${process.env.BENCH_STARTUP_RUNS}"`)
const TARGET = 2.0
const RESULTS_FILE = fileURLToPath(new URL('../../results/startup.json', import.meta.url))

// Both by name, as a host imports them: the package's build (dist/) and the Fastify it installs.
const targets = { package: import.meta.resolve('fastify-shipments'), fastify: import.meta.resolve('fastify') }

/**
 * ms from the start of `import()` to its end, in a fresh process: node's own start is not counted.
 * `after`: imported first, untimed (a host's Fastify, already loaded when it imports the package).
 */
function importTime(url: string, after?: string): number {
  const first = after ? `await import(${JSON.stringify(after)}); ` : ''
  const script = `${first}const start = performance.now(); await import(${JSON.stringify(url)}); process.stdout.write(String(performance.now() - start))`
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  const ms = Number(child.stdout)
  if (child.status !== 0 || !(ms > 0)) throw new Error(`importing ${url} failed (exit ${child.status}): ${child.stderr.slice(0, 2000)}`)
  return ms
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

// Alternating, so a change in the machine's load falls on both sides alike.
const times: { package: number[]; fastify: number[]; packageAfterFastify: number[] } = { package: [], fastify: [], packageAfterFastify: [] }
importTime(targets.package) // the first run reads the files from disk: the rest find them in the page cache
for (let run = 0; run < RUNS; run++) {
  times.package.push(importTime(targets.package))
  times.fastify.push(importTime(targets.fastify))
  times.packageAfterFastify.push(importTime(targets.package, targets.fastify))
}
const measured = median(times.package)
const against = median(times.fastify)
const ratio = measured / against
const met = ratio <= TARGET
const name = 'import of the package / import of Fastify, fresh processes'
// The package's import loads no Fastify of its own (only the OpenAPI document needs one): what a host
// that has imported Fastify pays for the package is the context line below, not a second target.
const afterFastify = median(times.packageAfterFastify)
console.log(`\nStartup:\n  ${name}: ${ratio.toFixed(3)} (${met ? 'met' : 'MISSED'}; target <= ${TARGET}; medians of ${RUNS}: ${measured.toFixed(1)} / ${against.toFixed(1)} ms)`)
console.log(`  (context) import of the package in a process that has imported Fastify / import of Fastify: ${(afterFastify / against).toFixed(3)} (${afterFastify.toFixed(1)} / ${against.toFixed(1)} ms)`)
mkdirSync(dirname(RESULTS_FILE), { recursive: true })
writeFileSync(
  RESULTS_FILE,
  JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: cpus().length, cpu: cpus()[0]?.model, runs: RUNS, figure: { name, ratio, target: `<= ${TARGET}`, met, measuredMs: measured, againstMs: against, packageAfterFastifyMs: afterFastify, times } }, null, 2),
)
