// The outbox dispatcher: delivers committed events to the listeners and runs follow-up jobs, right
// after the commit for what this instance wrote, and by a sweep for what nobody holds (a dead process's
// messages, retries that came due). Each message is held by one instance at a time (a claim with a lease).
// Messages of one ordering key keep commit order: events reach the listeners in order, and their
// follow-ups are written in order; a job starts only when the one before it is done or failed for good.
// Composed of one part per concern over a shared context (dispatcher-context.ts): event-delivery.ts (events
// to their listeners, marked delivered in batches), outbox-sweep.ts (what nobody holds, pruning, the timers)
// and here the jobs (one attempt each, bounded, retried) and the hand-off between them. The types stay here.
import { inSpan, instruments } from '../telemetry.js'
import type { NewOutboxMessage, OutboxAttemptRecord, OutboxRow } from '../db/data-layer.js'
import { createDispatcherContext, type DispatcherContextDependencies } from './dispatcher-context.js'
import { createEventDelivery } from './event-delivery.js'
import { createOutboxSweep } from './outbox-sweep.js'

/** What one attempt of a job came to. `statusCode`: the HTTP status a remote side answered, if any. */
export type JobResult =
  | { state: 'done'; statusCode?: number | null; followUps?: NewOutboxMessage[] }
  /** Nothing to do (what it was for is gone or switched off): recorded as such, never as a success. */
  | { state: 'skipped'; reason: string }
  | { state: 'retry' | 'failed'; error: string; statusCode?: number | null }

export interface JobHandler {
  run(row: OutboxRow): Promise<JobResult>
  /** The delay before retry number `attempt` (1 for the first retry), or null to give up. */
  retryDelayMs(attempt: number): number | null
}

export interface DispatcherOptions {
  /**
   * How long a claim holds a message; a process that dies holding one leaves it to others after this.
   * While this instance works on a message its claim is renewed (a heartbeat every fifth of the lease).
   */
  leaseMs: number
  /** The longest one attempt of a job may take; past it the attempt counts as failed and is retried. */
  jobTimeoutMs: number
  /** How often the sweep looks for due messages. */
  pollIntervalMs: number
  /** How long done and failed messages are kept. */
  retentionMs: number
}

export interface DispatcherDependencies extends DispatcherContextDependencies {
  options: DispatcherOptions
  /** Job handlers by job name. */
  jobs: Record<string, JobHandler>
}

/** A short, single-line reason for an attempt log or a stored error. */
export function shortError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  return text.replace(/\s+/g, ' ').trim().slice(0, 500) || 'Unknown error'
}

export type OutboxDispatcher = ReturnType<typeof createOutboxDispatcher>

