// The cli as a child process against a real infra-server child process, with scripted push-jobs nodes
// (spec 4.4, 4.6, 5.6, 5.7, 2.6). The subtests share one server and run in order.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { ApiClient } from '../../src/auth/api-client.js';
import { jobIdOf, show, startCliFixture } from '../support/cli-fixture.js';
import { runBin } from '../support/process-run.js';
import { freePort } from '../support/server-process.js';
import { ack, fail, ignore, nack, poll, succeed, type TestNode } from '../support/test-node.js';

// Dozens of cli processes, one after another: on two busy cores this file takes a minute and more.
t.setTimeout(300_000);
const f = await startCliFixture(t, ['n1', 'n2', 'n3']);
const { server, pivotal, admin, scratch, env, configRb, cli, available } = f;
const [n1, n2, n3] = f.nodes as [TestNode, TestNode, TestNode];
const FAST = ['--poll-interval', '0.1'];

t.test('job start runs on the nodes, shows progress and the report, and exits 0', async (t) => {
  n1.script = { run: succeed({ stdout: '{"a": 1}\n', stderr: 'warned\n' }) };
  n2.script = { run: succeed({ stdout: 'two\n' }) };
  const r = await cli(['job', 'start', 'chef-client', 'n1', 'n2', '--capture', ...FAST]);
  t.equal(r.code, 0, show(r));
  t.equal(r.stderr, '');
  const id = jobIdOf(r);
  t.match(id, /^[0-9a-f]{32}$/);
  t.match(r.stdout, `Started.  Job ID: ${id}\n`);
  t.match(
    r.stdout,
    /^complete: 0 voting, 0 ready, 0 running, 2 of 2 finished \(2 succeeded\)$/m,
    'the final progress line',
  );
  t.match(r.stdout, /^Command: +chef-client$/m);
  t.match(r.stdout, /^Created_at: +\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$/m);
  t.match(r.stdout, /^unavailable: \(none\)$/m);
  t.match(r.stdout, /^was_ready: +\(none\)$/m);
  t.match(r.stdout, /^On_timeout: +3600 seconds$/m);
  t.match(r.stdout, /^Status: +complete$/m);
  t.match(r.stdout, /^Node name +Status +Last updated\nn1 +succeeded +\w{3}, .* GMT\nn2 +succeeded +/m);

  const [status, json, out, err, list, listJson] = await Promise.all([
    cli(['job', 'status', id]),
    cli(['job', 'status', id, '-F', 'json']),
    cli(['job', 'output', id, 'n1']),
    cli(['job', 'output', id, 'n1', '--channel', 'stderr']),
    cli(['job', 'list']),
    cli(['job', 'list', '-F', 'json']),
  ]);
  t.equal(status.code, 0, show(status));
  t.match(status.stdout, /^n1 +succeeded +\w{3}, /m);
  t.match(JSON.parse(json.stdout), {
    id,
    command: 'chef-client',
    status: 'complete',
    nodes: { succeeded: ['n1', 'n2'] },
  });
  t.equal(out.code, 0, show(out));
  t.equal(out.stdout, '{"a": 1}\n', 'the output exactly as the node sent it, though it looks like JSON');
  t.equal(out.stderr, '', 'not truncated');
  t.equal(err.stdout, 'warned\n');
  const uncaptured = await cli(['job', 'output', id, 'n3']);
  t.equal(uncaptured.code, 1, show(uncaptured));
  t.match(uncaptured.stderr, /^ERROR: .*n3.* \(404 Not Found\)$/m);
  t.match(
    list.stdout,
    new RegExp(`^Job ID +Status +Created_at +Command\n${id} +complete +\\w{3}, .* GMT +chef-client$`, 'm'),
  );
  t.ok(
    (JSON.parse(listJson.stdout) as Array<{ id: string }>).some((j) => j.id === id),
    'job list -F json parses and holds the job',
  );
});

