// The package as a host gets it from npm: packed, installed into a project made the documented way
// (docs/getting-started.md, "From zero": `npm init -y` with "type": "module", the install lines,
// `tsc --init`'s own defaults), the README's minimal host, the complete host and the login example
// compiled under those defaults and run: the minimal host with no configuration answering the
// shipment list, two instances of the complete host at once on one fresh database, and a login with
// its session.
// Regressions: the complete host did not compile under `tsc --init` (noUncheckedIndexedAccess,
// exactOptionalPropertyTypes) nor run in an `npm init -y` project (type commonjs), dropped ShipStation's
// tracking numbers, and crashed the second of two instances starting together.
import t from 'tap'
import { packRepository } from '../fixtures/pack.js'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { snippetsOf } from '../fixtures/doc-snippets.js'
import { exited, lineMatching } from '../fixtures/processes.js'

// Packing, installing (better-sqlite3 builds from source where no binary can be downloaded) and
// compiling take minutes on a busy machine: more than the suite's per-file default.
t.setTimeout(15 * 60 * 1000)

const execute = promisify(execFile)
// The project runs as a host's would: without the test runner's loaders, which tap adds to NODE_OPTIONS
// of every process it sees spawned; a shell drops them before the command starts.
const WITHOUT_LOADERS = ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"']
const run = (command: string, args: string[], cwd: string) => execute('/bin/sh', [...WITHOUT_LOADERS, command, ...args], { cwd, maxBuffer: 10 * 1024 * 1024 })
const repository = new URL('../../', import.meta.url).pathname
const readme = readFileSync(join(repository, 'README.md'), 'utf8')
const gettingStarted = readFileSync(join(repository, 'docs/getting-started.md'), 'utf8')
const adminPage = readFileSync(join(repository, 'docs/admin.md'), 'utf8')
// The README's minimal host: its first compilable block under "A minimal host".
const minimalHost = snippetsOf(repository, 'README.md').find((snippet) => snippet.heading === 'A minimal host')?.code ?? ''
const hostExample = readFileSync(join(repository, 'examples/host.ts'), 'utf8')
const loginExample = readFileSync(join(repository, 'examples/login-host.ts'), 'utf8')

/** The commands of the first `sh` block after `heading` in `page`, comments dropped, `&&` chains split. */
function commandsAfter(page: string, heading: string): string[][] {
  const start = page.indexOf(`${heading}\n`)
  const block = start < 0 ? '' : (/```sh\n([\s\S]*?)```/.exec(page.slice(start))?.[1] ?? '')
  return block
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line !== '')
    .flatMap((line) => line.split('&&').map((command) => command.trim().split(/\s+/)))
}

const FROM_ZERO = commandsAfter(gettingStarted, '## From zero')
const LOGIN_INSTALL = commandsAfter(adminPage, '## Login, sessions and a layout')
/** The shipment list the README shows the minimal host answering (the JSON after `# ` under its curl). */
const MINIMAL_ANSWER = /curl -s -H 'authorization: Bearer change-me' http:\/\/127\.0\.0\.1:3000\/shipments\/api\/shipments\n# (\{.*\})\n/.exec(readme)?.[1] ?? ''

