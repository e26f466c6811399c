// When each member was live and when Redis was away during a chaos run, read from the history's fault events: the
// checker counts a partition's silence only against live members and only while Redis answered.
import type { FaultEvent } from './history.js';
import { MEMBER_FAULTS } from './nemesis.js';

export interface Window {
  from: number;
  /** Infinity when the fault was never healed. */
  to: number;
}

/** Per member, the windows it was killed or paused (a fault whose healing failed never ends). */
export function memberDownWindows(faults: readonly FaultEvent[]): Map<number, Window[]> {
  const out = new Map<number, Window[]>();
  for (const w of faultWindows(faults, (e) => MEMBER_FAULTS.has(e.fault.kind))) {
    const target = w.event.member;
    if (target === null) continue;
    const list = out.get(target) ?? [];
    list.push({ from: w.from, to: w.to });
    out.set(target, list);
  }
  return out;
}

/** The windows Redis was away (killed, or its master not yet replaced): no member can take a lease then. */
export function redisWindows(faults: readonly FaultEvent[]): Window[] {
  return faultWindows(faults, (e) => !MEMBER_FAULTS.has(e.fault.kind)).map(({ from, to, event }) => ({
    from,
    to: Math.min(to, event.redisBackAt ?? Infinity),
  }));
}

/** Each fault's start paired with its end (by round); no end, or an end with an error, leaves it open. */
function faultWindows(
  faults: readonly FaultEvent[],
  keep: (e: FaultEvent) => boolean,
): Array<Window & { event: FaultEvent }> {
  const out: Array<Window & { event: FaultEvent }> = [];
  for (const start of faults) {
    if (start.phase !== 'start' || !keep(start)) continue;
    const end = faults.find((e) => e.phase === 'end' && e.fault.round === start.fault.round);
    out.push({ from: start.at, to: end === undefined || end.error !== undefined ? Infinity : end.at, event: start });
  }
  return out;
}

export const inside = (at: number, windows: readonly Window[] | undefined): boolean =>
  (windows ?? []).some((w) => w.from <= at && at <= w.to);

/** How much of [from, to] lies outside every window. */
export function outside(from: number, to: number, windows: readonly Window[]): number {
  let covered = 0;
  let cursor = from;
  for (const w of [...windows].sort((a, b) => a.from - b.from)) {
    const start = Math.max(cursor, w.from);
    const end = Math.min(to, w.to);
    if (end > start) {
      covered += end - start;
      cursor = end;
    }
  }
  return Math.max(0, to - from - covered);
}
