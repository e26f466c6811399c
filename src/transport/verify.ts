// The verify pipeline of the push-jobs transport: a message's frames are decoded, its session key looked up, its
// HMAC, clock skew and sequence checked (src/protocol/receive.ts), and it comes out checked or dropped and counted.
// A message whose key is still being read waits for the read (held-for-read.ts). Nothing here acts on a message.
import type { Orphans } from '../cluster/gateway-ports.js';
import type { ServerConfig } from '../config/server-config.js';
import type { ClientMessage } from '../protocol/messages.js';
import { decodeFrames, NodeHolders, type DecodeOptions, type Dropped, type DropCounter } from '../protocol/receive.js';
import { ReplayGuard } from '../protocol/replay.js';
import type { Channel } from './channels.js';
import type { HeldForRead } from './held-for-read.js';
import type { SessionKeys } from './session-keys.js';

export type VerifyConfig = Pick<ServerConfig, 'max_body_size' | 'max_message_skew'>;

/** A node another client process holds: what its refused sender is told (see NodeWriter.refuse). */
export type Refusal = NonNullable<Dropped['refused']>;

export interface Verified {
  /** A message that passed every check, from the client process at `identity`, read at `at`. */
  checked(channel: Channel, message: ClientMessage, identity: Buffer | undefined, at: number): void;
  /** A message from a client process that does not hold its node. */
  refused(refusal: Refusal, at: number): void;
}

export interface VerifyPorts {
  sessions: SessionKeys;
  /** Which client process holds each node, for both channels. */
  holders: NodeHolders;
  drops: DropCounter;
  held: HeldForRead;
  now(): number;
  /** Where a node with no session here is adopted from, in a cluster; undefined on one process. */
  orphans(): Orphans | undefined;
}

export class Verifier {
  private readonly options: Record<Channel, DecodeOptions & { schema: 'client' }>;
  /** The read of a key the message being decoded found missing, for the message to wait on. */
  private keyRead: Promise<void> | undefined;

  constructor(
    config: VerifyConfig,
    private readonly ports: VerifyPorts,
    private readonly out: Verified,
  ) {
    // Each channel keeps its own replay guard: a message moved to the other channel is dropped by its type.
    const options = (): DecodeOptions & { schema: 'client' } => ({
      expectIdentity: true,
      maxBodySize: config.max_body_size,
      maxSkewSeconds: config.max_message_skew,
      now: 0,
      keyFor: (org, node) => this.keyFor(org, node),
      replay: new ReplayGuard(),
      schema: 'client',
      holders: ports.holders,
    });
    this.options = { heartbeat: options(), command: options() };
  }

  /** Checks one message's frames as read from `channel`. */
  take(channel: Channel, frames: Buffer[], retried = false): void {
    const opts = this.options[channel];
    opts.now = this.ports.now();
    this.keyRead = undefined;
    const d = decodeFrames(frames, opts);
    if (d.ok) {
      this.out.checked(channel, d.message, d.identity, opts.now);
      return;
    }
    const read = this.keyRead as Promise<void> | undefined;
    if (
      d.reason === 'unknown_node' &&
      read &&
      !retried &&
      this.ports.held.hold(read, () => this.take(channel, frames, true))
    )
      return;
    this.ports.drops.record(d.reason, d.detail);
    if (d.refused) this.out.refused(d.refused, opts.now);
  }

  private keyFor(org: string, node: string): Buffer | undefined {
    const { sessions } = this.ports;
    const key = sessions.keyFor(org, node);
    const orphans = key === undefined ? this.ports.orphans() : undefined;
    if (!orphans) return key;
    // Else one whose gateway this process became while another served its organization: its key is read.
    const orphan = orphans.adoptOrphan(org, node);
    if (orphan === undefined) this.keyRead = sessions.missing(org, node);
    return orphan;
  }
}
