// The label batch job, run by every instance: it takes a batch's lease (one instance at a time), renews
// it while it works, reads the rules once, and buys the due items a few at a time through the exactly-once
// purchase. A 429 puts the parcel back with a back-off and lowers the concurrency for a while; an unknown
// outcome is tried again later (the purchase looks it up first). When nothing is queued, the batch
// finishes with its `batchCompleted` event in the same transaction. A dead instance's batch is taken over
// when its lease runs out; a parcel bought by it is found bought, never bought again.
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { DataLayer, LabelBatchItemColumns, LabelBatchItemRow, LabelBatchRow, NewOutboxMessage } from '../db/data-layer.js'
import { ShipmentValidationError } from '../errors.js'
import { DeliveryProviderError } from '../gateway/delivery-provider.js'
import type { BoxService } from '../deliveries/boxes.js'
import type { BuyLabelInput, DeliveryService } from '../deliveries/service.js'
import type { OutboxDispatcher } from '../outbox/dispatcher.js'
import type { ShippingRulesService } from '../rules/service.js'
import type { ShippingRules } from '../rules/model.js'
import { formatIsoWithOffset } from '../time.js'
import type { ResolvedBatchesOptions } from './options.js'

export interface BatchWorkerDependencies {
  data: DataLayer
  rules: Pick<ShippingRulesService, 'current' | 'decide'>
  deliveries: Pick<DeliveryService, 'buyLabel' | 'listParcels'>
  boxes: Pick<BoxService, 'suggestParcels'>
  dispatcher: Pick<OutboxDispatcher, 'claim' | 'deliver'>
  logger: FastifyBaseLogger
  options: ResolvedBatchesOptions
  timeZone: string
}

/** What one attempt at an item came to. `later`: queued again, due after a back-off. */
type ItemOutcome =
  | { kind: 'bought'; columns: LabelBatchItemColumns }
  | { kind: 'failed' | 'skipped'; reason: string }
  | { kind: 'later'; reason: string; rateLimited: boolean; retryAfterMs: number | null }

/** The state of one batch's run on this instance. */
interface Run {
  batch: LabelBatchRow
  rules: ShippingRules
  /** The lease was lost (another instance took it, or the batch was cancelled): stop taking items. */
  lost: boolean
  limit: number
  /** Until when the lowered concurrency holds (epoch ms). */
  cooldownUntil: number
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())

/** The longest pause between two looks at a batch whose queued items are not due yet. */
const MAX_IDLE_MS = 250

const codeOf = (error: unknown) => (error as { code?: unknown } | null)?.code

/** A provider's failure, thrown by it or carried as the cause of the service's refusal. */
function providerFailure(error: unknown): DeliveryProviderError | null {
  if (error instanceof DeliveryProviderError) return error
  const cause = (error as { cause?: unknown } | null)?.cause
  return cause instanceof DeliveryProviderError ? cause : null
}

/** What an item's failure means for the batch. */
function outcomeOfError(error: unknown): ItemOutcome | 'label-exists' | 'unexpected' {
  const code = codeOf(error)
  if (code === 'SHIPMENTS_LABEL_EXISTS') return 'label-exists'
  const provider = providerFailure(error)
  const message = error instanceof Error ? error.message : String(error)
  if (provider?.rateLimited) return { kind: 'later', reason: message, rateLimited: true, retryAfterMs: provider.retryAfterMs }
  // No known outcome, or another purchase of the parcel under way: the purchase's own recovery finishes it later.
  if (code === 'SHIPMENTS_LABEL_OUTCOME_UNKNOWN' || code === 'SHIPMENTS_LABEL_PURCHASE_BUSY') return { kind: 'later', reason: message, rateLimited: false, retryAfterMs: null }
  // A quote that went stale between the decision and the purchase: decided again.
  if (code === 'SHIPMENTS_QUOTE_EXPIRED' || code === 'SHIPMENTS_QUOTE_CHANGED') return { kind: 'later', reason: message, rateLimited: false, retryAfterMs: null }
  if (code === 'SHIPMENTS_SHIPMENT_NOT_FOUND' || code === 'SHIPMENTS_PARCEL_NOT_FOUND') return { kind: 'skipped', reason: 'the shipment or the parcel no longer exists' }
  // Block mode's ship-to gate: nothing was bought; the admin corrects the order's address or ships it as is.
  if (code === 'SHIPMENTS_ADDRESS_UNDELIVERABLE') return { kind: 'skipped', reason: `address undeliverable: ${(error as { addressProblems?: string }).addressProblems ?? message}` }
  if (error instanceof ShipmentValidationError) {
    return { kind: 'failed', reason: Object.entries(error.errors).map(([field, problems]) => `${field}: ${problems.join('; ')}`).join(' ') }
  }
  if (provider) return provider.kind === 'refused' ? { kind: 'failed', reason: message } : { kind: 'later', reason: message, rateLimited: false, retryAfterMs: null }
  // The service's own refusals (the carrier's words, no ship-from address, a disabled integration).
  if (code === 'SHIPMENTS_UPDATE_REJECTED' || code === 'SHIPMENTS_PACKING_TOO_LARGE' || code === 'SHIPMENTS_PACKING_TIMEOUT') return { kind: 'failed', reason: message }
  return 'unexpected'
}

