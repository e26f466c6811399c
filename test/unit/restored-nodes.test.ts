// A restore counts up the nodes a job in flight says answered it (ready or running, or still `new` in a voting
// job, which sent them a commit): their records may be older than what the jobs heard.
import t from 'tap';
import { countNodes } from '../../actors/push/job-machine.js';
import type { JobState, NodeJobStatus } from '../../actors/push/job-model.js';
import type { NodeAvailability } from '../../actors/push/push-data.js';
import { upFromJobs } from '../../actors/push/restored-nodes.js';
import { NODE_JOB_STATUSES, type JobStatus } from '../../src/push/job-states.js';

const AT = Date.UTC(2026, 10, 21, 10, 0, 0);

function job(id: string, status: JobStatus, nodes: Record<string, NodeJobStatus>): JobState {
  return {
    id,
    command: 'c',
    options: {},
    run_timeout: 60,
    voting_timeout: 60,
    quorum: 1,
    status,
    nodes,
    counts: countNodes(nodes),
    exit_status: {},
    node_updated_at: {},
    created_at: AT - 10_000,
    updated_at: AT - 10_000,
    voting_deadline: null,
    run_deadline: null,
  };
}

const down = (node: string): NodeAvailability => ({
  node_name: node,
  status: 'down',
  updated_at: 5,
  incarnation: 'old-inc',
  available: false,
});
const restoredUp = (node: string): NodeAvailability => ({
  node_name: node,
  status: 'up',
  updated_at: AT,
  incarnation: null,
  available: true,
});

t.test('nodes a running job records ready or running are restored up and available, client unknown', async (t) => {
  const records = new Map([
    ['r1', down('r1')],
    ['r2', down('r2')],
  ]);
  upFromJobs(records, [job('j1', 'running', { r1: 'ready', r2: 'running', absent: 'running' })], AT);
  t.same(records.get('r1'), restoredUp('r1'));
  t.same(records.get('r2'), restoredUp('r2'));
  t.same(records.get('absent'), restoredUp('absent'), 'a node with no record at all gets one');
});

t.test('a node still new in a voting job was sent a commit: it is restored up', async (t) => {
  const records = new Map([['v', down('v')]]);
  upFromJobs(records, [job('j1', 'voting', { v: 'new' })], AT);
  t.same(records.get('v'), restoredUp('v'));
});

t.test('a node new in a job not voting yet is left as its record says', async (t) => {
  const records = new Map([['n', down('n')]]);
  upFromJobs(records, [job('j1', 'new', { n: 'new' }), job('j2', 'running', { n: 'new' })], AT);
  t.same(records.get('n'), down('n'));
});

t.test('nodes whose job status says they did not answer it are left alone', async (t) => {
  const others = NODE_JOB_STATUSES.filter((s) => s !== 'new' && s !== 'ready' && s !== 'running');
  const records = new Map(others.map((s) => [s, down(s)]));
  upFromJobs(records, [job('j1', 'running', Object.fromEntries(others.map((s) => [s, s])))], AT);
  for (const s of others) t.same(records.get(s), down(s), `${s}: its record kept`);
  t.equal(records.size, others.length, 'and no record added');
});

t.test('a node already up keeps its own record', async (t) => {
  const up: NodeAvailability = {
    node_name: 'u',
    status: 'up',
    updated_at: 77,
    incarnation: 'inc-live',
    available: false,
    gateway: 'member-a',
  };
  const records = new Map([['u', { ...up }]]);
  upFromJobs(records, [job('j1', 'running', { u: 'running' })], AT);
  t.same(records.get('u'), up, 'incarnation, time, availability and gateway unchanged');
});

t.test('with several jobs in flight, each counts; nodes in none are untouched', async (t) => {
  const records = new Map([
    ['a', down('a')],
    ['b', down('b')],
    ['idle', down('idle')],
  ]);
  upFromJobs(records, [job('j1', 'running', { a: 'running' }), job('j2', 'voting', { b: 'new' })], AT);
  t.equal(records.get('a')?.status, 'up');
  t.equal(records.get('b')?.status, 'up');
  t.same(records.get('idle'), down('idle'));
});
