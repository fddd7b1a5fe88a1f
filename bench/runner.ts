// The bench's shared runner: a load (autocannon in a separate process, or pgbench for the PostgreSQL
// ceilings) run in rounds that alternate the measured side with its ceiling after a warm-up, the median
// of the rounds' ratios kept as the figure, and the table and JSON of every figure at the end.
import { spawn } from 'node:child_process'
import { accessSync, constants, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { LoadPlan, LoadResult } from './load.js'
import { benchDatabase, hostsByBase, rawStatement, stallWatch } from './hosts.js'
import { CONNECTIONS, RESULTS_FILE, ROUNDS, SECONDS, wanted } from './settings.js'

/**
 * Sets the shipments of a transitions load to the second of its two statuses (directly, no history), so
 * the load's first pass moves every one of them: otherwise a run starting where the last one stopped
 * halfway would send "changes" to the status a shipment already has, which change nothing.
 */
async function resetTransitions(plan: LoadPlan) {
  const app = hostsByBase.get(new URL(plan.url).origin)
  if (plan.easyPost) {
    if (!app) throw new Error(`no bench host at ${plan.url}`)
    // The first pass sends in_transit (shipped) to even positions and return_to_sender (on hold) to odd ones.
    const tracked = trackedShipmentsOf(plan)
    for (const [status, parity] of [['on_hold', 0], ['shipped', 1]] as const) {
      const ids = tracked.filter((_, index) => index % 2 === parity)
      await rawStatement(app, `UPDATE shipments_shipments SET status = $1, status_before_order_cancel = NULL WHERE id IN (${ids.map((_, index) => `$${index + 2}`).join(', ')})`, [status, ...ids])
    }
    return
  }
  const reset = plan.transitions
  if (!reset) return
  if (!app) throw new Error(`no bench host at ${plan.url}`)
  const { shipmentIds, statuses } = reset
  const placeholders = shipmentIds.map((_, index) => `$${index + 2}`).join(', ')
  await rawStatement(app, `UPDATE shipments_shipments SET status = $1, status_before_order_cancel = NULL WHERE id IN (${placeholders})`, [statuses[1], ...shipmentIds])
}

/** The shipments a carrier-event load tracks (their ids are in their tracking codes). */
const trackedShipmentsOf = (plan: LoadPlan) => plan.easyPost!.trackingCodes.map((code) => Number(code.slice('BENCHTRK'.length)))

export function runLoad(plan: LoadPlan): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL('./load.js', import.meta.url))], {
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    child.stdin.on('error', reject)
    child.stdin.end(JSON.stringify(plan))
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk))
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(output)) : reject(new Error(`autocannon exited with ${code}`))))
  })
}

/**
 * pgbench against a database: its built-in TPC-B-like script, or `script` (a custom script file,
 * `-f`, sent with prepared statements as the package sends its own; `-n`: no pgbench tables to vacuum).
 */
export interface PgbenchPlan {
  pgbench: { url: string; clients: number; threads: number; durationSeconds: number; script?: { files: string[]; describe: string } }
}
export type Measurement = LoadPlan | PgbenchPlan
const isPgbench = (plan: Measurement): plan is PgbenchPlan => 'pgbench' in plan

/** The pgbench binary: BENCH_PGBENCH, on the PATH, or beside a Debian PostgreSQL server; an error when there is none. */
function findPgbench(): string {
  const executable = (file: string) => {
    try {
      accessSync(file, constants.X_OK)
      return true
    } catch {
      return false
    }
  }
  if (process.env.BENCH_PGBENCH) {
    if (!executable(process.env.BENCH_PGBENCH)) throw new Error(`BENCH_PGBENCH=${process.env.BENCH_PGBENCH} is not an executable`)
    return process.env.BENCH_PGBENCH
  }
  const onPath = (process.env.PATH ?? '').split(delimiter).map((directory) => join(directory, 'pgbench'))
  let serverVersions: string[] = []
  try {
    serverVersions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))
  } catch {
    // No Debian server layout: the PATH is all there is.
  }
  const found = [...onPath, ...serverVersions.map((version) => `/usr/lib/postgresql/${version}/bin/pgbench`)].find(executable)
  if (!found) throw new Error('pgbench not found (PATH, /usr/lib/postgresql/*/bin): it comes with the PostgreSQL server; or set BENCH_PGBENCH')
  return found
}

/** Runs pgbench to its end with its output; rejects when it is missing or exits with an error. */
function runPgbench(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(findPgbench(), args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk))
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`pgbench ${args.join(' ')} exited with ${code}:\n${output}`))))
  })
}