export function createOutboxDispatcher(deps: DispatcherDependencies) {
  const { data, logger, options } = deps
  const shared = createDispatcherContext(deps)
  const { claim, held, state, track } = shared
  const { deliverEvent } = createEventDelivery(shared, { deliver })
  const { sweep, start, stop } = createOutboxSweep(shared, { deliver })

  /**
   * One attempt of a job, bounded by `jobTimeoutMs`: a handler that never settles counts as failed
   * (retried with backoff) and its late answer is ignored; a synchronous throw is a failed attempt too.
   */
  async function attemptJob(handler: JobHandler, row: OutboxRow): Promise<JobResult> {
    let timeout: NodeJS.Timeout | undefined
    const deadline = new Promise<JobResult>((resolve) => {
      timeout = setTimeout(
        () => resolve({ state: 'retry', error: `No answer within ${options.jobTimeoutMs} ms (outbox.jobTimeoutMs); a late answer is ignored.` }),
        options.jobTimeoutMs,
      )
      // The deadline never keeps a closing process alive; the job's own work does, if it must.
      timeout.unref()
    })
    try {
      const attempt = Promise.resolve()
        .then(() => handler.run(row))
        .catch((error: unknown): JobResult => ({ state: 'retry', error: shortError(error) }))
      return await Promise.race([attempt, deadline])
    } finally {
      clearTimeout(timeout)
    }
  }

  /**
   * One attempt of a job in its span (`shipments.outbox.job`, with the message's id, so a delivery is
   * found from the change that wrote it: handled right after the commit, it is that change's request's
   * child), counted by job and outcome.
   */
  function runJob(row: OutboxRow): Promise<void> {
    const attributes = { 'messaging.message.id': row.messageId, 'shipments.outbox.name': row.name, 'shipments.outbox.ordering_key': row.orderingKey, 'shipments.outbox.attempt': row.attempts + 1 }
    return inSpan('shipments.outbox.job', attributes, async (span) => {
      const outcome = await attemptAndRecord(row)
      span.setAttribute('shipments.outcome', outcome)
      instruments().outboxDeliveries.add(1, { 'shipments.outbox.name': row.name, 'shipments.outcome': outcome })
    })
  }

  async function attemptAndRecord(row: OutboxRow): Promise<OutboxAttemptRecord['outcome']['state']> {
    const handler = deps.jobs[row.name]
    const started = performance.now()
    const attemptedAt = new Date()
    held.add(row.id)
    state.runningJobs++
    const result: JobResult = handler ? await attemptJob(handler, row) : { state: 'failed', error: `No handler for the job "${row.name}".` }
    held.delete(row.id)
    state.runningJobs--
    const attempt = {
      attemptedAt,
      statusCode: result.state === 'skipped' ? null : (result.statusCode ?? null),
      durationMs: Math.round(performance.now() - started),
      error: result.state === 'done' ? null : result.state === 'skipped' ? `Skipped: ${result.reason}` : result.error,
    }
    let outcome: OutboxAttemptRecord['outcome'] = { state: result.state === 'skipped' ? 'skipped' : 'done' }
    if (result.state === 'retry' || result.state === 'failed') {
      const delay = result.state === 'retry' && handler ? handler.retryDelayMs(row.attempts + 1) : null
      // Jitter (±20 %), so receivers that failed together are not retried in step.
      outcome = delay === null ? { state: 'failed' } : { state: 'retry', retryAt: new Date(Date.now() + Math.round(delay * (0.8 + Math.random() * 0.4))) }
      const log = outcome.state === 'failed' ? logger.error.bind(logger) : logger.warn.bind(logger)
      log({ job: row.name, messageId: row.messageId, attempt: row.attempts + 1, reason: result.error }, outcome.state === 'failed' ? 'An outbox job failed for good' : 'An outbox job will be retried')
    }
    try {
      const followUps = result.state === 'done' ? (result.followUps ?? []) : []
      const written = await data.outbox.recordAttempt(row.id, { attempt, outcome, followUps }, state.stopped ? null : claim)
      if (!state.stopped && written.length > 0) void deliver(written)
    } catch (error) {
      logger.error({ err: error, messageId: row.messageId }, 'Could not record an outbox job attempt')
    }
    return outcome.state
  }

  /**
   * Handles messages this instance holds, in order: events' listeners are called before this returns
   * (synchronously, as callers of the services expect); the promise settles when the jobs have run once.
   */
  function deliver(rows: OutboxRow[]): Promise<void> {
    const jobs: Promise<void>[] = []
    // A message written to wait behind another of its key was not claimed: the sweep, or the hand-off
    // of the job before it, takes it in turn.
    for (const row of rows) {
      if (row.claimedBy !== claim.instanceId) continue
      if (row.kind === 'event') deliverEvent(row)
      else jobs.push(track(runJob(row)))
    }
    return jobs.length === 0 ? Promise.resolve() : Promise.all(jobs).then(() => undefined)
  }

  return {
    /** This instance's claim: messages written with a change are held by it for the lease. */
    claim,
    deliver,
    /** Writes messages outside a change's transaction (after a host store's commit) and handles them. */
    async publish(messages: NewOutboxMessage[]): Promise<void> {
      await deliver(await data.outbox.enqueue(messages, claim))
    },
    /** Looks for due messages now (start-up, tests); resolves when those found have been handled once. */
    sweep,
    start,
    stop,
  }
}
