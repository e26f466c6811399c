// Job metrics from job-feed events: started and finished counts, job duration, and commit-to-all-acked, read back
// in the text Prometheus scrapes.
import { Registry } from 'prom-client';
import t from 'tap';
import type { FeedEvent, FeedTap } from '../../src/feeds/feed-hub.js';
import { JobMetrics, type JobFeed } from '../../src/metrics/job-metrics.js';

const T0 = Date.UTC(2026, 10, 24, 12, 0, 0);
let seq = 0;
const ev = (event: string, atMs: number, data: Record<string, unknown> = {}): FeedEvent => ({
  id: `job-${++seq}`,
  event,
  at: T0 + atMs,
  data,
});

/** A feed whose events the test emits by hand. */
class HandFeed implements JobFeed {
  readonly listeners = new Set<FeedTap>();
  tap(listener: FeedTap): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(org: string, job: string, e: FeedEvent): void {
    for (const l of this.listeners) l(org, job, e);
  }
}

function setup() {
  const registry = new Registry();
  const metrics = new JobMetrics(registry);
  const feed = new HandFeed();
  const stop = metrics.watch(feed);
  const line = async (pattern: RegExp): Promise<string | undefined> =>
    (await registry.metrics()).split('\n').find((l) => pattern.test(l));
  const value = async (prefix: string): Promise<number | undefined> => {
    const l = (await registry.metrics()).split('\n').find((x) => x.startsWith(`${prefix} `));
    return l === undefined ? undefined : Number(l.slice(prefix.length + 1));
  };
  return { registry, feed, stop, line, value };
}

/** Voting of `nodes` nodes, each acking `ackMs` after the start, then the quorum and a run. */
function completeJob(feed: HandFeed, org: string, job: string, nodes: string[], ackMs: number, endMs: number) {
  feed.emit(org, job, ev('start', 0, { command: 'chef-client', node_count: nodes.length, quorum: nodes.length }));
  for (const node of nodes) feed.emit(org, job, ev('quorum_vote', ackMs, { node, status: 'success' }));
  feed.emit(org, job, ev('quorum_succeeded', ackMs));
  for (const node of nodes) feed.emit(org, job, ev('run_start', ackMs + 1, { node }));
  for (const node of nodes) feed.emit(org, job, ev('run_complete', endMs, { node, status: 'success' }));
  feed.emit(org, job, ev('job_complete', endMs, { status: 'complete' }));
}

t.test('a completed job counts as started and finished complete, with its duration and voting time', async (t) => {
  const { feed, value } = setup();
  completeJob(feed, 'default', 'a1', ['web1', 'web2'], 40, 2500);
  t.equal(await value('infra_jobs_started_total{org="default"}'), 1);
  t.equal(await value('infra_jobs_finished_total{org="default",status="complete"}'), 1);
  t.equal(await value('infra_job_duration_seconds_sum{status="complete"}'), 2.5, 'start to job_complete: 2.5 s');
  t.equal(await value('infra_job_duration_seconds_bucket{le="2.5",status="complete"}'), 1, 'in the 2.5 s bucket');
  t.equal(await value('infra_job_duration_seconds_bucket{le="1",status="complete"}'), 0, 'not in the 1 s bucket');
  t.equal(await value('infra_job_commit_to_all_acked_seconds_count'), 1);
  t.equal(await value('infra_job_commit_to_all_acked_seconds_sum'), 0.04, 'start to the last vote: 40 ms');
  t.equal(await value('infra_job_commit_to_all_acked_seconds_bucket{le="0.05"}'), 1);
  t.equal(await value('infra_job_commit_to_all_acked_seconds_bucket{le="0.025"}'), 0);
});

t.test('finished jobs are counted by organization and final status', async (t) => {
  const { feed, value } = setup();
  completeJob(feed, 'default', 'b1', ['web1'], 10, 100);
  completeJob(feed, 'acme', 'b2', ['db1'], 10, 100);
  for (const [job, status] of [
    ['b3', 'timed_out'],
    ['b4', 'aborted'],
    ['b5', 'crashed'],
  ] as const) {
    feed.emit('default', job, ev('start', 0, { node_count: 1 }));
    feed.emit('default', job, ev('job_complete', 1000, { status }));
  }
  t.equal(await value('infra_jobs_started_total{org="default"}'), 4);
  t.equal(await value('infra_jobs_started_total{org="acme"}'), 1);
  t.equal(await value('infra_jobs_finished_total{org="default",status="complete"}'), 1);
  t.equal(await value('infra_jobs_finished_total{org="acme",status="complete"}'), 1);
  t.equal(await value('infra_jobs_finished_total{org="default",status="timed_out"}'), 1);
  t.equal(await value('infra_jobs_finished_total{org="default",status="aborted"}'), 1);
  t.equal(await value('infra_jobs_finished_total{org="default",status="crashed"}'), 1);
  t.equal(await value('infra_job_duration_seconds_count{status="aborted"}'), 1);
  t.equal(
    await value('infra_job_commit_to_all_acked_seconds_count'),
    2,
    'jobs ended before voting did (aborted, crashed, timed out in this feed) add no voting time',
  );
});

