// Dates in the site's timezone: wall time to instant and back, and the formats the interfaces use.

export interface WallTime {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone)
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      // Without the era, 1 BC (the year before 0001, astronomical year 0) reads as year 1.
      era: 'short',
    })
    formatters.set(timeZone, formatter)
  }
  return formatter
}

/** True when `timeZone` is an IANA zone name this Node.js knows. */
export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone)
    return true
  } catch {
    return false
  }
}

const isUtc = (timeZone: string) => timeZone === 'UTC' || timeZone === 'Etc/UTC'

/** The wall-clock time at `instant` in `timeZone`. */
export function wallTimeAt(instant: number, timeZone: string): WallTime {
  if (isUtc(timeZone)) {
    const date = new Date(instant)
    return {
      year: date.getUTCFullYear(),
      month: date.getUTCMonth() + 1,
      day: date.getUTCDate(),
      hour: date.getUTCHours(),
      minute: date.getUTCMinutes(),
      second: date.getUTCSeconds(),
    }
  }
  const wall: WallTime = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 }
  let beforeCommonEra = false
  for (const part of formatterFor(timeZone).formatToParts(instant)) {
    if (part.type === 'era') beforeCommonEra = part.value === 'BC'
    else if (part.type in wall) wall[part.type as keyof WallTime] = Number(part.value)
  }
  if (beforeCommonEra) wall.year = 1 - wall.year
  return wall
}

/**
 * Milliseconds since the epoch of `wall` read as UTC. Unlike `Date.UTC` (and `new Date(y, m, ...)`),
 * which read years 0 to 99 as 1900 to 1999, every year is itself. Fields out of range carry over
 * (day 0 is the last day of the month before), as they do for `Date.UTC`.
 */
export function utcInstantOf(wall: WallTime, millis = 0): number {
  const date = new Date(0)
  date.setUTCFullYear(wall.year, wall.month - 1, wall.day)
  date.setUTCHours(wall.hour, wall.minute, wall.second, millis)
  return date.getTime()
}

/**
 * The instants a date may name: years 1 to 9999 in UTC, the years ISO-8601 writes with four digits
 * and both engines store. Every parser below returns null outside them.
 */
export const EARLIEST_INSTANT = utcInstantOf({ year: 1, month: 1, day: 1, hour: 0, minute: 0, second: 0 })
export const LATEST_INSTANT = utcInstantOf({ year: 9999, month: 12, day: 31, hour: 23, minute: 59, second: 59 }, 999)

/** True for an instant of years 1 to 9999 (UTC); false for NaN. */
export const isWithinDateRange = (instant: number) => instant >= EARLIEST_INSTANT && instant <= LATEST_INSTANT

const withinDateRange = (instant: number) => (isWithinDateRange(instant) ? instant : null)

/** Minutes east of UTC in `timeZone` at `instant`. */
export function offsetMinutesAt(instant: number, timeZone: string): number {
  if (isUtc(timeZone)) return 0
  const wallAsUtc = utcInstantOf(wallTimeAt(instant, timeZone))
  return Math.round((wallAsUtc - (instant - (instant % 1000 + 1000) % 1000)) / 60_000)
}

const DAY = 86_400_000
const sameWallTime = (a: WallTime, b: WallTime) =>
  a.year === b.year && a.month === b.month && a.day === b.day && a.hour === b.hour && a.minute === b.minute && a.second === b.second

/**
 * The instant at which the clocks of `timeZone` show `wall`: the earlier one in an hour that is
 * repeated when clocks go back, and, for a time skipped when clocks go forward, the wall time read
 * with the offset before the change (which lands just after the gap).
 */
