// The package as a host gets it from npm: packed, installed into an empty project with the README's
// install lines only, the README's host example type-checked in strict mode and run.
import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { exited, lineMatching } from '../fixtures/processes.js'

const execute = promisify(execFile)
// The project runs as a host's would: without the test runner's loaders, which tap adds to NODE_OPTIONS
// of every process it sees spawned; a shell drops them before the command starts.
const WITHOUT_LOADERS = ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"']
const run = (file: string, args: string[], options: { cwd?: string } = {}) =>
  execute('/bin/sh', [...WITHOUT_LOADERS, file, ...args], { ...options, maxBuffer: 10 * 1024 * 1024 })
const repository = new URL('../../', import.meta.url).pathname
const readme = readFileSync(join(repository, 'README.md'), 'utf8')
const hostExample = readFileSync(join(repository, 'examples/host.ts'), 'utf8')

/** The lines of the README's install block (the fenced block after "## Install"). */
function installLines(): string[][] {
  const block = /## Install\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? ''
  return block
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line.startsWith('npm install'))
    .map((line) => line.split(/\s+/).slice(2))
}

t.test('the README shows examples/host.ts verbatim', async (t) => {
  t.ok(readme.includes(hostExample.trim()), 'the host example in the README is the file the package test runs')
  t.same(installLines().length, 2, 'an install line for the package and one for TypeScript hosts')
})

t.test('packed, installed from the tarball, type-checked in strict mode and run', async (t) => {
  const project = t.testdir({ 'package.json': JSON.stringify({ name: 'host', private: true, type: 'module' }) })
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', project], { cwd: repository })
  const [{ filename, files }] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>
  const packed = files.map((file) => file.path)
  t.ok(packed.includes('LICENSE') && packed.includes('dist/index.d.ts') && packed.some((path) => path.startsWith('drizzle/sqlite/')))
  t.notOk(packed.some((path) => path.endsWith('.map') || path.startsWith('src/') || path.startsWith('test/')), 'no source maps, sources or tests')

  const [packageLine, typescriptLine] = installLines()
  const npm = (args: string[]) => run('npm', ['install', '--no-audit', '--no-fund', ...args], { cwd: project })
  // The package name in the install line stands for the tarball a registry would serve.
  await npm(packageLine.map((name) => (name === 'fastify-shipments' ? join(project, filename) : name)))
  await npm(typescriptLine)

  copyFileSync(join(repository, 'examples/host.ts'), join(project, 'host.ts'))
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: true, outDir: 'out', types: ['node'] }, files: ['host.ts'] }),
  )
  const compiled = await run(join(project, 'node_modules/.bin/tsc'), ['-p', project]).then(
    () => 'ok',
    (error: { stdout?: string; stderr?: string; message: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}` || error.message,
  )
  // skipLibCheck as hosts set it: Drizzle's own declarations name drivers a host does not install (gel, mysql2).
  t.equal(compiled, 'ok', 'the host type-checks in strict mode')

  const host = spawn('/bin/sh', [...WITHOUT_LOADERS, process.execPath, join(project, 'out/host.js')], {
    cwd: project,
    env: { ...process.env, PORT: '0', DATABASE_URL: '', SHIPSTATION_USERNAME: 'ss-user', SHIPSTATION_PASSWORD: 'ss-password' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.teardown(() => void host.kill('SIGKILL'))
  const listening = await lineMatching(host, (line) => line.includes('Server listening at'))
  const base = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(listening)![1]

  const token = { authorization: 'Bearer admin-token-change-me' }
  const list = (await (await fetch(`${base}/shipments/api/shipments`, { headers: token })).json()) as { shipments: Array<{ id: number }> }
  t.match(list, { success: true, shipments: [{ reference: '1001-s001', status: 'new' }], pagination: { total: 1 } })
  const update = await fetch(`${base}/shipments/api/shipments/${list.shipments[0].id}`, {
    method: 'POST',
    headers: { ...token, 'content-type': 'application/json' },
    body: JSON.stringify({ status: 'shipped', carrier: 'DHL', trackingNumber: 'JD0001', fields: { packageCount: 2 } }),
  })
  t.equal(update.status, 200)
  t.match(await update.json(), { success: true, shipment: { status: 'shipped', carrier: 'DHL', fields: { packageCount: 2 } } })
  t.equal((await fetch(`${base}/shipments/api/shipments/1`)).status, 401, 'without the token')

  const gateway = await fetch(`${base}/actions/shipments/gateway/handle?integration=nope`, { method: 'POST', body: '{}' })
  t.same(await gateway.json(), { name: 'Not Found', message: 'Unknown integration: nope', code: 0, status: 404 })

  const basic = `Basic ${Buffer.from('ss-user:ss-password').toString('base64')}`
  const exported = await fetch(`${base}/actions/shippingplatformconnect/orders/process?action=export`, { headers: { authorization: basic } })
  t.equal(exported.status, 200)
  const xml = await exported.text()
  t.match(xml, /<OrderNumber><!\[CDATA\[1001\]\]><\/OrderNumber>/)
  t.match(xml, /<OrderStatus><!\[CDATA\[shipped\]\]><\/OrderStatus>/, 'the order advanced when its only shipment shipped')

  host.kill('SIGTERM')
  await exited(host)
})
