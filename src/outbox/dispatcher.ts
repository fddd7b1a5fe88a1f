// The outbox dispatcher: delivers committed events to the listeners and runs follow-up jobs, right
// after the commit for what this instance wrote, and by a sweep for what nobody holds (a dead process's
// messages, retries that came due). Each message is held by one instance at a time (a claim with a lease).
// Messages of one ordering key keep commit order: events reach the listeners in order, and their
// follow-ups are written in order; a job starts only when the one before it is done or failed for good.
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { DataLayer, NewOutboxMessage, OutboxAttemptRecord, OutboxClaim, OutboxRow } from '../db/data-layer.js'
import type { ShipmentsEventMap, ShipmentsEvents } from '../events.js'

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

export interface DispatcherDependencies {
  data: DataLayer
  events: ShipmentsEvents
  logger: FastifyBaseLogger
  options: DispatcherOptions
  /** Job handlers by job name. */
  jobs: Record<string, JobHandler>
  /** The follow-ups of delivered events (webhook deliveries, pushes), written as they are marked delivered. */
  followUpsOf(events: OutboxRow[]): Promise<NewOutboxMessage[]>
}

const SWEEP_BATCH = 100
/**
 * A sweep claims more only while fewer jobs than this run on this instance: the rest wait for a later
 * tick (or another instance), so a backlog never becomes thousands of requests at once.
 */
const MAX_RUNNING_JOBS = 200
/**
 * Delivered events are marked done together, this long after the first of a batch: under load one
 * transaction covers many events. A crash in this window only means they are delivered again.
 */
const COMPLETE_BATCH_MS = 20
/** Delivered messages are pruned this often, in batches of PRUNE_BATCH, each a short statement of its own. */
const PRUNE_EVERY_MS = 60 * 1000
const PRUNE_BATCH = 1000
/** The longest a close waits for listeners and jobs in flight. */
const STOP_WAIT_MS = 15_000

/** A short, single-line reason for an attempt log or a stored error. */
export function shortError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  return text.replace(/\s+/g, ' ').trim().slice(0, 500) || 'Unknown error'
}

export type OutboxDispatcher = ReturnType<typeof createOutboxDispatcher>