t.test('the job options reach the nodes', async (t) => {
  const file = join(scratch, 'payload.sh');
  await writeFile(file, '#!/bin/sh\necho payload\n');
  const before = n1.received.length;
  const r = await cli([
    'job',
    'start',
    'deploy',
    'n1',
    '--timeout',
    '120',
    '--env',
    '{"STAGE": "blue"}',
    '--in-dir',
    '/srv/app',
    '--as-user',
    'deploy',
    '--file',
    file,
    ...FAST,
  ]);
  t.equal(r.code, 0, show(r));
  const commit = await n1.waitFor('commit', { after: before });
  t.match(commit, {
    command: 'deploy',
    run_timeout: 120,
    env: { STAGE: 'blue' },
    dir: '/srv/app',
    user: 'deploy',
    file: 'raw:#!/bin/sh\necho payload\n',
  });
  t.match(r.stdout, /^On_timeout: +120 seconds$/m);
});

t.test('a refused quorum exits 1 with the reason, and names the nodes that were ready', async (t) => {
  n1.script = {};
  n3.script = { commit: nack('busy') };
  const r = await cli(['job', 'start', 'chef-client', 'n1', 'n3', ...FAST]);
  t.equal(r.code, 1, show(r));
  t.equal(r.stderr, 'ERROR: Job quorum_failed: 1 of 2 nodes nacked\n');
  t.match(r.stdout, /^was_ready: +n1$/m);
  t.match(r.stdout, /^Status: +quorum_failed$/m);
  t.match(r.stdout, /^n3 +nacked /m);
});

t.test('a quorum of 50% runs without the refusing node, yet the job does not count as a success', async (t) => {
  await available('n1', 'n3');
  const r = await cli(['job', 'start', 'chef-client', 'n1', 'n3', '-q', '50%', ...FAST]);
  t.equal(r.code, 1, show(r));
  t.equal(r.stderr, 'ERROR: Job complete: 1 of 2 nodes nacked\n');
  t.match(r.stdout, /^n1 +succeeded /m);
  n3.script = {};
});

t.test('a failing node makes the run fail', async (t) => {
  await available('n1', 'n2');
  n2.script = { run: fail(3) };
  const r = await cli(['job', 'start', 'chef-client', 'n1', 'n2', ...FAST]);
  t.equal(r.code, 1, show(r));
  t.equal(r.stderr, 'ERROR: Job complete: 1 of 2 nodes failed\n');
  n2.script = {};
});

t.test('a node that never votes is unavailable once --voting-timeout passes', async (t) => {
  n2.script = { commit: ignore() };
  const r = await cli(['job', 'start', 'chef-client', 'n2', '--voting-timeout', '1', ...FAST]);
  t.equal(r.code, 1, show(r));
  t.equal(r.stderr, 'ERROR: Job quorum_failed: 1 of 1 node unavailable\n');
  t.match(r.stdout, /^unavailable: n2$/m);
  n2.script = {};
});

t.test('-F json keeps stdout a single JSON document', async (t) => {
  await available('n2');
  const r = await cli(['job', 'start', 'chef-client', 'n2', '-F', 'json', ...FAST]);
  t.equal(r.code, 0, show(r));
  t.match(JSON.parse(r.stdout), { command: 'chef-client', status: 'complete', nodes: { succeeded: ['n2'] } });
  t.match(r.stderr, /^Started\. {2}Job ID: [0-9a-f]{32}\n/);
});

