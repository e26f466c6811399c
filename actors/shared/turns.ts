// How many messages an actor takes in one turn of the event loop. nact runs each message in a setImmediate of its
// own, so an actor takes one message a turn. Idle, a turn is microseconds; loaded, it holds thousands of received
// heartbeats and lasts milliseconds, and a job actor with 10,000 acks queued took them at a hundred a second while
// the ZeroMQ read loop took its batch every turn: the jobs fell minutes behind the heartbeats, a voting timer
// queued behind the acks fired minutes late, and an organization's queries timed out. Here an actor goes on with
// its queued messages in the same turn, up to a budget, then yields: every actor still moves each turn, and none
// holds the loop for long.
import { createRequire } from 'node:module';
import { realTimers, type Timers } from '../../src/lib/timers.js';

/** The longest an actor keeps the loop in one turn before it lets the rest of the process run. */
export const TURN_BUDGET_MS = 1;
/** The most messages one actor takes in one turn, however cheap. */
export const TURN_MAX_MESSAGES = 1000;

interface Envelope {
  message: unknown;
  sender: unknown;
}

/** The clock a turn's budget is read on: Node's, unless a test times the turns on its own (timeTurnsOn). */
let clock: Pick<Timers, 'now'> = realTimers;

/**
 * Reads every actor's turn budget on `timers` from now on; returns what puts the clock before back. One clock for
 * the process: the turns are nact's, patched once for every actor system.
 */
export function timeTurnsOn(timers: Pick<Timers, 'now'>): () => void {
  const before = clock;
  clock = timers;
  return () => {
    clock = before;
  };
}

/** The part of nact's actor (lib/actor.js, 7.x) that runs messages. */
interface NactActor {
  busy: boolean;
  stopped: boolean;
  state: unknown;
  immediate: NodeJS.Immediate | undefined;
  mailbox: { shift(): Envelope | undefined };
  f: (this: unknown, state: unknown, message: unknown, ctx: unknown) => unknown;
  createContext(sender: unknown): unknown;
  afterMessage(): void;
  setTimeout(): void;
  handleFault(message: unknown, sender: unknown, error: unknown): unknown;
  handleMessage(message: unknown, sender: unknown): void;
}

const require = createRequire(import.meta.url);
const { Actor } = require('nact/lib/actor.js') as { Actor: { prototype: NactActor } };

for (const method of ['handleMessage', 'createContext', 'afterMessage', 'handleFault', 'setTimeout'] as const)
  if (typeof Actor.prototype[method] !== 'function')
    throw new Error(`nact's Actor has no ${method}: actors/shared/turns.ts does not fit this version of nact`);

/** Runs `first`, then what the mailbox holds, until it is empty or the turn's budget is spent. */
async function runTurn(actor: NactActor, first: Envelope): Promise<void> {
  const until = clock.now() + TURN_BUDGET_MS;
  let { message, sender } = first;
  for (let taken = 1; ; taken += 1) {
    try {
      const ctx = actor.createContext(sender);
      actor.state = await actor.f.call(ctx, actor.state, message, ctx);
      actor.afterMessage();
    } catch (error) {
      void actor.handleFault(message, sender, error);
      return;
    }
    if (actor.stopped) return;
    const next = actor.mailbox.shift();
    if (next === undefined) {
      actor.busy = false;
      actor.setTimeout();
      return;
    }
    if (taken >= TURN_MAX_MESSAGES || clock.now() >= until) {
      actor.handleMessage(next.message, next.sender);
      return;
    }
    ({ message, sender } = next);
  }
}

Actor.prototype.handleMessage = function handleMessage(this: NactActor, message: unknown, sender: unknown): void {
  this.busy = true;
  this.immediate = setImmediate(() => void runTurn(this, { message, sender }));
};