/** One item's try and its outcome written: the rules' decision, the purchase, the back-off. */
function createItemWork(deps: BatchWorkerDependencies) {
  const { data, logger, options } = deps

  /** The wait before try number `attempts + 1`: doubled each time, bounded, ±20 % jitter, never under Retry-After. */
  function backoffMs(attempts: number, retryAfterMs: number | null): number {
    const doubled = Math.min(options.maxBackoffMs, options.backoffMs * 2 ** Math.min(30, Math.max(0, attempts - 1)))
    return Math.max(retryAfterMs ?? 0, Math.round(doubled * (0.8 + Math.random() * 0.4)))
  }

  function currentLimit(run: Run): number {
    if (run.limit < options.concurrency && Date.now() >= run.cooldownUntil) run.limit = options.concurrency
    return run.limit
  }

  /** A shipment's item without a parcel: its parcels (suggested from the boxes when the batch asks) become its items. */
  async function expand(run: Run, item: LabelBatchItemRow): Promise<ItemOutcome | null> {
    let parcels = await deps.deliveries.listParcels(item.shipmentId)
    let unpacked = ''
    // Parcels found here were suggested by an instance that died before it wrote the items: taken as they are.
    if (parcels.length === 0 && run.batch.settings.suggestParcels) {
      const suggestion = await deps.boxes.suggestParcels(item.shipmentId, { apply: true }, { userId: run.batch.userId })
      parcels = suggestion.created.length > 0 ? suggestion.created : await deps.deliveries.listParcels(item.shipmentId)
      unpacked = suggestion.unpacked.map((each) => `line ${each.lineItemId} × ${each.quantity}: ${each.reason}`).join('; ')
    }
    if (parcels.length === 0) {
      const reason = run.batch.settings.suggestParcels
        ? `no parcels could be suggested from the boxes${unpacked ? ` (${unpacked})` : ''}`
        : 'the shipment has no parcels (add them, or make the batch with "suggest parcels")'
      return { kind: 'skipped', reason }
    }
    await data.batches.expandItem(item.id, parcels.map((parcel) => parcel.id), new Date())
    return null
  }

  /** One try at one parcel: found bought, decided by the rules and bought, or why not. */
  async function attempt(run: Run, item: LabelBatchItemRow): Promise<ItemOutcome | null> {
    if (item.parcelId === null) return expand(run, item)
    const parcel = await data.parcels.find(item.parcelId)
    if (!parcel || parcel.shipmentId !== item.shipmentId) return { kind: 'skipped', reason: 'the parcel no longer exists' }
    if (parcel.labelOperationId !== null) return { kind: 'bought', columns: { operationId: parcel.labelOperationId, carrier: parcel.carrier, service: parcel.service, reason: null } }
    const labelFormat = run.batch.settings.labelFormat
    let input: BuyLabelInput
    let rule = item.rule
    const open = await data.parcels.activeOperation(parcel.id)
    if (open?.state === 'pending') {
      // An earlier purchase (this batch's, before a crash, or anyone's) with no known outcome: finished as it
      // was asked; the purchase looks it up at the provider before anything else.
      const integration = (await data.listIntegrations()).find((each) => each.id === open.integrationId)
      input = { integration: integration?.handle ?? '', carrier: open.carrier, service: open.service, labelFormat }
    } else {
      const decision = await deps.rules.decide(item.shipmentId, parcel.id, run.rules)
      rule = decision.match.rule?.name ?? (decision.match.choice ? 'default' : null)
      if (decision.outcome === 'none') return { kind: 'skipped', reason: decision.reason }
      input = decision.quote
        ? { integration: decision.integration, quoteId: decision.quote.id, labelFormat }
        : { integration: decision.integration, carrier: decision.carrier, service: decision.service, labelFormat }
      await data.batches.updateItem(item.id, { rule, carrier: decision.carrier, service: decision.service }, new Date(), true)
    }
    const result = await deps.deliveries.buyLabel(item.shipmentId, parcel.id, input, { userId: run.batch.userId })
    return { kind: 'bought', columns: { operationId: result.operationId, carrier: result.parcel.carrier, service: result.parcel.service, rule, reason: null } }
  }

  /** Tries an item and writes what came of it; never throws. */
  async function work(run: Run, item: LabelBatchItemRow): Promise<void> {
    const attempts = item.attempts + 1
    let outcome: ItemOutcome | null
    try {
      outcome = await attempt(run, item)
    } catch (error) {
      const classified = outcomeOfError(error)
      if (classified === 'label-exists') {
        const parcel = item.parcelId === null ? undefined : await data.parcels.find(item.parcelId).catch(() => undefined)
        outcome = { kind: 'bought', columns: { operationId: parcel?.labelOperationId ?? null, carrier: parcel?.carrier ?? null, service: parcel?.service ?? null, reason: null } }
      } else if (classified === 'unexpected') {
        logger.error({ err: error, batchId: run.batch.id, itemId: item.id }, 'Label batch: an item failed unexpectedly; it is tried again later')
        outcome = { kind: 'later', reason: 'an unexpected error (see the server log)', rateLimited: false, retryAfterMs: null }
      } else {
        outcome = classified
      }
    }
    if (outcome === null) return
    try {
      await record(run, item, attempts, outcome)
    } catch (error) {
      // The item stays queued and is tried again: the purchase never buys twice.
      logger.error({ err: error, batchId: run.batch.id, itemId: item.id }, "Label batch: an item's outcome could not be written")
    }
  }

  async function record(run: Run, item: LabelBatchItemRow, attempts: number, outcome: ItemOutcome): Promise<void> {
    const now = new Date()
    if (outcome.kind === 'bought') {
      await data.batches.updateItem(item.id, { ...outcome.columns, state: 'bought', attempts, nextAttemptAt: null }, now, false)
      return
    }
    if (outcome.kind !== 'later') {
      await data.batches.updateItem(item.id, { state: outcome.kind, reason: outcome.reason, attempts, nextAttemptAt: null }, now, true)
      return
    }
    if (outcome.rateLimited) {
      run.limit = Math.max(1, Math.floor(currentLimit(run) / 2))
      run.cooldownUntil = Date.now() + options.rateLimitCooldownMs
      logger.warn({ batchId: run.batch.id, retryAfterMs: outcome.retryAfterMs, concurrency: run.limit }, 'Label batch: the provider is rate limiting; backing off')
    } else if (attempts >= options.maxAttempts) {
      await data.batches.updateItem(item.id, { state: 'failed', reason: `no outcome after ${attempts} tries: ${outcome.reason}`, attempts, nextAttemptAt: null }, now, true)
      return
    }
    const due = new Date(now.getTime() + backoffMs(attempts, outcome.retryAfterMs))
    await data.batches.updateItem(item.id, { reason: outcome.reason, attempts, nextAttemptAt: due }, now, true)
  }

  return { work, currentLimit }
}