export function createOutboxDispatcher(deps: DispatcherDependencies) {
  const { data, events, logger, options } = deps
  const claim: OutboxClaim = { instanceId: randomUUID(), leaseMs: options.leaseMs }
  const inFlight = new Set<Promise<unknown>>()
  let timer: NodeJS.Timeout | null = null
  let heartbeat: NodeJS.Timeout | null = null
  // The claim phase of a sweep, one at a time; the jobs it starts run on without holding it.
  let claiming: Promise<{ handled: Promise<void> }> | null = null
  // Messages this instance works on (jobs running, events whose listeners run): their claims are renewed.
  const held = new Set<number>()
  let pruning: Promise<void> | null = null
  // The first attempts of the jobs sweeps started, until they settle (each bounded by its deadline).
  const sweptJobs = new Set<Promise<void>>()
  // What the sweep, the event batches and the jobs all read: whether the dispatcher stopped, and how many jobs run here.
  let lastPrune = 0
  const state = { stopped: false, runningJobs: 0 }

  // Delivered events are marked done in batches: one transaction for all events delivered in a tick.
  let toComplete: OutboxRow[] = []
  let flushScheduled = false
  // One batch at a time, so follow-ups (webhook deliveries, pushes) get their sequences in event order.
  let flushing: Promise<void> = Promise.resolve()
  // Per ordering key, the last event whose batching waits: a later event of the key joins a batch only
  // after it, even when its listeners settle first.
  const lastOfKey = new Map<string, Promise<void>>()

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise)
    void promise.finally(() => inFlight.delete(promise)).catch(() => undefined)
    return promise
  }

  async function flushCompleted() {
    flushScheduled = false
    // In sequence (id) order, which per shipment is commit order: the follow-ups (webhook deliveries) of
    // events committed together are written in it even when their callers reached deliver() in another.
    const batch = toComplete.sort((a, b) => a.id - b.id)
    toComplete = []
    if (batch.length === 0) return
    for (const row of batch) held.delete(row.id)
    try {
      const followUps = await deps.followUpsOf(batch)
      const written = await data.outbox.complete(batch.map((row) => row.id), followUps, state.stopped ? null : claim)
      if (!state.stopped && written.length > 0) void deliver(written)
    } catch (error) {
      // Still claimed, not done: after the lease they are delivered again (at least once).
      logger.error({ err: error, events: batch.map((row) => row.messageId) }, 'Could not mark outbox events delivered')
    }
  }

  function completeLater(row: OutboxRow) {
    toComplete.push(row)
    if (!flushScheduled) {
      flushScheduled = true
      track(new Promise<void>((resolve) => setTimeout(resolve, COMPLETE_BATCH_MS)).then(() => (flushing = flushing.then(flushCompleted))))
    }
  }

  /**
   * The listeners of an event get the jobs' deadline: a listener that never settles would otherwise hold
   * the event's claim (renewed by the heartbeat) and every later event of its key for good. Past it the
   * event counts as delivered, as it does when a listener fails (listeners are not retried); the late
   * settle is ignored.
   */
  function listenersWithin(row: OutboxRow, delivery: ReturnType<ShipmentsEvents['deliverCommitted']>): Promise<void> {
    let timeout: NodeJS.Timeout | undefined
    const deadline = new Promise<void>((resolve) => {
      timeout = setTimeout(() => {
        logger.warn(
          { event: row.name, eventId: row.messageId, unsettledListeners: delivery.unsettled(), jobTimeoutMs: options.jobTimeoutMs },
          `Shipments event listeners did not settle within outbox.jobTimeoutMs (${row.name}); the event counts as delivered`,
        )
        resolve()
      }, options.jobTimeoutMs)
      // As a job's deadline: never what keeps a closing process alive.
      timeout.unref()
    })
    return Promise.race([delivery.settled, deadline]).finally(() => clearTimeout(timeout))
  }

  function deliverEvent(row: OutboxRow) {
    held.add(row.id)
    const name = row.name as keyof ShipmentsEventMap
    const payload = { ...row.payload, eventId: row.messageId } as ShipmentsEventMap[typeof name][0]
    const delivery = (events.deliverCommitted as (name: string, payload: unknown) => ReturnType<ShipmentsEvents['deliverCommitted']>)(name, payload)
    const settled = listenersWithin(row, delivery)
    const key = row.orderingKey
    const before = lastOfKey.get(key)
    const batched = (before ? Promise.all([settled, before]) : settled).then(() => completeLater(row))
    lastOfKey.set(key, batched)
    track(batched.finally(() => lastOfKey.get(key) === batched && lastOfKey.delete(key)))
  }

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

  async function runJob(row: OutboxRow): Promise<void> {
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

  /**
   * Claims due messages and starts them; resolves once they are started, with a promise of their first
   * attempts. The claim phase never waits on a job: one that hangs holds only itself (until its
   * deadline), never the retries and the dead processes' messages behind other keys.
   */
  async function claimAndStart(): Promise<{ handled: Promise<void> }> {
    const started: Promise<void>[] = []
    // Round after round while they come full: a backlog (a dead process's, or one behind it) drains in
    // one sweep, not one batch per poll interval.
    let due: OutboxRow[]
    do {
      due = await data.outbox.claimDue(claim.instanceId, claim.leaseMs, SWEEP_BATCH)
      if (due.length > 0) started.push(deliver(due))
    } while (due.length === SWEEP_BATCH && !state.stopped && state.runningJobs < MAX_RUNNING_JOBS)
    if (Date.now() - lastPrune >= PRUNE_EVERY_MS && !pruning) {
      lastPrune = Date.now()
      pruning = track(pruneOld()).finally(() => (pruning = null))
    }
    return { handled: Promise.all(started).then(() => undefined) }
  }

  /**
   * Deletes what the retention lets go, a batch at a time with a turn of the event loop between: a
   * backlog of millions never holds a commit (or the sweep) for more than one batch.
   */
  async function pruneOld() {
    const before = new Date(Date.now() - options.retentionMs)
    let pruned = 0
    for (let batch = PRUNE_BATCH; batch === PRUNE_BATCH && !state.stopped; ) {
      batch = await data.outbox.prune(before, PRUNE_BATCH)
      pruned += batch
      await new Promise<void>((resolve) => setImmediate(resolve))
    }
    if (pruned > 0) logger.info({ pruned }, 'Pruned delivered outbox messages')
  }

  /**
   * Runs one claim phase at a time; a failing one is logged and the next tick tries again. Resolves
   * when the messages found have been handled once (each job bounded by its deadline).
   */
  async function sweep(): Promise<void> {
    claiming ??= claimAndStart()
      .then(({ handled }) => {
        const settled = handled.finally(() => sweptJobs.delete(settled))
        sweptJobs.add(settled)
        return { handled: settled }
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'The outbox sweep failed')
        return { handled: Promise.resolve() }
      })
      .finally(() => (claiming = null))
    await claiming
    // What earlier sweeps started too (the timer's, say): a caller waits for everything found so far.
    await Promise.all([...sweptJobs])
  }

  /** Renews the claims of what this instance works on, so that only a dead instance's lease runs out. */
  async function renewHeldClaims() {
    if (held.size === 0) return
    try {
      await data.outbox.renewClaims(claim.instanceId, [...held], claim.leaseMs)
    } catch (error) {
      logger.warn({ err: error, held: held.size }, 'Could not renew the outbox claims this instance holds')
    }
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
    start() {
      state.stopped = false
      void sweep()
      timer = setInterval(() => void sweep(), options.pollIntervalMs)
      timer.unref()
      heartbeat = setInterval(() => void renewHeldClaims(), Math.max(200, Math.floor(options.leaseMs / 5)))
      heartbeat.unref()
    },
    /**
     * Stops the sweep and waits for what is in flight, at most STOP_WAIT_MS (a listener that never
     * settles must not hold the host's shutdown); messages still held are left to their lease.
     */
    async stop() {
      state.stopped = true
      if (timer) clearInterval(timer)
      if (heartbeat) clearInterval(heartbeat)
      timer = null
      heartbeat = null
      const deadline = Date.now() + STOP_WAIT_MS
      while ((claiming || inFlight.size > 0) && Date.now() < deadline) {
        const waited = await Promise.race([
          Promise.allSettled([claiming, ...inFlight]).then(() => true),
          new Promise<false>((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now()), false).unref()),
        ])
        if (!waited) logger.warn({ inFlight: inFlight.size }, 'Closing with outbox work still in flight; it is left to its lease')
      }
    },
  }
}
