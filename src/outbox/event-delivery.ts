// Delivering committed events: their listeners called at once (bounded by the jobs' deadline), then the
// events marked delivered in batches, in commit order per ordering key, with the follow-ups they cause.
import type { OutboxRow } from '../db/data-layer.js'
import type { ShipmentsEventMap, ShipmentsEvents } from '../model/events.js'
import type { DispatcherContext } from './dispatcher-context.js'

/**
 * Delivered events are marked done together, this long after the first of a batch: under load one
 * transaction covers many events. A crash in this window only means they are delivered again.
 */
const COMPLETE_BATCH_MS = 20

/** `deliver`: the dispatcher's hand-off of the follow-ups written with a batch. */
export function createEventDelivery(shared: DispatcherContext, { deliver }: { deliver: (rows: OutboxRow[]) => Promise<void> }) {
  const { deps, claim, held, state, track } = shared
  const { data, events, logger, options } = deps

  // Delivered events are marked done in batches: one transaction for all events delivered in a tick.
  let toComplete: OutboxRow[] = []
  let flushScheduled = false
  // One batch at a time, so follow-ups (webhook deliveries, pushes) get their sequences in event order.
  let flushing: Promise<void> = Promise.resolve()
  // Per ordering key, the last event whose batching waits: a later event of the key joins a batch only
  // after it, even when its listeners settle first.
  const lastOfKey = new Map<string, Promise<void>>()

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

  return { deliverEvent }
}
