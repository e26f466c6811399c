// What a chaos run prints: a Markdown table of its rounds (the fault and what it hit, each job's end and node
// counts as GET showed them last), then the violations by invariant with their details, then the notes.
import { INVARIANTS, type Bounds, type NodeBack, type Notes, type Violation } from './checker.js';
import type { JobView, Submission } from './history.js';
import { describeFault, type Fault } from './nemesis.js';

/** One round as the runner saw it: the fault, what it hit, and the two jobs. */
export interface RoundResult {
  fault: Fault;
  hit: string;
  long: { submission: Submission; view: JobView | undefined };
  short: { submission: Submission; view: JobView | undefined };
}

const SHOWN_PER_INVARIANT = 40;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** `complete: succeeded 6 (9.8 s)`, or the refusal of a job never created. */
export function jobCell(s: Submission, view: JobView | undefined): string {
  if (s.id === null) return `not created: ${s.answer.status ?? 'no answer'} after ${s.tries.length} tries`;
  const last = view?.last;
  if (!last) return 'never read';
  const counts = Object.entries(last.nodes)
    .map(([status, names]) => `${status} ${names?.length ?? 0}`)
    .join(', ');
  const took = view.endedAt === null ? 'not ended' : seconds(view.endedAt - s.at);
  return `${last.status}: ${counts || 'no nodes'} (${took})`;
}

export function roundsTable(rounds: readonly RoundResult[]): string {
  const rows = rounds.map(
    (r) =>
      `| ${r.fault.round + 1} | ${describeFault(r.fault)} | ${r.hit.replace(/\|/g, '/')} | ${jobCell(r.long.submission, r.long.view)} | ${jobCell(r.short.submission, r.short.view)} |`,
  );
  return [
    '| round | fault | hit | long job (status: nodes, time to end) | short job right after (status: nodes, time to end) |',
    '|---:|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** `result_lost (round 2, job J, node n1): what each side said`. */
export function violationLine(v: Violation): string {
  const where = [
    v.round === null ? null : `round ${v.round + 1}`,
    v.job ? `job ${v.job}` : null,
    v.node ? `node ${v.node}` : null,
  ].filter((x) => x !== null);
  return `${v.invariant} (${where.join(', ')}): ${v.detail}`;
}

export function violationsText(violations: readonly Violation[], notes: Notes, bounds: Bounds): string {
  const out: string[] = [
    `bounds: a job's voting_timeout + run_timeout + ${seconds(bounds.failoverMs)}; a node back ${seconds(bounds.nodeBackMs)} after a healing; a partition unowned ${seconds(bounds.unownedMs)}`,
  ];
  if (violations.length === 0) out.push('violations: none');
  else {
    const counts = INVARIANTS.map((i) => [i, violations.filter((v) => v.invariant === i).length] as const);
    out.push(`violations: ${counts.map(([i, n]) => `${i} ${n}`).join(', ')}`);
    for (const invariant of INVARIANTS) {
      // A thousand nodes can break one invariant a thousand times in a round: the first ones say how.
      const named = violations.filter((x) => x.invariant === invariant);
      for (const v of named.slice(0, SHOWN_PER_INVARIANT)) out.push(`- ${violationLine(v)}`);
      if (named.length > SHOWN_PER_INVARIANT)
        out.push(`- … and ${named.length - SHOWN_PER_INVARIANT} more ${invariant}`);
    }
  }
  if (notes.quorumFailed.length > 0) {
    out.push('jobs that ended quorum_failed:');
    for (const q of notes.quorumFailed) out.push(`- round ${q.round + 1} ${q.role} job ${q.job}: ${q.why}`);
  }
  if (notes.drops.length > 0) {
    out.push('messages from the server dropped by nodes (at least):');
    for (const d of notes.drops.slice(0, SHOWN_PER_INVARIANT))
      out.push(`- ${d.node}: ${d.count} ${d.reason}, the first connected to ${d.gateway} (${d.line})`);
  }
  for (const r of notes.refused) out.push(`- round ${r.round + 1} ${r.role} job not created: ${r.answer}`);
  out.push(`nodes not available when a fault was healed: ${backLine(notes.back)}`);
  out.push(`nodes not available at the end: ${notes.stuck.length === 0 ? 'none' : notes.stuck.join(', ')}`);
  return out.join('\n');
}

/** How many nodes were away when a fault was healed, and the slowest to be available again. */
export function backLine(back: readonly NodeBack[]): string {
  if (back.length === 0) return 'none';
  const never = back.filter((b) => b.ms === null);
  const slowest = back.reduce<NodeBack | undefined>(
    (m, b) => (b.ms !== null && (m?.ms ?? -1) < b.ms ? b : m),
    undefined,
  );
  const parts = [`${back.length}`];
  if (slowest?.ms != null)
    parts.push(
      `the slowest available again ${(slowest.ms / 1000).toFixed(1)} s after (round ${slowest.round + 1}, ${slowest.node})`,
    );
  if (never.length > 0) parts.push(`${never.length} never available again in the run`);
  return parts.join('; ');
}
