// The peers table of the push-jobs transport: each node heard here, with where to write to it, when it last
// heartbeated, and its node follower.
import type { NodeFollower } from '../../actors/push/node.js';

/** What the transport knows of a connected node. */
export interface Peer {
  /**
   * The routing id of the node's client process. Its two dealers share one id, so whichever channel spoke
   * last names both: a restarted client that has only heartbeated so far still gets its rehab abort.
   */
  identity: Buffer | undefined;
  /**
   * When its last heartbeat arrived. A node is down once silent past the offline window by its heartbeats alone
   * (its job answers do not count), so the hub counts it connected and heartbeats it by the same clock: a node
   * GET shows down is not also counted connected because it answered an abort after its last heartbeat.
   */
  lastBeat: number;
  follower: NodeFollower;
  /** The follower is this process's own, as the organization's owner (not a gateway's). */
  owned: boolean;
}

/** Where a verified sender's follower comes from: the owner's, else a gateway's; undefined for no such organization. */
export type FollowerOf = (org: string, node: string) => { follower: NodeFollower; owned: boolean } | undefined;

export class PeerTable {
  private readonly peers = new Map<string, Map<string, Peer>>();

  constructor(private readonly followerOf: FollowerOf) {}

  get(org: string, node: string): Peer | undefined {
    return this.peers.get(org)?.get(node);
  }

  /** The peer of a verified sender, with its node follower found on its first message. */
  heard(org: string, node: string): Peer | undefined {
    let nodes = this.peers.get(org);
    const known = nodes?.get(node);
    if (known) return known;
    const found = this.followerOf(org, node);
    if (!found) return undefined;
    if (!nodes) {
      nodes = new Map();
      this.peers.set(org, nodes);
    }
    const peer: Peer = { identity: undefined, lastBeat: 0, ...found };
    nodes.set(node, peer);
    return peer;
  }

  /** The node's connection here is not its own any more: its next message here finds its follower anew. */
  forget(org: string, node: string): void {
    this.peers.get(org)?.delete(node);
  }

  forgetOrg(org: string): void {
    this.peers.delete(org);
  }

  *all(): Iterable<[string, string, Peer]> {
    for (const [org, nodes] of this.peers) for (const [node, peer] of nodes) yield [org, node, peer];
  }

  /** Peers heartbeating since `since`. */
  beatingSince(since: number): number {
    let n = 0;
    for (const nodes of this.peers.values()) for (const peer of nodes.values()) if (peer.lastBeat >= since) n += 1;
    return n;
  }
}
