// The data-layer contract of the transactional outbox and the outbound webhook subscriptions.

/** A message for the outbox: an event for listeners and subscriptions, or a follow-up job. */
export interface NewOutboxMessage {
  kind: 'event' | 'job'
  name: string
  /** Messages with one key are handled in commit order (a shipment's events: `shipment:<id>`). */
  orderingKey: string
  payload: Record<string, unknown>
  /** Unique; a message written again with the same id is ignored (idempotent follow-ups). Default: a new UUID version 7 (in creation order, see newMessageId). */
  messageId?: string
  /** Not before this time. Default: now. */
  availableAt?: Date
}

/** `skipped`: a job that found nothing to do (its notification disabled or deleted, say): not sent, not failed. */
export type OutboxState = 'pending' | 'done' | 'skipped' | 'failed'

export interface OutboxRow {
  id: number
  messageId: string
  kind: 'event' | 'job'
  name: string
  orderingKey: string
  payload: Record<string, unknown>
  state: OutboxState
  attempts: number
  availableAt: Date
  claimedUntil: Date | null
  claimedBy: string | null
  lastError: string | null
  createdAt: Date
  doneAt: Date | null
}

export interface OutboxAttemptRow {
  id: number
  outboxId: number
  attemptedAt: Date
  statusCode: number | null
  durationMs: number
  error: string | null
}

/** What one attempt of a job came to. */
export interface OutboxAttemptRecord {
  attempt: Omit<OutboxAttemptRow, 'id' | 'outboxId'>
  /** done: finished; retry: try again at `retryAt`; failed: given up. */
  outcome: { state: 'done' } | { state: 'skipped' } | { state: 'retry'; retryAt: Date } | { state: 'failed' }
  /** Messages written in the same transaction (events a job's success causes). */
  followUps?: NewOutboxMessage[]
}

export interface OutboxListQuery {
  state?: OutboxState
  kind?: 'event' | 'job'
  name?: string
  /** Only messages whose ordering key starts with this (letters, digits, ":" and "-"). */
  orderingKeyPrefix?: string
  /** Only messages with an id greater than this (paging forward). */
  afterId?: number
  /** The newest first (by id), instead of the oldest. */
  newestFirst?: boolean
  limit: number
}

export interface WebhookSubscriptionRow {
  id: number
  url: string
  events: string[]
  secret: string
  description: string | null
  enabled: boolean
  failureCount: number
  disabledReason: string | null
  createdAt: Date
  updatedAt: Date
}

export type WebhookSubscriptionValues = Omit<WebhookSubscriptionRow, 'id' | 'createdAt'>

/** The outbox and the outbound webhook subscriptions, on the engine's tables. */
export interface OutboxStore {
  /**
   * Writes messages in a transaction of their own (a change's messages are written with the change).
   * `claimFor`: claimed at once by this instance for that long, so it handles them itself right away;
   * except, left unclaimed to wait their turn, an event behind an older pending event of its key that
   * this instance does not hold, and a job behind any older pending job of its key.
   */
  enqueue(messages: NewOutboxMessage[], claimFor: { instanceId: string; leaseMs: number } | null): Promise<OutboxRow[]>
  /**
   * Claims up to `limit` due messages for `instanceId` for `leaseMs`, oldest first: pending, available,
   * not claimed (or their claim expired); an event only when no earlier pending event of its key waits
   * for a retry or is held by another instance (a whole run at once), a job only as the first pending job
   * of its key. Instances claim one at a time, so they never split a run. A job taken over from a claim
   * that ran out (its instance died or stopped answering mid-attempt) gets a logged attempt with
   * TAKEN_OVER_ATTEMPT_ERROR and counts it, so the log shows the attempt whose outcome is unknown.
   */
  claimDue(instanceId: string, leaseMs: number, limit: number): Promise<OutboxRow[]>
  /**
   * The heartbeat: extends this instance's claims on `ids` (messages it still works on) to `leaseMs`
   * from now. A claim another instance has taken since is left alone.
   */
  renewClaims(instanceId: string, ids: number[], leaseMs: number): Promise<void>
  /**
   * Marks messages done and writes `followUps` in the same transaction (a follow-up whose id was
   * written before is skipped), claimed by `claimFor`; returns the follow-ups written.
   */
  complete(ids: number[], followUps: NewOutboxMessage[], claimFor: OutboxClaim | null): Promise<OutboxRow[]>
  /**
   * Logs one attempt of a job and moves it on (done, retried later, failed), with its follow-ups, as
   * `complete`. Done or failed, it hands off: the next pending job of its key, when nobody holds it, is
   * claimed by `claimFor` in the same transaction and returned after the follow-ups.
   */
  recordAttempt(id: number, record: OutboxAttemptRecord, claimFor: OutboxClaim | null): Promise<OutboxRow[]>
  /** Sets a finished or failed job pending again, available now, with its attempts counted from zero. */
  requeue(messageId: string): Promise<OutboxRow | undefined>
  /** Sets a failed job aside for good (skipped, its last error noting who dismissed it): it no longer counts as a dead letter. */
  dismiss(messageId: string, note: string): Promise<OutboxRow | undefined>
  find(messageId: string): Promise<OutboxRow | undefined>
  list(query: OutboxListQuery): Promise<OutboxRow[]>
  attempts(outboxId: number): Promise<OutboxAttemptRow[]>
  /**
   * Deletes at most `limit` done, skipped and failed messages finished before `before`, the oldest
   * first, in one short statement of its own; returns how many (fewer than `limit`: none are left).
   */
  prune(before: Date, limit: number): Promise<number>

  listSubscriptions(): Promise<WebhookSubscriptionRow[]>
  findSubscription(id: number): Promise<WebhookSubscriptionRow | undefined>
  insertSubscription(values: WebhookSubscriptionValues): Promise<WebhookSubscriptionRow>
  updateSubscription(id: number, values: Partial<WebhookSubscriptionValues>): Promise<WebhookSubscriptionRow | undefined>
  deleteSubscription(id: number): Promise<boolean>
  /**
   * Counts a failed attempt against the subscription (or, with `succeeded`, clears the count); when the
   * count reaches `disableAt` the subscription is disabled with `reason`. Returns the row after.
   */
  recordSubscriptionResult(id: number, succeeded: boolean, disableAt: number, reason: string): Promise<WebhookSubscriptionRow | undefined>

  /** Records a push or cancel attempt on the shipment's external reference at the integration. */
  recordPushAttempt(shipmentId: number, integrationId: number, at: Date, error: string | null, reference: { externalId?: string | null; externalUrl?: string | null }): Promise<void>
}

/**
 * The attempt logged for a job whose holder's claim ran out: it may have been sent (a delivery sent just
 * before the death is sent again, with the same id) or not.
 */
export const TAKEN_OVER_ATTEMPT_ERROR = 'Outcome unknown: the instance that held this job stopped renewing its claim (it died or hung) during or before an attempt; another instance took it over.'

/** Messages written with a change are claimed by the writing instance for a lease. */
export interface OutboxClaim {
  instanceId: string
  leaseMs: number
}
