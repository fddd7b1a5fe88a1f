// Turns an update request (spec 2.2) into a validated patch, or the per-field errors of spec 7.1.
import type { StoredShipmentItem } from '../db/data-layer.js'
import { ShipmentValidationError } from '../errors.js'
import type { ShipmentFieldDefinition } from './field-layout.js'
import { isRealWallTime, instantOfWallTime, isValidTimeZone, isWithinDateRange, parseIsoDateTime, startOfDay } from '../time.js'
import { isShipmentStatus, type ShipmentStatus } from '../model/shipment.js'
import type { ShipmentItemInput } from '../model/items.js'
import { TEXT_LIMITS, textProblem, type TextRule } from '../text.js'
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../http/json-body.js'

/** A date-time as an admin date picker posts it. */
export interface DateTimeParts {
  date: string
  time?: string | undefined
  timezone?: string | undefined
}

/** The update request body. Null or absent leaves a value unchanged; an empty string clears it. */
export interface ShipmentUpdateInput {
  trackingNumber?: string | null | undefined
  trackingUrl?: string | null | undefined
  carrier?: string | null | undefined
  service?: string | null | undefined
  dateScheduledShip?: string | number | DateTimeParts | null | undefined
  fulfillmentNotes?: string | null | undefined
  shippingNotes?: string | null | undefined
  status?: ShipmentStatus | null | undefined
  statusMessage?: string | null | undefined
  fields?: Record<string, unknown> | null | undefined
  integrationHandle?: string | null | undefined
  externalCode?: string | null | undefined
  /**
   * Replaces the shipment's order lines; `[]` makes it order-level. Checked against the order's
   * allocation: more than is left of a line is a 422 on `items.<lineItemId>`.
   */
  items?: ShipmentItemInput[] | null | undefined
  /**
   * False frees the shipment's quantities (it leaves the allocation, like a cancelled one); true takes
   * them back, refused with a 422 when another shipment holds them now.
   */
  enabled?: boolean | null | undefined
}

export interface ShipmentColumnChanges {
  trackingNumber?: string | null
  trackingUrl?: string | null
  carrier?: string | null
  service?: string | null
  dateScheduledShip?: Date | null
  fulfillmentNotes?: string | null
  shippingNotes?: string | null
  /** Set by the service from the update's `enabled` and `items` (checked against the order's allocation). */
  enabled?: boolean
  items?: StoredShipmentItem[]
}

export interface ShipmentPatch {
  columns: ShipmentColumnChanges
  /** Field handle to new value; null removes the value. */
  fields: Record<string, unknown>
  status: ShipmentStatus | undefined
  statusMessage: string | null
  integrationHandle: string | null
  externalCode: string | null
}

export interface UpdateRules {
  fieldsByHandle: ReadonlyMap<string, ShipmentFieldDefinition>
  timeZone: string
  now: number
}

const SHORT_TEXT_KEYS = ['trackingNumber', 'carrier', 'service'] as const
const NOTE_KEYS = ['fulfillmentNotes', 'shippingNotes'] as const
const SHORT: TextRule = { maxLength: TEXT_LIMITS.short }
const NOTES: TextRule = { maxLength: TEXT_LIMITS.long, multiline: true }
const STATUS_MESSAGE: TextRule = { maxLength: TEXT_LIMITS.statusMessage, multiline: true }
/** `today`, `tomorrow`, `yesterday`: days from today. A Map, so that `constructor` is no day. */
const RELATIVE_DAYS = new Map([
  ['today', 0],
  ['tomorrow', 1],
  ['yesterday', -1],
])

/** `trackingUrl` -> `Tracking Url`, the way the original system labels attributes in messages. */
export function attributeLabel(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(/[\s_]+/)
  return words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join(' ')
}

const isAbsent = (value: unknown) => value === null || value === undefined

