// The bench's settings from the environment (rounds, seconds, connections, engines, BENCH_ONLY) and
// where its results go: read once, by every figure and the runner alike.
import { fileURLToPath } from 'node:url'

/** A positive integer from the environment: a typo must stop the run, not give rounds of nothing. */
function positiveInteger(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, not "${process.env[name]}"`)
  return value
}
export const SECONDS = positiveInteger('BENCH_SECONDS', 3)
// Each figure alternates measured and ceiling this many times and keeps the median ratio: on a
// shared machine one pair of runs can be off by a third.
export const ROUNDS = positiveInteger('BENCH_ROUNDS', 3)
export const CONNECTIONS = positiveInteger('BENCH_CONNECTIONS', 10)
// bench/results beside the sources (this file runs compiled, from bench/build/bench).
export const RESULTS_FILE = fileURLToPath(new URL('../../results/latest.json', import.meta.url))
// BENCH_DATABASE=sqlite|postgres|both (default both); PostgreSQL at BENCH_POSTGRES_URL.
export const ENGINES = (process.env.BENCH_DATABASE ?? 'both') === 'both' ? (['sqlite', 'postgres'] as const) : ([process.env.BENCH_DATABASE as 'sqlite' | 'postgres'] as const)
if (!ENGINES.every((engine) => engine === 'sqlite' || engine === 'postgres')) throw new Error(`BENCH_DATABASE must be sqlite, postgres or both, not "${process.env.BENCH_DATABASE}"`)
export type Engine = (typeof ENGINES)[number]

// BENCH_ONLY=<text>: only the figures whose name contains it; a text that names none is an error at the end.
export const wanted = (name: string) => !process.env.BENCH_ONLY || name.includes(process.env.BENCH_ONLY)

/** A figure's name as printed: prefixed with its engine, which BENCH_ONLY can name too. */
export type Label = (name: string) => string
