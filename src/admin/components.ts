// Pieces every admin page is built from: the standalone layout, badges, form fields with their errors.
import { html, unsafeRaw, type HtmlValue, type SafeHtml } from '../html.js'
import type { AdminPage } from './options.js'
import type { ShipmentStatus } from '../model/shipment.js'
import { formatIsoWithOffset, parseIsoDateTime, wallTimeAt } from '../time.js'

import { STATUS_LABELS } from '../model/shipment.js'
import { RETURN_STATE_LABELS, RETURN_STATES, type ReturnState } from '../model/return.js'

export { STATUS_LABELS }

/** The default layout: the page on its own, with the package's navigation. */
export function standaloneLayout(page: AdminPage): string {
  return `<!DOCTYPE html>\n${html`<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title}</title>${unsafeRaw(page.head)}</head>
<body class="shipments-admin shipments-admin-standalone">
<a class="skip-link" href="#main-content">Skip to main content</a>
<header><strong>Shipments admin</strong><nav aria-label="Shipments admin">${page.navigation.map(
    // One link a line: the space between them lets the navigation wrap on a narrow screen.
    (link) =>
      html`
<a href="${link.href}"${link.current ? html` aria-current="page"` : ''}>${link.label}${
        link.count !== undefined ? html` <span class="badge nav-count${link.count > 0 ? ' badge-attention' : ' badge-muted'}" data-count="${link.count}">${link.count}</span>` : ''
      }</a>`,
  )}</nav></header>
<main id="main-content" tabindex="-1">${unsafeRaw(page.content)}</main>
</body></html>`}\n`
}

export const statusBadge = (status: string) =>
  html`<span class="badge badge-${status}" data-status="${status}">${STATUS_LABELS[status as ShipmentStatus] ?? status}</span>`

/** A return's state as a badge, coloured per state (admin.css); a state this version does not know shows as it is, neutral. */
export const returnStateBadge = (state: string) =>
  html`<span class="badge badge-return-${(RETURN_STATES as readonly string[]).includes(state) ? state : 'other'}" data-return-state="${state}">${RETURN_STATE_LABELS[state as ReturnState] ?? state}</span>`

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/**
 * A time for people, "4 Mar 2025, 11:20" in the site timezone, in a `<time>` whose `datetime` (and
 * tooltip) is the ISO 8601 value. Built from the wall time, not the runtime's locale data, so every
 * Node.js writes the same. An ISO string that does not parse shows as it is.
 */
export function dateTime(value: string | Date | null | undefined, timeZone: string): SafeHtml {
  if (value === null || value === undefined) return html`—`
  // A day without a time (a carrier's estimate): that day, moved by no timezone.
  const day = typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) : null
  if (day) return html`<time datetime="${value as string}">${Number(day[3])} ${MONTHS[Number(day[2]) - 1]} ${day[1]}</time>`
  const instant = value instanceof Date ? value.getTime() : parseIsoDateTime(value, timeZone)
  if (instant === null || !Number.isFinite(instant)) return html`${String(value)}`
  const iso = formatIsoWithOffset(instant, timeZone)
  const wall = wallTimeAt(instant, timeZone)
  const time = `${String(wall.hour).padStart(2, '0')}:${String(wall.minute).padStart(2, '0')}`
  return html`<time datetime="${iso}" title="${iso}">${wall.day} ${MONTHS[wall.month - 1]} ${wall.year}, ${time}</time>`
}

/** Messages by form field name; a field shows its own beside it, the rest show above the form. */
export type FieldErrors = Record<string, string[]>

export function fieldErrors(errors: FieldErrors, name: string): SafeHtml {
  const messages = errors[name] ?? []
  return html`${messages.map((message) => html`<p class="field-error" id="${`error-${name}`}" role="alert">${message}</p>`)}`
}

/** A labelled field with its hint and errors; `control` receives the aria attributes to add. */
export function field(
  options: { name: string; label: string; hint?: HtmlValue; errors: FieldErrors },
  control: (aria: SafeHtml) => SafeHtml,
): SafeHtml {
  const failed = (options.errors[options.name] ?? []).length > 0
  const aria = failed ? html` aria-invalid="true" aria-describedby="${`error-${options.name}`}"` : html``
  return html`<div class="field${failed ? ' has-error' : ''}" data-field="${options.name}">
<label for="${`input-${options.name}`}">${options.label}</label>
${control(aria)}
${options.hint ? html`<p class="hint">${options.hint}</p>` : ''}${fieldErrors(options.errors, options.name)}</div>`
}

