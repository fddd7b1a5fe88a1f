// fastify-shipments pack station: keeps the focus in the scan field (a scanner types wherever the focus
// is), and opens a label just bought in a tab of its own to print. The page works without it.
'use strict'
;(() => {
  const scan = document.querySelector('[data-pack-scan]')
  const weight = document.getElementById('pack-weight')
  // The field the station types into now: the weight while it waits for one, else the scan field.
  const home = weight instanceof HTMLInputElement ? weight : scan
  if (!(home instanceof HTMLInputElement)) return
  if (document.activeElement === document.body || document.activeElement === null) home.focus()
  // A click on the page's background (a tablet's tap) must not leave the scanner typing into nothing.
  document.addEventListener('focusout', () => {
    setTimeout(() => {
      if (document.activeElement === document.body || document.activeElement === null) home.focus({ preventScroll: true })
    }, 0)
  })
  // A label bought just now: opened once to print (a station's browser allows the shop's pop-ups).
  const station = document.querySelector('[data-pack-state="printed"]')
  const label = station && station.querySelector('a[data-pack-label]')
  if (label instanceof HTMLAnchorElement && station.getAttribute('data-pack-opened') === null) {
    station.setAttribute('data-pack-opened', '')
    window.open(label.href, '_blank', 'noopener')
  }
})()