export function parseShipmentUpdate(body: unknown, rules: UpdateRules): ShipmentPatch {
  const input = (body ?? {}) as Record<string, unknown>
  const errors: Record<string, string[]> = {}
  const addError = (key: string, message: string) => (errors[key] ??= []).push(message)
  const patch: ShipmentPatch = {
    columns: {},
    fields: {},
    status: undefined,
    statusMessage: null,
    integrationHandle: null,
    externalCode: null,
  }

  /** A string, trimmed or not, or undefined when absent; records the error and returns undefined otherwise. */
  const readString = (key: string, trim: boolean): string | undefined => {
    const value = input[key]
    if (isAbsent(value)) return undefined
    if (typeof value !== 'string') {
      addError(key, `${attributeLabel(key)} must be a string.`)
      return undefined
    }
    return trim ? value.trim() : value
  }
  /** True when the text may be stored (the text rule of src/text.ts); records the error otherwise. */
  const checkText = (key: string, value: string, rule: TextRule) => {
    const problem = textProblem(value, rule)
    if (problem === null) return true
    addError(key, `${attributeLabel(key)} ${problem}`)
    return false
  }

  for (const key of SHORT_TEXT_KEYS) {
    const value = readString(key, true)
    if (value !== undefined && checkText(key, value, SHORT)) patch.columns[key] = value === '' ? null : value
  }
  for (const key of NOTE_KEYS) {
    const value = readString(key, false)
    if (value !== undefined && checkText(key, value, NOTES)) patch.columns[key] = value === '' ? null : value
  }

  const trackingUrl = readString('trackingUrl', true)
  if (trackingUrl === '') patch.columns.trackingUrl = null
  else if (trackingUrl !== undefined) {
    const normalized = normalizeTrackingUrl(trackingUrl)
    if (normalized === null) addError('trackingUrl', 'Tracking Url is not a valid URL.')
    else if (checkText('trackingUrl', normalized, SHORT)) patch.columns.trackingUrl = normalized
  }

  if (!isAbsent(input.dateScheduledShip)) {
    const parsed = parseScheduledShipDate(input.dateScheduledShip, rules)
    if (parsed === undefined) addError('dateScheduledShip', 'Date Scheduled Ship is not a valid date.')
    else patch.columns.dateScheduledShip = parsed
  }

  if (!isAbsent(input.status)) {
    if (isShipmentStatus(input.status)) patch.status = input.status
    else addError('targetStatusCode', 'Target Status Code is invalid.')
  }

  const statusMessage = readString('statusMessage', false)
  if (statusMessage && checkText('statusMessage', statusMessage, STATUS_MESSAGE)) patch.statusMessage = statusMessage
  for (const key of ['integrationHandle', 'externalCode'] as const) {
    const value = readString(key, true)
    if (value && checkText(key, value, SHORT)) patch[key] = value
  }

  if (!isAbsent(input.fields)) {
    if (typeof input.fields !== 'object' || Array.isArray(input.fields)) {
      addError('fields', 'Fields must be an object of field handles and values.')
    } else {
      for (const [handle, value] of Object.entries(input.fields as Record<string, unknown>)) {
        const definition = rules.fieldsByHandle.get(handle)
        if (!definition) {
          addError(`fields.${handle}`, `Unknown field "${handle}".`)
          continue
        }
        if (value === null || value === undefined) continue
        if (value === '') {
          patch.fields[handle] = null
          continue
        }
        const checked = checkFieldValue(definition, value, rules)
        if (checked.ok) patch.fields[handle] = checked.value
        else addError(`fields.${handle}`, checked.message)
      }
    }
  }

  if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
  return patch
}

/** Adds the default https scheme; accepts http(s) only, with a dotted host. Null when invalid. */
export function normalizeTrackingUrl(value: string): string | null {
  if (/\s/.test(value)) return null
  // A scheme-relative `//host/path` names its host: https, as `host/path` gets. Any other leading slash
  // or backslash (a path, `///host`, `/\host`), here or after the scheme, names no host of its own.
  const withScheme = value.startsWith('//') ? `https:${value}` : /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `https://${value}`
  if (/^[a-z][a-z0-9+.-]*:\/\/[/\\]/i.test(withScheme)) return null
  let url: URL
  try {
    url = new URL(withScheme)
  } catch {
    return null
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null
  // Credentials in a tracking link are a phishing pattern ("https://mailto:x@evil.com"), never a carrier's.
  if (url.username || url.password) return null
  const host = url.hostname
  if (!host.includes('.') || host.startsWith('.') || host.endsWith('.') || host.includes('..')) return null
  return withScheme
}

/**
 * `dateScheduledShip` in every accepted form: ISO-8601 with or without time and offset (no offset
 * means UTC), Unix seconds, now/today/tomorrow/yesterday (days in the site timezone), a
 * `{date, time, timezone}` object, or an empty string (clears). Undefined when it cannot be parsed.
 */
export function parseScheduledShipDate(value: unknown, rules: UpdateRules): Date | null | undefined {
  const date = readDate(value, rules)
  // Outside years 1-9999 a date has no ISO-8601 form of four-digit years (or no form at all): Unix
  // seconds, a date picker's parts and the relative days reach here unchecked.
  return date && !isWithinDateRange(date.getTime()) ? undefined : date
}

function readDate(value: unknown, rules: UpdateRules): Date | null | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? fromUnixSeconds(value) : undefined
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return parseDateTimeParts(value, rules)
  if (typeof value !== 'string') return undefined
  const text = value.trim().toLowerCase()
  if (text === '') return null
  if (/^-?\d+$/.test(text)) return fromUnixSeconds(Number(text))
  if (text === 'now') return new Date(Math.floor(rules.now / 1000) * 1000)
  const days = RELATIVE_DAYS.get(text)
  if (days !== undefined) return new Date(startOfDay(rules.now, rules.timeZone, days))
  const instant = parseIsoDateTime(text, 'UTC')
  // Dates travel with second precision (ISO-8601 with an offset), so they are stored that way too.
  return instant === null ? undefined : new Date(Math.floor(instant / 1000) * 1000)
}