t.test('the documentation shows the examples verbatim, and the commands the test runs', async (t) => {
  t.ok(gettingStarted.includes(hostExample.trim()), 'the complete host in docs/getting-started.md is examples/host.ts')
  t.ok(adminPage.includes(loginExample.trim()), 'the login example in docs/admin.md is examples/login-host.ts')
  t.match(minimalHost, /await app\.register\(fastifyShipments/, "the README's minimal host")
  t.notMatch(minimalHost, /process\.env\.(?!PORT\b)/, 'the minimal host reads no environment variable but PORT (which has a default)')
  t.match(MINIMAL_ANSWER, /^\{"success":true/, "the README shows the minimal host's answer")
  t.match(readme, /```sh\nnpm install && npm start +#[^\n]*\nnpm test +#/, 'the two commands for a fresh clone, in the README itself')
  t.same(FROM_ZERO, [
    ['mkdir', 'shop'],
    ['cd', 'shop'],
    ['npm', 'init', '-y'],
    ['npm', 'pkg', 'set', 'type=module'],
    ['npm', 'install', 'fastify-shipments', 'fastify', 'drizzle-orm', 'better-sqlite3'],
    ['npm', 'install', '-D', 'typescript', '@types/node'],
    ['npx', 'tsc', '--init', '--types', 'node'],
    ['npx', 'tsc'],
    ['node', 'host.js'],
  ])
  t.same(LOGIN_INSTALL, [['npm', 'install', '@fastify/cookie', '@fastify/formbody']])
})

/** A host process's output, line by line, as it arrives. */
function outputOf(child: ChildProcess): string[] {
  const lines: string[] = []
  let buffered = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    const parts = buffered.split('\n')
    buffered = parts.pop()!
    lines.push(...parts)
  })
  return lines
}

async function listening(child: ChildProcess): Promise<string> {
  const line = await lineMatching(child, (candidate) => candidate.includes('Server listening at'))
  return /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line)![1]!
}

t.test('packed, installed the README way, compiled under tsc --init defaults and run', async (t) => {
  const root = t.testdir()
  const stdout = await packRepository(run, repository, root)
  const [{ filename, files }] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>
  const packed = files.map((file) => file.path)
  t.ok(packed.includes('LICENSE') && packed.includes('dist/index.d.ts') && packed.includes('drizzle/sqlite/0000_initial.sql'))
  t.ok(packed.includes('drizzle/sqlite/meta/_journal.json') && packed.includes('drizzle/postgres/meta/_journal.json'), "the migrator's journals")
  t.notOk(packed.some((path) => path.endsWith('_snapshot.json')), "no drizzle-kit snapshot (only drizzle-kit reads them)")
  t.notOk(packed.some((path) => path.endsWith('.map') || /^(src|test|examples|bench)\//.test(path) || path === 'CONTRIBUTING.md'), 'no source maps, sources, tests, examples or contributing notes')
  t.ok(packed.includes('README.md') && packed.includes('CHANGELOG.md') && packed.includes('docs/options.md') && packed.includes('docs/upgrading.md'), 'the README, the changelog and the docs pages')

  // The README's lines, in order; the package name in an install line stands for the tarball.
  let project = root
  const npmInstall = (args: string[]) =>
    run('npm', ['install', '--no-audit', '--no-fund', ...args.map((name) => (name === 'fastify-shipments' ? join(root, filename) : name))], project)
  for (const [command, ...args] of FROM_ZERO) {
    if (command === 'mkdir') mkdirSync(join(project, args[0]!))
    else if (command === 'cd') project = join(project, args[0]!)
    else if (command === 'npm' && args[0] === 'install') await npmInstall(args.slice(1))
    else if (command === 'node') continue // started below, twice
    else if (command === 'npx' && args.join(' ') === 'tsc') {
      // "paste the complete host below into host.ts": and the login example, with its own install line.
      copyFileSync(join(repository, 'examples/host.ts'), join(project, 'host.ts'))
      copyFileSync(join(repository, 'examples/login-host.ts'), join(project, 'login-host.ts'))
      writeFileSync(join(project, 'server.ts'), minimalHost) // the README's minimal host, as it says: server.ts
      for (const [, ...install] of LOGIN_INSTALL) await npmInstall(install.slice(1))
      const compiled = await run(join(project, 'node_modules/.bin/tsc'), [], project).then(
        () => 'ok',
        (error: { stdout?: string; stderr?: string; message: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}` || error.message,
      )
      t.equal(compiled, 'ok', "the minimal host and both examples compile under tsc --init's defaults")
    } else await run(command!, args, project)
  }
  // The tables are subpath exports (the package's main import loads no Drizzle dialect).
  const tables = await run(process.execPath, ['--input-type=module', '-e', "const [s, p] = await Promise.all([import('fastify-shipments/schema/sqlite'), import('fastify-shipments/schema/postgres')]); const { getTableName } = await import('drizzle-orm'); process.stdout.write(getTableName(s.shipments) + ' ' + getTableName(p.shipments))"], project)
  t.equal(tables.stdout, 'shipments_shipments shipments_shipments', 'fastify-shipments/schema/sqlite and /schema/postgres resolve in an installed project')
  // The EasyPost stand-in is a subpath export too, with no PDF library of its own: it answers an installed host.
  const standIn = await run(process.execPath, ['--input-type=module', '-e', "const { startEasyPostStandIn } = await import('fastify-shipments/testing'); const s = await startEasyPostStandIn({ apiKey: 'k' }); const r = await fetch(s.baseUrl + '/carrier_accounts', { headers: { authorization: 'Basic ' + Buffer.from('k:').toString('base64') } }); const accounts = await r.json(); await s.close(); process.stdout.write(r.status + ' ' + accounts.map((a) => a.readable).join(','))"], project)
  t.equal(standIn.stdout, '200 USPS,UPS', 'fastify-shipments/testing starts the stand-in in an installed project')
  const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { type?: string }
  t.equal(manifest.type, 'module', 'npm init -y, then "type": "module"')
  const tsconfig = readFileSync(join(project, 'tsconfig.json'), 'utf8')
  for (const option of ['"strict": true', '"noUncheckedIndexedAccess": true', '"exactOptionalPropertyTypes": true', '"module": "nodenext"', '"types": ["node"]']) {
    t.ok(tsconfig.includes(option), `tsc --init wrote ${option}`)
  }

  // The README's minimal host: no configuration (PORT only, so the test gets a free port), its own
  // fresh directory (the SQLite file is created there), and it answers the shipment list as shown.
  const minimalDirectory = join(project, 'minimal')
  mkdirSync(minimalDirectory)
  const minimal = spawn('/bin/sh', [...WITHOUT_LOADERS, process.execPath, join(project, 'server.js')], {
    cwd: minimalDirectory,
    env: { PATH: process.env.PATH ?? '', PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.teardown(() => minimal.exitCode === null && minimal.kill('SIGKILL'))
  const minimalBase = await listening(minimal)
  const minimalList = await fetch(`${minimalBase}/shipments/api/shipments`, { headers: { authorization: 'Bearer change-me' } })
  t.equal(minimalList.status, 200, 'the minimal host answers')
  t.same(await minimalList.json(), JSON.parse(MINIMAL_ANSWER), 'with the body the README shows')
  t.equal((await fetch(`${minimalBase}/shipments/api/shipments`)).status, 401, 'and refuses a request without its token')
  minimal.kill('SIGTERM')
  await exited(minimal)

  // Two instances of the host at once, on one fresh database: both start, the order is created once.
  const env = { ...process.env, PORT: '0', DATABASE_URL: '', SHIPSTATION_USERNAME: 'ss-user', SHIPSTATION_PASSWORD: 'ss-password' }
  const start = (file: string, extra: Record<string, string> = {}) =>
    spawn('/bin/sh', [...WITHOUT_LOADERS, process.execPath, join(project, file)], { cwd: project, env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'inherit'] })
  const hosts = [start('host.js'), start('host.js')]
  t.teardown(() => hosts.forEach((host) => host.exitCode === null && host.kill('SIGKILL')))
  const outputs = hosts.map(outputOf)
  const [base, otherBase] = await Promise.all(hosts.map(listening))

  const token = { authorization: 'Bearer admin-token-change-me' }
  const list = (await (await fetch(`${base}/shipments/api/shipments`, { headers: token })).json()) as { shipments: Array<{ id: number }> }
  t.match(list, { success: true, shipments: [{ reference: '1001-s001', status: 'new' }], pagination: { total: 1 } }, 'one order, one shipment')
  const update = await fetch(`${base}/shipments/api/shipments/${list.shipments[0]!.id}`, {
    method: 'POST',
    headers: { ...token, 'content-type': 'application/json' },
    body: JSON.stringify({ status: 'shipped', carrier: 'DHL', trackingNumber: 'JD0001', fields: { packageCount: 2 } }),
  })
  t.equal(update.status, 200)
  t.match(await update.json(), { success: true, shipment: { status: 'shipped', carrier: 'DHL', fields: { packageCount: 2 } } })
  t.equal((await fetch(`${base}/shipments/api/shipments/1`)).status, 401, 'without the token')

  const gateway = await fetch(`${base}/actions/shipments/gateway/handle?integration=nope`, { method: 'POST', body: '{}' })
  t.same(await gateway.json(), { name: 'Not Found', message: 'Unknown integration: nope', code: 0, status: 404, errorCode: 'SHIPMENTS_GATEWAY_UNKNOWN_INTEGRATION' })

  const basic = `Basic ${Buffer.from('ss-user:ss-password').toString('base64')}`
  const exchange = `${otherBase}/actions/shippingplatformconnect/orders/process`
  const exported = await fetch(`${exchange}?action=export`, { headers: { authorization: basic } })
  t.equal(exported.status, 200)
  const xml = await exported.text()
  t.match(xml, /<OrderNumber><!\[CDATA\[1001\]\]><\/OrderNumber>/)
  t.match(xml, /<OrderStatus><!\[CDATA\[shipped\]\]><\/OrderStatus>/, 'the order advanced when its only shipment shipped')

  const notified = await fetch(`${exchange}?action=shipnotify&order_number=1001&carrier=UPS&service=Ground&tracking_number=1Z999AA10123456784`, {
    method: 'POST',
    headers: { authorization: basic },
  })
  t.equal(notified.status, 200)
  const database = new Database(join(project, 'shop.sqlite'), { readonly: true })
  t.teardown(() => database.close())
  const order = database.prepare("SELECT fields FROM shipments_orders WHERE reference = '1001'").get() as { fields: string }
  t.same(JSON.parse(order.fields), { shippingInfo: [{ carrier: 'UPS', service: 'Ground', trackingNumber: '1Z999AA10123456784' }] }, "ShipStation's tracking number is stored")
  t.equal((database.prepare('SELECT count(*) AS n FROM shipments_orders').get() as { n: number }).n, 1)

  for (const host of hosts) host.kill('SIGTERM')
  await Promise.all(hosts.map(exited))
  const logged = outputs.flat().join('\n')
  t.notMatch(logged, /tracking entry skipped|trackingField|duplicate key|"level":50/, 'no tracking warning, no error in either log')
  t.match(logged, /first shipment created/, 'one of them created the order')

  // The login example: a session from the login form, local returnTo only, the admin pages in its layout.
  const login = start('login-host.js', { DATABASE_URL: 'login.sqlite', ADMIN_PASSWORD: 'a-password-for-the-test', COOKIE_SECRET: 'c'.repeat(32), SHIPMENTS_CSRF_KEY: 'k'.repeat(32) })
  t.teardown(() => login.exitCode === null && login.kill('SIGKILL'))
  const loginBase = await listening(login)
  const manual = { redirect: 'manual' } as const
  const asked = await fetch(`${loginBase}/shipments/admin/shipments`, manual)
  t.equal(asked.status, 303)
  t.equal(asked.headers.get('location'), '/login?returnTo=%2Fshipments%2Fadmin%2Fshipments')
  const form = await fetch(`${loginBase}${asked.headers.get('location')}`)
  t.equal(form.headers.get('x-frame-options'), 'DENY', 'the login page is never framed')
  t.equal(form.headers.get('content-security-policy'), "frame-ancestors 'none'")
  t.match(await form.text(), /name="returnTo" value="\/shipments\/admin\/shipments"/)
  const post = (fields: Record<string, string>) =>
    fetch(`${loginBase}/login`, { ...manual, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() })
  t.equal((await post({ login: 'jane', password: 'wrong', returnTo: '/shipments/admin/shipments' })).status, 401)
  for (const [returnTo, location] of [
    ['//evil.example/x', '/shipments/admin/shipments'],
    ['https://evil.example/', '/shipments/admin/shipments'],
    ['/\\evil.example', '/shipments/admin/shipments'],
    ['/shipments/admin/webhooks?x=ü', '/shipments/admin/webhooks?x=%C3%BC'],
  ]) {
    const answer = await post({ login: 'jane', password: 'a-password-for-the-test', returnTo: returnTo! })
    t.equal(answer.status, 303, returnTo)
    t.equal(answer.headers.get('location'), location, `returnTo ${returnTo} goes to ${location}`)
  }
  const loggedIn = await post({ login: 'jane', password: 'a-password-for-the-test', returnTo: '/shipments/admin/shipments' })
  const cookie = /^(session=[^;]+)/.exec(loggedIn.headers.get('set-cookie') ?? '')?.[1] ?? ''
  t.match(loggedIn.headers.get('set-cookie'), /HttpOnly/i)
  t.match(loggedIn.headers.get('set-cookie'), /SameSite=Strict/i)
  const page = await fetch(`${loginBase}/shipments/admin/shipments`, { ...manual, headers: { cookie } })
  t.equal(page.status, 200)
  const body = await page.text()
  t.match(body, /<header>Shop admin · Jane /, "the admin page in the host's layout")
  t.match(body, /<nav aria-label="Shop admin">[^]*<a href="\/shipments\/admin\/shipments" aria-current="page">Shipments<\/a>/)
  // The overview's chart script comes from an installed chart.js (no CDN). chart.js is an optional peer
  // dependency: this project sits inside the repository, so node finds the repository's own (a
  // devDependency); a host without it gets a 404 here and the overview's table (optional-peers.test.ts).
  const chart = await fetch(`${loginBase}/shipments/admin/assets/chart.umd.js`)
  t.equal(chart.status, 200)
  t.match(await chart.text(), /^\/\*!\n \* Chart\.js v4\./)
  const out = await fetch(`${loginBase}/logout`, { ...manual, method: 'POST', headers: { cookie } })
  t.equal(out.status, 303)
  t.match(out.headers.get('set-cookie'), /shipments_admin_csrf=;[^]*Path=\/shipments\/admin/, "logout clears the admin pages' CSRF cookie")
  t.equal((await fetch(`${loginBase}/shipments/admin/shipments`, { ...manual, headers: { cookie } })).status, 303, 'the session ended with the logout')
  login.kill('SIGTERM')
  await exited(login)
})
