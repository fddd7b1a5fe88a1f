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
// Forms marked data-confirm ask first (soft delete, disable).
document.addEventListener('submit', (event) => {
  const form = event.target
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) event.preventDefault()
})
