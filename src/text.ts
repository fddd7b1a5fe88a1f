// The one rule for every text the package stores, whatever surface it arrives on: text is refused
// (never silently altered) when it holds characters that are not text, and every stored text has a
// limit counted in Unicode code points ("characters": an emoji is one, never half of one).

/** Limits, in characters, of the texts the package stores. */
export const TEXT_LIMITS = {
  /** Tracking number, carrier, service, tracking URL, integration handle, external codes and ids, a webhook id, a ship notification's values. */
  short: 255,
  /** A status message on a history row. */
  statusMessage: 1_000,
  /** Fulfillment and shipping notes; a custom text field without its own maxLength; a JSON field, serialized. */
  long: 10_000,
  /** An external reference's URL. */
  url: 2_048,
} as const

/**
 * What is not text: C0 and C1 control characters (tab, line feed and carriage return are allowed
 * where a text may span lines), unpaired UTF-16 surrogates (which no encoding can store), the
 * noncharacters U+FFFE and U+FFFF, and the bidirectional embedding, override and isolate controls
 * (U+202A-U+202E, U+2066-U+2069) that make a stored value display other than it reads.
 */
const NOT_TEXT_SINGLE_LINE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u
const NOT_TEXT_MULTILINE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u

/** The number of characters (code points) of a text. */
export function characterCount(text: string): number {
  let count = 0
  for (const _ of text) count++
  return count
}

export interface TextRule {
  /** The limit in characters. */
  maxLength: number
  /** Whether tab, line feed and carriage return are allowed. Default false. */
  multiline?: boolean
}

/** Why `text` may not be stored under `rule` ("contains ..." / "should contain at most ..."), or null. */
export function textProblem(text: string, rule: TextRule): string | null {
  if ((rule.multiline ? NOT_TEXT_MULTILINE : NOT_TEXT_SINGLE_LINE).test(text)) {
    return 'contains characters that are not allowed (control characters, bidirectional overrides or unpaired surrogates).'
  }
  // Code points are at most as many as UTF-16 units: only a text that might be too long is counted.
  if (text.length > rule.maxLength && characterCount(text) > rule.maxLength) return `should contain at most ${rule.maxLength} characters.`
  return null
}

/**
 * A tracking number as it is matched: without spaces and dashes, in upper case, so the number a shop
 * typed (`1z 999 aa1 0123 4567 84`) matches the carrier's (`1Z999AA10123456784`). The engines index the
 * same expression (TRACKING_NUMBER_KEY_SQL in each schema), so a lookup is one index probe.
 */
export const trackingNumberKey = (value: string): string => value.replace(/[ -]/g, '').toUpperCase()
