// `npm run bench` (and `npm run bench:install`): what `npm install fastify-shipments` puts into a fresh
// project's node_modules, with no optional peer dependency (target <= 35 MB, issue 50) and with every
// optional peer a host may add for a feature (PDF documents, the overview's chart, the OpenAPI document,
// OpenTelemetry, the drivers' types; the drivers themselves are a host's choice of engine and left out).
// The package is packed from the repository and installed from the registry's dependencies, as a host
// gets it. Prints the figures and writes them to bench/results/install-size.json.
import { execFileSync } from 'node:child_process'
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const TARGET_BYTES = 35_000_000
const RESULTS_FILE = fileURLToPath(new URL('../../results/install-size.json', import.meta.url))
const repository = fileURLToPath(new URL('../../../', import.meta.url))
/** The optional peers of package.json that add a feature (the drivers, @easypost/api excepted: a choice of engine or provider). */
const FEATURE_PEERS = ['pdfkit', 'fontkit', 'bwip-js', '@cantoo/pdf-lib', 'chart.js', '@fastify/swagger', '@opentelemetry/api', '@types/better-sqlite3', '@types/pg']

/** The bytes of the files under `directory`, as a registry's "install size" counts them. */
function installedSize(directory: string): number {
  let bytes = 0
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) bytes += lstatSync(join(entry.parentPath, entry.name)).size
  }
  return bytes
}

const npm = (args: string[], cwd: string) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 10 * 1024 * 1024 })

const scratch = mkdtempSync(join(tmpdir(), 'shipments-install-size-'))
try {
  const packed = npm(['pack', '--json', '--pack-destination', scratch], repository)
  const [{ filename }] = JSON.parse(packed.slice(packed.indexOf('['))) as Array<{ filename: string }>
  const project = join(scratch, 'host')
  mkdirSync(project)
  npm(['init', '-y'], project)
  npm(['install', '--no-audit', '--no-fund', join(scratch, filename)], project)
  const bare = installedSize(join(project, 'node_modules'))
  npm(['install', '--no-audit', '--no-fund', ...FEATURE_PEERS], project)
  const full = installedSize(join(project, 'node_modules'))
  const met = bare <= TARGET_BYTES
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB (${(bytes / 2 ** 20).toFixed(1)} MiB)`
  const name = 'npm install fastify-shipments into a fresh project, no optional peer'
  console.log(`\nInstall size:\n  ${name}: ${mb(bare)} (${met ? 'met' : 'MISSED'}; target <= ${TARGET_BYTES / 1e6} MB)`)
  console.log(`  (context) with every feature's optional peer (${FEATURE_PEERS.join(' ')}): ${mb(full)}`)
  mkdirSync(dirname(RESULTS_FILE), { recursive: true })
  writeFileSync(
    RESULTS_FILE,
    JSON.stringify({ date: new Date().toISOString(), node: process.version, figure: { name, bytes: bare, target: `<= ${TARGET_BYTES} bytes`, met, withEveryFeaturePeerBytes: full, featurePeers: FEATURE_PEERS } }, null, 2),
  )
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
