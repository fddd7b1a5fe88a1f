// The health report: whether this instance can serve (the database answers, its migrations are the
// package's), and what an operator watches (the outbox's lag, its dead letters, who holds claims, when
// ShipStation last fetched the export). Ready depends on the first two only: a late outbox or a silent
// ShipStation is not cured by taking every instance out of the load balancer, so those warn.
import type { DataLayer } from '../db/data-layer.js'
import { shippedMigrations, type HealthFacts } from '../db/health.js'
import type { ResolvedHealthOptions } from './options.js'

/** ok: fine; warn: an operator should look (ready still); fail: this instance is not ready. */
export type HealthStatus = 'ok' | 'warn' | 'fail'

export interface HealthCheck {
  name: 'database' | 'migrations' | 'outbox' | 'deadLetters' | 'claims' | 'shipStation'
  status: HealthStatus
  /** What was found, in an operator's words (never a secret, a statement or a setting's value). */
  detail: string
}

export interface HealthReport {
  ready: boolean
  /** This instance's id, as it claims outbox messages. */
  instanceId: string
  checkedAt: string
  checks: HealthCheck[]
}

/** How many failed messages and claims are counted at most: the report stays one bounded read. */
const COUNT_CAP = 1000

export interface HealthDependencies {
  data: Pick<DataLayer, 'engine' | 'healthFacts' | 'newestExchangeActivity'>
  instanceId: string
  clock: () => number
  options: ResolvedHealthOptions
  /** Whether ShipStation's order exchange is configured (its silence is only watched then). */
  orderExchange: boolean
}

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`
const counted = (count: number) => (count >= COUNT_CAP ? `${COUNT_CAP} or more` : String(count))

/** Rejects after `ms` with the check's own words. */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the database did not answer within ${ms} ms`)), ms)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

export function createHealth(deps: HealthDependencies) {
  const { data, options } = deps
  const shipped = shippedMigrations(data.engine)

  function migrationsCheck(migrations: HealthFacts['migrations']): HealthCheck {
    if (migrations.applied < shipped.count || (shipped.newest !== null && (migrations.newest ?? 0) < shipped.newest)) {
      const missing = Math.max(shipped.count - migrations.applied, 1)
      return { name: 'migrations', status: 'fail', detail: `${missing} of the package's ${shipped.count} migrations not applied: run migrate() or let the plugin migrate` }
    }
    if (migrations.applied > shipped.count) {
      // An older instance during a rolling deploy: the newer schema is a superset it still works on.
      return { name: 'migrations', status: 'warn', detail: `the database has ${migrations.applied - shipped.count} migrations newer than this instance's package` }
    }
    return { name: 'migrations', status: 'ok', detail: `${shipped.count} migrations applied` }
  }

  function outboxChecks(facts: HealthFacts, now: number): HealthCheck[] {
    const lag = facts.oldestDueAt === null ? 0 : Math.max(0, now - facts.oldestDueAt.getTime())
    const outbox: HealthCheck =
      facts.oldestDueAt === null
        ? { name: 'outbox', status: 'ok', detail: 'no message is waiting' }
        : { name: 'outbox', status: lag > options.outboxLagMs ? 'warn' : 'ok', detail: `the oldest due message has waited ${seconds(lag)} (warns past ${seconds(options.outboxLagMs)})` }
    const deadLetters: HealthCheck = {
      name: 'deadLetters',
      status: facts.deadLetters > 0 ? 'warn' : 'ok',
      detail: facts.deadLetters > 0 ? `${counted(facts.deadLetters)} failed messages (retry or dismiss them on the system page, or with outbox.retry)` : 'no failed message',
    }
    const holders = facts.claims.map((claim) => `${claim.instanceId === deps.instanceId ? 'this instance' : claim.instanceId} holds ${counted(claim.messages)} outbox messages`)
    const leases = facts.batchLeases.map((lease) => `${lease.owner} holds label batch ${lease.batchId}`)
    const claims: HealthCheck = { name: 'claims', status: 'ok', detail: [...holders, ...leases].join('; ') || 'no instance holds a claim or a lease' }
    return [outbox, deadLetters, claims]
  }

  async function shipStationCheck(now: number): Promise<HealthCheck | null> {
    if (!deps.orderExchange) return null
    const last = await data.newestExchangeActivity('export')
    if (!last) return { name: 'shipStation', status: 'warn', detail: 'ShipStation has never fetched the export (see the ShipStation page and its connection doctor)' }
    const silence = now - last.createdAt.getTime()
    const answered = last.statusCode < 400 ? `answered ${last.statusCode}` : `refused with ${last.statusCode}`
    const status: HealthStatus = silence > options.exportSilenceMs || last.statusCode >= 400 ? 'warn' : 'ok'
    return { name: 'shipStation', status, detail: `ShipStation last fetched the export ${seconds(silence)} ago (${answered})` }
  }

  /** The report; never throws (a database that fails is the report's `database` check). */
  async function health(): Promise<HealthReport> {
    const now = deps.clock()
    const checks: HealthCheck[] = []
    try {
      const facts = await within(options.timeoutMs, data.healthFacts(new Date(now), COUNT_CAP))
      checks.push({ name: 'database', status: 'ok', detail: `${data.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'} answered` })
      checks.push(migrationsCheck(facts.migrations), ...outboxChecks(facts, now))
      const shipStation = await within(options.timeoutMs, shipStationCheck(now))
      if (shipStation) checks.push(shipStation)
    } catch (error) {
      // The driver's message may name a statement and its values: only its code (or our own timeout) is said.
      const code = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : null
      const timedOut = error instanceof Error && error.message.startsWith('the database did not answer')
      const detail = timedOut ? (error as Error).message : `the database refused the health read${code ? ` (${code})` : ''}`
      if (checks.length === 0) checks.push({ name: 'database', status: 'fail', detail })
      else checks.push({ name: 'shipStation', status: 'warn', detail: `the activity log could not be read: ${detail}` })
    }
    return { ready: checks.every((check) => check.status !== 'fail'), instanceId: deps.instanceId, checkedAt: new Date(now).toISOString(), checks }
  }

  return { health }
}

export type HealthService = ReturnType<typeof createHealth>
