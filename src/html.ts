// HTML by tagged template: every interpolated value is escaped unless it is already markup (SafeHtml).

/** Markup that is already safe: made by `html` or, for trusted fixed text, `unsafeRaw`. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' }

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (character) => ESCAPES[character])
}

/** What may be interpolated: text and numbers are escaped, null, undefined and false render nothing. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[]

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === null || value === undefined || value === false || value === true) return ''
  return escapeHtml(String(value))
}

/** `html\`<p>${text}</p>\``: the literal parts are markup, every value is escaped (arrays are joined). */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]
  for (let index = 0; index < values.length; index++) out += render(values[index]) + strings[index + 1]
  return new SafeHtml(out)
}

/** Markup from a trusted source (the package's own constant text); never pass request or stored data. */
export const unsafeRaw = (markup: string) => new SafeHtml(markup)

/** An href for a stored URL: only http(s) URLs become links (a `javascript:` URL never does). */
export function safeHref(url: string | null | undefined): string | null {
  return typeof url === 'string' && /^https?:\/\/[^\s]+$/i.test(url) ? url : null
}

/**
 * Text a user or a provider supplied, isolated (`<bdi>`): right-to-left text in it cannot reorder the
 * page's text around it. Empty text renders nothing.
 */
export function isolated(text: string | null | undefined): SafeHtml | '' {
  return text === null || text === undefined || text === '' ? '' : html`<bdi>${text}</bdi>`
}
