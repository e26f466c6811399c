// The RSA check of signed requests on worker threads. The public-key operation is the largest single cost of a
// signed request on the main thread (about a quarter of a signed GET), and the other cores can take it. Checks go
// to a worker only while the main thread is saturated: a hop to another thread and back costs a lone request more
// than the check itself (on a 2-core machine, one client's GETs took twice as long), and gains only when the main
// thread has other requests to serve meanwhile. Checks that arrive while the worker is busy go to it together, so
// a busy server pays one hop per batch. With no threads (signature_threads 0) every check runs inline.
import type { KeyObject } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { LoadGauge } from '../lib/load-gauge.js';
import { besideModule, startModuleWorker } from '../lib/sibling-module.js';
import { PUBLIC_KEY_CACHE_SIZE } from './rsa-keys.js';
import { packBatch, UNCHECKED, type KeyUpdate } from './signature-batch.js';
import { firstVerifyingKey, type SignatureCheck } from './signed-headers.js';

/** Told when a worker dies: its checks are made inline and, while crashes are rare, a new worker takes its place. */
export interface PoolObserver {
  workerCrashed(error: unknown): void;
}

interface Pending {
  check: SignatureCheck;
  done: (index: number) => void;
}

/** Crashes within a minute past which the pool stops replacing workers and checks inline. */
const MAX_CRASHES_PER_MINUTE = 5;
/**
 * Batches a worker may hold unanswered. Checks arriving while every worker is busy wait and go together with the
 * next answer: batches grow with the load, and the thread hop (about 10 µs of the main thread) is paid per batch.
 */
const MAX_IN_FLIGHT = 1;
/** Keys a worker holds (about 2 KB each) before it is told to forget them and is sent again those it needs: as
 * many as the main thread's cache of parsed keys. */
const KEYS_PER_WORKER = PUBLIC_KEY_CACHE_SIZE;

const inline = (p: Pending): void => p.done(firstVerifyingKey(p.check));

const WORKER = besideModule(import.meta.url, 'signature-worker');

class CheckWorker {
  readonly worker: Worker;
  /** Batches sent and not answered, oldest first: a worker answers in order. */
  readonly inFlight: Pending[][] = [];
  /** Numbers of the keys this worker holds. */
  readonly known = new Set<number>();

  constructor(
    script: URL,
    hooks: {
      idle(): void;
      gone(w: CheckWorker, error: unknown): void;
      /** A check the worker could not make (it named a key the worker does not hold). */
      unchecked(p: Pending): void;
    },
  ) {
    this.worker = startModuleWorker(script);
    // A worker keeps the process alive only while it holds checks.
    this.worker.unref();
    this.worker.on('message', (answers: Int32Array) => {
      const batch = this.inFlight.shift() ?? [];
      if (this.inFlight.length === 0) this.worker.unref();
      batch.forEach((p, i) => {
        const index = answers[i] ?? UNCHECKED;
        if (index === UNCHECKED) hooks.unchecked(p);
        else p.done(index);
      });
      hooks.idle();
    });
    this.worker.on('error', (e) => hooks.gone(this, e));
    this.worker.on('exit', (code) => hooks.gone(this, new Error(`signature worker exited with code ${code}`)));
  }

  send(batch: Pending[], keyNumber: (key: KeyObject) => number): void {
    const forget = this.known.size > KEYS_PER_WORKER;
    if (forget) this.known.clear();
    const newKeys: KeyUpdate['newKeys'] = [];
    const number = (key: KeyObject): number => {
      const n = keyNumber(key);
      if (!this.known.has(n)) {
        this.known.add(n);
        newKeys.push([n, key]);
      }
      return n;
    };
    const packed = packBatch(
      batch.map((p) => p.check),
      number,
    );
    if (this.inFlight.push(batch) === 1) this.worker.ref();
    // The keys go first: a worker reads its messages in order.
    if (forget || newKeys.length > 0) this.worker.postMessage({ newKeys, forget } satisfies KeyUpdate);
    this.worker.postMessage(packed, [packed.buffer]);
  }
}

export interface PoolOptions {
  threads: number;
  observer?: PoolObserver;
  /** Whether checks go to the workers now; by default while the main thread's event loop is saturated. */
  offload?: () => boolean;
  /** The worker's script: another one only to test the crash policy. */
  script?: URL;
}

export class SignaturePool {
  private workers: CheckWorker[] = [];
  private waiting: Pending[] = [];
  private flushScheduled = false;
  private crashes: number[] = [];
  private closed = false;
  private readonly keyNumbers = new WeakMap<KeyObject, number>();
  private nextKeyNumber = 0;
  private uncheckedCount = 0;
  private readonly gauge: LoadGauge | undefined;
  private readonly offload: () => boolean;

  constructor(private readonly o: PoolOptions) {
    for (let i = 0; i < o.threads; i++) this.workers.push(this.spawn());
    const gauge = o.offload || o.threads === 0 ? undefined : new LoadGauge();
    this.gauge = gauge;
    this.offload = o.offload ?? (() => gauge?.saturated ?? false);
  }

  /** Index of the first of `check.keys` whose holder signed the request, or -1. */
  check(check: SignatureCheck): Promise<number> {
    // Inline when no worker is left, or while the main thread has time to spare.
    if (this.workers.length === 0 || !this.offload()) return Promise.resolve(firstVerifyingKey(check));
    return new Promise((done) => {
      this.waiting.push({ check, done });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Checks a worker could not make and the main thread made instead; none unless keys went astray. */
  get unchecked(): number {
    return this.uncheckedCount;
  }

  /** Worker threads checking now (fewer than asked after repeated crashes). */
  get size(): number {
    return this.workers.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.gauge?.stop();
    const workers = this.workers;
    this.workers = [];
    this.flush();
    for (const w of workers) for (const batch of w.inFlight.splice(0)) batch.forEach(inline);
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }

  /** Sends what waits to a worker that has room, if any; otherwise it waits for the next answer. */
  private flush(): void {
    this.flushScheduled = false;
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length === 0) return;
    if (this.workers.length === 0) {
      batch.forEach(inline);
      return;
    }
    const target = this.workers.find((w) => w.inFlight.length < MAX_IN_FLIGHT);
    if (target) target.send(batch, this.keyNumber);
    else this.waiting = batch;
  }

  private readonly keyNumber = (key: KeyObject): number => {
    let n = this.keyNumbers.get(key);
    if (n === undefined) this.keyNumbers.set(key, (n = this.nextKeyNumber++));
    return n;
  };

  private spawn(): CheckWorker {
    return new CheckWorker(this.o.script ?? WORKER, {
      idle: () => this.flush(),
      gone: (w, error) => this.lost(w, error),
      unchecked: (p) => {
        this.uncheckedCount++;
        inline(p);
      },
    });
  }

  /** A worker died (or was terminated): its unanswered checks are made here. */
  private lost(w: CheckWorker, error: unknown): void {
    const at = this.workers.indexOf(w);
    if (at === -1) return;
    this.workers.splice(at, 1);
    for (const batch of w.inFlight.splice(0)) batch.forEach(inline);
    if (this.closed) return;
    this.o.observer?.workerCrashed(error);
    const now = Date.now();
    this.crashes = [...this.crashes.filter((t) => now - t < 60_000), now];
    if (this.crashes.length <= MAX_CRASHES_PER_MINUTE) this.workers.push(this.spawn());
    // Checks that waited for the lost worker's answer go to the new one, or inline.
    this.flush();
  }
}
