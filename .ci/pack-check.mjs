// The package as a user installs it: packs this tree as `npm pack` does for a release (its `prepare` builds the
// JavaScript), checks that the tarball holds only what runs and deploy/ (the systemd units), installs it globally
// into a temporary prefix (no devDependencies there, and nothing built at install), then each executable must
// answer --help and infra-server must start on a generated configuration and answer GET /_status before it is
// stopped. Then the checkout as a production install has it: `npm ci --omit=dev` (no TypeScript) must refuse
// without a build, and with the build copied in it must install and the server must start from the checkout.
// Plain JavaScript with no project imports: it tests the package, not the checkout. Run by .ci/run after the tests;
// `node .ci/pack-check.mjs` by hand (INFRA_PACK_KEEP=1 keeps its temporary folder).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;
/** What a package may hold besides the compiled sources (npm adds package.json, README and LICENSE itself). */
const ALWAYS = new Set(['package.json', 'README.md', 'LICENSE']);
/** The compiled sources: dist/src and dist/actors, JavaScript only. */
const RUNS = /^dist\/(src|actors)\/.+\.js$/;
/** The systemd units, their users and sample settings (docs/install.md), for a machine with the package alone. */
const DEPLOY = /^deploy\/.+/;

function log(message) {
  process.stderr.write(`pack-check: ${message}\n`);
}

function run(command, args, options = {}) {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...options });
}

