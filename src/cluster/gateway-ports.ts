// What the gateway router (gateway-router.ts) is handed of the rest of its process, each as the narrow shape it
// uses: the cluster as this member sees it, this process's own side of the transport, the nodes' sessions and the
// followers of nodes whose organizations other members own. The transport and the actors answer them; this folder
// knows neither.
import type { NodeAnswerMessage, OutboundMessage, PushDescription } from '../protocol/node-messages.js';
import type { Member } from './members.js';
import type { NodeLink } from './node-link.js';
import type { OwnersRecord } from './push-cluster.js';

/**
 * What this member sees of the cluster, for routing besides its own sockets: the streams to the other members, the
 * node followers of organizations other members own, who is alive, and what this member owns under which epoch.
 */
export interface MemberView {
  link: NodeLink;
  gateways: GatewayFollowers;
  /** The live members. */
  members(): readonly Member[];
  /** Whether this process owns the organization now. */
  owns(org: string): boolean;
  /**
   * The epoch of this process's lease on the organization's partition while it surely holds it, else undefined:
   * its orders carry it, and without it this process orders nothing, sends its nodes nothing.
   */
  epochOf(org: string): number | undefined;
}

/** This process's own side of the transport, which the router hands messages to. */
export interface Here {
  /** Writes a job message to a node connected to this process (or keeps it until the node is heard). */
  send: { send(org: string, node: string, message: OutboundMessage, voteBy?: number): void };
  /** The node's connection here is not its own any more: its next message here finds its follower anew. */
  peers: { forget(org: string, node: string): void };
  /** This process's channels as nodes reach them. */
  channels: { describe(): PushDescription };
}

/** A session's gateway for a config request: `current` (absent for a new session) kept or replaced. */
export type GatewayChoice = (current: string | undefined) => string | undefined;

/** The nodes' sessions (the transport's session keys): each names the member that is its node's gateway. */
export interface GatewaySessions {
  /** The member id of the node's gateway, for the organizations read. */
  gatewayOf(org: string, node: string): string | undefined;
  /** The key of a node whose session names a gateway no longer `live`: this process is its gateway from now on. */
  adoptOrphan(org: string, node: string, live: (gateway: string) => boolean): Buffer | undefined;
  /** Stores the node's session as naming `gateway`. */
  bind(org: string, node: string, gateway: string): Promise<void>;
  /** Reads one node's session again: its owner opened, renewed or moved it. */
  reload(org: string, node: string): Promise<void>;
}

/** This gateway's followers of nodes whose organizations other members own (the push actors' GatewayNodes). */
export interface GatewayFollowers {
  /** A node's answer this process read as the owner, its lease in doubt: for the owner's inbox. */
  relay(org: string, node: string, at: number, message: NodeAnswerMessage): void;
  /** A job message for a node here: its job runs. */
  sent(org: string, job: string | null): void;
  /** The owner says these jobs do not run (any more). */
  over(org: string, jobs: readonly string[]): void;
  /** The organization has a new owner: each node connected here says how it is. */
  rollCall(org: string): void;
  /** The node's follower starts again from the owner's record of it. */
  reset(org: string, node: string, record: OwnersRecord & { node_name: string }): void;
  /** The node is another gateway's now: its follower here goes. */
  forgetNode(org: string, node: string): void;
}

/** Where a node with no session here is adopted from, for the transport's verify pipeline. */
export interface Orphans {
  /** The key of a node whose gateway died (or was this process's predecessor): taken over; else undefined. */
  adoptOrphan(org: string, node: string): Buffer | undefined;
}
