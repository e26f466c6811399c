// What happens to the ZeroMQ connections of the hub's two routers, from libzmq's socket events: how many are open,
// and how many were refused or closed, by reason, for GET /_status and the metrics.
import type { Socket } from 'zeromq';
import type { CurveRefusal } from './admitted-keys.js';

/** Refused in the handshake: keys ZAP refused, handshakes past handshake_timeout, and other failed handshakes. */
export type ZmqRefusal = CurveRefusal | 'handshake_timeout' | 'handshake_failed';
export const ZMQ_REFUSALS: readonly ZmqRefusal[] = [
  'curve_key_unknown',
  'curve_key_expired',
  'handshake_timeout',
  'handshake_failed',
];

export interface ZmqConnections {
  /** Connections accepted and not closed yet, on both channels. */
  open: number;
  refused: Record<ZmqRefusal, number>;
  /**
   * Connections closed after their handshake: peers that left, peers silent past idle_timeout, and peers that sent a
   * message past the size limit. libzmq closes the last without an event of its own (ZMQ_EVENT_DISCONNECTED carries
   * no reason), so they are told apart from the others only by the count going up while the nodes stay.
   */
  closed_after_handshake: number;
  /** Handshakes waiting now for a session to name their Curve key (PeerGate): nodes that just moved here. */
  held: number;
}

export class ConnectionWatch {
  private accepted = 0;
  private handshakes = 0;
  private disconnected = 0;
  private readonly refused: Record<ZmqRefusal, number> = {
    curve_key_unknown: 0,
    curve_key_expired: 0,
    handshake_timeout: 0,
    handshake_failed: 0,
  };

  /** Counts `socket`'s events until it is closed. */
  watch(socket: Socket): void {
    void (async () => {
      try {
        for await (const event of socket.events) {
          switch (event.type) {
            case 'accept':
              this.accepted += 1;
              break;
            case 'handshake':
              this.handshakes += 1;
              break;
            case 'disconnect':
              this.disconnected += 1;
              break;
            case 'handshake:error:protocol':
              this.refused.handshake_failed += 1;
              break;
            case 'handshake:error:other':
              // libzmq reports a handshake past ZMQ_HANDSHAKE_IVL with the errno of that moment, EAGAIN.
              this.refused[event.error.code === 'EAGAIN' ? 'handshake_timeout' : 'handshake_failed'] += 1;
              break;
            // 'handshake:error:auth' is a ZAP refusal, counted with its reason by refuse().
            default:
              break;
          }
        }
      } catch {
        // The socket closed.
      }
    })();
  }

  /** A Curve key ZAP refused. */
  refuse(reason: CurveRefusal): void {
    this.refused[reason] += 1;
  }

  figures(): ZmqConnections {
    // Every accepted connection completes its handshake or is closed in it, so the closings past the ones that
    // never completed a handshake came after one; handshakes in flight at this moment make it low by as many.
    const closedInHandshake = this.accepted - this.handshakes;
    return {
      open: Math.max(0, this.accepted - this.disconnected),
      refused: { ...this.refused },
      closed_after_handshake: Math.max(0, this.disconnected - closedInHandshake),
      held: 0,
    };
  }
}
