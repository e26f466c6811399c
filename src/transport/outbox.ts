// One writer per socket: zeromq's send is asynchronous and takes one message at a time, so messages wait
// in a queue and a single loop writes them in order (the original kept one command switch for the same
// reason: ordering).
import type { Router } from 'zeromq';

export class Outbox {
  private readonly queue: Buffer[][] = [];
  private draining = false;

  constructor(private readonly socket: Router, private readonly onError: (e: unknown) => void) {}

  push(frames: Buffer[]): void {
    this.queue.push(frames);
    if (!this.draining) void this.drain();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      for (let frames = this.queue.shift(); frames !== undefined; frames = this.queue.shift()) {
        try {
          await this.socket.send(frames);
        } catch (e) {
          // A closed socket or a peer past its high-water mark: the message is lost, as the protocol allows.
          this.onError(e);
        }
      }
    } finally {
      this.draining = false;
    }
  }
}
