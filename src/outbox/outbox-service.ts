// Reading the outbox (replays, audits) and retrying a failed job, as a host sees it.
import type { DataLayer, OutboxRow, OutboxState } from '../db/data-layer.js'
import { formatIsoWithOffset } from '../time.js'
import type { OutboxDispatcher } from './dispatcher.js'

export interface OutboxMessage {
  /** The message's unique id: an event's `eventId`, or a job's id. */
  id: string
  /** Increasing in commit order: page with `afterSequence`. */
  sequence: number
  kind: 'event' | 'job'
  name: string
  orderingKey: string
  payload: Record<string, unknown>
  state: OutboxState
  attempts: number
  lastError: string | null
  dateCreated: string
  /** When it was delivered (an event) or finished or given up (a job). */
  dateDone: string | null
}

export interface OutboxQuery {
  state?: OutboxState | undefined
  kind?: 'event' | 'job' | undefined
  name?: string | undefined
  afterSequence?: number | undefined
  /** 1 to 500. Default 100. */
  limit?: number | undefined
}

export type OutboxService = ReturnType<typeof createOutboxService>

export function createOutboxService(data: DataLayer, dispatcher: Pick<OutboxDispatcher, 'sweep'>, timeZone: string) {
  const format = (date: Date) => formatIsoWithOffset(date.getTime(), timeZone)
  const present = (row: OutboxRow): OutboxMessage => ({
    id: row.messageId,
    sequence: row.id,
    kind: row.kind,
    name: row.name,
    orderingKey: row.orderingKey,
    payload: row.payload,
    state: row.state,
    attempts: row.attempts,
    lastError: row.lastError,
    dateCreated: format(row.createdAt),
    dateDone: row.doneAt ? format(row.doneAt) : null,
  })
  return {
    /** Messages in commit order, filtered; delivered ones stay until the retention age prunes them. */
    async list(query: OutboxQuery = {}): Promise<OutboxMessage[]> {
      const limit = Math.min(500, Math.max(1, Math.floor(query.limit ?? 100)))
      const afterId = query.afterSequence === undefined ? undefined : Math.max(0, Math.floor(query.afterSequence))
      return (await data.outbox.list({ state: query.state, kind: query.kind, name: query.name, afterId, limit })).map(present)
    },
    async get(id: string): Promise<(OutboxMessage & { attemptLog: Array<{ date: string; statusCode: number | null; durationMs: number; error: string | null }> }) | null> {
      // No message id holds NUL (PostgreSQL text cannot): such an id names no message rather than failing the query.
      const row = typeof id === 'string' && !id.includes('\u0000') ? await data.outbox.find(id) : undefined
      if (!row) return null
      const attempts = await data.outbox.attempts(row.id)
      return {
        ...present(row),
        attemptLog: attempts.map((attempt) => ({ date: format(attempt.attemptedAt), statusCode: attempt.statusCode, durationMs: attempt.durationMs, error: attempt.error })),
      }
    },
    /** Runs a finished or failed job again with fresh retries; false when there is no such job or it is still pending. */
    async retry(id: string): Promise<boolean> {
      if (typeof id !== 'string' || id.includes('\u0000')) return false
      const queued = (await data.outbox.requeue(id)) !== undefined
      if (queued) void dispatcher.sweep()
      return queued
    },
    /**
     * Sets a job that failed for good aside: skipped, its last error saying it was dismissed (and by
     * whom), so it no longer counts as a dead letter; false when there is no such failed job.
     */
    async dismiss(id: string, by: string | null = null): Promise<boolean> {
      if (typeof id !== 'string' || id.includes('\u0000')) return false
      return (await data.outbox.dismiss(id, `Dismissed${by === null ? '' : ` by ${by}`} after failing for good.`)) !== undefined
    },
    /** Looks for due messages now rather than at the next poll; resolves when they have been handled once. */
    sweep: () => dispatcher.sweep(),
  }
}
