// The checker of a chaos run: pure, it takes a history and its bounds and answers each invariant the history breaks,
// by name, with what the node's own record and the server each said; and what is worth reading though it breaks
// none (quorum failures and why, dropped messages). The invariants are those of the cluster's design ("Invariants
// under any fault schedule"): the server's view alone cannot show a lost result, so both sides are read.
import type { NodeJobRecord } from './client-records.js';
import { jobDeadline, type History, type NodeLists, type RunSettings, type Submission } from './history.js';
import type { Fault } from './nemesis.js';
import { findUnowned } from './unowned.js';

export const INVARIANTS = [
  'job_never_ended',
  'result_lost',
  'spurious_crash',
  'spurious_abort',
  'node_not_back',
  'partition_unowned',
] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Violation {
  invariant: Invariant;
  /** The round it happened in, when one job or fault places it. */
  round: number | null;
  job?: string;
  node?: string;
  partitions?: string[];
  detail: string;
}

export interface Bounds {
  /** Added to a job's voting_timeout and run_timeout before it must have ended: a take-over, Redis away, the fault. */
  failoverMs: number;
  /** After a fault is healed, how long until a node whose client runs is available again. */
  nodeBackMs: number;
  /** How long a partition may be served by no live member while Redis answers. */
  unownedMs: number;
  /** Slack between a node's log times (ms) and the server's (HTTP dates, whole seconds). */
  slackMs: number;
}

/**
 * Bounds from the run's settings: a job has its run_timeout plus the longest fault planned and two leases (one to
 * be deposed, one to be taken over); a node two down windows (the design's bound) plus a lease, for a member that
 * wakes deposed to learn it; a partition a lease plus 3 s (renewals at a third of it, the take-over's restore, the
 * sampler's half second at either end).
 */
export function defaultBounds(s: RunSettings, plan: readonly Fault[]): Bounds {
  const longest = Math.max(0, ...plan.map((f) => f.durationMs));
  const downMs = s.offlineThreshold * s.heartbeatMs;
  return {
    failoverMs: longest + 2 * s.leaseTtlMs + 10_000,
    nodeBackMs: 2 * downMs + s.leaseTtlMs + Math.max(2000, 2 * s.heartbeatMs),
    unownedMs: s.leaseTtlMs + 3000,
    slackMs: 1500,
  };
}

export interface QuorumFailure {
  job: string;
  round: number;
  role: string;
  why: string;
}

export interface Notes {
  /** Jobs that ended quorum_failed: which nodes did not vote yes, and what their records say. */
  quorumFailed: QuorumFailure[];
  /** Nodes that dropped server messages, by reason (replay first), with the first line of each. */
  drops: Array<{ node: string; reason: string; count: number; line: string; gateway: string }>;
  /** Submissions refused on every try (no job to check). */
  refused: Array<{ round: number; role: string; answer: string }>;
  /** Nodes not available in the last sample. */
  stuck: string[];
  /**
   * Each node not available when a fault was healed, and how long after the healing it was first seen available
   * again (null: not in the run): the measured side of invariant 4.
   */
  back: NodeBack[];
}

export interface NodeBack {
  round: number;
  node: string;
  ms: number | null;
}

export interface CheckResult {
  violations: Violation[];
  notes: Notes;
}

export function checkHistory(h: History, b: Bounds): CheckResult {
  const violations = [
    ...jobsNeverEnded(h, b),
    ...resultsLost(h),
    ...spuriousCrashes(h),
    ...spuriousAborts(h, b),
    ...nodesNotBack(h, b),
    ...findUnowned(h, b.unownedMs).map((u) => ({
      invariant: 'partition_unowned' as const,
      round: u.round,
      partitions: u.partitions,
      detail: u.detail,
    })),
  ];
  return { violations, notes: notesOf(h) };
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 23);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The node's status in the job's lists, or `absent`. */
export function statusOf(nodes: NodeLists, node: string): string {
  for (const [status, names] of Object.entries(nodes)) if (names?.includes(node)) return status;
  return 'absent';
}

