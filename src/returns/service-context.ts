// What the return service's concerns share: the dependencies, a return as presented, the one way a return
// changes (under the order's lock, with its history row and event), the label lock, and the checks of what
// a request gives. It knows none of the concerns; they import it.
import type { FastifyBaseLogger } from 'fastify'
import type { DataLayer, NewOutboxMessage, OutboxRow, ReturnPlan } from '../db/data-layer.js'
import type { ReturnLedger, ReturnRow, ReturnState } from '../db/returns.js'
import type { LabelPort } from '../deliveries/service.js'
import { TEXT_LIMITS, textProblem, type TextRule } from '../text.js'
import { ReturnErrors, ShipmentValidationError } from '../errors.js'
import type { OrderStore } from '../order-store.js'
import type { OutboxDispatcher } from '../outbox/dispatcher.js'
import { toReturn, type Return } from '../model/return.js'

/** Who changes a return and through what: `api`, `admin`, a host's own word; an integration's handle for tracking. */
export interface ReturnContext {
  userId?: string | null | undefined
  source?: string | undefined
}

export interface ReturnServiceDependencies {
  data: DataLayer
  orderStore: OrderStore
  dispatcher: Pick<OutboxDispatcher, 'claim' | 'deliver'>
  labels: LabelPort
  logger: FastifyBaseLogger
  timeZone: string
  lockTimeoutMs: number
  reasons: readonly string[]
}

/** The events of state changes; other changes are in the history only. */
const EVENT_OF: Partial<Record<ReturnState, string>> = { requested: 'returnRequested', authorised: 'returnAuthorised', rejected: 'returnRejected', closed: 'returnClosed' }
export const MAX_LINES = 500
const MAX_TEXT = 2000

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
export const isCount = (value: unknown, min: number): value is number => Number.isInteger(value) && (value as number) >= min && (value as number) <= 2_147_483_647

/** A note or message: it may span lines. */
const NOTE: TextRule = { maxLength: MAX_TEXT, multiline: true }
/** A carrier, a service, an integration's handle: one line. */
export const SHORT: TextRule = { maxLength: TEXT_LIMITS.short }

/** The package's text rule (src/text.ts): control characters and bidirectional overrides refused, never stored. */
export function optionalText(value: unknown, field: string, errors: Record<string, string[]>, rule: TextRule = NOTE): string | null {
  if (value === undefined || value === null || value === '') return null
  const problem = typeof value === 'string' ? textProblem(value, rule) : `must be text of at most ${rule.maxLength} characters`
  if (problem) {
    ;(errors[field] ??= []).push(problem)
    return null
  }
  return value as string
}

export function refuseIf(errors: Record<string, string[]>): void {
  if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
}

/** The shared part of one return service: built once, handed to each concern's factory. */
export function createReturnServiceContext(deps: ReturnServiceDependencies) {
  const { data, dispatcher, timeZone } = deps
  const present = (row: ReturnRow) => toReturn(row, timeZone)
  const who = (context: ReturnContext) => ({ userId: context.userId ?? null, source: context.source ?? 'api' })

  async function requireReturn(id: number): Promise<ReturnRow> {
    const row = Number.isInteger(id) && id > 0 ? await data.returns.find(id) : undefined
    if (!row) throw new ReturnErrors.ReturnNotFound(id)
    return row
  }

  const eventMessage =
    (name: string, extra: { from: string | null; to: string; message: string | null; userId: string | null; source: string }) =>
    (row: ReturnRow): NewOutboxMessage[] => [{ kind: 'event', name, orderingKey: `return:${row.id}`, payload: { return: present(row), ...extra } }]

  async function committed(outcome: { row: ReturnRow; messages: OutboxRow[] } | undefined, id: number): Promise<Return> {
    if (!outcome) throw new ReturnErrors.ReturnNotFound(id)
    await dispatcher.deliver(outcome.messages)
    return present(outcome.row)
  }

  /**
   * The one way a return changes: under the order's lock, from the return as it is there. `decide` answers
   * the columns and the target state (null: the state stays), or throws to refuse; a history row is
   * written for every change, and the state's event when it has one (`event` overrides).
   */
  async function change(
    id: number,
    context: ReturnContext,
    decide: (current: ReturnRow, ledger: ReturnLedger) => { columns: ReturnPlan['columns']; state: ReturnState | null; message: string | null; event?: string | null; action?: string } | null,
  ): Promise<Return> {
    const { userId, source } = who(context)
    const outcome = await data.returns.change({ returnId: id }, (current, ledger) => {
      const decided = decide(current!, ledger)
      // Already there (a repeated request, a late tracking event): nothing is written, no history, no event.
      if (decided === null) return {}
      const to = decided.state ?? current!.state
      const event = decided.event !== undefined ? decided.event : decided.state !== null && decided.state !== current!.state ? (EVENT_OF[decided.state] ?? null) : null
      const extra = { from: current!.state, to, message: decided.message, userId, source }
      return {
        columns: { ...decided.columns, ...(decided.state !== null && { state: decided.state }) },
        history: { fromState: current!.state, toState: decided.action ?? to, message: decided.message, userId, source },
        ...(event && { messages: eventMessage(event, extra), claimFor: dispatcher.claim }),
      }
    })
    return committed(outcome, id)
  }

  function checkState(row: ReturnRow, to: ReturnState, allowed: readonly ReturnState[]): void {
    if (!allowed.includes(row.state)) throw new ReturnErrors.InvalidTransition(row.id, row.state, to)
  }

  /** Runs `task` holding the return's label lock, across processes and instances. */
  async function withLabelLock<T>(id: number, task: () => Promise<T>): Promise<T> {
    try {
      return await data.withNamedLock('returnLabel', id, deps.lockTimeoutMs, task)
    } catch (error) {
      if ((error as { lockName?: unknown })?.lockName === `returnLabel:${id}`) throw new ReturnErrors.LabelBusy(id)
      throw error
    }
  }

  return { deps, present, who, requireReturn, committed, eventMessage, change, checkState, withLabelLock }
}

export type ReturnServiceContext = ReturnType<typeof createReturnServiceContext>
