// Partitions served by no live member, read from a chaos run's samples (design, invariant 5). A sample counts only
// when every member live at its time answered: a live member that did not answer may hold what looks unowned.
// Silence is counted only while Redis answered, since no member can take a lease without it.
import type { History, Sample } from './history.js';
import { inside, memberDownWindows, outside, redisWindows } from './timeline.js';

export interface Unowned {
  round: number | null;
  partitions: string[];
  from: number;
  to: number;
  detail: string;
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 23);

/** Spans longer than `boundMs` (Redis's absences left out), the partitions of one span together. */
export function findUnowned(h: History, boundMs: number): Unowned[] {
  const down = memberDownWindows(h.faults);
  const away = redisWindows(h.faults);
  const live = (s: Sample) => s.members.filter((m) => !inside(s.at, down.get(m.member)));
  const complete = h.samples
    .filter((s) => {
      const l = live(s);
      return l.length > 0 && l.every((m) => m.answered);
    })
    .sort((a, b) => a.at - b.at);
  const spans = new Map<string, { partitions: string[]; from: number; to: number; takenBy: string }>();
  for (const partition of h.settings.partitions) {
    let since: number | null = null;
    for (const s of complete) {
      const holder = live(s).find((m) => m.held.includes(partition));
      if (holder === undefined) {
        since ??= s.at;
        continue;
      }
      if (since !== null) add(spans, partition, since, s.at, `m${holder.member}`);
      since = null;
    }
    const last = complete.at(-1);
    if (since !== null && last !== undefined) add(spans, partition, since, last.at, 'none before the run ended');
  }
  const out: Unowned[] = [];
  for (const span of spans.values()) {
    const counted = outside(span.from, span.to, away);
    if (counted <= boundMs) continue;
    const fault = [...h.faults].reverse().find((e) => e.phase === 'start' && e.at <= span.to);
    const liveAt = complete.find((s) => s.at === span.from);
    out.push({
      round: fault?.fault.round ?? null,
      partitions: span.partitions,
      from: span.from,
      to: span.to,
      detail:
        `${span.partitions.length} partition(s) (${span.partitions.join(', ')}) served by no live member from ` +
        `${clock(span.from)} to ${clock(span.to)}: ${(counted / 1000).toFixed(1)} s with Redis up, bound ` +
        `${(boundMs / 1000).toFixed(1)} s; live then: ${
          liveAt
            ? live(liveAt)
                .map((m) => `m${m.member}`)
                .join(', ')
            : '?'
        }` +
        `; taken by ${span.takenBy}`,
    });
  }
  return out;
}

function add(
  spans: Map<string, { partitions: string[]; from: number; to: number; takenBy: string }>,
  partition: string,
  from: number,
  to: number,
  takenBy: string,
): void {
  const key = `${from}-${to}-${takenBy}`;
  const span = spans.get(key) ?? { partitions: [], from, to, takenBy };
  span.partitions.push(partition);
  spans.set(key, span);
}