/** Creates and fills a scratch database for pgbench's TPC-B-like script at `scale` (dropped with the bench's other databases). */
export async function pgbenchDatabase(scale: number): Promise<string> {
  const url = await benchDatabase('postgres', `pgbench_${scale}`)
  await runPgbench(['-i', '-q', '-s', String(scale), url])
  return url
}

/** One pgbench run, in the shape of a load result: transactions for requests, failed transactions for errors. */
async function runPgbenchLoad({ pgbench }: PgbenchPlan): Promise<LoadResult & { output: string }> {
  // A replay's transaction that meets a deadlock is tried again, as the package tries its change again
  // after a lock timeout; one that still fails counts as an error and stops the run.
  const custom = pgbench.script ? ['-n', '-M', 'prepared', '--max-tries=10', ...pgbench.script.files.flatMap((file) => ['-f', file])] : []
  const output = await runPgbench([...custom, '-c', String(pgbench.clients), '-j', String(pgbench.threads), '-T', String(pgbench.durationSeconds), pgbench.url])
  const figure = (pattern: RegExp) => {
    const match = pattern.exec(output)
    if (!match) throw new Error(`pgbench printed no ${pattern.source}:\n${output}`)
    return Number(match[1])
  }
  const tps = figure(/^tps = ([\d.]+)/m)
  return {
    requestsPerSecond: tps,
    latencyMeanMs: figure(/^latency average = ([\d.]+) ms/m),
    latencyP99Ms: Number.NaN,
    requests: figure(/^number of transactions actually processed: (\d+)/m),
    errors: /^number of failed transactions: (\d+)/m.test(output) ? figure(/^number of failed transactions: (\d+)/m) : 0,
    non2xx: 0,
    output: output.trim(),
  }
}

interface Figure {
  name: string
  measured: string
  against: string
  /** The medians of both sides in absolute terms, with their unit. */
  medians: string
  /** The median of the rounds' ratios. */
  ratio: number
  ratios: number[]
  target: string
  met: boolean
  rounds: Array<{ measured: LoadResult & { maxStallMs?: number }; against: LoadResult & { maxStallMs?: number } }>
}

const figures: Figure[] = []
const describe = (load: Measurement) =>
  isPgbench(load)
    ? `pgbench ${load.pgbench.script ? load.pgbench.script.describe : 'TPC-B-like'}, ${load.pgbench.clients} clients, ${load.pgbench.threads} threads`
    : `${load.method} ${load.transitions ? `${load.transitions.pathPrefix}/:id` : load.rotate ? `${load.rotate.pathPrefix}/:id${load.rotate.pathSuffix ?? ''}` : new URL(load.url).pathname}`

/**
 * Runs the load; with `watchStalls`, also the longest the host's event loop (this process: every host
 * lives here) was blocked meanwhile, from perf_hooks' event-loop delay histogram.
 */