t.test('a quorum that failed after every node voted ends voting: its time is observed', async (t) => {
  const { feed, value } = setup();
  feed.emit('default', 'c1', ev('start', 0, { node_count: 2, quorum: 2 }));
  feed.emit('default', 'c1', ev('quorum_vote', 15, { node: 'web1', status: 'success' }));
  feed.emit('default', 'c1', ev('quorum_vote', 30, { node: 'web2', status: 'failure' }));
  feed.emit('default', 'c1', ev('job_complete', 30, { status: 'quorum_failed' }));
  t.equal(await value('infra_jobs_finished_total{org="default",status="quorum_failed"}'), 1);
  t.equal(await value('infra_job_commit_to_all_acked_seconds_count'), 1);
  t.equal(await value('infra_job_commit_to_all_acked_seconds_sum'), 0.03);
});

t.test('voting ended by the voting timeout is left out of commit-to-all-acked', async (t) => {
  const { feed, value } = setup();
  feed.emit('default', 'd1', ev('start', 0, { node_count: 2, quorum: 1 }));
  feed.emit('default', 'd1', ev('quorum_vote', 10, { node: 'web1', status: 'success' }));
  feed.emit('default', 'd1', ev('quorum_vote', 60_000, { node: 'web2', status: 'voting_timeout' }));
  feed.emit('default', 'd1', ev('quorum_succeeded', 60_000));
  feed.emit('default', 'd1', ev('job_complete', 61_000, { status: 'complete' }));
  t.equal(await value('infra_job_commit_to_all_acked_seconds_count'), 0, 'a node never decided');
  t.equal(await value('infra_job_duration_seconds_sum{status="complete"}'), 61, 'the job itself is timed');
});

t.test('a job resumed after a restart is counted finished, without a duration it cannot know', async (t) => {
  const { feed, value } = setup();
  feed.emit('default', 'e1', ev('run_complete', 5, { node: 'web1', status: 'success' }));
  feed.emit('default', 'e1', ev('job_complete', 10, { status: 'complete' }));
  t.equal(await value('infra_jobs_finished_total{org="default",status="complete"}'), 1);
  t.equal(await value('infra_jobs_started_total{org="default"}'), undefined, 'its start was in another process');
  t.equal(await value('infra_job_duration_seconds_count{status="complete"}'), undefined);
});

t.test('a status this version does not know is counted as other', async (t) => {
  const { feed, value } = setup();
  feed.emit('default', 'f1', ev('start', 0));
  feed.emit('default', 'f1', ev('job_complete', 10, { status: 'vanished' }));
  feed.emit('default', 'f2', ev('job_complete', 10, { status: 'running' }));
  t.equal(await value('infra_jobs_finished_total{org="default",status="other"}'), 2, 'a status not final is other');
});

t.test('a rollout counts its waves started and ended, and a halt once failures passed its budget', async (t) => {
  const { feed, value } = setup();
  feed.emit('default', 'r1', ev('start', 0, { command: 'deploy', node_count: 6, quorum: 1 }));
  feed.emit('default', 'r1', ev('wave_start', 0, { wave: 1, nodes: 1, quorum: 1 }));
  feed.emit('default', 'r1', ev('wave_end', 100, { wave: 1, status: 'complete', failures: 0 }));
  feed.emit('default', 'r1', ev('wave_start', 200, { wave: 2, nodes: 2, quorum: 2 }));
  feed.emit('default', 'r1', ev('wave_end', 300, { wave: 2, status: 'complete', failures: 2 }));
  feed.emit('default', 'r1', ev('job_complete', 300, { status: 'max_failures_exceeded' }));
  feed.emit('other', 'r2', ev('wave_start', 0, { wave: 1, nodes: 3, quorum: 3 }));
  feed.emit('other', 'r2', ev('wave_end', 50, { wave: 1, status: 'quorum_failed', failures: 0 }));
  feed.emit('other', 'r2', ev('job_complete', 50, { status: 'quorum_failed' }));
  t.equal(await value('infra_rollout_waves_started_total{org="default"}'), 2);
  t.equal(await value('infra_rollout_waves_ended_total{org="default",status="complete"}'), 2);
  t.equal(await value('infra_rollout_waves_ended_total{org="other",status="quorum_failed"}'), 1);
  t.equal(await value('infra_rollouts_halted_total{org="default"}'), 1, 'the halted rollout');
  t.equal(await value('infra_rollouts_halted_total{org="other"}'), undefined, 'a quorum failure is no halt');
  t.equal(await value('infra_jobs_finished_total{org="default",status="max_failures_exceeded"}'), 1);
});

t.test('every metric has HELP text, and the feed can be let go', async (t) => {
  const { feed, stop, line, value } = setup();
  for (const name of [
    'infra_jobs_started_total',
    'infra_jobs_finished_total',
    'infra_job_duration_seconds',
    'infra_job_commit_to_all_acked_seconds',
    'infra_rollout_waves_started_total',
    'infra_rollout_waves_ended_total',
    'infra_rollouts_halted_total',
  ])
    t.match(await line(new RegExp(`^# HELP ${name} `)), /\S+ \S+ \S+ \w/, `${name} has HELP text`);
  stop();
  feed.emit('default', 'g1', ev('start', 0));
  t.equal(feed.listeners.size, 0, 'no listener is left on the feed');
  t.equal(await value('infra_jobs_started_total{org="default"}'), undefined, 'events after stop are not counted');
});