/** Each submitted job with its node records, for the per-job invariants. */
function* submittedJobs(h: History): Generator<{ s: Submission; id: string }> {
  for (const s of h.submissions) if (s.id !== null) yield { s, id: s.id };
}

const recordOf = (h: History, node: string, job: string): NodeJobRecord | undefined => h.records[node]?.jobs[job];

const NAMES_SHOWN = 12;

/** What the server shows of a job last: `complete (succeeded: a, b)` or `never answered`. */
function serverView(h: History, id: string): string {
  const last = h.jobs[id]?.last;
  if (!last) return 'the server never answered a GET of it';
  const entries = Object.entries(last.nodes);
  // A large fleet's names would bury the violation: counts say enough there.
  const many = entries.reduce((n, [, names]) => n + (names?.length ?? 0), 0) > NAMES_SHOWN;
  const lists = entries
    .map(([status, names]) => (many ? `${status} ${names?.length ?? 0}` : `${status}: ${names?.join(', ')}`))
    .join('; ');
  return `the server shows it ${last.status} (${lists || 'no nodes'})`;
}

function jobsNeverEnded(h: History, b: Bounds): Violation[] {
  const out: Violation[] = [];
  for (const { s, id } of submittedJobs(h)) {
    const view = h.jobs[id];
    const bound = jobDeadline(s, b.failoverMs) - s.at;
    const base = { invariant: 'job_never_ended' as const, round: s.round, job: id };
    if (!view?.endedAt) {
      const since = (view?.last?.at ?? h.endedAt) - s.at;
      out.push({
        ...base,
        detail: `${s.role} job still unfinished ${seconds(since)} after its start: ${serverView(h, id)}`,
      });
    } else if (view.endedAt - s.at > bound)
      out.push({
        ...base,
        detail: `${s.role} job ended ${seconds(view.endedAt - s.at)} after its start, past the bound of ${seconds(bound)}: ${serverView(h, id)}`,
      });
  }
  return out;
}

function resultsLost(h: History): Violation[] {
  const out: Violation[] = [];
  for (const { s, id } of submittedJobs(h)) {
    const last = h.jobs[id]?.last;
    for (const node of s.nodes) {
      const outcome = recordOf(h, node, id)?.outcome;
      if (outcome === undefined) continue;
      const shown = last ? statusOf(last.nodes, node) : 'unread';
      if (shown === outcome.status) continue;
      out.push({
        invariant: 'result_lost',
        round: s.round,
        job: id,
        node,
        detail: `${node} reported ${outcome.status} (${outcome.how}) at ${clock(outcome.at)}; ${serverView(h, id)}, ${node} ${shown}`,
      });
    }
  }
  return out;
}

/** `crashed` is the node's process or its command dying (design, invariant 2): its record must say so. */
function spuriousCrashes(h: History): Violation[] {
  const out: Violation[] = [];
  for (const { s, id } of submittedJobs(h)) {
    const last = h.jobs[id]?.last;
    if (!last || userAborted(h, id)) continue;
    for (const node of last.nodes.crashed ?? []) {
      const r = recordOf(h, node, id);
      const how = r?.outcome?.how ?? '';
      const restarted = (h.records[node]?.starts ?? []).some((at) => at > (r?.committed?.at ?? s.at));
      if (/^(killed by|could not start)/.test(how) || restarted) continue;
      out.push({
        invariant: 'spurious_crash',
        round: s.round,
        job: id,
        node,
        detail: `${serverView(h, id)}, ${node} crashed; its own record: ${recordText(r)}`,
      });
    }
  }
  return out;
}

/**
 * A node is told to abort only for a job a user aborted, or one that has ended (timed out, failed its quorum,
 * crashed): an abort it logged before the job's end, or an `aborted` the server shows without a user's abort or the
 * node's own shutdown, is spurious (design, invariant 3).
 */
