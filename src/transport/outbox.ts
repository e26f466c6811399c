// One writer per socket: zeromq's send is asynchronous and takes one message at a time, so messages wait
// in a queue and a single loop writes them in order (the original kept one command switch for the same
// reason: ordering).
import type { Router } from 'zeromq';

/** A routing id and the message's frames (text frames are sent as UTF-8). */
export type Frames = Array<Buffer | string>;

/** A queue longer than this is a fan-out (a job's commit or run to many nodes): readers wait for it. */
const FAN_OUT = 64;

export class Outbox {
  /** Messages waiting; the loop takes the whole array at once, so no message is shifted off a long queue. */
  private queue: Frames[] = [];
  private draining = false;
  /** Messages pushed and not yet written. */
  private backlog = 0;
  private written: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(
    private readonly socket: Router,
    private readonly onError: (e: unknown) => void,
  ) {}

  push(frames: Frames): void {
    this.queue.push(frames);
    this.backlog += 1;
    if (!this.draining) void this.drain();
  }

  /**
   * While a fan-out is being written, a promise of its end; else undefined. The receive loops wait on it
   * before they take the next message: the fleet gets its commit or run first, and the answers it sends back
   * are read after, rather than each send waiting behind the reading of an answer.
   */
  fanningOut(): Promise<void> | undefined {
    if (this.backlog <= FAN_OUT) return undefined;
    if (this.written === undefined) {
      let resolve: () => void = () => undefined;
      const promise = new Promise<void>((r) => (resolve = r));
      this.written = { promise, resolve };
    }
    return this.written.promise;
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0 && !this.socket.closed) {
        const batch = this.queue;
        this.queue = [];
        for (const frames of batch) {
          if (this.socket.closed) break;
          try {
            await this.socket.send(frames);
          } catch (e) {
            // A peer past its high-water mark: the message is lost, as the protocol allows.
            if (!this.socket.closed) this.onError(e);
          }
          this.backlog -= 1;
        }
      }
      // A closed socket takes nothing more: what waits for it is dropped with it.
      if (this.socket.closed) this.queue = [];
    } finally {
      this.draining = false;
      this.backlog = this.queue.length;
      this.written?.resolve();
      this.written = undefined;
    }
  }
}
