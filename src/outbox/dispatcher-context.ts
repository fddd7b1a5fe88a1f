// What the outbox dispatcher's parts (event-delivery.ts, outbox-sweep.ts and the jobs in dispatcher.ts)
// share: the dependencies they read, this instance's claim, the messages it holds, the work in flight and
// the flags of its state. Rule: it knows none of the parts; what one part needs of another (the hand-off
// of messages, `deliver`) is passed to its factory, never imported.
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { DataLayer, NewOutboxMessage, OutboxClaim, OutboxRow } from '../db/data-layer.js'
import type { ShipmentsEvents } from '../model/events.js'

/** The dispatcher's dependencies but its job handlers, which dispatcher.ts declares (DispatcherDependencies). */
export interface DispatcherContextDependencies {
  data: DataLayer
  events: ShipmentsEvents
  logger: FastifyBaseLogger
  /** The timings the parts read: DispatcherOptions (dispatcher.ts) says what each is. */
  options: Readonly<Record<'leaseMs' | 'jobTimeoutMs' | 'pollIntervalMs' | 'retentionMs', number>>
  /** The follow-ups of delivered events (webhook deliveries, pushes), written as they are marked delivered. */
  followUpsOf(events: OutboxRow[]): Promise<NewOutboxMessage[]>
}

/** The shared part of one dispatcher: built once, handed to each part's factory. */
export function createDispatcherContext(deps: DispatcherContextDependencies) {
  const { options } = deps
  const claim: OutboxClaim = { instanceId: randomUUID(), leaseMs: options.leaseMs }
  const inFlight = new Set<Promise<unknown>>()
  // Messages this instance works on (jobs running, events whose listeners run): their claims are renewed.
  const held = new Set<number>()
  // What the sweep, the event batches and the jobs all read: whether the dispatcher stopped, and how many jobs run here.
  const state = { stopped: false, runningJobs: 0 }

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise)
    void promise.finally(() => inFlight.delete(promise)).catch(() => undefined)
    return promise
  }

  return { deps, claim, inFlight, held, state, track }
}

export type DispatcherContext = ReturnType<typeof createDispatcherContext>
