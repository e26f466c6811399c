// Which member should own each partition: rendezvous hashing over the live members, so every member computes the
// same answer from the same member list, and a member joining or leaving moves only the partitions it wins or
// held. Pure: the coordinator turns the plan into lease acquisitions and hand-overs.
import { createHash } from 'node:crypto';
import { ALL_PARTITIONS, partitionName, type Partition } from '../store/partitions.js';

/** The member (by id) that should own `partition`, or undefined when there is none. */
export function preferredOwner(partition: Partition, members: readonly string[]): string | undefined {
  return rendezvous(partitionName(partition), members);
}

/** The member (by id) that should be a node's gateway (hold its connections), or undefined when there is none. */
export function preferredGateway(org: string, node: string, members: readonly string[]): string | undefined {
  return rendezvous(`${org}\u0000${node}`, members);
}

/** The member that scores highest for `name`: the same answer on every member, from the same member list. */
function rendezvous(name: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1n;
  for (const member of members) {
    const score = createHash('sha1').update(`${name}\u0000${member}`).digest().readBigUInt64BE(0);
    if (score > bestScore || (score === bestScore && best !== undefined && member < best)) {
      best = member;
      bestScore = score;
    }
  }
  return best;
}

export interface OwnershipPlan {
  /** Partitions this member should own and does not hold: try their leases (taken only once free). */
  acquire: Partition[];
  /** Partitions this member holds that another live member should own: hand them over. */
  release: Partition[];
}

/** How hand-overs to live members are held back, so that members coming and going do not move partitions in storms. */
export interface Rebalancing {
  /**
   * The live members that may be handed partitions: those that have stayed live long enough. A member that just
   * came back (restarted, or woken from a pause) waits, and may go again before it was given anything.
   */
  settled: ReadonlySet<string>;
  /** The most partitions handed over in one plan: a large move is spread over several ticks. */
  maxReleases: number;
}

/**
 * What `me` should do, holding `held`, for the live `members` (ids, `me` among them). A free partition is taken by
 * the member that should own it at once, however new (a failover waits for nothing); a held one is handed over only
 * to a settled member, a few at a time.
 */
export function planOwnership(
  me: string,
  held: ReadonlySet<Partition>,
  members: readonly string[],
  rebalancing: Rebalancing = { settled: new Set(members), maxReleases: Infinity },
): OwnershipPlan {
  const acquire: Partition[] = [];
  const release: Partition[] = [];
  for (const p of ALL_PARTITIONS) {
    const owner = preferredOwner(p, members.includes(me) ? members : [...members, me]);
    if (owner === me && !held.has(p)) acquire.push(p);
    else if (owner !== me && held.has(p) && owner !== undefined && rebalancing.settled.has(owner))
      if (release.length < rebalancing.maxReleases) release.push(p);
  }
  return { acquire, release };
}