t.test('--nowait returns at once; job abort stops the running job', async (t) => {
  await available('n1');
  n1.script = { run: ack() };
  const r = await cli(['job', 'start', 'sleep', 'n1', '--nowait']);
  t.equal(r.code, 0, show(r));
  const id = jobIdOf(r);
  t.equal(r.stdout, `Started.  Job ID: ${id}\n`);
  await poll(
    'the job to run',
    async () => {
      const s = await cli(['job', 'status', id, '-F', 'json']);
      return (JSON.parse(s.stdout) as { status: string }).status === 'running' ? true : undefined;
    },
    10_000,
  );
  const aborted = await cli(['job', 'abort', id]);
  t.equal(aborted.code, 0, show(aborted));
  t.match(aborted.stdout, `Abort sent.  Job ID: ${id}`);
  const final = await poll(
    'the job to end aborted',
    async () => {
      const s = await cli(['job', 'status', id, '-F', 'json']);
      const job = JSON.parse(s.stdout) as { status: string; nodes: Record<string, string[]> };
      return job.status === 'aborted' ? job : undefined;
    },
    10_000,
  );
  t.equal(final.status, 'aborted');
  const again = await cli(['job', 'abort', id]);
  t.equal(again.code, 1, show(again));
  t.match(again.stderr, /^ERROR: .*cannot be aborted.* \(409 Conflict\)$/m);
  n1.script = {};
});

t.test('job start without nodes, with an unknown job, or with a bad option', async (t) => {
  const [none, unknown, bad] = await Promise.all([
    cli(['job', 'start', 'chef-client']),
    cli(['job', 'status', 'ffffffffffffffffffffffffffffffff']),
    cli(['job', 'start', 'chef-client', 'n1', '--env', '{"A": 1']),
  ]);
  t.equal(none.code, 1, show(none));
  t.equal(
    none.stderr,
    'ERROR: No nodes to run the job on. Name them after the command, or select them with --search QUERY.\n',
  );
  t.equal(unknown.code, 1, show(unknown));
  t.match(unknown.stderr, /^ERROR: .* \(404 Not Found\)$/m);
  t.equal(bad.code, 2, show(bad));
  t.match(bad.stderr, /^ERROR: --env: not valid JSON/);
});

t.test('--search selects the nodes', async (t) => {
  await available('n1', 'n2');
  const r = await cli(['job', 'start', 'chef-client', '--search', 'name:n1 OR name:n2', ...FAST]);
  t.equal(r.code, 0, show(r));
  t.match(r.stdout, /^n1 +succeeded .*\nn2 +succeeded /m);
  t.notMatch(r.stdout, /^n3 /m);
  const none = await cli(['job', 'start', 'chef-client', '--search', 'name:nothing-here']);
  t.equal(none.code, 1, show(none));
  t.equal(none.stderr, "ERROR: No nodes to run the job on: the search 'name:nothing-here' found none.\n");
});

t.test('node status lists up and down nodes in columns; an unknown node fails', async (t) => {
  n3.stop();
  await poll(
    'n3 to be down',
    async () => {
      const res = await admin.request('GET', '/organizations/default/pushy/node_states/n3');
      return (res.body as { status?: string }).status === 'down' ? true : undefined;
    },
    10_000,
  );
  const [all, some, json] = await Promise.all([
    cli(['node', 'status']),
    cli(['node', 'status', 'n3', 'nosuch', 'n1']),
    cli(['node', 'status', '-F', 'json']),
  ]);
  t.equal(all.code, 0, show(all));
  t.match(
    all.stdout,
    /^Node name +Status +Availability +Last updated\nn1 +up +available +\w{3}, .* GMT\nn2 +up +available +.*\nn3 +down +unavailable +/,
  );
  t.equal(some.code, 1, show(some));
  t.match(some.stdout, /\nn1 +up .*\nn3 +down /);
  t.equal(some.stderr, 'ERROR: no such node: nosuch\n');
  t.match(JSON.parse(json.stdout), [
    { node_name: 'n1', status: 'up' },
    { node_name: 'n2', status: 'up' },
    { node_name: 'n3', status: 'down' },
  ]);
});

