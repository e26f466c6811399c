// Which simulated node does what: behaviours given as shares of the fleet become exact counts, spread over the
// nodes by a seeded shuffle, so a seed and a fleet size always give the same assignment.
import type { BehaviourShares } from './options.js';

/** How a node answers a commit. */
export type Vote = 'ack' | 'nack' | 'silent';
/** How a node's command ends once it runs. */
export type RunEnd = 'succeed' | 'fail' | 'crash';

export interface NodeBehaviour {
  vote: Vote;
  run: RunEnd;
  /** Its heartbeats stop for a while and resume, over and over. */
  flap: boolean;
}

/** A generator of numbers in [0, 1) from a 32-bit seed (splitmix-style mixing of a counter). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    z = (z ^ (z >>> 16)) >>> 0;
    return z / 2 ** 32;
  };
}

/** 0..count-1 in an order decided by `random` (Fisher-Yates). */
function shuffled(count: number, random: () => number): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const a = order[i] ?? 0;
    order[i] = order[j] ?? 0;
    order[j] = a;
  }
  return order;
}

/** Each share as a count of `total`, rounded to the nearest node. */
export function shareCount(share: number, total: number): number {
  return Math.round(share * total);
}

/**
 * One behaviour per node index. Votes (nack, silent), run ends (crash, fail) and flapping are three independent
 * draws, each with its own shuffle of the fleet, so a node may both nack and flap.
 */
export function assignBehaviours(count: number, shares: BehaviourShares, seed: number): NodeBehaviour[] {
  const out: NodeBehaviour[] = Array.from({ length: count }, () => ({ vote: 'ack', run: 'succeed', flap: false }));
  const pick = (salt: number, parts: Array<[number, (b: NodeBehaviour) => void]>) => {
    const order = shuffled(count, seededRandom((seed ^ Math.imul(salt, 0x27d4eb2d)) >>> 0));
    let at = 0;
    for (const [share, set] of parts) {
      const n = shareCount(share, count);
      for (const i of order.slice(at, at + n)) {
        const b = out[i];
        if (b !== undefined) set(b);
      }
      at += n;
    }
  };
  pick(1, [
    [shares.nack, (b) => (b.vote = 'nack')],
    [shares.silent, (b) => (b.vote = 'silent')],
  ]);
  pick(2, [
    [shares.crash, (b) => (b.run = 'crash')],
    [shares.fail, (b) => (b.run = 'fail')],
  ]);
  pick(3, [[shares.flap, (b) => (b.flap = true)]]);
  return out;
}
