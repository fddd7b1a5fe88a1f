// The outbox sweep: what nobody holds (a dead process's messages, retries come due) claimed and handed
// off, a claim phase at a time; delivered messages pruned in batches; the claims this instance holds
// renewed; and the timers that run it from start() to stop().
import { spanSince } from '../telemetry.js'
import type { OutboxRow } from '../db/data-layer.js'
import type { DispatcherContext } from './dispatcher-context.js'

const SWEEP_BATCH = 100
/**
 * A sweep claims more only while fewer jobs than this run on this instance: the rest wait for a later
 * tick (or another instance), so a backlog never becomes thousands of requests at once.
 */
const MAX_RUNNING_JOBS = 200
/** Delivered messages are pruned this often, in batches of PRUNE_BATCH, each a short statement of its own. */
const PRUNE_EVERY_MS = 60 * 1000
const PRUNE_BATCH = 1000
/** The longest a close waits for listeners and jobs in flight. */
const STOP_WAIT_MS = 15_000

/** `deliver`: the dispatcher's hand-off of the messages claimed. */
export function createOutboxSweep(shared: DispatcherContext, { deliver }: { deliver: (rows: OutboxRow[]) => Promise<void> }) {
  const { deps, claim, inFlight, held, state, track } = shared
  const { data, logger, options } = deps
  let timer: NodeJS.Timeout | null = null
  let heartbeat: NodeJS.Timeout | null = null
  // The claim phase of a sweep, one at a time; the jobs it starts run on without holding it.
  let claiming: Promise<{ handled: Promise<void> }> | null = null
  let pruning: Promise<void> | null = null
  // The first attempts of the jobs sweeps started, until they settle (each bounded by its deadline).
  const sweptJobs = new Set<Promise<void>>()
  let lastPrune = 0

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
      const claimStarted = Date.now()
      due = await data.outbox.claimDue(claim.instanceId, claim.leaseMs, SWEEP_BATCH)
      // A span only when the sweep found work: an idle poll every second would be noise.
      if (due.length > 0) spanSince('shipments.outbox.claim', { 'shipments.outbox.claimed': due.length }, claimStarted)
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
