// push-jobs-client as a child process against a real server in this process (spec 3.3, 4.5, 5.3; reference 7).
// The subtests share one server and one registered node, and run in order.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { ApiClient } from '../../src/auth/api-client.js';
import { until as untilDeadline } from '../support/deadline.js';
import { pidFrom as pidIn, processGone } from '../support/node-fleet.js';
import { childEnv, distBin, runBin } from '../support/process-run.js';
import { freePorts } from '../support/server-process.js';
import { startTestServer, type TestServer } from '../support/server.js';

const TERMINAL = ['complete', 'quorum_failed', 'timed_out', 'aborted', 'crashed'];
const DEADLINE_MS = 15_000;

const [apiPort, heartbeatPort, commandPort] = (await freePorts(3)) as [number, number, number];
let server: TestServer = await startTestServer(t, 'file', {
  heartbeat_interval: 200,
  api_port: apiPort,
  server_heartbeat_port: heartbeatPort,
  command_port: commandPort,
});
const scratch = await mkdtemp(join(tmpdir(), 'push-client-'));
t.teardown(() => rm(scratch, { recursive: true, force: true }));
const validatorPem = await server.keyOf('default-validator');

/** Polls `probe` until it returns a value, or fails the test after DEADLINE_MS. */
const until = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> =>
  untilDeadline(what, probe, DEADLINE_MS);

interface RunningClient {
  name: string;
  dir: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  log(): Promise<string>;
}

