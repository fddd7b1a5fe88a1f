// fastify-shipments admin overview: draws the shipped-per-day chart with Chart.js (served by the package
// from its installed dependency) from the page's JSON block. Without it the page shows the numbers' table.
'use strict'
;(() => {
  const canvas = document.getElementById('shipped-chart')
  const source = document.getElementById('shipped-per-day-data')
  if (!(canvas instanceof HTMLCanvasElement) || !source || typeof window.Chart !== 'function') return
  const days = JSON.parse(source.textContent || '[]')
  // Styles come from the stylesheet, so hosts may restyle the chart without touching this script.
  const style = getComputedStyle(canvas)
  const bar = style.getPropertyValue('--chart-bar').trim() || '#1a7f37'
  const grid = style.getPropertyValue('--chart-grid').trim() || '#d8dee4'
  new window.Chart(canvas, {
    type: 'bar',
    data: { labels: days.map((day) => day.label), datasets: [{ label: 'Shipped', data: days.map((day) => day.count), backgroundColor: bar, borderRadius: 3, maxBarThickness: 28 }] },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      plugins: { legend: { display: false } },
      scales: {
        x: { grid: { display: false }, ticks: { autoSkip: true, maxRotation: 0 } },
        y: { beginAtZero: true, ticks: { precision: 0 }, grid: { color: grid } },
      },
    },
  })
  canvas.setAttribute('data-rendered', 'true')
})()