async function runWatched(plan: Measurement, watchStalls: boolean): Promise<LoadResult & { maxStallMs?: number }> {
  if (isPgbench(plan)) return runPgbenchLoad(plan)
  await resetTransitions(plan)
  if (!watchStalls) return runLoad(plan)
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  // From the first request on: starting the load generator (a fork of this large process) stalls the
  // loop too, and that is the bench's cost, not the host's.
  stallWatch.start = () => {
    stallWatch.start = undefined
    histogram.enable()
  }
  try {
    const result = await runLoad(plan)
    // No sample: the hook never started the histogram, and a stall of 0 would pass any bound.
    if (histogram.count === 0) throw new Error(`no event-loop delay was recorded while loading ${plan.url}`)
    return { ...result, maxStallMs: histogram.max / 1e6 }
  } finally {
    stallWatch.start = undefined
    histogram.disable()
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/**
 * A figure: `measured` against its ceiling `against`, each warmed up for a second, then alternating for
 * ROUNDS rounds; the median of the rounds' ratios (of throughput, mean or p99 latency, or longest stall) against
 * `target`. Answers the rounds (a second figure can be read off the same runs), none when not wanted.
 */
export async function compare(
  name: string,
  target: { min?: number; max?: number },
  measured: Measurement,
  against: Measurement,
  ratioOf: 'throughput' | 'latency' | 'p99' | 'stall' = 'throughput',
) {
  // BENCH_ONLY=<text> runs the figures whose name contains it (for profiling one path).
  if (!wanted(name)) return []
  // A second of each first, so caches, JIT and the load generator are warm for every round.
  for (const load of [measured, against]) {
    if (isPgbench(load)) await runPgbenchLoad({ pgbench: { ...load.pgbench, durationSeconds: 1 } })
    else await runLoad({ ...load, durationSeconds: 1 })
  }
  const rounds: Figure['rounds'] = []
  for (let round = 0; round < ROUNDS; round++) {
    const measuredResult = await runWatched(measured, ratioOf === 'stall')
    const againstResult = await runWatched(against, ratioOf === 'stall')
    for (const [label, result] of [['measured', measuredResult], ['ceiling', againstResult]] as const) {
      if (result.errors > 0 || result.non2xx > 0) throw new Error(`${name} (${label}): ${result.errors} errors, ${result.non2xx} non-2xx answers`)
      // A round in which no request completed has no latency or throughput: it is a fault, never a 0.
      if (result.requests === 0) throw new Error(`${name} (${label}): no request completed within ${SECONDS} s`)
    }
    rounds.push({ measured: measuredResult, against: againstResult })
  }
  if (rounds.length === 0) throw new Error(`${name}: no round was measured`)
  // What each side measured in absolute terms, for the table beside the ratio.
  const absolute = (result: LoadResult & { maxStallMs?: number }) =>
    ratioOf === 'throughput' ? result.requestsPerSecond : ratioOf === 'latency' ? result.latencyMeanMs : ratioOf === 'p99' ? result.latencyP99Ms : result.maxStallMs!
  const ratios = rounds.map(({ measured: m, against: a }) => absolute(m) / absolute(a))
  // A side that measured nothing (0, NaN, infinite) gives no ratio; it must stop the run, not print one.
  for (const [index, round] of rounds.entries()) {
    for (const [label, value] of [['measured', absolute(round.measured)], ['ceiling', absolute(round.against)]] as const) {
      if (!(Number.isFinite(value) && value > 0)) throw new Error(`${name} (${label}), round ${index + 1}: ${value} ${ratioOf}`)
    }
  }
  const ratio = median(ratios)
  const unit = ratioOf === 'throughput' ? 'req/s' : ratioOf === 'latency' ? 'ms mean latency' : ratioOf === 'p99' ? 'ms p99 latency' : 'ms longest stall'
  const medians = `${median(rounds.map((round) => absolute(round.measured))).toFixed(1)} / ${median(rounds.map((round) => absolute(round.against))).toFixed(1)} ${unit}`
  const met = (target.min === undefined || ratio >= target.min) && (target.max === undefined || ratio <= target.max)
  figures.push({
    name,
    measured: describe(measured),
    against: describe(against),
    medians,
    ratio,
    ratios,
    target: target.min !== undefined ? `>= ${target.min}` : `<= ${target.max}`,
    met,
    rounds,
  })
  console.log(`  ${name}: ${ratio.toFixed(3)} (${met ? 'met' : 'MISSED'}; rounds ${ratios.map((each) => each.toFixed(3)).join(', ')}; ${medians})`)
  return rounds
}

/**
 * A figure in absolute terms, with no ceiling beside it (a document's pages a second, the longest
 * stall of the event loop while serving it): the median of the rounds, each after the same warm-up.
 * `pagesPerRequest` turns requests into pages; with `stallTarget`, a second figure of the same rounds.
 */
export async function measureDocument(name: string, load: LoadPlan, pagesPerRequest: number, pagesTarget: number, stallTarget?: number) {
  if (!wanted(name)) return
  await runLoad({ ...load, durationSeconds: 1 })
  const rounds: Figure['rounds'] = []
  for (let round = 0; round < ROUNDS; round++) {
    const result = await runWatched(load, stallTarget !== undefined)
    if (result.errors > 0 || result.non2xx > 0) throw new Error(`${name}: ${result.errors} errors, ${result.non2xx} non-2xx answers`)
    if (result.requests === 0) throw new Error(`${name}: no request completed within ${SECONDS} s`)
    rounds.push({ measured: result, against: result })
  }
  const add = (figureName: string, values: number[], unit: string, target: { min?: number; max?: number }) => {
    for (const value of values) if (!(Number.isFinite(value) && value > 0)) throw new Error(`${figureName}: ${value} ${unit}`)
    const value = median(values)
    const met = (target.min === undefined || value >= target.min) && (target.max === undefined || value <= target.max)
    const targetText = target.min !== undefined ? `>= ${target.min} ${unit}` : `<= ${target.max} ${unit}`
    figures.push({ name: figureName, measured: describe(load), against: '(absolute)', medians: `${value.toFixed(1)} ${unit}`, ratio: value, ratios: values, target: targetText, met, rounds })
    console.log(`  ${figureName}: ${value.toFixed(1)} ${unit} (${met ? 'met' : 'MISSED'}; target ${targetText}; rounds ${values.map((each) => each.toFixed(1)).join(', ')})`)
  }
  add(name, rounds.map((round) => round.measured.requestsPerSecond * pagesPerRequest), 'pages/s', { min: pagesTarget })
  if (stallTarget !== undefined) add(`${name}: longest event-loop stall`, rounds.map((round) => round.measured.maxStallMs!), 'ms', { max: stallTarget })
}

/**
 * A figure measured outside autocannon (a durable job, say): its rounds' values as the caller measured
 * them, their median against `target`, printed and kept like the others.
 */
export function recordFigure(name: string, described: { measured: string; against: string; unit: string }, values: number[], target: { min?: number; max?: number }) {
  for (const value of values) if (!(Number.isFinite(value) && value > 0)) throw new Error(`${name}: ${value} ${described.unit}`)
  const value = median(values)
  const met = (target.min === undefined || value >= target.min) && (target.max === undefined || value <= target.max)
  const targetText = target.min !== undefined ? `>= ${target.min}` : `<= ${target.max}`
  figures.push({ name, measured: described.measured, against: described.against, medians: `${value.toFixed(3)} ${described.unit}`, ratio: value, ratios: values, target: targetText, met, rounds: [] })
  console.log(`  ${name}: ${value.toFixed(3)} (${met ? 'met' : 'MISSED'}; target ${targetText}; rounds ${values.map((each) => each.toFixed(3)).join(', ')})`)
}

/** A context line (no target): pgbench's TPC-B-like transactions a second, the median of the rounds. */
const contexts: Array<{ name: string; median: number; rounds: number[] }> = []
export async function contextLine(name: string, load: PgbenchPlan) {
  if (!wanted(name)) return
  await runPgbenchLoad({ pgbench: { ...load.pgbench, durationSeconds: 1 } })
  const rounds: number[] = []
  for (let round = 0; round < ROUNDS; round++) rounds.push((await runPgbenchLoad(load)).requestsPerSecond)
  contexts.push({ name, median: median(rounds), rounds })
  console.log(`  (context) ${name}: ${median(rounds).toFixed(0)} per s (rounds ${rounds.map((each) => each.toFixed(0)).join(', ')})`)
}

/** A POST of JSON as the admin, for the bench's settings of seconds and connections unless `extra` says otherwise. */
export const plan = (url: string, extra: Partial<LoadPlan> = {}): LoadPlan => ({
  url,
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-bench-user': 'admin' },
  durationSeconds: SECONDS,
  connections: CONNECTIONS,
  ...extra,
})

/** Prints the tables of the figures and the context lines, and writes them all to RESULTS_FILE. */
export function reportFigures() {
  // BENCH_ONLY naming no figure measured nothing: that is a mistake to report, not an empty table to write.
  if (figures.length === 0 && contexts.length === 0) throw new Error(`no figure measured${process.env.BENCH_ONLY ? `: BENCH_ONLY="${process.env.BENCH_ONLY}" names none` : ''}`)

  console.log("\n| figure | measured | against | median ratio | rounds | medians (measured / against) | target | met |\n|---|---|---|---|---|---|---|---|")
  for (const figure of figures) {
    const rounds = figure.ratios.map((each) => each.toFixed(3)).join(', ')
    console.log(`| ${figure.name} | ${figure.measured} | ${figure.against} | ${figure.ratio.toFixed(3)} | ${rounds} | ${figure.medians} | ${figure.target} | ${figure.met ? 'yes' : 'no'} |`)
  }
  if (contexts.length > 0) {
    console.log('\n| context (no target) | median per s | rounds |\n|---|---|---|')
    for (const context of contexts) console.log(`| ${context.name} | ${context.median.toFixed(0)} | ${context.rounds.map((each) => each.toFixed(0)).join(', ')} |`)
  }
  mkdirSync(join(RESULTS_FILE, '..'), { recursive: true })
  writeFileSync(
    RESULTS_FILE,
    JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: cpus().length, cpu: cpus()[0]?.model, loadGenerator: 'autocannon (separate process)', secondsPerMeasurement: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, only: process.env.BENCH_ONLY ?? null, loadAverage: loadavg(), figures, contexts }, null, 2),
  )
  console.log(`\nFigures written to ${RESULTS_FILE}`)
}