function fromUnixSeconds(seconds: number): Date | undefined {
  return new Date(seconds * 1000)
}

function parseDateTimeParts(value: object, rules: UpdateRules): Date | undefined {
  const { date, time = '00:00', timezone = rules.timeZone } = value as Partial<DateTimeParts>
  if (typeof date !== 'string' || typeof time !== 'string' || typeof timezone !== 'string') return undefined
  if (!isValidTimeZone(timezone)) return undefined
  const dateMatch = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date.trim())
  const timeMatch = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(time.trim())
  if (!dateMatch || !timeMatch) return undefined
  const wall = {
    year: Number(dateMatch[1]),
    month: Number(dateMatch[2]),
    day: Number(dateMatch[3]),
    hour: Number(timeMatch[1]),
    minute: Number(timeMatch[2]),
    second: Number(timeMatch[3] ?? 0),
  }
  return isRealWallTime(wall) ? new Date(instantOfWallTime(wall, timezone)) : undefined
}

type FieldCheck = { ok: true; value: unknown } | { ok: false; message: string }

function checkFieldValue(definition: ShipmentFieldDefinition, value: unknown, rules: UpdateRules): FieldCheck {
  const label = definition.name ?? attributeLabel(definition.handle)
  switch (definition.type) {
    case 'text': {
      if (typeof value !== 'string') return { ok: false, message: `${label} must be a string.` }
      const problem = textProblem(value, { maxLength: definition.maxLength ?? TEXT_LIMITS.long, multiline: true })
      return problem === null ? { ok: true, value } : { ok: false, message: `${label} ${problem}` }
    }
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
        ? { ok: true, value }
        : { ok: false, message: `${label} must be a number.` }
    case 'boolean':
      return typeof value === 'boolean' ? { ok: true, value } : { ok: false, message: `${label} must be a boolean.` }
    case 'date': {
      const date = parseScheduledShipDate(value, rules)
      return date ? { ok: true, value: date.toISOString() } : { ok: false, message: `${label} is not a valid date.` }
    }
    case 'json': {
      // Every string inside is held to the text rule, and the whole value to the long-text limit; the
      // nesting is bounded first, so a host's deep value cannot exhaust the stack of the checks.
      let plain: string | undefined
      try {
        plain = JSON.stringify(value)
      } catch {
        // circular, a BigInt, or nested beyond the engine's stack: a host's value, not JSON
      }
      if (plain === undefined) return { ok: false, message: `${label} must be a JSON value.` }
      if (jsonDepthExceeds(plain, MAX_JSON_DEPTH)) return { ok: false, message: `${label} nests deeper than ${MAX_JSON_DEPTH} levels.` }
      let problem: string | null = null
      const serialized = JSON.stringify(value, (key, inner: unknown) => {
        if (problem === null && key !== '') problem = textProblem(key, SHORT)
        if (problem === null && typeof inner === 'string') problem = textProblem(inner, NOTES)
        return inner
      })
      if (problem === null) problem = textProblem(serialized, { maxLength: TEXT_LIMITS.long, multiline: true })
      return problem === null ? { ok: true, value } : { ok: false, message: `${label} ${problem}` }
    }
  }
}
