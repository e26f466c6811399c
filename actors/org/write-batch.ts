// Group commit for an organization's plain writes (a client, a node, a role created or changed, with nothing else
// to do). Each is decided and applied to the state at once, so the next request decides on it, but its answer
// leaves only once the store holds it: while one batch is being stored the next one gathers, so a burst of
// creations costs a few store round trips instead of one each. If a batch cannot be stored, it and everything
// gathered after it (decided on top of it) are undone, newest first, and answered 503.
// A batch holds each document once, as last written, and the next batch waits as long as the last one took to
// store, so a burst gathers into fewer, larger batches.
import { realTimers, type Timers } from '../../src/lib/timers.js';
import type { GroupDoc } from '../shared/documents.js';
import type { OrgState, OrgWrite } from './org-state.js';
import { applyWrites } from './org-state.js';

interface Batch {
  writes: OrgWrite[];
  /** How to put back what each write replaced, in write order. */
  undo: OrgWrite[];
  /** Called once the batch is stored (with no argument) or refused (with the error). */
  settled: Array<(error?: unknown) => void>;
}

export interface WriteBatchPorts {
  /** Stores `writes`; `before` holds each group they write as it was stored (a group not in it was not stored). */
  store(writes: readonly OrgWrite[], before: ReadonlyMap<string, GroupDoc>): Promise<void>;
  /** The batch is stored: tell whoever mirrors the state (the principal directory). */
  stored(writes: readonly OrgWrite[]): void;
  /** Times the writes and the rest between them; Node's unless a unit test runs the batcher on a clock of its own. */
  timers?: Timers;
}

/** May a request's writes join a batch? Writes of the organization document itself go alone. */
export function batchable(writes: readonly OrgWrite[]): boolean {
  return writes.length > 0 && writes.every((w) => w.coll !== 'org');
}

export class WriteBatcher {
  private gathering: Batch | null = null;
  /** The batch being stored now. */
  private inStore: Batch | null = null;
  private storing: Promise<void> | null = null;

  constructor(
    private readonly state: OrgState,
    private readonly ports: WriteBatchPorts,
  ) {}

  /** Applies `writes` now; `settled` runs once they are stored, or with the error once they are undone. */
  add(writes: readonly OrgWrite[], settled: (error?: unknown) => void): void {
    const batch = (this.gathering ??= { writes: [], undo: [], settled: [] });
    for (const w of writes) {
      batch.undo.push(previous(this.state, w));
      applyWrites(this.state, [w]);
      batch.writes.push(w);
    }
    batch.settled.push(settled);
    this.storing ??= this.storeAll();
  }

  /**
   * Calls `settled` once every write applied so far is stored (at once when there is none), or with the error
   * once they are undone: for an answer decided on them, without holding up the writes that follow.
   */
  afterApplied(settled: (error?: unknown) => void): void {
    const batch = this.gathering ?? this.inStore;
    if (batch === null) settled();
    else batch.settled.push(settled);
  }

  /** Some applied writes are not stored yet. */
  get pending(): boolean {
    return this.storing !== null;
  }

  /** Resolves once nothing applied is left unstored (or undone). */
  async drain(): Promise<void> {
    while (this.storing !== null) await this.storing;
  }

  private async storeAll(): Promise<void> {
    const timers = this.ports.timers ?? realTimers;
    let rest = 0;
    for (let batch = this.gathering; batch !== null; batch = this.gathering) {
      // Requests go on gathering into this batch while it waits.
      if (rest >= 1) await new Promise<void>((r) => timers.after(rest, r));
      this.gathering = null;
      this.inStore = batch;
      const started = timers.now();
      try {
        await this.ports.store(lastOfEach(batch.writes), groupsBefore(batch));
        rest = timers.now() - started;
      } catch (e) {
        const failed = this.gathering === null ? [batch] : [batch, this.gathering];
        this.gathering = null;
        this.inStore = null;
        for (const b of [...failed].reverse()) applyWrites(this.state, [...b.undo].reverse());
        for (const b of failed) for (const settled of b.settled) settled(e);
        continue;
      }
      this.inStore = null;
      this.ports.stored(batch.writes);
      for (const settled of batch.settled) settled();
    }
    this.storing = null;
  }
}

/** Each group the batch writes, as it was before the batch (absent: it did not exist). */
function groupsBefore(batch: Batch): Map<string, GroupDoc> {
  const seen = new Set<string>();
  const before = new Map<string, GroupDoc>();
  batch.undo.forEach((u) => {
    if (u.coll !== 'groups' || seen.has(u.id)) return;
    seen.add(u.id);
    if (u.doc !== null) before.set(u.id, u.doc);
  });
  return before;
}

/**
 * Each document once, where it was last written. A group whose every write in the batch only added clients
 * keeps that hint, with the clients of all of them.
 */
function lastOfEach(writes: readonly OrgWrite[]): readonly OrgWrite[] {
  const last = new Map<string, number>();
  const appended = new Map<string, string[] | null>();
  writes.forEach((w, i) => {
    last.set(`${w.coll}\u0000${w.id}`, i);
    if (w.coll !== 'groups') return;
    const sofar = appended.has(w.id) ? appended.get(w.id) : [];
    if (sofar && w.appendedClients) {
      sofar.push(...w.appendedClients);
      appended.set(w.id, sofar);
    } else appended.set(w.id, null);
  });
  if (last.size === writes.length) return writes;
  return writes.flatMap((w, i): OrgWrite[] => {
    if (last.get(`${w.coll}\u0000${w.id}`) !== i) return [];
    if (w.coll !== 'groups') return [w];
    const { appendedClients: _, ...plain } = w;
    const clients = appended.get(w.id);
    return [clients ? { ...plain, appendedClients: clients } : plain];
  });
}

function previous(state: OrgState, w: OrgWrite): OrgWrite {
  if (w.coll === 'org') throw new Error('the organization document is never batched');
  const doc = (state[w.coll] as Map<string, unknown>).get(w.id) ?? null;
  return { coll: w.coll, id: w.id, doc } as OrgWrite;
}
