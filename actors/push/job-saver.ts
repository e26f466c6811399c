// Coalesced saves of one job. The changes of many steps go out together: one field-map write for the nodes that
// moved and one header write when the job-level fields did. Whatever would make a change visible (a message to
// a node, a timer, an answer, the job list) waits for the write that holds it; a job that is not saving runs
// them at once. A burst of 10,000 acks thus costs a handful of writes, not 10,000.
// The saver also keeps the job as the store holds it, brought up to each write as it lands: a request about the
// job is answered from that at once, instead of waiting behind the answers of thousands of nodes.
import { realTimers, type Timers } from '../../src/lib/timers.js';
import { FencedError } from '../../src/store/fencing.js';
import type { JobState } from './job-model.js';
import { applySave, copyJob, headerOf, nodeFieldOf, type JobOutput, type JobSave } from './job-store.js';

interface Batch {
  job: boolean;
  nodes: Set<string>;
  outputs: Map<string, JobOutput>;
  /** Run in order once the batch is stored; `answer`s also run, at once, if the store refuses it. */
  after: Array<{ run: () => void; answer: boolean }>;
}

/** The least time between the starts of two writes of one job. */
const WRITE_SPACING_MS = 10;

function emptyBatch(): Batch {
  return { job: false, nodes: new Set(), outputs: new Map(), after: [] };
}

function isEmpty(b: Batch): boolean {
  return !b.job && b.nodes.size === 0 && b.outputs.size === 0;
}

export interface SaverPorts {
  /** Stores one save; rejects when the store does not take it (it is tried again). */
  write(save: JobSave): Promise<void>;
  /** A write failed; it is retried after `retryMs`. */
  failed(error: unknown): void;
  retryMs: number;
  /** The spacing and retry timers; Node's unless a unit test runs the saver on a clock of its own. */
  timers?: Timers;
}

export class JobSaver {
  /** Changes stepped since the write in flight began. */
  private open = emptyBatch();
  /** The batch being written, if any. */
  private sealed: Batch | null = null;
  /** The last write failed and is being tried again: the store is down. */
  private failingNow = false;
  /** The job as stored: it starts as the job the actor was given, which is stored before its actor starts. */
  private readonly view: JobState;
  /** Writes landed so far: a rendering of `stored` made at another count is out of date. */
  private landed = 0;

  constructor(
    private readonly state: () => JobState,
    private readonly ports: SaverPorts,
  ) {
    this.view = copyJob(state());
  }

  /** The job as the store holds it now. */
  get stored(): JobState {
    return this.view;
  }

  /** Bumped by each write that lands. */
  get version(): number {
    return this.landed;
  }

  /** The store refuses writes now: what is in memory is ahead of it and cannot be stored yet. */
  get failing(): boolean {
    return this.failingNow;
  }

  /** Records what one step changed. */
  changed(job: boolean, nodes: readonly string[]): void {
    this.open.job ||= job;
    for (const n of nodes) this.open.nodes.add(n);
    this.kick();
  }

  /** Records a node's captured output, stored before the result that carries it. */
  output(node: string, output: JobOutput): void {
    this.open.outputs.set(node, output);
    this.kick();
  }

  /** Runs `action` once every change recorded so far is stored: at once when nothing waits. */
  afterSaved(action: () => void): void {
    this.queue(action, false);
  }

  /**
   * Runs `answer` (a reply to a request) like afterSaved, but never waits on a store that refuses writes: while
   * it does, and as soon as a write fails, answers leave from memory, so no request is stuck behind an outage.
   */
  answerAfterSaved(answer: () => void): void {
    if (this.failingNow) answer();
    else this.queue(answer, true);
  }

  private queue(run: () => void, answer: boolean): void {
    if (!isEmpty(this.open)) this.open.after.push({ run, answer });
    else if (this.sealed) this.sealed.after.push({ run, answer });
    else run();
  }

  /** The store refused a write: the answers waiting for it or for the next one leave now. */
  private releaseAnswers(): void {
    for (const batch of [this.sealed, this.open]) {
      if (batch === null) continue;
      const answers = batch.after.filter((a) => a.answer);
      batch.after = batch.after.filter((a) => !a.answer);
      for (const a of answers) a.run();
    }
  }

  /** Whether changes wait to be stored (for GET /_status and tests). */
  get pending(): boolean {
    return this.sealed !== null || !isEmpty(this.open);
  }

