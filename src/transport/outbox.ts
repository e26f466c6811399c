// One writer per socket: zeromq's send is asynchronous and takes one message at a time, so messages wait
// in a queue and a single loop writes them in order (the original kept one command switch for the same
// reason: ordering).
import type { Router } from 'zeromq';

/** A routing id and the message's frames (text frames are sent as UTF-8). */
export type Frames = Array<Buffer | string>;

/** A queue longer than this is a fan-out (a job's commit or run to many nodes): readers may wait for it. */
const FAN_OUT = 64;

/** A fan-out being written: its size, and a promise of the moment it is all written. */
export interface FanOut {
  size: number;
  written: Promise<void>;
}

/** Called when the socket could not route a message: no connection has its routing id (a mandatory Router). */
export type Undelivered = () => void;

export class Outbox {
  /** Messages waiting; the loop takes the whole array at once, so no message is shifted off a long queue. */
  private queue: Frames[] = [];
  /** Beside `queue`, index for index: what to do if that message cannot be routed (mostly nothing). */
  private undelivered: Array<Undelivered | undefined> = [];
  private draining = false;
  private pushed = 0;
  private sent = 0;
  /** Who waits for the messages pushed up to `upTo` to be written, in push order. */
  private waiters: Array<{ upTo: number; resolve: () => void }> = [];

  constructor(
    private readonly socket: Router,
    private readonly onError: (e: unknown, undelivered: Undelivered | undefined) => void,
  ) {}

  push(frames: Frames, undelivered?: Undelivered): void {
    this.queue.push(frames);
    this.undelivered.push(undelivered);
    this.pushed += 1;
    if (!this.draining) void this.drain();
  }

  /**
   * The messages waiting now, when they make a fan-out; else undefined. Messages pushed later are not waited
   * for, so a stream of fan-outs (twenty jobs starting together) cannot hold a reader for ever.
   */
  fanOut(): FanOut | undefined {
    const size = this.pushed - this.sent;
    if (size <= FAN_OUT) return undefined;
    const upTo = this.pushed;
    return { size, written: new Promise((resolve) => this.waiters.push({ upTo, resolve })) };
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0 && !this.socket.closed) {
        const batch = this.queue;
        const undelivered = this.undelivered;
        this.queue = [];
        this.undelivered = [];
        for (let i = 0; i < batch.length; i++) {
          if (this.socket.closed) break;
          try {
            await this.socket.send(batch[i] as Frames);
          } catch (e) {
            if (!this.socket.closed) this.onError(e, undelivered[i]);
          }
          this.sent += 1;
          while (this.waiters.length > 0 && (this.waiters[0]?.upTo ?? 0) <= this.sent) this.waiters.shift()?.resolve();
        }
      }
      // A closed socket takes nothing more: what waits for it is dropped with it.
      if (this.socket.closed) {
        this.queue = [];
        this.undelivered = [];
      }
    } finally {
      this.draining = false;
      this.sent = this.pushed - this.queue.length;
      for (const w of this.waiters.splice(0)) w.resolve();
    }
  }
}