export const textInput = (name: string, value: string, aria: SafeHtml, type = 'text') =>
  html`<input type="${type}" id="${`input-${name}`}" name="${name}" value="${value}"${aria}>`

export const textArea = (name: string, value: string, aria: SafeHtml) =>
  html`<textarea id="${`input-${name}`}" name="${name}"${aria}>${value}</textarea>`

/** A select whose id is `input-<name>`, or `id` where one name is used by several forms of a page. */
export function select(name: string, value: string, choices: ReadonlyArray<readonly [string, string]>, aria: SafeHtml = html``, id = `input-${name}`): SafeHtml {
  return html`<select id="${id}" name="${name}"${aria}>${choices.map(
    ([choice, label]) => html`<option value="${choice}"${choice === value ? html` selected` : ''}>${label}</option>`,
  )}</select>`
}

/** The hidden CSRF field every state-changing form carries. */
export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`

export function notice(kind: 'ok' | 'error', message: HtmlValue): SafeHtml {
  return html`<div class="notice notice-${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${message}</div>`
}

/** One problem of the error summary: its message and the id of the control it links to (null: no link). */
export interface SummaryEntry {
  message: string
  target: string | null
}

/**
 * A form's errors as summary entries: a field's messages link to its control (`input-<name>`, or the id
 * `targets` gives), the others (`form`, a whole table) are listed without a link unless `targets` names one.
 * `labels` names the field before a message that does not name it itself.
 */
export function summaryEntries(
  errors: FieldErrors,
  fieldNames: ReadonlySet<string>,
  targets: Readonly<Record<string, string>> = {},
  labels: Readonly<Record<string, string>> = {},
): SummaryEntry[] {
  return Object.entries(errors).flatMap(([name, messages]) => {
    const target = Object.hasOwn(targets, name) ? targets[name] : fieldNames.has(name) ? `input-${name}` : null
    const label = Object.hasOwn(labels, name) ? `${labels[name]}: ` : ''
    return messages.map((message) => ({ message: `${label}${message}`, target }))
  })
}

/**
 * The page's problems at the top of its content, each linking to its field, focused when the page loads
 * (autofocus), so that a refused form is noticed where the page starts; the fields keep their own messages.
 */
export function errorSummary(entries: readonly SummaryEntry[]): SafeHtml {
  if (entries.length === 0) return html``
  return html`<div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1" autofocus data-error-summary>
<h2 id="error-summary-title">There is a problem</h2>
<ul>${entries.map((entry) => html`<li>${entry.target ? html`<a href="${`#${entry.target}`}" data-focus="${entry.target}">${entry.message}</a>` : entry.message}</li>`)}</ul>
</div>`
}

/** A part of a page rendered apart (the shipment page's parcels), with its forms' problems for the page's error summary. */
export interface PageSection {
  content: SafeHtml
  problems: SummaryEntry[]
}

/**
 * A table in its own horizontally scrolling box, so a wide table never widens the page; the box is a
 * named region that takes focus, so the keyboard can scroll it too (the CSS keeps the first column in view).
 */
export const scrollingTable = (label: string, table: SafeHtml) => html`<div class="table-scroll" role="region" aria-label="${label}" tabindex="0">${table}</div>`

/** Errors whose key names no field of the form, shown above it. */
export function formErrors(errors: FieldErrors, fieldNames: ReadonlySet<string>): SafeHtml {
  const loose = Object.entries(errors).filter(([name]) => !fieldNames.has(name))
  if (loose.length === 0) return html``
  return notice('error', html`${loose.flatMap(([, messages]) => messages.map((message) => html`<div>${message}</div>`))}`)
}

/** What every page renders with: where it is mounted, the CSRF token, what the user may do, the site timezone. */
export interface PageContext {
  prefix: string
  csrf: string
  can: {
    view: boolean
    edit: boolean
    transition: boolean
    manage: boolean
    /** Buying and voiding labels (absent: not allowed). */
    buyLabels?: boolean | undefined
    /** Authorising, rejecting, receiving and closing returns (absent: not allowed). */
    manageReturns?: boolean | undefined
  }
  timeZone: string
}