  /**
   * Resolves once every change recorded so far is stored (a server stopping waits for it), or once the store refuses
   * it for want of the partition's lease (the write is tried again, but nothing can be waited for meanwhile: another
   * process may own the job now, and this one's organization is let go), or once the saver gave up (stop).
   */
  saved(): Promise<void> {
    if (this.abandoned) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiting.add(resolve);
      this.afterSaved(() => {
        this.waiting.delete(resolve);
        resolve();
      });
    });
  }

  /**
   * Resolves once every change recorded so far is stored; rejects if the saver gives up on it first (stopped while
   * the store refused it). What acknowledges a node's answer to another process (an inbox entry) waits for this: an
   * answer counts as kept only once it is stored.
   */
  durable(): Promise<void> {
    if (this.abandoned) return Promise.reject(this.refusal);
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      this.durables.add(waiter);
      this.afterSaved(() => {
        this.durables.delete(waiter);
        resolve();
      });
    });
  }

  /**
   * The job's organization is let go here: a write refused for want of the partition's lease is not tried again
   * (another process owns the job), and what waits for it is told. One refused for another reason (Redis away)
   * is still tried until it lands, as a hand-over's must.
   */
  stop(): void {
    this.stopped = true;
    if (this.retrying && this.refusal instanceof FencedError) this.abandon(this.refusal);
  }

  /** Gives up what is not stored: those waiting for the saves to end are told, those waiting for storage refused. */
  private abandon(refusal: unknown): void {
    this.abandoned = true;
    this.refusal = refusal;
    this.sealed = null;
    this.open = emptyBatch();
    for (const resolve of this.waiting) resolve();
    this.waiting.clear();
    for (const waiter of this.durables) waiter.reject(refusal);
    this.durables.clear();
  }

  /** Set by stop(): a write refused for want of the lease is given up instead of tried again. */
  private stopped = false;
  /** A write failed and waits to be tried again. */
  private retrying = false;
  /** Given up: nothing more is written. */
  private abandoned = false;
  /** The store's last refusal. */
  private refusal: unknown;
  /** Those waiting for the saves to end (saved). */
  private readonly waiting = new Set<() => void>();
  /** Those waiting for the changes to be stored (durable). */
  private readonly durables = new Set<{ resolve: () => void; reject: (refusal: unknown) => void }>();

  private scheduled = false;
  /** When the last write began (timers.now()). */
  private lastWriteAt = -Infinity;

  private get timers(): Timers {
    return this.ports.timers ?? realTimers;
  }

  private kick(): void {
    // The first change after a quiet spell waits one turn of the event loop, so the messages already queued
    // for the job are stepped into the same write. In a burst, writes are spaced WRITE_SPACING_MS apart: a
    // write takes about a millisecond, and twenty jobs of 500 nodes each writing back to back spent an eighth
    // of the server's time opening, syncing and closing files for a few nodes each.
    if (this.sealed === null && isEmpty(this.open) === false && !this.scheduled) {
      this.scheduled = true;
      const go = () => {
        this.scheduled = false;
        void this.flush();
      };
      const wait = this.lastWriteAt + WRITE_SPACING_MS - this.timers.now();
      if (wait > 0) this.timers.after(wait, go);
      else setImmediate(go);
    }
  }

  private async flush(): Promise<void> {
    if (this.abandoned || this.sealed !== null || isEmpty(this.open)) return;
    this.lastWriteAt = this.timers.now();
    const batch = this.open;
    this.open = emptyBatch();
    this.sealed = batch;
    // Serialized now, between two steps: the write holds exactly the changes whose effects wait for it.
    const s = this.state();
    const save: JobSave = {
      header: batch.job ? headerOf(s) : null,
      nodes: [...batch.nodes].map((n) => [n, nodeFieldOf(s, n)] as const),
      outputs: [...batch.outputs],
    };
    for (;;) {
      try {
        await this.ports.write(save);
        this.failingNow = false;
        applySave(this.view, save);
        this.landed += 1;
        break;
      } catch (e) {
        this.failingNow = true;
        this.refusal = e;
        this.releaseAnswers();
        this.ports.failed(e);
        if (this.stopped && e instanceof FencedError) return this.abandon(e);
        // No lease on the partition now: its lease may come back (Redis was away, or lost its data and the lease is
        // taken again), or another process owns the job and this one's organization is let go, which stops this
        // saver. Either way none may wait for this write: a stop or a release waiting for the saves goes on.
        if (e instanceof FencedError) {
          for (const resolve of this.waiting) resolve();
          this.waiting.clear();
        }
        this.retrying = true;
        await new Promise<void>((r) => this.timers.after(this.ports.retryMs, r));
        this.retrying = false;
        if (this.abandoned) return;
      }
    }
    this.sealed = null;
    for (const action of batch.after) action.run();
    this.kick();
  }
}