t.test('node whitelist: set, list, remove round trip, keeping the other attributes', async (t) => {
  const path = '/organizations/default/nodes/n1';
  const node = (await admin.call('GET', path)) as Record<string, unknown>;
  await admin.call('PUT', path, { ...node, normal: { tags: ['web'] } });
  const set1 = await cli(['node', 'whitelist', 'set', 'n1', 'restart', 'systemctl restart app']);
  t.equal(set1.code, 0, show(set1));
  t.equal((await cli(['node', 'whitelist', 'set', 'n1', 'chef-client', 'chef-client -o base'])).code, 0);
  const [list, json] = await Promise.all([
    cli(['node', 'whitelist', 'list', 'n1']),
    cli(['node', 'whitelist', 'list', 'n1', '-F', 'json']),
  ]);
  t.equal(list.stdout, 'chef-client: chef-client -o base\nrestart:     systemctl restart app\n');
  t.same(JSON.parse(json.stdout), { 'chef-client': 'chef-client -o base', restart: 'systemctl restart app' });
  t.match(await admin.call('GET', path), {
    name: 'n1',
    normal: { tags: ['web'], push_jobs: { whitelist: { restart: 'systemctl restart app' } } },
  });

  const removed = await cli(['node', 'whitelist', 'remove', 'n1', 'restart']);
  t.equal(removed.code, 0, show(removed));
  t.same(JSON.parse((await cli(['node', 'whitelist', 'list', 'n1', '-F', 'json'])).stdout), {
    'chef-client': 'chef-client -o base',
  });
  const again = await cli(['node', 'whitelist', 'remove', 'n1', 'restart']);
  t.equal(again.code, 1, show(again));
  t.equal(again.stderr, "ERROR: The whitelist of n1 has no entry 'restart'.\n");
  t.match(await admin.call('GET', path), { normal: { tags: ['web'] } }, 'other attributes survive');
});

t.test('user list: Missing read permission until the user is a server-admin (spec 5.7)', async (t) => {
  const created = (await pivotal.call('POST', '/users', {
    username: 'bob',
    email: 'bob@example.com',
    display_name: 'Bob',
    password: 'secret123',
    create_key: true,
  })) as { chef_key: { private_key: string } };
  const bobKey = join(scratch, 'bob.pem');
  await writeFile(bobKey, created.chef_key.private_key);
  const bob = (args: string[]) =>
    runBin('cli', [...args, '--server-url', server.url, '-u', 'bob', '-k', bobKey], { cwd: scratch, env });

  const denied = await bob(['user', 'list']);
  t.equal(denied.code, 1, show(denied));
  t.equal(denied.stdout, '');
  t.match(denied.stderr, /^ERROR: Missing read permission\n/);
  const grant = await runBin('infra-server-ctl', ['grant-server-admin-permissions', 'bob', '-c', server.settingsFile], {
    cwd: scratch,
  });
  t.equal(grant.code, 0, show(grant));
  const allowed = await bob(['user', 'list']);
  t.equal(allowed.code, 0, show(allowed));
  t.equal(allowed.stdout, 'admin\nbob\npivotal\n');
  t.same(JSON.parse((await bob(['user-list', '-F', 'json'])).stdout), ['admin', 'bob', 'pivotal']);

  const keyFile = join(scratch, 'carol.pem');
  const create = await bob([
    'user',
    'create',
    'carol',
    '--email',
    'carol@example.com',
    '--password',
    'secret123',
    '--first-name',
    'Carol',
    '--last-name',
    'King',
    '-f',
    keyFile,
  ]);
  t.equal(create.code, 0, show(create));
  t.equal(create.stderr, 'Created user carol\n');
  const carol = new ApiClient({ baseUrl: server.url, userId: 'carol', key: await readFile(keyFile, 'utf8') });
  t.match(
    await carol.call('GET', '/users/carol'),
    { username: 'carol', display_name: 'Carol King' },
    'the written key signs as carol',
  );
  const edit = await bob(['user', 'edit', 'carol', '--display-name', 'Carol K.']);
  t.equal(edit.code, 0, show(edit));
  t.match(JSON.parse((await bob(['user', 'show', 'carol', '-F', 'json'])).stdout), {
    email: 'carol@example.com',
    display_name: 'Carol K.',
  });
  const del = await bob(['user', 'delete', 'carol', '-y']);
  t.equal(del.code, 0, show(del));
  const gone = await bob(['user', 'show', 'carol']);
  t.equal(gone.code, 1, show(gone));
  t.match(gone.stderr, /\(404 Not Found\)/);
  const superuser = await bob(['user', 'delete', 'pivotal', '-y']);
  t.equal(superuser.code, 1, show(superuser));
  t.match(superuser.stderr, /^ERROR: Missing \w+ permission\n/, 'server-admins cannot manage superusers (spec 5.6)');
});

