// Driver errors wrapped once, where the services meet the data layer: every method of an engine's data
// layer (and of its stores) answers a driver's failure as a ShipmentsDatabaseError, whose message and
// cause carry no parameter of the statement. Drizzle's DrizzleQueryError prints every parameter in its
// message ("Failed query: insert ... params: <the API key>, <the webhook secret>"), and an error logged
// or shown anywhere above this layer would carry them.
import { ShipmentsDatabaseError } from '../errors.js'

/** An engine's translation: its driver's error as a ShipmentsDatabaseError, or undefined for any other error. */
export type DriverErrorTranslation = (error: unknown) => ShipmentsDatabaseError | undefined

/** What an engine makes of its driver's error (or of the cause of Drizzle's query error): no parameter in any of it. */
export interface DescribedFailure {
  message: string
  code: string | undefined
  constraint?: string | undefined
}

/**
 * The error a driver threw (possibly inside Drizzle's DrizzleQueryError) as the package's error, or
 * undefined for an error of no driver (a plan's refusal, a lock timeout). `describe` names the failure of
 * the driver's error, or of whatever a query error holds (a lost connection).
 */
export function databaseErrorOf(error: unknown, isDriverError: (candidate: unknown) => boolean, describe: (failure: unknown) => DescribedFailure): ShipmentsDatabaseError | undefined {
  if (error instanceof ShipmentsDatabaseError) return undefined
  let queryError: { cause?: unknown } | undefined
  let driverError: unknown
  for (let current = error as { name?: unknown; cause?: unknown } | undefined, depth = 0; current && depth < 8; current = current.cause as typeof current, depth++) {
    if (isDriverError(current)) {
      driverError = current
      break
    }
    if (current.name === 'DrizzleQueryError') queryError ??= current
  }
  if (driverError === undefined && queryError === undefined) return undefined
  const failure = driverError ?? queryError!.cause
  const described = failure instanceof Error ? describe(failure) : { message: 'the statement failed', code: undefined }
  // The cause stands for the driver's error: its class, code and the message above, none of its other
  // fields (a PostgreSQL error's detail repeats the row's values) and no stack of its own.
  const cause = Object.assign(new Error(described.message), { name: (failure as { name?: string } | undefined)?.name ?? 'Error', code: described.code })
  cause.stack = `${cause.name}: ${cause.message}`
  const wrapped = new ShipmentsDatabaseError(`Database statement failed: ${described.message}${described.code ? ` (${described.code})` : ''}`, {
    code: described.code,
    constraint: described.constraint,
    cause,
  })
  // Where the statement ran: the frames of the original error, without its first lines (Drizzle's
  // message, the statement and its parameters).
  const frames = String((error as { stack?: unknown }).stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
  if (frames.length > 0) wrapped.stack = `${wrapped.name}: ${wrapped.message}\n${frames.join('\n')}`
  return wrapped
}

type Callable = (...args: unknown[]) => unknown

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype

/**
 * The data layer (an object of methods and stores of methods) with every method's driver errors
 * translated, thrown or rejected. A function a method answers (a change stamp) is wrapped too; rows are
 * passed on as they are. Other errors (the plans' refusals, lock timeouts) pass untouched.
 */
export function withDriverErrorsTranslated<T extends object>(layer: T, translate: DriverErrorTranslation): T {
  const rethrow = (error: unknown): never => {
    throw translate(error) ?? error
  }
  const wrapFunction = (fn: Callable, owner: unknown): Callable =>
    function translated(...args: unknown[]) {
      let result: unknown
      try {
        result = fn.apply(owner, args)
      } catch (error) {
        rethrow(error)
      }
      if (result instanceof Promise) return result.then(wrapResult, rethrow)
      return wrapResult(result)
    }
  const wrapResult = (result: unknown) => (typeof result === 'function' ? wrapFunction(result as Callable, undefined) : result)
  const wrapObject = (object: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(object).map(([key, value]) => [key, typeof value === 'function' ? wrapFunction(value as Callable, object) : isPlainObject(value) ? wrapObject(value) : value]),
    )
  return wrapObject(layer as Record<string, unknown>) as T
}
