// Pieces every admin page is built from: the standalone layout, badges, form fields with their errors.
import { html, unsafeRaw, type HtmlValue, type SafeHtml } from './html.js'
import type { AdminPage } from './options.js'
import type { ShipmentStatus } from '../shipments/shipment.js'

export const STATUS_LABELS: Record<ShipmentStatus, string> = {
  new: 'New',
  in_progress: 'In progress',
  on_hold: 'On hold',
  fulfilled: 'Fulfilled',
  shipped: 'Shipped',
  cancelled: 'Cancelled',
}

/** The default layout: the page on its own, with the package's navigation. */
export function standaloneLayout(page: AdminPage): string {
  return `<!DOCTYPE html>\n${html`<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title}</title>${unsafeRaw(page.head)}</head>
<body class="shipments-admin shipments-admin-standalone">
<header><strong>Shipments admin</strong><nav aria-label="Shipments admin">${page.navigation.map(
    (link) => html`<a href="${link.href}"${link.current ? html` aria-current="page"` : ''}>${link.label}</a>`,
  )}</nav></header>
<main>${unsafeRaw(page.content)}</main>
</body></html>`}\n`
}

export const statusBadge = (status: string) =>
  html`<span class="badge badge-${status}" data-status="${status}">${STATUS_LABELS[status as ShipmentStatus] ?? status}</span>`

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

export function select(name: string, value: string, choices: ReadonlyArray<readonly [string, string]>, aria: SafeHtml = html``): SafeHtml {
  return html`<select id="${`input-${name}`}" name="${name}"${aria}>${choices.map(
    ([choice, label]) => html`<option value="${choice}"${choice === value ? html` selected` : ''}>${label}</option>`,
  )}</select>`
}

/** The hidden CSRF field every state-changing form carries. */
export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`

export function notice(kind: 'ok' | 'error', message: HtmlValue): SafeHtml {
  return html`<div class="notice notice-${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${message}</div>`
}

/** Errors whose key names no field of the form, shown above it. */
export function formErrors(errors: FieldErrors, fieldNames: ReadonlySet<string>): SafeHtml {
  const loose = Object.entries(errors).filter(([name]) => !fieldNames.has(name))
  if (loose.length === 0) return html``
  return notice('error', html`${loose.flatMap(([, messages]) => messages.map((message) => html`<div>${message}</div>`))}`)
}