/** Writes a client.rb registering through the validator and starts the built client on it. */
async function startClient(name: string, whitelist: Record<string, string>): Promise<RunningClient> {
  const dir = join(scratch, name);
  await writeFile(join(scratch, `${name}-validation.pem`), validatorPem);
  const entries = Object.entries(whitelist).map(([k, v]) => `  ${JSON.stringify(k)} => ${JSON.stringify(v)},`);
  const rb = join(scratch, `${name}.rb`);
  await writeFile(
    rb,
    [
      `chef_server_url "${server.url}/organizations/default"`,
      `node_name "${name}"`,
      `client_key "${name}/client.pem"`,
      `validation_key "${name}-validation.pem"`,
      `file_dir "${name}/files"`,
      'log_level :debug',
      `log_location "${name}/client.log"`,
      'whitelist({',
      ...entries,
      '})',
    ].join('\n'),
  );
  const child = spawn(process.execPath, [distBin('push-jobs-client'), '-c', rb], {
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const log = async () => `${await readFile(join(dir, 'client.log'), 'utf8').catch(() => '')}${stderr}`;
  return { name, dir, child, exited, log };
}

async function availability(api: ApiClient, node: string): Promise<string | undefined> {
  const res = await api.request('GET', `/organizations/default/pushy/node_states/${node}`);
  return res.status === 200 ? String((res.body as { availability?: unknown }).availability) : undefined;
}

function waitAvailable(c: RunningClient): Promise<true> {
  return until(`${c.name} to be available`, async () => {
    if (c.child.exitCode !== null) throw new Error(`the client exited with ${c.child.exitCode}:\n${await c.log()}`);
    return (await availability(server.admin, c.name)) === 'available' ? true : undefined;
  });
}

interface Job {
  id: string;
  status: string;
  nodes: Record<string, string[]>;
}

async function getJob(id: string): Promise<Job> {
  return (await server.admin.call('GET', `/organizations/default/pushy/jobs/${id}`)) as Job;
}

async function startJob(body: Record<string, unknown>): Promise<string> {
  return String(((await server.admin.call('POST', '/organizations/default/pushy/jobs', body)) as { id: string }).id);
}

async function runJob(body: Record<string, unknown>): Promise<Job> {
  const id = await startJob(body);
  return until(`job ${id} to finish`, async () => {
    const job = await getJob(id);
    return TERMINAL.includes(job.status) ? job : undefined;
  });
}

/** The pid a job command wrote, waited for as long as the other waits here. */
const pidFrom = (file: string): Promise<number> => pidIn(file, DEADLINE_MS);

const TREE = 'sleep 30 & echo $! > "$PID_FILE"; wait';
let web1: RunningClient;

t.test('bad options and a broken client.rb exit 2 naming the problem', async (t) => {
  const broken = join(scratch, 'broken.rb');
  await writeFile(broken, 'node_name "web1"\nwhitelist({ "a" => 1 })\n');
  const [help, badConfig, badLevel] = await Promise.all([
    runBin('push-jobs-client', ['--help']),
    runBin('push-jobs-client', ['-c', broken]),
    runBin('push-jobs-client', ['-l', 'loud']),
  ]);
  t.equal(help.code, 0);
  for (const option of ['--config', '--client-key', '--log_level', '--logfile', '--node-name', '--server', '--version'])
    t.match(help.stdout, option);
  t.equal(badConfig.code, 2);
  t.match(badConfig.stderr, `${broken}:2: whitelist: expected a hash of job name => command string`);
  t.equal(badLevel.code, 2);
  t.match(badLevel.stderr, "unknown log level 'loud'");
});

t.test('first run registers through the validator, saves the key 0600 and creates the node', async (t) => {
  web1 = await startClient('web1', {
    hello: 'echo hello; echo oops >&2',
    tree: TREE,
    big: "head -c 200000 /dev/zero | tr '\\0' x; echo small >&2",
    env: 'echo "$PUSH_JOB_ID $PUSH_NODE_NAME $GREETING"; cat "$PUSH_JOB_FILE"',
    whoami: 'id -un; pwd; echo "$USER $LOGNAME $HOME"',
  });
  await waitAvailable(web1);
  t.equal((await stat(join(web1.dir, 'client.pem'))).mode & 0o777, 0o600);
  const client = await server.admin.call('GET', '/organizations/default/clients/web1');
  t.match(client, { name: 'web1', validator: false });
  const acl = (await server.admin.call('GET', '/organizations/default/nodes/web1/_acl')) as Record<
    string,
    { actors: string[] }
  >;
  for (const perm of ['read', 'update', 'delete', 'grant'])
    t.ok(acl[perm]?.actors.includes('web1'), `the client holds ${perm} on its node`);
  t.match(await web1.log(), /^\S+Z INFO registered client web1/m);
  t.match(
    await web1.log(),
    /DEBUG received abort on the command channel/,
    'the server reset the node, and the node answered',
  );
});

t.test('a whitelisted job succeeds and its output is captured', async (t) => {
  const job = await runJob({ command: 'hello', nodes: ['web1'], capture_output: true });
  t.equal(job.status, 'complete');
  t.same(job.nodes.succeeded, ['web1']);
  const out = await server.admin.request('GET', `/organizations/default/pushy/jobs/${job.id}/output/web1/stdout`);
  t.equal(out.body, 'hello\n');
  t.equal(out.headers.get('x-output-truncated'), null);
  t.equal(
    (await server.admin.request('GET', `/organizations/default/pushy/jobs/${job.id}/output/web1/stderr`)).body,
    'oops\n',
  );
});

t.test('the job sees its env, its file and its id; the file is removed afterwards', async (t) => {
  const job = await runJob({
    command: 'env',
    nodes: ['web1'],
    capture_output: true,
    env: { GREETING: 'hi' },
    file: `base64:${Buffer.from('file body\n').toString('base64')}`,
  });
  t.same(job.nodes.succeeded, ['web1']);
  t.equal(
    (await server.admin.request('GET', `/organizations/default/pushy/jobs/${job.id}/output/web1/stdout`)).body,
    `${job.id} web1 hi\nfile body\n`,
  );
  t.same(await readdir(join(web1.dir, 'files')), [], 'no job file is left');
});

t.test(
  'a job runs as the user and in the folder it names',
  { skip: process.getuid?.() !== 0 && 'needs root' },
  async (t) => {
    const job = await runJob({ command: 'whoami', nodes: ['web1'], capture_output: true, user: 'nobody', dir: '/tmp' });
    t.same(job.nodes.succeeded, ['web1']);
    const home = execFileSync('getent', ['passwd', 'nobody'], { encoding: 'utf8' }).trim().split(':')[5];
    t.equal(
      (await server.admin.request('GET', `/organizations/default/pushy/jobs/${job.id}/output/web1/stdout`)).body,
      `nobody\n/tmp\nnobody nobody ${home}\n`,
      "with the user's USER, LOGNAME and HOME",
    );
  },
);

t.test('a command not in the whitelist, an unknown user or a missing folder is nacked', async (t) => {
  const job = await runJob({ command: 'rm-everything', nodes: ['web1'] });
  t.equal(job.status, 'quorum_failed');
  t.same(job.nodes.nacked, ['web1']);
  t.match(await web1.log(), /refused 'rm-everything' \(not_whitelisted\)/);
  t.same((await runJob({ command: 'hello', nodes: ['web1'], user: 'no-such-user' })).nodes.nacked, ['web1']);
  t.same((await runJob({ command: 'hello', nodes: ['web1'], dir: '/no/such/folder' })).nodes.nacked, ['web1']);
  t.match(await web1.log(), /\(bad_user\)[\s\S]*\(bad_dir\)/);
});

t.test('a whitelist change on the node applies to the next job without a restart', async (t) => {
  const node = (await server.admin.call('GET', '/organizations/default/nodes/web1')) as Record<string, unknown>;
  const before = await runJob({ command: 'later', nodes: ['web1'] });
  t.same(before.nodes.nacked, ['web1'], 'not whitelisted yet');
  await server.admin.call('PUT', '/organizations/default/nodes/web1', {
    ...node,
    normal: { push_jobs: { whitelist: { later: 'echo "from the node"', hello: 'echo overridden' } } },
  });
  const after = await runJob({ command: 'later', nodes: ['web1'], capture_output: true });
  t.same(after.nodes.succeeded, ['web1']);
  t.equal(
    (await server.admin.request('GET', `/organizations/default/pushy/jobs/${after.id}/output/web1/stdout`)).body,
    'from the node\n',
  );
  const clash = await runJob({ command: 'hello', nodes: ['web1'], capture_output: true });
  t.equal(
    (await server.admin.request('GET', `/organizations/default/pushy/jobs/${clash.id}/output/web1/stdout`)).body,
    'overridden\n',
    'the node attribute wins over client.rb',
  );
});

t.test('output beyond max_body_size is cut and reported as truncated', async (t) => {
  const job = await runJob({ command: 'big', nodes: ['web1'], capture_output: true });
  t.same(job.nodes.succeeded, ['web1']);
  const out = await server.admin.request('GET', `/organizations/default/pushy/jobs/${job.id}/output/web1/stdout`);
  t.equal(out.headers.get('x-output-truncated'), 'true');
  const text = String(out.body);
  t.ok(text.length > 30_000 && text.length < 65_536, `stdout cut to ${text.length} characters`);
  t.match(text, /^x+$/);
  t.equal(
    (await server.admin.request('GET', `/organizations/default/pushy/jobs/${job.id}/output/web1/stderr`)).body,
    'small\n',
  );
});

t.test('run_timeout stops the whole process tree', async (t) => {
  const pidFile = join(scratch, 'timeout.pid');
  const job = await runJob({ command: 'tree', nodes: ['web1'], run_timeout: 1, env: { PID_FILE: pidFile } });
  t.equal(job.status, 'timed_out');
  const pid = await pidFrom(pidFile);
  t.ok(
    await until('the background sleep to end', async () => ((await processGone(pid)) ? true : undefined)),
    'the grandchild is gone',
  );
  await waitAvailable(web1);
});

t.test('abort stops the whole process tree', async (t) => {
  const pidFile = join(scratch, 'abort.pid');
  const id = await startJob({ command: 'tree', nodes: ['web1'], run_timeout: 60, env: { PID_FILE: pidFile } });
  const pid = await pidFrom(pidFile);
  t.notOk(await processGone(pid), 'the background sleep runs');
  await server.admin.call('POST', `/organizations/default/pushy/jobs/${id}/abort`);
  const job = await until('the abort', async () => {
    const j = await getJob(id);
    return TERMINAL.includes(j.status) ? j : undefined;
  });
  t.equal(job.status, 'aborted');
  t.ok(
    await until('the background sleep to end', async () => ((await processGone(pid)) ? true : undefined)),
    'the grandchild is gone',
  );
  const logged = new RegExp(`job ${id}: aborting \\(running\\)\\n[\\s\\S]*job ${id}: aborted\\n`);
  t.ok(await until('the client to log the abort', async () => (logged.test(await web1.log()) ? true : undefined)));
  await waitAvailable(web1);
});

t.test('after a server restart the client reconnects by itself', async (t) => {
  server = await server.restart();
  await until('a second connection', async () =>
    ((await web1.log()).match(/INFO connected to/g)?.length ?? 0) >= 2 ? true : undefined,
  );
  await until('web1 to come back', async () =>
    (await availability(server.admin, 'web1')) === 'available' ? true : undefined,
  );
  const job = await runJob({ command: 'hello', nodes: ['web1'] });
  t.same(job.nodes.succeeded, ['web1']);
  t.match(await web1.log(), /reconfiguring: the server (incarnation changed|stayed silent)/);
});

t.test('SIGTERM stops the client and its job cleanly', async (t) => {
  const pidFile = join(scratch, 'sigterm.pid');
  await startJob({ command: 'tree', nodes: ['web1'], run_timeout: 60, env: { PID_FILE: pidFile } });
  const pid = await pidFrom(pidFile);
  web1.child.kill('SIGTERM');
  t.equal(await web1.exited, 0);
  t.ok(await processGone(pid), 'the job process tree is gone when the client has exited');
  t.match(await web1.log(), /INFO stopped/);
});