t.test('config.rb is found in the working folder or above; connection problems say what to check', async (t) => {
  const project = join(scratch, 'project');
  await mkdir(join(project, '.infra'), { recursive: true });
  await mkdir(join(project, 'src'));
  await writeFile(join(project, '.infra', 'config.rb'), await readFile(configRb, 'utf8'));
  const found = await runBin('cli', ['node', 'status', 'n1'], { cwd: join(project, 'src'), env });
  t.equal(found.code, 0, show(found));
  t.match(found.stdout, /^n1 +up /m);

  const [wrongKey, nowhere, missing] = await Promise.all([
    cli(['job', 'list', '-k', join(server.dataDir, 'pivotal.pem')]),
    cli(['job', 'list', '--server-url', `http://127.0.0.1:${await freePort()}/organizations/default`]),
    runBin('cli', ['job', 'list'], { cwd: scratch, env }),
  ]);
  t.equal(wrongKey.code, 1, show(wrongKey));
  t.match(
    wrongKey.stderr,
    /\(401 Unauthorized\)\nThe server at .* did not accept user 'admin' signing with the key .*pivotal\.pem\.\nCheck node_name and client_key in /,
  );
  t.equal(nowhere.code, 1, show(nowhere));
  t.match(
    nowhere.stderr,
    /^ERROR: cannot reach the server at http:\/\/127\.0\.0\.1:\d+\/organizations\/default: is it running\?/,
  );
  t.equal(missing.code, 2, show(missing));
  t.match(missing.stderr, /^ERROR: no server URL: no config\.rb was found/);
});

t.test('the options every command takes may come before the command', async (t) => {
  const [json, status] = await Promise.all([
    runBin('cli', ['-c', configRb, '--format', 'json', 'job', 'list'], { cwd: scratch, env }),
    runBin('cli', ['--config', configRb, 'node', 'status', 'n1'], { cwd: scratch, env }),
  ]);
  t.equal(json.code, 0, show(json));
  const jobs = JSON.parse(json.stdout) as unknown[];
  t.ok(jobs.length > 0, 'the jobs started above are listed');
  t.equal(status.code, 0, show(status));
  t.match(status.stdout, /^n1 +up /m);
});

t.test('help at every level is printed on stdout and exits 0; a group alone is a usage error', async (t) => {
  const levels = [['--help'], ['help'], ['job', '--help'], ['job', 'start', '--help'], ['node', 'whitelist', '--help']];
  const runs = await Promise.all(levels.map((args) => runBin('cli', args, { cwd: scratch, env })));
  for (const r of runs) {
    t.equal(r.code, 0, show(r));
    t.equal(r.stderr, '');
  }
  const [main, help, job, start, whitelist] = runs.map((r) => r.stdout);
  t.match(main, /^Usage: cli COMMAND \[ARGUMENTS\] \[OPTIONS\]\n/);
  t.match(main, /^Options, before or after the command:\n {2}-c, --config FILE /m);
  t.equal(help, main);
  t.match(job, /^Usage: cli job SUBCOMMAND \.\.\.\n\n {2}job list /);
  t.match(start, /^Usage: cli job start COMMAND \[NODE \.\.\.\] \[options\]\n/);
  t.match(start, /^ {2}-q, --quorum N\|N% +nodes that must commit/m);
  t.match(whitelist, /^ {2}node whitelist remove +remove NAME from a node's whitelist$/m);

  const group = await runBin('cli', ['job'], { cwd: scratch, env });
  t.equal(group.code, 2, show(group));
  t.equal(group.stdout, '');
  t.match(group.stderr, /^Usage: cli job SUBCOMMAND/);
});
