// fastify-shipments admin pages: small enhancements; every page works without this script.
'use strict'
document.addEventListener('click', (event) => {
  const target = event.target instanceof Element ? event.target : null
  if (!target) return
  // "Select all" of the bulk status change.
  const all = target.closest('[data-select-all]')
  if (all instanceof HTMLInputElement) {
    const form = all.form || document
    for (const box of form.querySelectorAll('input[name="ids"]')) box.checked = all.checked
  }
  // "Add a row" of the status map editor: clones the template row.
  const add = target.closest('[data-add-row]')
  if (add) {
    const table = document.getElementById(add.getAttribute('data-add-row'))
    const template = table && table.querySelector('template')
    if (template) table.querySelector('tbody').appendChild(template.content.cloneNode(true))
  }
})
// "Copy" beside a read-only value (the gateway URL, the public tracking link): shown only when this
// script runs; without it the value is selected on focus, to copy by hand. The clipboard API needs a
// secure context (https or localhost); elsewhere the selection is copied with execCommand. The outcome
// shows in the value's .copy-status when it has one, else on the button.
for (const button of document.querySelectorAll('button[data-copy-from][hidden]')) button.hidden = false
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy-from]') : null
  if (!(button instanceof HTMLButtonElement)) return
  const source = document.getElementById(button.getAttribute('data-copy-from') || '')
  if (!(source instanceof HTMLInputElement)) return
  const status = button.parentElement && button.parentElement.querySelector('.copy-status')
  const report = (message) => {
    if (status) status.textContent = message
    else if (message === 'Copied.') button.textContent = 'Copied'
  }
  source.focus()
  source.select()
  const fallback = () => report(document.execCommand('copy') ? 'Copied.' : 'Press Ctrl+C (⌘C) to copy the selected URL.')
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(source.value).then(() => report('Copied.'), fallback)
  else fallback()
})
document.addEventListener('focusin', (event) => {
  if (event.target instanceof HTMLInputElement && event.target.hasAttribute('data-select-on-focus')) event.target.select()
})
// Forms marked data-confirm ask first (soft delete, disable).
document.addEventListener('submit', (event) => {
  const form = event.target
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) event.preventDefault()
})
// The error summary: focused when the page loads (its autofocus, here too for a host layout that
// moved it), and each of its links moves focus to the field it names; a table's link to its first control.
const summary = document.querySelector('[data-error-summary]')
if (summary instanceof HTMLElement && (document.activeElement === document.body || document.activeElement === null)) summary.focus()
document.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('a[data-focus]') : null
  const target = link && document.getElementById(link.getAttribute('data-focus') || '')
  if (!target) return
  const control = target.matches('input, select, textarea, button') ? target : target.querySelector('input:not([type=hidden]), select, textarea, button')
  if (!(control instanceof HTMLElement)) return
  event.preventDefault()
  // The label (or the table) in view above the control, as the browser would not scroll to it by itself.
  const label = control.id ? document.querySelector(`label[for="${CSS.escape(control.id)}"]`) : null
  ;(label || target).scrollIntoView({ block: 'start' })
  control.focus({ preventScroll: true })
})
// A running label batch's progress refreshes itself in place every few seconds (the region is read
// again from the same page); the page works without this script, reloaded by hand. Only the counts are
// replaced, never the buttons, so a keyboard user's focus stays where it is.
for (const region of document.querySelectorAll('[data-batch-progress][data-running]')) {
  const refresh = async () => {
    try {
      const response = await fetch(window.location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      if (!response.ok) return
      const next = new DOMParser().parseFromString(await response.text(), 'text/html').querySelector('[data-batch-progress]')
      if (!next) return
      region.innerHTML = next.innerHTML
      if (!next.hasAttribute('data-running')) {
        region.removeAttribute('data-running')
        clearInterval(timer)
      }
    } catch {
      // A failed read is tried again at the next tick.
    }
  }
  const timer = setInterval(refresh, 3000)
}
