// What a server answered, said shortly and safely: the text of a proxy's HTML error page (or any body
// that is not the API's own error), without markup, scripts, control characters or known secrets, cut
// to a few words, to name in an error message and an attempt log.
import { MASK } from './redact.js'

/** The longest excerpt, in characters. */
const EXCERPT_LENGTH = 160

/** `type "words of the body…"`, or `an empty body`; every secret given is masked. */
export function answerExcerpt(body: string | null | undefined, contentType: string | null | undefined, secrets: ReadonlyArray<string | null | undefined> = []): string {
  let text = (body ?? '').slice(0, 64 * 1024)
  if (/html|xml/i.test(contentType ?? '') || /^\s*</.test(text)) {
    text = text.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ').replace(/<[^>]*>?/g, ' ').replace(/&[a-z#0-9]+;/gi, ' ')
  }
  for (const secret of secrets) if (secret && secret.length >= 4) text = text.split(secret).join(MASK)
  // Control characters, bidirectional controls and unpaired surrogates become spaces; runs of space one.
  text = text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, ' ').replace(/\s+/g, ' ').trim()
  const type = (contentType ?? '').split(';')[0]!.trim().replace(/[^\w.+/-]/g, '').slice(0, 60) || 'an answer without a content type'
  if (text === '') return `${type}, an empty body`
  const characters = [...text]
  if (characters.length <= EXCERPT_LENGTH) return `${type} "${text}"`
  // Cut at the last space before the limit, so the excerpt ends on a whole word.
  const cut = characters.slice(0, EXCERPT_LENGTH + 1).join('')
  const lastSpace = cut.lastIndexOf(' ')
  return `${type} "${(lastSpace > EXCERPT_LENGTH / 2 ? cut.slice(0, lastSpace) : cut.slice(0, -1)).trimEnd()}…"`
}
