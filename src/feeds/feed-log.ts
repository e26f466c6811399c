// An append-only run of feed events with numbered readers. A reader holds only its position: the events it has
// not taken yet are the log's own, so a slow reader costs no copy, and one that falls more than its allowance
// behind is dropped instead of holding the log's memory for ever.
//
// Event ids name the log they come from as well as the place in it (`org-<incarnation>-<n>`): a log lives in one
// process's memory, and when its organization moves to another process (its owner died or handed it over) a new
// log starts at 1 there. An id the earlier log gave is then unknown rather than the id of some other event, unless
// the new log was started with the earlier one's events (a cluster keeps an organization's recent events in Redis):
// it keeps their ids, so a reader resumes exactly where it left the earlier owner.
import { randomBytes } from 'node:crypto';

export type FeedKind = 'job' | 'org';

export interface FeedEvent {
  /** `job-<incarnation>-N` or `org-<incarnation>-N`. */
  readonly id: string;
  readonly event: string;
  /** Epoch ms. */
  readonly at: number;
  /** As sent, with `timestamp`. */
  readonly data: Readonly<Record<string, unknown>>;
}

export interface FeedReader {
  /** The sequence number of the next event to hand out. */
  next: number;
  /** Set when the reader fell too far behind (or the events it needed were dropped by age). */
  dropped: boolean;
  /** Called when there is something new for the reader: an event, the end, or its drop. */
  wake: (() => void) | null;
}

/**
 * A name for a new log that no other log of the cluster has: the time it was made (base 36) and 24 random bits,
 * so two processes starting logs of the same organization in the same millisecond still differ.
 */
export function newIncarnation(now = Date.now()): string {
  return `${now.toString(36)}${randomBytes(3).toString('hex')}`;
}

export class FeedLog {
  private readonly events: FeedEvent[] = [];
  /** The sequence number of events[0] (numbers start at 1). */
  private first = 1;
  private readonly readers = new Map<FeedReader, number>();
  /** The numbers here of the events an earlier log gave their ids. */
  private readonly inherited = new Map<string, number>();
  /** No event follows: readers stop once they have the rest. */
  done = false;

  /** `earlier`: events of an earlier log of the same feed, oldest first, kept here under their own ids. */
  constructor(
    readonly kind: FeedKind,
    readonly incarnation: string = newIncarnation(),
    earlier: readonly FeedEvent[] = [],
  ) {
    for (const e of earlier) {
      this.inherited.set(e.id, this.end);
      this.events.push(e);
    }
  }

  /** The number of the oldest event kept. */
  get start(): number {
    return this.first;
  }

  /** The number the next event will get. */
  get end(): number {
    return this.first + this.events.length;
  }

  /** The event numbered `seq`, or undefined when it is not here (not yet, or dropped by age). */
  at(seq: number): FeedEvent | undefined {
    return this.events[seq - this.first];
  }

  /** The id of the event numbered `seq` in this log. */
  idOf(seq: number): string {
    return `${this.kind}-${this.incarnation}-${seq}`;
  }

  /** The number of the event with this id, if it is still here: an id of another log (or incarnation) is not. */
  seqOf(id: string): number | undefined {
    const inherited = this.inherited.get(id);
    if (inherited !== undefined) return inherited >= this.first ? inherited : undefined;
    const n = Number(/-(\d+)$/.exec(id)?.[1]);
    return Number.isSafeInteger(n) && n >= this.first && n < this.end && this.at(n)?.id === id ? n : undefined;
  }

  /** Adds the event under the log's next id. */
  append(event: Omit<FeedEvent, 'id'>): FeedEvent {
    const e: FeedEvent = { id: this.idOf(this.end), ...event };
    this.events.push(e);
    for (const [reader, limit] of this.readers) {
      if (this.end - reader.next > limit) reader.dropped = true;
      wake(reader);
    }
    return e;
  }

  /** Drops events older than `before` (epoch ms); readers that still needed them are dropped too. */
  expire(before: number): void {
    let n = 0;
    while (n < this.events.length && (this.events[n] as FeedEvent).at < before) n += 1;
    if (n === 0) return;
    this.events.splice(0, n);
    this.first += n;
    for (const [id, seq] of this.inherited) if (seq < this.first) this.inherited.delete(id);
    for (const reader of this.readers.keys()) {
      if (reader.next < this.first) {
        reader.dropped = true;
        wake(reader);
      }
    }
  }

  close(): void {
    this.done = true;
    for (const reader of this.readers.keys()) wake(reader);
  }

  /** A reader starting at `from`, allowed to fall `allowance` events behind what it was owed when it came. */
  read(from: number, allowance: number): FeedReader {
    const reader: FeedReader = { next: from, dropped: false, wake: null };
    this.readers.set(reader, this.end - from + allowance);
    return reader;
  }

  leave(reader: FeedReader): void {
    this.readers.delete(reader);
  }

  get readerCount(): number {
    return this.readers.size;
  }
}

function wake(reader: FeedReader): void {
  const w = reader.wake;
  reader.wake = null;
  w?.();
}
