// The test matrix: the whole tap suite once per engine (SQLite, then PostgreSQL), each pass with its
// engine-only files, then one summary line for both. Locally a PostgreSQL server that cannot be reached
// skips its half with one line; in CI (CI=true) that is a failure.
import { spawn } from 'node:child_process'
import pg from 'pg'

const postgresUrl = process.env.SHIPMENTS_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const inCi = /^(1|true)$/i.test(process.env.CI ?? '')
const extraArguments = process.argv.slice(2)

/** Runs tap with the engine's files; resolves with its exit code and its final counts. */
function runTap(engine) {
  return new Promise((resolve) => {
    const files = ['test/*.test.ts', `test/${engine}/*.test.ts`]
    const child = spawn('npx', ['tap', ...extraArguments, ...files], {
      env: { ...process.env, SHIPMENTS_TEST_ENGINE: engine },
      stdio: ['ignore', 'pipe', 'inherit'],
      shell: true,
    })
    let last = null
    let buffered = ''
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk)
      buffered += chunk.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop()
      for (const line of lines) if (/^# \{ total: \d+/.test(line)) last = line
    })
    child.on('exit', (code) => {
      if (/^# \{ total: \d+/.test(buffered)) last = buffered
      const count = (name) => Number(new RegExp(`${name}: (\\d+)`).exec(last ?? '')?.[1] ?? 0)
      resolve({ code: code ?? 1, total: count('total'), pass: count('pass'), fail: count('fail') })
    })
  })
}

async function postgresReachable() {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 5000 })
  try {
    await client.connect()
    await client.query('SELECT 1')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => undefined)
  }
}

console.log('# Engine: SQLite')
const results = [await runTap('sqlite')]
if (await postgresReachable()) {
  console.log(`# Engine: PostgreSQL (${new URL(postgresUrl).host})`)
  results.push(await runTap('postgres'))
} else if (inCi) {
  console.log(`# PostgreSQL at ${new URL(postgresUrl).host} cannot be reached: CI never skips the PostgreSQL half.`)
  results.push({ code: 1, total: 1, pass: 0, fail: 1 })
} else {
  console.log(`# PostgreSQL at ${new URL(postgresUrl).host} cannot be reached: the PostgreSQL half of the suite is skipped (set SHIPMENTS_TEST_POSTGRES_URL).`)
}

const sum = (key) => results.reduce((total, result) => total + result[key], 0)
console.log(`# { total: ${sum('total')}, pass: ${sum('pass')}, fail: ${sum('fail')} }`)
process.exit(results.some((result) => result.code !== 0) ? 1 : 0)
