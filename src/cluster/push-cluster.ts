// What the push-jobs actors ask of the cluster: which member is a node's gateway and whether another speaks for it,
// and what the owner of an organization tells its nodes' gateways. On one process every node is connected here, so
// the answers are fixed (SOLE_PROCESS); a member of a cluster plugs its gateway router in once it joins the streams.

/** An owner's record of a node, as a gateway's follower restarts from it. */
export interface OwnersRecord {
  status: 'up' | 'down';
  updated_at: number;
  incarnation: string | null;
}

export interface PushCluster {
  /**
   * The member id of the node's gateway (this process's own id included); undefined on one process, and for a node
   * whose session was never opened.
   */
  gatewayOf(org: string, node: string): string | undefined;
  /**
   * Whether `gateway` speaks for the node: it is the node's gateway of record, or that one is gone and the node was
   * heard at `gateway` since (which is recorded). A gateway the node left may hold its follower for a while, and
   * that follower's silence is not the node's.
   */
  heardAt(org: string, node: string, gateway: string): boolean;
  /**
   * The job runs no more: gateways that were sent its messages (or only `gateway`, which asked about it) reset a
   * node that still says it holds it.
   */
  jobOver(org: string, job: string, gateway?: string): void;
  /** Tells the node's gateway the owner's record of it: the gateway's follower started from an older one. */
  nodeState(org: string, node: string, gateway: string, record: OwnersRecord): void;
  /** The organization was adopted here: every other gateway says which of its nodes it holds, and how they are. */
  rollCall(org: string): void;
}

/** One process: no other gateway, nothing to tell one. */
export const SOLE_PROCESS: PushCluster = {
  gatewayOf: () => undefined,
  heardAt: () => true,
  jobOver: () => {},
  nodeState: () => {},
  rollCall: () => {},
};

/**
 * The cluster as the actors see it, given to them at start: one process's answers until the member joins the
 * streams between members (after its actors start, as its gateway router needs them), the router's from then on.
 */
export class PushClusterSlot implements PushCluster {
  private cluster: PushCluster = SOLE_PROCESS;

  /** From now on the actors' questions go to `cluster`. */
  plug(cluster: PushCluster): void {
    this.cluster = cluster;
  }

  gatewayOf(org: string, node: string): string | undefined {
    return this.cluster.gatewayOf(org, node);
  }

  heardAt(org: string, node: string, gateway: string): boolean {
    return this.cluster.heardAt(org, node, gateway);
  }

  jobOver(org: string, job: string, gateway?: string): void {
    this.cluster.jobOver(org, job, gateway);
  }

  nodeState(org: string, node: string, gateway: string, record: OwnersRecord): void {
    this.cluster.nodeState(org, node, gateway, record);
  }

  rollCall(org: string): void {
    this.cluster.rollCall(org);
  }
}
