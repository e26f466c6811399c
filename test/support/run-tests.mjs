// `npm test`: finds or starts a Redis for the tests, runs tap with this script's arguments, stops what it started.
// Plain JavaScript with no project imports, because it runs before anything is compiled.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { constants as osConstants, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import tls from 'node:tls';

const LOCAL_URL = 'redis://127.0.0.1:6379';
const PROBE_TIMEOUT_MS = 1000;
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5000;
/**
 * tap runs the compiled tests (`pretest` builds them into dist/): a file loads in a third of the time it takes
 * through a TypeScript loader, which over the whole suite is minutes. Without positional files tap would also run
 * helpers (suites, support files).
 */
const DEFAULT_INCLUDE = '--include=dist/test/**/*.test.js';

function log(message) {
  process.stderr.write(`run-tests: ${message}\n`);
}

/** One RESP array command. */
function resp(args) {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** The URL with any password hidden. */
function redact(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

/** A test named by its source (`test/unit/x.test.ts`, or a glob of them) runs from its compiled file. */
function compiled(arg) {
  return arg.replace(/^(--include=)?(?:\.\/)?(test\/.*)\.ts$/, '$1dist/$2.js');
}

/** Sends AUTH (when the URL has a password) and PING over a raw socket; resolves '' on +PONG, else the reason. */
function pingFailure(url) {
  let target;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve('not a URL');
  }
  if (target.protocol !== 'redis:' && target.protocol !== 'rediss:') return Promise.resolve('not a redis:// URL');
  const host = target.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(target.port || 6379);
  const commands = [];
  if (target.password) {
    const password = decodeURIComponent(target.password);
    commands.push(target.username ? ['AUTH', decodeURIComponent(target.username), password] : ['AUTH', password]);
  }
  commands.push(['PING']);
  return new Promise((resolve) => {
    const secure = target.protocol === 'rediss:';
    const socket = secure ? tls.connect({ host, port, servername: host }) : net.connect({ host, port });
    let reply = '';
    const finish = (why) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => finish(`no answer within ${PROBE_TIMEOUT_MS} ms`), PROBE_TIMEOUT_MS);
    socket.once(secure ? 'secureConnect' : 'connect', () => socket.write(commands.map(resp).join('')));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      const lines = reply.split('\r\n').slice(0, -1);
      if (lines.includes('+PONG')) finish('');
      else if (lines.some((l) => l.startsWith('-'))) finish(lines.find((l) => l.startsWith('-')).slice(1));
    });
    socket.on('error', (err) => finish(err.message));
    socket.on('close', () => finish('connection closed'));
  });
}

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/** The redis-server binary, installing Debian's package first when we are root and apt-get exists. */
function redisServerBinary() {
  const found = onPath('redis-server');
  if (found || process.getuid?.() !== 0 || !onPath('apt-get')) return found;
  log('redis-server is missing; installing the redis-server package with apt-get');
  spawnSync('sh', ['-c', 'apt-get update && apt-get install -y redis-server'], {
    stdio: ['ignore', 2, 2],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return onPath('redis-server');
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

/** Starts `redis-server` on a free port; resolves { url, stop } once it answers PING, or throws with its output. */
async function startPrivateRedis(binary) {
  let lastFailure = '';
  // A port found free can be taken before redis-server binds it, so try a few.
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'infra-test-redis-'));
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk) => {
      output = (output + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const url = `redis://127.0.0.1:${port}`;
    const deadline = Date.now() + START_TIMEOUT_MS;
    let why = await pingFailure(url);
    while (why && child.exitCode === null && child.signalCode === null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      why = await pingFailure(url);
    }
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(killer);
      }
      rmSync(dir, { recursive: true, force: true });
    };
    if (!why) {
      process.once('exit', () => child.kill('SIGKILL'));
      return { url, stop, pid: child.pid };
    }
    await stop();
    lastFailure = `${why}\n${output}`;
  }
  throw new Error(`redis-server did not start: ${lastFailure}`);
}

