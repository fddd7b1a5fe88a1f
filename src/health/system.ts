// What the admin's system page shows an operator: the health report, the jobs that failed for good (to
// retry or dismiss), the provider calls that failed in the last day in the provider's words, and the
// versions (package, Node, database) with the migrations applied. Each read bounded.
import type { DataLayer } from '../db/data-layer.js'
import type { LabelAttemptRow } from '../db/parcels.js'
import type { OutboxRow } from '../db/outbox.js'
import { shippedMigrations } from '../db/health.js'
import { INSTRUMENTATION_SCOPE } from '../telemetry.js'
import type { HealthReport, HealthService } from './service.js'

/** How many failed jobs and failed provider calls the page lists (the newest). */
export const SYSTEM_PAGE_ROWS = 50
const DAY_MS = 24 * 60 * 60 * 1000

export interface SystemOverview {
  health: HealthReport
  failedJobs: OutboxRow[]
  failedProviderCalls: LabelAttemptRow[]
  versions: { package: string; node: string; database: string }
  migrations: { applied: number; shipped: string[] }
}

export interface SystemDependencies {
  data: Pick<DataLayer, 'engine' | 'outbox' | 'parcels' | 'databaseVersion' | 'healthFacts'>
  health: HealthService['health']
  clock: () => number
}

export function createSystemOverview(deps: SystemDependencies) {
  const { data } = deps
  const shipped = shippedMigrations(data.engine)

  async function overview(): Promise<SystemOverview> {
    const health = await deps.health()
    const databaseAnswers = health.checks.some((check) => check.name === 'database' && check.status !== 'fail')
    // A database that does not answer: the report says so, and the rest of the page is empty.
    if (!databaseAnswers) return { health, failedJobs: [], failedProviderCalls: [], versions: { package: INSTRUMENTATION_SCOPE.version, node: process.version, database: data.engine }, migrations: { applied: 0, shipped: shipped.tags } }
    const now = deps.clock()
    const [failedJobs, failedProviderCalls, database, facts] = await Promise.all([
      data.outbox.list({ state: 'failed', kind: 'job', newestFirst: true, limit: SYSTEM_PAGE_ROWS }),
      data.parcels.failedAttempts(new Date(now - DAY_MS), SYSTEM_PAGE_ROWS),
      data.databaseVersion(),
      data.healthFacts(new Date(now), 1),
    ])
    return {
      health,
      failedJobs,
      failedProviderCalls,
      versions: { package: INSTRUMENTATION_SCOPE.version, node: process.version, database },
      migrations: { applied: facts.migrations.applied, shipped: shipped.tags },
    }
  }

  return { overview }
}

export type SystemOverviewService = ReturnType<typeof createSystemOverview>