function spuriousAborts(h: History, b: Bounds): Violation[] {
  const out: Violation[] = [];
  for (const { s, id } of submittedJobs(h)) {
    if (userAborted(h, id)) continue;
    const view = h.jobs[id];
    const last = view?.last;
    const endedBy = view?.endedAt ? (last?.updatedAt ?? Infinity) : Infinity;
    for (const node of s.nodes) {
      const r = recordOf(h, node, id);
      const shownAborted = last !== null && last !== undefined && statusOf(last.nodes, node) === 'aborted';
      const early = r?.aborted !== undefined && r.aborted.at < endedBy - b.slackMs;
      if (!(early || (shownAborted && r?.shutdown === undefined))) continue;
      const when = r?.aborted
        ? `told to abort at ${clock(r.aborted.at)}${view?.endedAt ? `, the job ending at ${clock(endedBy)} (server's updated_at)` : ', the job never ending'}`
        : 'never told to abort';
      out.push({
        invariant: 'spurious_abort',
        round: s.round,
        job: id,
        node,
        detail: `no user aborted it; ${node} ${when}; ${serverView(h, id)}, ${node} ${last ? statusOf(last.nodes, node) : 'unread'}; its own record: ${recordText(r)}`,
      });
    }
  }
  return out;
}

/** After each fault is healed, every node must be seen available within the bound (design, invariant 4). */
function nodesNotBack(h: History, b: Bounds): Violation[] {
  const out: Violation[] = [];
  const withNodes = h.samples.filter((s) => s.nodes !== null);
  const lastAt = Math.max(h.endedAt, ...withNodes.map((s) => s.at));
  for (const end of h.faults) {
    if (end.phase !== 'end' || end.error !== undefined) continue;
    const until = end.at + b.nodeBackMs;
    if (lastAt < until) continue; // the run ended before the bound did: nothing to judge
    const window = withNodes.filter((s) => s.at >= end.at && s.at <= until);
    for (const node of h.settings.nodes) {
      if (window.some((s) => s.nodes?.[node]?.availability === 'available')) continue;
      const seen = window.at(-1)?.nodes?.[node];
      const back = withNodes.find((s) => s.at > until && s.nodes?.[node]?.availability === 'available');
      const record = h.records[node];
      const reconfigures = (record?.reconfigures ?? []).filter((r) => r.at >= end.at - 30_000 && r.at <= until);
      const gateways = (record?.connections ?? [])
        .filter((x) => x.at >= end.at - 30_000 && x.at <= until)
        .map((x) => gatewayAt(h, node, x.at));
      out.push({
        invariant: 'node_not_back',
        round: end.fault.round,
        node,
        detail:
          `not available within ${seconds(b.nodeBackMs)} after ${end.fault.kind} was healed at ${clock(end.at)}` +
          (window.length === 0
            ? ' (no member answered node_states meanwhile)'
            : ` (last seen ${seen ? `${seen.status}, ${seen.availability}` : 'absent'} at ${clock(window.at(-1)?.at ?? 0)})`) +
          `; ${back ? `available again ${seconds(back.at - end.at)} after the healing` : 'never available again in the run'}` +
          `; its client reconfigured ${reconfigures.length} times from 30 s before${reconfigures.length ? ` (${reconfigures.at(-1)?.why})` : ''}` +
          `, connecting to ${gateways.join(', ') || 'none'} (${gatewayAt(h, node, until)} at the bound)` +
          `, and dropped ${JSON.stringify(record?.drops ?? {})} in the run`,
      });
    }
  }
  return out;
}

/** The member whose heartbeat port the node last connected to by `at` (`m1`), from its own record. */
export function gatewayAt(h: History, node: string, at: number): string {
  const last = (h.records[node]?.connections ?? []).filter((c) => c.at <= at).at(-1);
  if (last === undefined) return 'no member yet';
  const port = Number(/:(\d+)$/.exec(last.heartbeat)?.[1]);
  const member = h.settings.memberPorts.findIndex((p) => p.heartbeat === port);
  return member < 0 ? last.heartbeat : `m${member}`;
}

const userAborted = (h: History, id: string) => h.userAborts.some((a) => a.job === id);

/** A node's record of one job in a line: its steps with their times. */
export function recordText(r: NodeJobRecord | undefined): string {
  if (r === undefined) return 'nothing logged for this job';
  const steps: string[] = [];
  if (r.committed) steps.push(`committed ${clock(r.committed.at)}`);
  if (r.refused) steps.push(`refused (${r.refused.reason}: ${r.refused.detail}) ${clock(r.refused.at)}`);
  if (r.ran) steps.push(`ran ${clock(r.ran.at)}`);
  if (r.runRefused) steps.push(`run refused (${r.runRefused.detail}) ${clock(r.runRefused.at)}`);
  if (r.aborted) steps.push(`aborting (${r.aborted.phase}) ${clock(r.aborted.at)}`);
  if (r.shutdown) steps.push(`stopped for shutdown ${clock(r.shutdown.at)}`);
  if (r.outcome) steps.push(`${r.outcome.status} (${r.outcome.how}) ${clock(r.outcome.at)}`);
  return steps.join(', ') || 'nothing logged for this job';
}

/** Replays first: a node dropping the server's messages as replays does not come back by itself. */
const rank = (reason: string) => (reason === 'replay' ? 0 : 1);

function notesOf(h: History): Notes {
  const quorumFailed: QuorumFailure[] = [];
  for (const { s, id } of submittedJobs(h)) {
    const last = h.jobs[id]?.last;
    if (last?.status !== 'quorum_failed') continue;
    const before = h.samples.filter((x) => x.nodes !== null && x.at <= s.at).at(-1)?.nodes;
    const why = s.nodes
      .filter((n) => statusOf(last.nodes, n) !== 'was_ready')
      .map((n) => {
        const state = before?.[n];
        const at = state ? `${state.status}/${state.availability} at the start` : 'no state at the start';
        const replay = h.records[n]?.firstDrops.replay;
        const drops = replay && replay.at <= last.at ? `; its first replay drop at ${clock(replay.at)}` : '';
        const gateway = `connected to ${gatewayAt(h, n, s.at)}`;
        return `${n} ${statusOf(last.nodes, n)} (${at}, ${gateway}; ${recordText(recordOf(h, n, id))}${drops})`;
      });
    quorumFailed.push({ job: id, round: s.round, role: s.role, why: why.join('; ') });
  }
  const drops: Notes['drops'] = [];
  for (const [node, r] of Object.entries(h.records))
    for (const [reason, count] of Object.entries(r.drops).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)))
      drops.push({
        node,
        reason,
        count,
        line: r.firstDrops[reason]?.line ?? '',
        gateway: gatewayAt(h, node, r.firstDrops[reason]?.at ?? h.endedAt),
      });
  const refused = h.submissions
    .filter((s) => s.id === null)
    .map((s) => ({
      round: s.round,
      role: s.role,
      answer: `${s.answer.status ?? 'no answer'} ${JSON.stringify(s.answer.body)}`,
    }));
  const final = h.samples.filter((s) => s.nodes !== null).at(-1)?.nodes;
  const stuck = h.settings.nodes.filter((n) => final?.[n]?.availability !== 'available');
  return { quorumFailed, drops, refused, stuck, back: nodesBack(h) };
}

/** For each healed fault, the nodes not available at the first sample after it, and when each was seen again. */
export function nodesBack(h: History): NodeBack[] {
  const withNodes = h.samples.filter((s) => s.nodes !== null);
  const out: NodeBack[] = [];
  for (const end of h.faults) {
    if (end.phase !== 'end' || end.error !== undefined) continue;
    const after = withNodes.filter((s) => s.at >= end.at);
    const first = after[0];
    for (const node of h.settings.nodes) {
      if (first === undefined || first.nodes?.[node]?.availability === 'available') continue;
      const seen = after.find((s) => s.nodes?.[node]?.availability === 'available');
      out.push({ round: end.fault.round, node, ms: seen === undefined ? null : seen.at - end.at });
    }
  }
  return out;
}
