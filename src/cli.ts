#!/usr/bin/env node
// The package's command line: `npx fastify-shipments doctor <url>` runs ShipStation's connection doctor
// against a shop's Custom Store URL and exits 0 when every step passed, 1 when one failed, 2 on a wrong
// call. The credentials come from the environment (SHIPSTATION_USERNAME, SHIPSTATION_PASSWORD), never
// from the command line, where a password would stay in the shell's history.
import { realpathSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { runConnectionDoctor, type DoctorReport } from './order-exchange/doctor.js'

const USAGE = `Usage: fastify-shipments doctor <the Custom Store URL> [--days N]
  Plays ShipStation against the URL pasted into ShipStation's Custom Store: credentials, the export
  window, every page, each order against ShipStation's schema, and a ship notification as a dry run.
  Credentials: the environment variables SHIPSTATION_USERNAME and SHIPSTATION_PASSWORD.`

const MARK: Record<string, string> = { pass: 'ok  ', warn: 'warn', fail: 'FAIL', skip: 'skip' }

/** The report as lines for a terminal: one per step, its fix beneath. */
export function formatReport(report: DoctorReport): string {
  const lines = [`ShipStation connection doctor: ${report.url}`]
  for (const step of report.steps) {
    lines.push(`  ${MARK[step.outcome]}  ${step.step}: ${step.detail}`)
    if (step.fix) lines.push(`        fix: ${step.fix}`)
  }
  lines.push(report.ok ? 'Every step passed.' : 'ShipStation cannot import from this URL as it is: see the steps above.')
  return lines.join('\n')
}

export async function main(args: readonly string[], env: NodeJS.ProcessEnv, write: (text: string) => void): Promise<number> {
  const [command, url, ...rest] = args
  if (command !== 'doctor' || !url || url.startsWith('-')) {
    write(USAGE)
    return 2
  }
  let days = 7
  for (let index = 0; index < rest.length; index++) {
    if (rest[index] === '--days' && /^\d{1,3}$/.test(rest[index + 1] ?? '') && Number(rest[index + 1]) >= 1) days = Number(rest[++index])
    else {
      write(`Unknown argument: ${rest[index]}\n${USAGE}`)
      return 2
    }
  }
  const username = env.SHIPSTATION_USERNAME
  const password = env.SHIPSTATION_PASSWORD
  if (!username || !password) {
    write(`Set SHIPSTATION_USERNAME and SHIPSTATION_PASSWORD to the orderExchange credentials first.\n${USAGE}`)
    return 2
  }
  const report = await runConnectionDoctor({ url, username, password, days })
  write(formatReport(report))
  return report.ok ? 0 : 1
}

// Run as a command (not when a test imports it); npm's bin entry is a link to this file.
if (process.argv[1] && pathToFileURL(realpathSync(process.argv[1])).href === import.meta.url) {
  process.exitCode = await main(process.argv.slice(2), process.env, (text) => process.stdout.write(`${text}\n`))
}