/** Resolves { url, stop? }: REDIS_URL, then 127.0.0.1:6379, then a private redis-server. */
async function findRedis() {
  const forcePrivate = process.env.INFRA_TEST_FORCE_PRIVATE_REDIS === '1';
  if (!forcePrivate) {
    const fromEnv = process.env.REDIS_URL;
    if (fromEnv) {
      const why = await pingFailure(fromEnv);
      if (why === '') return { url: fromEnv };
      log(`REDIS_URL ${redact(fromEnv)} does not answer PING (${why}); looking further`);
    }
    if ((await pingFailure(LOCAL_URL)) === '') return { url: LOCAL_URL };
  }
  const binary = redisServerBinary();
  if (!binary) {
    throw new Error(
      'no Redis for the tests: REDIS_URL and 127.0.0.1:6379 do not answer, and redis-server is not installed ' +
        '(install it, e.g. `apt-get install redis-server`, or set REDIS_URL)',
    );
  }
  const started = await startPrivateRedis(binary);
  log(`started a private redis-server (pid ${started.pid}) at ${started.url}`);
  return started;
}

const FAILURE_DETAIL_LINES = 25;

/**
 * Passes TAP through to stdout and gathers each `not ok` line with the subtest names above it and the start of
 * the YAML diagnostic that follows it. Resolves once the stream ends.
 */
function collectFailures(stream) {
  const failures = [];
  const names = [];
  let last; // the failure just read, until its diagnostic (if any) ends
  let diagnosticIndent = -1; // where the diagnostic's lines start, or -1 outside one
  let pending = '';
  const take = (line) => {
    if (last && diagnosticIndent >= 0) {
      if (line.trim() === '...') last = undefined;
      else if (last.detail.length < FAILURE_DETAIL_LINES) last.detail.push(line.slice(diagnosticIndent));
      return;
    }
    if (last && line.trim() === '---') {
      diagnosticIndent = line.indexOf('-');
      return;
    }
    last = undefined;
    const subtest = /^( *)# Subtest: (.*)$/.exec(line);
    if (subtest) {
      const depth = subtest[1].length / 4;
      names.length = depth;
      names[depth] = subtest[2];
      return;
    }
    const failed = /^( *)not ok \d+ - (.*)$/.exec(line);
    if (failed) {
      const depth = failed[1].length / 4;
      // A subtest's own line follows its failing tests: its diagnostic only repeats theirs.
      const enclosing = failures.length > 0 && failures[failures.length - 1].depth > depth;
      const failure = { path: [...names.slice(0, depth), failed[2]].join(' > '), depth, detail: [] };
      failures.push(failure);
      last = enclosing ? undefined : failure;
      diagnosticIndent = -1;
    }
  };
  stream.on('data', (chunk) => {
    process.stdout.write(chunk);
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const line of lines) take(line);
  });
  return new Promise((resolve) => stream.once('end', () => resolve(failures)));
}

/** Repeats the failures in the order TAP printed them, with the start of their diagnostics. */
async function reportFailures(pending) {
  const failures = await pending;
  if (failures.length === 0) return;
  const lines = [`\nrun-tests: ${failures.length} failing (a test file's own line comes after its tests):`];
  for (const { path, detail } of failures) {
    lines.push(`failed: ${path}`);
    for (const d of detail) lines.push(`    ${d}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function main() {
  let redis;
  try {
    redis = await findRedis();
  } catch (err) {
    log(err instanceof Error ? err.message : String(err));
    return 1;
  }
  const args = process.argv.slice(2).map(compiled);
  const tapArgs = args.some((a) => a.startsWith('--include')) ? args : [DEFAULT_INCLUDE, ...args];
  // On a terminal tap draws its own report; elsewhere (CI, a log file) its TAP passes through and the failures are
  // repeated at the end, where a truncated log still shows them.
  const recap = !process.stdout.isTTY;
  const tap = spawn('npx', ['tap', ...tapArgs], {
    stdio: ['inherit', recap ? 'pipe' : 'inherit', 'inherit'],
    env: { ...process.env, TEST_REDIS_URL: redis.url },
  });
  const failures = recap ? collectFailures(tap.stdout) : undefined;
  const forward = (signal) => tap.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  const [code, signal] = await new Promise((resolve) => {
    tap.once('exit', (c, s) => resolve([c, s]));
    tap.once('error', (err) => {
      log(`could not run tap: ${err.message}`);
      resolve([1, null]);
    });
  });
  if (failures) await reportFailures(failures);
  if (redis.stop) {
    await redis.stop();
    log('stopped the private redis-server');
  }
  if (code !== null) return code;
  return 128 + (osConstants.signals[signal] ?? 1);
}

process.exitCode = await main();
