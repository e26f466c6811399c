// Node heartbeats from a child process, for tests that hold up the server's event loop: nodes beating from the
// test's own process would fall silent with it, these keep beating as client processes do. A process and not a
// worker thread: ZeroMQ's native context aborts the whole process when a worker holding sockets is terminated.
// Each node gets its own socket; it only sends, as a client whose server has gone quiet keeps doing for a while.
// It takes its nodes as its first IPC message and says `beating` once its first round is sent.
import { z } from 'zod';
import { curveKeyPair, Dealer } from 'zeromq';
import { encodeMessage } from '../../src/protocol/frames.js';
import { envelopeFor } from '../../src/protocol/messages.js';
import { connectSocket } from '../../src/protocol/socket-connect.js';

export const heartbeatProcessDataSchema = z.object({
  heartbeatAddr: z.string(),
  curveServerKey: z.string().nullable(),
  intervalMs: z.int().positive(),
  nodes: z.array(
    z.object({
      org: z.string(),
      name: z.string(),
      /** The node's session key, hex. */
      key: z.string(),
      incarnation: z.string(),
      /** Above every sequence the node used or will use before it stops, so the server's replay guard takes these. */
      firstSequence: z.int().nonnegative(),
      /** The node's Curve key pair: the server admits only the one its config request named. */
      curve: z.object({ publicKey: z.string(), secretKey: z.string() }).optional(),
    }),
  ),
});
export type HeartbeatProcessData = z.infer<typeof heartbeatProcessDataSchema>;

function beat(data: HeartbeatProcessData): void {
  const nodes = data.nodes.map((n) => {
    const curve =
      data.curveServerKey === null
        ? {}
        : (() => {
            const pair = n.curve ?? curveKeyPair();
            return {
              curveServerKey: data.curveServerKey,
              curvePublicKey: pair.publicKey,
              curveSecretKey: pair.secretKey,
            };
          })();
    const dealer = new Dealer({ linger: 0, sendTimeout: 0, ...curve });
    connectSocket(dealer, data.heartbeatAddr);
    return { ...n, key: Buffer.from(n.key, 'hex'), sequence: n.firstSequence, dealer };
  });
  const round = (): void => {
    for (const n of nodes) {
      const body = {
        type: 'heartbeat',
        job_state: 'idle',
        job_id: null,
        ...envelopeFor(n.org, n.name, n.incarnation, n.sequence++, Date.now()),
      };
      // Past the high-water mark a heartbeat is lost, as on a real link; the next one goes on time.
      n.dealer.send(encodeMessage(body, n.key)).catch(() => undefined);
    }
  };
  round();
  setInterval(round, data.intervalMs);
  process.send?.('beating');
}

process.once('message', (data) => beat(heartbeatProcessDataSchema.parse(data)));
// Its parent gone, nothing stops its timer: it goes with the IPC channel.
process.once('disconnect', () => process.exit(0));