export function createBatchWorker(deps: BatchWorkerDependencies) {
  const { data, logger, options } = deps
  const owner = randomUUID()
  let stopped = false
  let started = false
  let timer: NodeJS.Timeout | null = null
  let working: Promise<void> | null = null

  const { work, currentLimit } = createItemWork(deps)

  /** Writes the batch's end and its event, then delivers the event. */
  async function finish(run: Run): Promise<boolean> {
    const finished = await data.batches.finishBatch(run.batch.id, owner, new Date(), {
      of: (batch, counts, failed): NewOutboxMessage[] => [
        {
          kind: 'event',
          name: 'batchCompleted',
          orderingKey: `batch:${batch.id}`,
          payload: {
            batchId: batch.id,
            counts,
            failed: failed.map((each) => ({ shipmentId: each.shipmentId, parcelId: each.parcelId, reason: each.reason })),
            userId: batch.userId,
            finishedAt: formatIsoWithOffset((batch.finishedAt ?? new Date()).getTime(), deps.timeZone),
          },
        },
      ],
      claimFor: deps.dispatcher.claim,
    })
    if (!finished) return false
    await deps.dispatcher.deliver(finished.messages)
    return true
  }

  /** Works on one batch this instance holds until it is finished, lost, cancelled or the instance stops. */
  async function runBatch(batch: LabelBatchRow): Promise<void> {
    const run: Run = { batch, rules: await deps.rules.current(), lost: false, limit: options.concurrency, cooldownUntil: 0 }
    const renewal = setInterval(() => {
      data.batches
        .renewLease(batch.id, owner, options.leaseMs, new Date())
        .then((held) => {
          if (!held) run.lost = true
        })
        .catch((error: unknown) => logger.warn({ err: error, batchId: batch.id }, "Label batch: the lease's renewal failed"))
    }, Math.max(50, Math.floor(options.leaseMs / 3)))
    renewal.unref()
    const inFlight = new Map<number, Promise<void>>()
    try {
      while (!stopped && !run.lost) {
        const free = currentLimit(run) - inFlight.size
        if (free <= 0) {
          await Promise.race(inFlight.values())
          continue
        }
        const due = await data.batches.dueItems(batch.id, new Date(), free, [...inFlight.keys()])
        if (due.length === 0) {
          if (inFlight.size > 0) await Promise.race(inFlight.values())
          else if ((await data.batches.counts(batch.id)).queued === 0 && (await finish(run))) return
          // Queued items not due yet (a back-off), or a finish refused (retried or cancelled meanwhile: the renewal tells).
          else await sleep(Math.min(options.pollIntervalMs, MAX_IDLE_MS))
          continue
        }
        for (const item of due) inFlight.set(item.id, work(run, item).finally(() => inFlight.delete(item.id)))
      }
      await Promise.all(inFlight.values())
    } finally {
      clearInterval(renewal)
      // A stopping instance lets the batch go at once, so another takes it without waiting for the lease.
      if (!run.lost) await data.batches.releaseLease(batch.id, owner).catch(() => undefined)
    }
  }

  /** Takes and works on due batches one after another, until none is due. */
  async function pass(): Promise<void> {
    while (!stopped) {
      const batch = await data.batches.claimBatch(owner, options.leaseMs, new Date())
      if (!batch) return
      await runBatch(batch)
    }
  }

  function schedule(delayMs: number): void {
    if (stopped || timer !== null || working !== null) return
    timer = setTimeout(() => {
      timer = null
      working = pass()
        .catch((error: unknown) => logger.error({ err: error }, 'Label batch worker: a pass failed; it looks again at its next poll'))
        .finally(() => {
          working = null
          schedule(options.pollIntervalMs)
        })
    }, delayMs)
    timer.unref()
  }

  return {
    /** This instance's id as a batch's lease owner. */
    owner,
    /** Starts polling for batches (the plugin calls it when ready, unless `batches.worker` is false). */
    start(): void {
      if (!options.worker || started) return
      started = true
      schedule(0)
    },
    /** Looks for a batch now (a batch was just created or retried here) instead of at the next poll. */
    wake(): void {
      if (!started || stopped || working !== null) return
      if (timer !== null) clearTimeout(timer)
      timer = null
      schedule(0)
    },
    /** Stops taking items; resolves when the purchases under way have been written and the lease let go. */
    async stop(): Promise<void> {
      stopped = true
      if (timer !== null) clearTimeout(timer)
      timer = null
      await working
    },
  }
}

export type BatchWorker = ReturnType<typeof createBatchWorker>
