// infra-loadtest against a server it is given (--server): a later run reuses the nodes and clients an earlier one
// made, waits out the server's hold on nodes an earlier run's processes were heard for, and --cleanup deletes them.
import t from 'tap';
import { exitMessage, loadtest } from '../support/loadtest-run.js';
import { startServerProcess } from '../support/server-process.js';

// Three runs of the tester, the second waiting out the server's hold.
t.setTimeout(200_000);

t.test('a given server: later runs reuse the nodes, and --cleanup deletes them', async (t) => {
  // An offline window of ten heartbeats: the server holds a node for the process last heard during 10 s, so the
  // next run, started at once, is refused at first (its provisioning, a few seconds on a busy machine, ends within
  // the hold) and plays the nodes once the server lets go of them. Nodes still come online after two heartbeats,
  // so only the second run waits out the hold.
  const server = await startServerProcess(t, {
    settings: { server_name: '127.0.0.1', heartbeat_interval: 1000, offline_threshold: 10 },
  });
  const key = `${server.dataDir}/admin.pem`;
  const clientKey = `${t.testdir()}/clients.pem`;
  const common = ['--server', server.url, '--key', key, '--nodes', '12', '--jobs', '1', '--prefix', 'reuse-'];
  const first = await loadtest(t, common);
  t.equal(first.run.code, 0, exitMessage(first.run));
  t.equal(first.figures.reused_nodes, 0);
  t.same(first.figures.jobs_by_status, { complete: 1 });
  t.equal(first.figures.nodes_held_by_another_process, 0, 'new nodes are held by no one');
  t.ok((first.figures.server_rss_mb ?? 0) > 0, 'the local server is found by its port');

  const admin = await server.client('admin');
  const names = async (kind: 'nodes' | 'clients') =>
    Object.keys((await admin.call('GET', `/organizations/default/${kind}`)) as Record<string, string>).filter((n) =>
      n.startsWith('reuse-'),
    );
  t.equal((await names('nodes')).length, 12, 'the first run left its nodes');

  // A new key for the clients (the first run's is gone), saved for the third run.
  const second = await loadtest(t, [...common, '--client-key', clientKey]);
  t.equal(second.run.code, 0, exitMessage(second.run));
  t.equal(second.figures.reused_nodes, 12, 'every node and client reused, with a new key');
  t.same(second.figures.jobs_by_status, { complete: 1 });
  const held = second.figures.nodes_held_by_another_process;
  t.ok(held > 0 && held <= 12, `the first run's processes held nodes at first (${held}), each counted once`);
  t.same(second.figures.errors, [], 'being held is waited out, not an error');
  t.match(second.run.stdout, /held: \d+ nodes were first refused as held by another process/);

  const third = await loadtest(t, [...common, '--client-key', clientKey, '--cleanup']);
  t.equal(third.run.code, 0, exitMessage(third.run));
  t.equal(third.figures.reused_nodes, 12, 'every node and client reused as they were');
  t.same(third.figures.jobs_by_status, { complete: 1 });
  t.equal(third.figures.deleted_nodes, 12);
  t.same(await names('nodes'), [], 'no node left');
  t.same(await names('clients'), [], 'no client left');
});
