// The history of a chaos run, from both sides: what the runner asked (job submissions and their answers), what the
// server showed (each job as GET showed it last, samples of who serves which partition and which nodes are
// available), the faults applied and healed, and each node's own record. Plain JSON, so that a saved run can be
// checked again; the recorder only appends to it.
import type { JobBody } from '../../../src/api/push-jobs.js';
import { isFinished, type JobStatus } from '../../../src/push/job-states.js';
import type { ClientRecord } from './client-records.js';
import type { Fault } from './nemesis.js';

export const REDIS_KINDS = ['single', 'sentinel', 'cluster'] as const;
export type RedisKind = (typeof REDIS_KINDS)[number];

export type JobRole = 'long' | 'short';

/** Per-node status to the names in it, as GET .../pushy/jobs/ID answers. */
export type NodeLists = JobBody['nodes'];

export interface Submission {
  round: number;
  role: JobRole;
  /** The URL the POST went to, and the member behind it (null: the balancer, which picks one). */
  via: string;
  member: number | null;
  nodes: string[];
  command: string;
  runTimeoutS: number;
  votingTimeoutS: number;
  /** When the first try was sent. */
  at: number;
  /** The job's id once a try was answered 201; null when every try was refused. */
  id: string | null;
  /** The answer kept: the 201, or the last refusal. */
  answer: { status: number | null; body: unknown };
  /** Every try: its status, or the error of a request that got no answer. */
  tries: Array<{ at: number; status: number | null; error?: string }>;
}

/** When a job must have ended: voting_timeout and run_timeout, then `failoverMs` for the faults to cost. */
export function jobDeadline(s: Submission, failoverMs: number): number {
  return s.at + (s.votingTimeoutS + s.runTimeoutS) * 1000 + failoverMs;
}

export interface JobView {
  id: string;
  /** The last GET answered: when, the job's status and node lists, and the server's updated_at (epoch ms). */
  last: { at: number; status: JobStatus; nodes: NodeLists; updatedAt: number } | null;
  /** When a GET first showed it finished (spec 3.1); null while it never did. */
  endedAt: number | null;
}

export interface FaultEvent {
  at: number;
  phase: 'start' | 'end';
  fault: Fault;
  /** The member hit (its index); null for a fault of Redis. */
  member: number | null;
  /** What was hit, as it was then: a member's pid, what it held, the Redis port. */
  detail: string;
  /** The fault could not be applied or healed (a member that did not start again). */
  error?: string;
  /** On a start of a Redis failover: when a promoted master took writes again, before the fault was healed. */
  redisBackAt?: number;
}

export interface MemberSample {
  member: number;
  /** GET /_status answered within the sampler's timeout. */
  answered: boolean;
  held: string[];
  /** How many members it counts live. */
  members: number;
  connected: number;
  status: string | null;
  store: 'ok' | 'unavailable' | null;
}

export interface NodeState {
  status: 'up' | 'down';
  availability: 'available' | 'unavailable';
}

export interface Sample {
  /** When the sample was started. */
  at: number;
  members: MemberSample[];
  /** node_states of the default organization; null when no member answered it in time. */
  nodes: Record<string, NodeState> | null;
  /** The member that answered node_states. */
  nodesVia: number | null;
}

export interface RunSettings {
  seed: number;
  rounds: number;
  members: number;
  nodes: string[];
  redis: RedisKind;
  balancer: boolean;
  leaseTtlMs: number;
  heartbeatMs: number;
  offlineThreshold: number;
  /** Every partition a member may serve: `global`, `p0` … */
  partitions: string[];
  /** Each member's ports (kept across its restarts): a node's `connected to tcp://…:PORT` names its gateway. */
  memberPorts: Array<{ api: number; command: number; heartbeat: number }>;
}

export interface History {
  settings: RunSettings;
  plan: Fault[];
  startedAt: number;
  endedAt: number;
  submissions: Submission[];
  jobs: Record<string, JobView>;
  faults: FaultEvent[];
  samples: Sample[];
  /** Jobs a user aborted (POST .../abort answered): their nodes may be `aborted`. */
  userAborts: Array<{ job: string; at: number }>;
  records: Record<string, ClientRecord>;
}

/** Collects a run's history as it happens. */
export class HistoryRecorder {
  private readonly history: History;

  constructor(settings: RunSettings, plan: Fault[], now: number) {
    this.history = {
      settings,
      plan,
      startedAt: now,
      endedAt: now,
      submissions: [],
      jobs: {},
      faults: [],
      samples: [],
      userAborts: [],
      records: {},
    };
  }

  submitted(s: Submission): void {
    this.history.submissions.push(s);
    if (s.id !== null) this.history.jobs[s.id] ??= { id: s.id, last: null, endedAt: null };
  }

  /** A GET of a job answered at `at`. */
  seen(job: JobBody, at: number): JobView {
    const view = (this.history.jobs[job.id] ??= { id: job.id, last: null, endedAt: null });
    view.last = { at, status: job.status, nodes: job.nodes, updatedAt: Date.parse(job.updated_at) };
    if (view.endedAt === null && isFinished(job.status)) view.endedAt = at;
    return view;
  }

  job(id: string): JobView | undefined {
    return this.history.jobs[id];
  }

  fault(e: FaultEvent): void {
    this.history.faults.push(e);
  }

  sampled(s: Sample): void {
    this.history.samples.push(s);
  }

  /** The latest sample, for the runner's waits. */
  lastSample(): Sample | undefined {
    return this.history.samples.at(-1);
  }

  aborted(job: string, at: number): void {
    this.history.userAborts.push({ job, at });
  }

  /** The history so far, to read: the runner's waits and its final pass over the jobs. */
  view(): Readonly<History> {
    return this.history;
  }

  finish(records: Record<string, ClientRecord>, now: number): History {
    this.history.records = records;
    this.history.endedAt = now;
    return this.history;
  }
}
