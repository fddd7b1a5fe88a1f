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
  for (const part of formatterFor(timeZone).formatToParts(instant)) {
    if (part.type in wall) wall[part.type as keyof WallTime] = Number(part.value)
  }
  return wall
}

/** Minutes east of UTC in `timeZone` at `instant`. */
export function offsetMinutesAt(instant: number, timeZone: string): number {
  if (isUtc(timeZone)) return 0
  const wall = wallTimeAt(instant, timeZone)
  const wallAsUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second)
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
  const wallAsUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second)
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

/** ISO-8601 with an explicit offset in `timeZone`, e.g. `2026-04-28T00:00:00+00:00`. */
export function formatIsoWithOffset(instant: number, timeZone: string): string {
  const wall = wallTimeAt(instant, timeZone)
  const offset = offsetMinutesAt(instant, timeZone)
  const sign = offset < 0 ? '-' : '+'
  const absolute = Math.abs(offset)
  return (
    `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}T${pad(wall.hour)}:${pad(wall.minute)}:${pad(wall.second)}` +
    `${sign}${pad(Math.floor(absolute / 60))}:${pad(absolute % 60)}`
  )
}

const ISO_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i

/**
 * Parses ISO-8601 (date, or date and time, with or without an offset). Without an offset the value
 * is wall time in `defaultTimeZone`. Returns null for anything else, including impossible dates.
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
  if (!offset) return instantOfWallTime(wall, defaultTimeZone) + millis
  const wallAsUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second) + millis
  if (offset.toUpperCase() === 'Z') return wallAsUtc
  const digits = offset.replace(':', '')
  const offsetMinutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5) || 0)
  if (offsetMinutes > 18 * 60) return null
  return wallAsUtc - (digits[0] === '-' ? -1 : 1) * offsetMinutes * 60_000
}

/** False for 2026-02-30, 25:00 and the like. */
export function isRealWallTime(wall: WallTime): boolean {
  if (wall.month < 1 || wall.month > 12 || wall.day < 1 || wall.hour > 23 || wall.minute > 59 || wall.second > 59) {
    return false
  }
  const daysInMonth = new Date(Date.UTC(wall.year, wall.month, 0)).getUTCDate()
  return wall.day <= daysInMonth
}

/** Midnight of the day `dayOffset` days from the current day in `timeZone`. */
export function startOfDay(now: number, timeZone: string, dayOffset = 0): number {
  const today = wallTimeAt(now, timeZone)
  const day = new Date(Date.UTC(today.year, today.month - 1, today.day + dayOffset))
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
 * without an offset are wall time in `timeZone`. Returns null for anything else.
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
  return isRealWallTime(wall) ? instantOfWallTime(wall, timeZone) : null
}

/** `M/D/YYYY HH:mm` in `timeZone`, the date format of ShipStation's export document. */
export function formatPlatformDate(instant: number, timeZone: string): string {
  const wall = wallTimeAt(instant, timeZone)
  return `${wall.month}/${wall.day}/${wall.year} ${pad(wall.hour)}:${pad(wall.minute)}`
}