export function instantOfWallTime(wall: WallTime, timeZone: string): number {
  const wallAsUtc = utcInstantOf(wall)
  if (isUtc(timeZone)) return wallAsUtc
  // The offsets a day either side are the ones in force before and after any change near this time.
  const offsetBefore = offsetMinutesAt(wallAsUtc - DAY, timeZone)
  const offsetAfter = offsetMinutesAt(wallAsUtc + DAY, timeZone)
  const candidates = [wallAsUtc - offsetBefore * 60_000, wallAsUtc - offsetAfter * 60_000]
    .filter((instant) => sameWallTime(wallTimeAt(instant, timeZone), wall))
    .sort((a, b) => a - b)
  return candidates[0] ?? wallAsUtc - offsetBefore * 60_000
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0')
/** Four digits for years 0 to 9999; beyond, ISO-8601's expanded form (`-000001`, `+010000`), as `toISOString` writes it. */
const formatYear = (year: number) => (year >= 0 && year <= 9999 ? pad(year, 4) : `${year < 0 ? '-' : '+'}${pad(Math.abs(year), 6)}`)

/** ISO-8601 with an explicit offset in `timeZone`, e.g. `2026-04-28T00:00:00+00:00`. */
export function formatIsoWithOffset(instant: number, timeZone: string): string {
  const offset = offsetMinutesAt(instant, timeZone)
  // The wall time is the instant moved by the offset as written (whole minutes), so the text names
  // the instant exactly also where the zone's offset had seconds (local mean time before 1900).
  // toISOString writes that wall time as this format does, years included (expanded beyond 0 to 9999),
  // natively: every presented shipment formats several dates, on every write's answer.
  const iso = new Date(instant + offset * 60_000).toISOString()
  const sign = offset < 0 ? '-' : '+'
  const absolute = Math.abs(offset)
  // Without the milliseconds and the Z (".000Z").
  return `${iso.slice(0, -5)}${sign}${pad(Math.floor(absolute / 60))}:${pad(absolute % 60)}`
}

const ISO_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i

/**
 * Parses ISO-8601 (date, or date and time, with or without an offset). Without an offset the value
 * is wall time in `defaultTimeZone`. Returns null for anything else, including impossible dates and
 * instants outside years 1 to 9999.
 */
export function parseIsoDateTime(text: string, defaultTimeZone: string): number | null {
  const match = ISO_PATTERN.exec(text.trim())
  if (!match) return null
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', offset] = match
  const wall: WallTime = {
    year: Number(year),
    month: Number(month),
    day: Number(day),
    hour: Number(hour),
    minute: Number(minute),
    second: Number(second),
  }
  if (!isRealWallTime(wall)) return null
  const millis = fraction ? Math.floor(Number(`0.${fraction}`) * 1000) : 0
  if (!offset) return withinDateRange(instantOfWallTime(wall, defaultTimeZone) + millis)
  const wallAsUtc = utcInstantOf(wall, millis)
  if (offset.toUpperCase() === 'Z') return withinDateRange(wallAsUtc)
  const digits = offset.replace(':', '')
  const offsetMinutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5) || 0)
  if (offsetMinutes > 18 * 60) return null
  return withinDateRange(wallAsUtc - (digits[0] === '-' ? -1 : 1) * offsetMinutes * 60_000)
}

/** False for 2026-02-30, 25:00 and the like. */
export function isRealWallTime(wall: WallTime): boolean {
  if (wall.month < 1 || wall.month > 12 || wall.day < 1 || wall.hour > 23 || wall.minute > 59 || wall.second > 59) {
    return false
  }
  const daysInMonth = new Date(utcInstantOf({ ...wall, month: wall.month + 1, day: 0 })).getUTCDate()
  return wall.day <= daysInMonth
}

/** Midnight of the day `dayOffset` days from the current day in `timeZone`. */
export function startOfDay(now: number, timeZone: string, dayOffset = 0): number {
  const today = wallTimeAt(now, timeZone)
  const day = new Date(utcInstantOf({ ...today, day: today.day + dayOffset, hour: 0, minute: 0, second: 0 }))
  return instantOfWallTime(
    { year: day.getUTCFullYear(), month: day.getUTCMonth() + 1, day: day.getUTCDate(), hour: 0, minute: 0, second: 0 },
    timeZone,
  )
}

const US_DATE_PATTERN = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:[ T]+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap]\.?m\.?)?)?$/i
const YEAR_FIRST_SLASH_PATTERN = /^(\d{4})\/(\d{1,2})\/(\d{1,2})(?:[ T]+(\d{1,2}):(\d{2})(?::(\d{2}))?)?$/

/**
 * Parses the date strings a shipping platform sends: ShipStation's `MM/dd/yyyy HH:mm` (also without
 * leading zeros, with seconds, or with AM/PM), `yyyy/MM/dd HH:mm`, ISO-8601, and Unix seconds. Values
 * without an offset are wall time in `timeZone`. Returns null for anything else, as for an instant
 * outside years 1 to 9999.
 */
export function parsePlatformDate(text: string, timeZone: string): number | null {
  const value = text.trim()
  if (/^\d{9,11}$/.test(value)) return Number(value) * 1000
  const us = US_DATE_PATTERN.exec(value)
  const yearFirst = us ? null : YEAR_FIRST_SLASH_PATTERN.exec(value)
  if (!us && !yearFirst) return parseIsoDateTime(value, timeZone)
  const [year, month, day] = us ? [us[3], us[1], us[2]] : [yearFirst![1], yearFirst![2], yearFirst![3]]
  const [, , , , hourText = '0', minute = '0', second = '0', meridiem] = us ?? yearFirst!
  let hour = Number(hourText)
  if (meridiem) {
    if (hour < 1 || hour > 12) return null
    hour = (hour % 12) + (/^p/i.test(meridiem) ? 12 : 0)
  }
  const wall: WallTime = { year: Number(year), month: Number(month), day: Number(day), hour, minute: Number(minute), second: Number(second) }
  return isRealWallTime(wall) ? withinDateRange(instantOfWallTime(wall, timeZone)) : null
}

/** `M/D/YYYY HH:mm` in `timeZone`, the date format of ShipStation's export document. */
export function formatPlatformDate(instant: number, timeZone: string): string {
  const wall = wallTimeAt(instant, timeZone)
  return `${wall.month}/${wall.day}/${formatYear(wall.year)} ${pad(wall.hour)}:${pad(wall.minute)}`
}
