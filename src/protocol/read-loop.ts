// One reading loop for every ZeroMQ socket that takes push-jobs messages: the server's two channels, the
// client's and the load tester's. A receive can fail while the socket is still open (an interrupted system
// call, seen under a profiler's signals; EAGAIN past a receive timeout): the loop reads again instead of
// stopping, since a channel that stopped for good would leave every node on it unheard.
import { codeOf } from '../lib/thrown.js';
import { delay, realTimers, type Timers } from '../lib/timers.js';

/** The part of a zeromq socket the loop uses. */
export interface ReadableSocket {
  readonly closed: boolean;
  receive(): Promise<Buffer[]>;
}

export interface Reader {
  /** Handles one message; a promise returned is waited for before the next read (the server waits so for a
   * fan-out to be written). */
  take(frames: Buffer[]): Promise<void> | undefined;
  /** Told of each failed receive, with how many failed in a row (1 for the first of a streak). */
  receiveFailed(error: unknown, inARow: number): void;
  /** Told when `take` threw: that message is lost, the next is read. */
  takeFailed(error: unknown): void;
  /**
   * Asked before each read with how many messages were taken since the loop last let the event loop turn: true
   * lets it turn first (timers, I/O, other sockets' readers) and starts the count again. Without it, the loop
   * reads on while messages wait (zeromq itself lets the event loop turn every 512 receives).
   */
  yieldBefore?(taken: number): boolean;
}

/** Longest wait between two failed receives in a row. */
const MAX_BACKOFF_MS = 1000;
const FIRST_BACKOFF_MS = 10;

/**
 * Reads `socket` until it is closed, handing each message to the reader. A failed receive is reported and read
 * again: at once after an interruption, else after a wait that doubles while failures run in a row. `wait` is how
 * the loop pauses (0: one turn of the event loop), on Node's timers by default (pauseOn); a test passes its own to
 * see the waits without waiting them.
 */
export async function readUntilClosed(
  socket: ReadableSocket,
  reader: Reader,
  wait: (ms: number) => Promise<void> = pauseOn(realTimers),
): Promise<void> {
  let inARow = 0;
  let taken = 0;
  while (!socket.closed) {
    if (reader.yieldBefore?.(taken) === true) {
      await wait(0);
      taken = 0;
      continue;
    }
    let frames: Buffer[];
    try {
      frames = await socket.receive();
      inARow = 0;
      taken += 1;
    } catch (e) {
      if (socket.closed) return;
      inARow += 1;
      reader.receiveFailed(e, inARow);
      await wait(transient(e) ? 0 : Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (inARow - 1)));
      continue;
    }
    try {
      const waiting = reader.take(frames);
      if (waiting !== undefined) await waiting;
    } catch (e) {
      reader.takeFailed(e);
    }
  }
}

/** Whether a report of this failure is worth a log line: the first of a streak, then at each power of two. */
export function worthReporting(inARow: number): boolean {
  return (inARow & (inARow - 1)) === 0;
}

function transient(e: unknown): boolean {
  const code = codeOf(e);
  return code === 'EINTR' || code === 'EAGAIN';
}

/** The loop's pauses on `timers`: 0 is one turn of the event loop, not a timer. */
export function pauseOn(timers: Timers): (ms: number) => Promise<void> {
  return (ms) => (ms === 0 ? new Promise((resolve) => setImmediate(resolve)) : delay(timers, ms));
}
