// One writer per socket: zeromq's send is asynchronous and takes one message at a time, so messages wait
// in a queue and a single loop writes them in order (the original kept one command switch for the same
// reason: ordering).
import type { Router } from 'zeromq';

/** A routing id and the message's frames (text frames are sent as UTF-8). */
export type Frames = Array<Buffer | string>;

export class Outbox {
  /** Messages waiting; the loop takes the whole array at once, so no message is shifted off a long queue. */
  private queue: Frames[] = [];
  private draining = false;

  constructor(
    private readonly socket: Router,
    private readonly onError: (e: unknown) => void,
  ) {}

  push(frames: Frames): void {
    this.queue.push(frames);
    if (!this.draining) void this.drain();
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
        }
      }
      // A closed socket takes nothing more: what waits for it is dropped with it.
      if (this.socket.closed) this.queue = [];
    } finally {
      this.draining = false;
    }
  }
}