/** The files of this tree that git tracks or would (ignored ones and node_modules left out), as a clean checkout. */
function checkoutFiles() {
  const listed = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root });
  return listed.split('\0').filter((f) => f !== '' && f !== 'node_modules' && !f.startsWith('node_modules/'));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Packs a copy of the checkout (the working tree's own dist/ is neither used nor touched); returns the tarball. */
function pack(work) {
  const tree = join(work, 'tree');
  for (const file of checkoutFiles()) {
    mkdirSync(dirname(join(tree, file)), { recursive: true });
    cpSync(join(root, file), join(tree, file), { verbatimSymlinks: true });
  }
  // `prepare` (tsc) needs the devDependencies; the installed package must not.
  symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'), 'dir');
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], { cwd: tree }));
  const files = packed.files.map((f) => f.path);
  const stray = files.filter((f) => !ALWAYS.has(f) && !RUNS.test(f) && !DEPLOY.test(f));
  if (stray.length > 0) throw new Error(`the package holds files that do not run:\n  ${stray.join('\n  ')}`);
  const { bin } = JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8'));
  const missing = Object.values(bin).filter((f) => !files.includes(f.replace(/^\.\//, '')));
  if (missing.length > 0) throw new Error(`the package lacks its executables: ${missing.join(', ')}`);
  const units = ['deploy/infra-server.service', 'deploy/push-jobs-client.service'].filter((f) => !files.includes(f));
  if (units.length > 0) throw new Error(`the package lacks its systemd units: ${units.join(', ')}`);
  log(`${packed.filename}: ${files.length} files, ${Math.round(packed.size / 1024)} KiB`);
  return { tarball: join(work, packed.filename), name: packed.name, bins: bin, tree };
}

/** Installs the tarball globally under `prefix`, as `npm install -g` would for a user. */
function install(tarball, prefix, name) {
  run('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', tarball], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const installed = join(prefix, 'lib', 'node_modules', name);
  const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  for (const dev of Object.keys(pkg.devDependencies ?? {})) {
    let found = false;
    try {
      readFileSync(join(installed, 'node_modules', dev, 'package.json'));
      found = true;
    } catch {
      // not installed: as it should be
    }
    if (found) throw new Error(`the global install brought the devDependency ${dev}`);
  }
}

/** The environment without REDIS_URL (the server then runs on its file store) or NODE_OPTIONS (a loader, say). */
function userEnv() {
  const env = { ...process.env };
  delete env.REDIS_URL;
  delete env.NODE_OPTIONS;
  return env;
}

/** Each of `commands` (name -> argv) must print its usage for --help. */
function checkHelp(commands) {
  for (const [name, [command, ...args]] of Object.entries(commands)) {
    const out = run(command, [...args, '--help'], { env: userEnv(), timeout: 30_000 });
    if (!/^Usage: /m.test(out)) throw new Error(`${name} --help printed no usage:\n${out}`);
    log(`${name} --help: ${out.split('\n')[0]}`);
  }
}

/** Starts infra-server (`argv`) on a fresh folder and free ports, waits for GET /_status, stops it. */
async function checkServer([command, ...args], dir) {
  mkdirSync(dir);
  const apiPort = await freePort();
  const settings = {
    api_listen_address: '127.0.0.1',
    api_port: apiPort,
    command_port: await freePort(),
    server_heartbeat_port: await freePort(),
    server_name: '127.0.0.1',
    queue_listen_address: 'tcp://127.0.0.1',
    data_dir: join(dir, 'data'),
  };
  const file = join(dir, 'push-jobs-server.rb');
  const text = Object.entries(settings).map(([k, v]) => `${k} ${typeof v === 'string' ? JSON.stringify(v) : v}\n`);
  writeFileSync(file, text.join(''));
  const child = spawn(command, [...args, '-c', file], {
    cwd: dir,
    env: userEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk) => (output = (output + chunk.toString('utf8')).slice(-8000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let failure;
  try {
    await waitForStatus(`http://127.0.0.1:${apiPort}/_status`, child, () => output);
  } catch (e) {
    failure = e;
  }
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  const { code, signal } = await exited;
  clearTimeout(killer);
  if (failure !== undefined) throw failure;
  if (signal === 'SIGKILL') throw new Error(`infra-server did not stop within ${STOP_TIMEOUT_MS} ms:\n${output}`);
  if (code !== 0) throw new Error(`infra-server stopped with ${code ?? signal} on SIGTERM:\n${output}`);
  log('infra-server stopped on SIGTERM (exit 0)');
}

/** Polls GET /_status until it answers 200 `pong`; fails if the server exits first or after START_TIMEOUT_MS. */
async function waitForStatus(url, child, output) {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let last;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`infra-server exited:\n${output()}`);
    try {
      const res = await fetch(url);
      const body = await res.json();
      last = `${res.status} ${JSON.stringify(body)}`;
      if (res.status === 200 && body.status === 'pong') break;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    if (Date.now() > deadline) throw new Error(`GET /_status: ${last} after ${START_TIMEOUT_MS} ms:\n${output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  log(`infra-server answered GET /_status: ${last}`);
}

/**
 * A checkout installed for production, `npm ci --omit=dev`: with no build in dist/, `prepare` must fail and say
 * what to do; with the build of `tree` copied in, the install must succeed without TypeScript. Returns its folder.
 */
function installCheckout(work, tree) {
  const checkout = join(work, 'checkout');
  for (const file of checkoutFiles()) {
    mkdirSync(dirname(join(checkout, file)), { recursive: true });
    cpSync(join(root, file), join(checkout, file), { verbatimSymlinks: true });
  }
  const refused = spawnSync(process.execPath, ['scripts/prepare.mjs'], { cwd: checkout, encoding: 'utf8' });
  if (refused.status === 0 || !/npm pack/.test(refused.stderr)) {
    throw new Error(`prepare without TypeScript or a build did not refuse with advice:\n${refused.stderr}`);
  }
  for (const dir of ['src', 'actors'])
    cpSync(join(tree, 'dist', dir), join(checkout, 'dist', dir), { recursive: true });
  run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: checkout,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (existsSync(join(checkout, 'node_modules', 'typescript')))
    throw new Error('npm ci --omit=dev installed TypeScript');
  log('the checkout installs with npm ci --omit=dev after a build, and refuses with advice before one');
  return checkout;
}

const work = mkdtempSync(join(tmpdir(), 'infra-pack-check-'));
try {
  const { tarball, name, bins, tree } = pack(work);
  const prefix = join(work, 'prefix');
  install(tarball, prefix, name);
  const binDir = join(prefix, 'bin');
  checkHelp(Object.fromEntries(Object.keys(bins).map((bin) => [bin, [join(binDir, bin)]])));
  await checkServer([join(binDir, 'infra-server')], join(work, 'server'));
  log('the packed package installs and runs');
  const checkout = installCheckout(work, tree);
  checkHelp(
    Object.fromEntries(Object.entries(bins).map(([bin, file]) => [bin, [process.execPath, join(checkout, file)]])),
  );
  await checkServer([process.execPath, join(checkout, bins['infra-server'])], join(work, 'checkout-server'));
  log('the checkout installed for production runs');
} catch (e) {
  log(e instanceof Error ? e.message : String(e));
  process.exitCode = 1;
} finally {
  if (process.env.INFRA_PACK_KEEP === '1') log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
