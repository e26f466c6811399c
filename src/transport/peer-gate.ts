// What a hub's routers let in (issue: hostile peers cost nothing): messages no larger than the protocol allows,
// refused by libzmq before they are buffered; handshakes that finish within handshake_timeout; and, with CurveZMQ,
// only client keys a node named in a config request (ZAP). It also counts what its routers refused and closed.
import type { Socket } from 'zeromq';
import { MAX_HEADER_SIZE } from '../protocol/frames.js';
import { AdmittedKeys } from './admitted-keys.js';
import { ConnectionWatch, type ZmqConnections } from './connection-watch.js';
import { registerZapDomain } from './zap.js';

/**
 * How long a handshake of a Curve key no session names yet waits for one to (AdmittedKeys.named), at most: within
 * the handshake timeout, and long enough for a node's owner to tell its gateway of the session it just opened.
 */
const UNKNOWN_KEY_HOLD_MS = 2000;
/** Handshakes held at once at most: past that, an unknown key is refused at once (a flood of forged keys). */
const MAX_HELD_HANDSHAKES = 1000;

/**
 * Added to the largest frame the protocol allows: a Curve MESSAGE command wraps each frame in about 33 bytes
 * (command name, flags, nonce, MAC), and frame lengths are counted as libzmq reads them off the wire.
 */
const FRAME_MARGIN = 1024;

export interface GateSettings {
  max_body_size: number;
  handshake_timeout: number;
}

export class PeerGate {
  readonly admitted: AdmittedKeys;
  private readonly connections = new ConnectionWatch();
  private unregister: (() => void) | undefined;
  /** Handshakes waiting for their key to be named now. */
  private held = 0;
  /** Resolved once the hub has read the sessions it starts with (see opened). */
  private readonly ready: Promise<void>;
  private markReady: () => void = () => undefined;

  constructor(
    private readonly settings: GateSettings,
    now: () => number,
    /** This hub's ZAP domain: unique in the process, which may run several hubs (tests do). */
    private readonly domain: string,
  ) {
    this.admitted = new AdmittedKeys(now);
    this.ready = new Promise((resolve) => (this.markReady = resolve));
  }

  /**
   * The hub has read its sessions: handshakes held back until now are answered. Nodes reconnect the moment a
   * restarted server binds, before it has read who they are; refused then, they would wait out a reconnect.
   */
  opened(): void {
    this.markReady();
  }

  /**
   * The options both routers take. libzmq closes a peer whose frame is larger than `maxMessageSize` as soon as it
   * reads the frame's length, before buffering any of it. With CurveZMQ, every handshake asks this gate's ZAP
   * domain, and one with no ZAP handler to ask is refused rather than admitted.
   */
  routerOptions(curve: boolean) {
    return {
      maxMessageSize: MAX_HEADER_SIZE + this.settings.max_body_size + FRAME_MARGIN,
      handshakeInterval: this.settings.handshake_timeout * 1000,
      ...(curve ? { zapDomain: this.domain, zapEnforceDomain: true } : {}),
    };
  }

  /** Admits from now on only the Curve keys that live sessions name; called before the routers bind. */
  async admitNamedKeysOnly(): Promise<void> {
    const holdMs = Math.min(UNKNOWN_KEY_HOLD_MS, (this.settings.handshake_timeout * 1000) / 2);
    this.unregister ??= await registerZapDomain(this.domain, async (key) => {
      await this.ready;
      let refusal = this.admitted.refusal(key);
      if (refusal === 'curve_key_unknown' && this.held < MAX_HELD_HANDSHAKES) {
        this.held += 1;
        await this.admitted.named(key, holdMs).finally(() => (this.held -= 1));
        refusal = this.admitted.refusal(key);
      }
      if (refusal !== undefined) this.connections.refuse(refusal);
      return refusal;
    });
  }

  watch(socket: Socket): void {
    this.connections.watch(socket);
  }

  figures(): ZmqConnections {
    return { ...this.connections.figures(), held: this.held };
  }

  close(): void {
    this.unregister?.();
    this.unregister = undefined;
  }
}
