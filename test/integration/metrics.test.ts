// GET /metrics on metrics_port: a real server, a node heartbeating over ZeroMQ, signed API requests, and the
// lines an operator reads in Prometheus. The API port never serves the metrics.
import t from 'tap';
import { startTestServer } from '../support/server.js';
import { startJob, waitForJob } from '../support/push-api.js';
import { poll, startTestNode } from '../support/test-node.js';
import { samplesOf, scrape, valueOf, type Scrape } from '../support/metrics.js';

const FAST = { heartbeat_interval: 100, offline_threshold: 8, online_threshold: 2 };

t.test('without metrics_port nothing serves metrics', async (t) => {
  const s = await startTestServer(t, 'file');
  t.equal(s.running.metricsUrl, null, 'no metrics listener');
  const res = await s.admin.request('GET', '/metrics');
  t.equal(res.status, 404, 'the API answers a signed GET /metrics with 404');
});

t.test('the metrics listener', async (t) => {
  const s = await startTestServer(t, 'file', { ...FAST, metrics_port: 0 });
  const url = s.running.metricsUrl ?? '';
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/, 'listens on its own port, on loopback by default');
  t.not(new URL(url).port, new URL(s.url).port, 'apart from the API port');
  const node = await startTestNode(s, 'm-web1');
  t.teardown(() => node.stop());

  t.test('is in the Prometheus text format, with HELP and TYPE for each metric', async (t) => {
    const m = await scrape(url);
    t.equal(m.status, 200);
    t.match(m.contentType, /^text\/plain; version=0\.0\.4/);
    t.match(m.text, /^# HELP infra_heartbeats_accepted_total \S.+$/m, 'metrics say what they count');
    t.match(m.text, /^# TYPE infra_heartbeats_accepted_total counter$/m);
    t.match(m.text, /^# TYPE infra_http_request_duration_seconds histogram$/m);
    t.ok(valueOf(m, 'process_resident_memory_bytes')! > 0, 'process memory is exported');
    t.ok(samplesOf(m, 'nodejs_eventloop_lag_p99_seconds').length === 1, 'event-loop delay is exported');
    const other = await fetch(new URL('/', url));
    t.equal(other.status, 404, 'the listener serves /metrics only');
  });

  t.test('the API port answers 404 for /metrics and never shows them', async (t) => {
    const signed = await s.admin.request('GET', '/metrics');
    t.equal(signed.status, 404, 'a signed GET /metrics is not found');
    const unsigned = await fetch(new URL('/metrics', s.url));
    t.equal(unsigned.status, 400, 'an unsigned one is refused like any other path');
    t.notMatch(await unsigned.text(), /infra_/);
  });

  t.test('requests are counted by route pattern and status, with a latency histogram', async (t) => {
    const nodesRoute = '/organizations/:org/nodes/:name';
    t.equal((await s.admin.request('GET', '/organizations/default/nodes/m-web1')).status, 200);
    t.equal((await s.admin.request('GET', '/organizations/default/nodes/m-web1')).status, 200);
    t.equal((await s.admin.request('GET', '/organizations/default/nodes/no-such-node')).status, 404);
    t.equal((await fetch(new URL('/organizations/default/nodes/m-web1', s.url))).status, 400);
    t.equal((await s.admin.request('POST', '/organizations/default/nodes/m-web1', {})).status, 405);
    const m = await scrape(url);
    const count = (method: string, status: string) =>
      valueOf(m, 'infra_http_requests_total', { method, route: nodesRoute, status });
    t.equal(count('GET', '200'), 2, 'two GETs answered 200');
    t.equal(count('GET', '404'), 1, 'one GET of a missing node answered 404');
    t.equal(count('GET', '400'), 1, 'the unsigned GET is counted under the route it asked for, with 400');
    t.equal(count('POST', '405'), 1, 'a method the route does not take is 405 under the same pattern');
    const routes = new Set(samplesOf(m, 'infra_http_requests_total').map((x) => x.labels.route ?? ''));
    t.ok(
      samplesOf(m, 'infra_http_requests_total', { route: 'unmatched', status: '404' }).length > 0,
      'a path no route matches (the signed GET /metrics above) is labelled unmatched',
    );
    t.notOk(routes.has('/*'), `no request is labelled with the middleware's pattern (${[...routes].join(', ')})`);
    t.same(
      [...routes].filter((r) => /default|m-web1|no-such-node/.test(r)),
      [],
      'no route label carries an organization or node name',
    );
    t.equal(
      valueOf(m, 'infra_http_request_duration_seconds_count', { method: 'GET', route: nodesRoute }),
      4,
      'every GET of the route is timed',
    );
    t.equal(
      valueOf(m, 'infra_http_request_duration_seconds_bucket', { method: 'GET', route: nodesRoute, le: '+Inf' }),
      4,
      'the histogram has its +Inf bucket',
    );
    t.ok(samplesOf(m, 'infra_http_request_duration_seconds_bucket', { route: nodesRoute }).length > 5, 'and others');
  });

  t.test('nodes are counted by organization, status and availability', async (t) => {
    t.equal((await s.pivotal.request('POST', '/organizations', { name: 'm-acme', full_name: 'Acme' })).status, 201);
    t.equal((await s.admin.request('POST', '/organizations/default/nodes', { name: 'm-silent' })).status, 201);
    const m = await scrape(url);
    const nodes = (org: string, status: string, availability: string) =>
      valueOf(m, 'infra_nodes', { org, status, availability });
    t.equal(nodes('default', 'up', 'available'), 1, 'the heartbeating node is up and available');
    t.equal(nodes('default', 'down', 'unavailable'), 1, 'a node never heard is down');
    t.equal(nodes('default', 'up', 'unavailable'), 0);
    t.equal(nodes('m-acme', 'up', 'available'), 0, 'a new organization shows its counts at 0');
    t.equal(nodes('m-acme', 'down', 'unavailable'), 0);
    t.equal(valueOf(m, 'infra_push_connected_nodes'), 1, 'one node is connected');
  });

  t.test('heartbeats accepted, and dropped messages by reason', async (t) => {
    const before = await scrape(url);
    const accepted = valueOf(before, 'infra_heartbeats_accepted_total') ?? 0;
    t.ok(accepted > 0, `heartbeats were accepted (${accepted})`);
    t.equal(valueOf(before, 'infra_push_messages_dropped_total', { reason: 'bad_signature' }), 0);
    node.send('heartbeat', { type: 'heartbeat', job_state: 'idle', job_id: null }, 'forge');
    // Waits for the drop and for later heartbeats: either failing to come shows as a timeout naming them.
    const after = await poll('the forged heartbeat to be dropped and later ones accepted', async () => {
      const m = await scrape(url);
      const dropped = valueOf(m, 'infra_push_messages_dropped_total', { reason: 'bad_signature' });
      return dropped === 1 && valueOf(m, 'infra_heartbeats_accepted_total')! > accepted ? m : undefined;
    });
    t.equal(valueOf(after, 'infra_push_messages_dropped_total', { reason: 'bad_signature' }), 1, 'one forged');
    t.equal(valueOf(after, 'infra_push_messages_dropped_total', { reason: 'replay' }), 0, 'every reason is listed');
  });

  t.test('jobs are counted as they start and finish, with their duration and voting time', async (t) => {
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['m-web1'] });
    await waitForJob(s.admin, id, 'complete');
    const m = await poll('the finished job to be counted', async () => {
      const read = await scrape(url);
      return valueOf(read, 'infra_jobs_finished_total', { org: 'default', status: 'complete' }) === 1
        ? read
        : undefined;
    });
    t.equal(valueOf(m, 'infra_jobs_started_total', { org: 'default' }), 1);
    t.equal(valueOf(m, 'infra_job_duration_seconds_count', { status: 'complete' }), 1);
    t.equal(valueOf(m, 'infra_job_commit_to_all_acked_seconds_count'), 1, 'its voting was timed');
  });

  t.test('store writes are timed by operation', async (t) => {
    const m: Scrape = await scrape(url);
    const writes = samplesOf(m, 'infra_store_write_duration_seconds_count');
    const total = writes.reduce((n, x) => n + x.value, 0);
    t.ok(total > 0, `writes were timed: ${writes.map((x) => `${x.labels.operation}=${x.value}`).join(', ')}`);
    t.equal(samplesOf(m, 'infra_store_write_failures_total').length, 0, 'no write failed');
    t.equal(valueOf(m, 'infra_store_degraded'), 0, 'the store is healthy');
  });
});
