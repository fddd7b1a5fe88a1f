// Chart.js's browser build for the overview's chart, from the host's own install: chart.js is an
// optional peer dependency (6.5 MB a host that never opens the admin need not carry), so a host without
// it gets the overview's numbers as a table, and the chart script's address answers 404.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

let script: Buffer | null = null

/**
 * Chart.js's UMD build, read on first use (no CDN, no copy kept in assets/), or null when chart.js is
 * not installed (looked for again on the next call: a host that installs it needs no restart). Its
 * `exports` name no UMD file: it sits beside the CommonJS entry. The source map it names is not
 * served, so its comment goes.
 */
export function chartScript(): Buffer | null {
  if (script) return script
  let entry: string
  try {
    entry = createRequire(import.meta.url).resolve('chart.js')
  } catch {
    return null
  }
  script = Buffer.from(readFileSync(join(dirname(entry), 'chart.umd.min.js'), 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'))
  return script
}
