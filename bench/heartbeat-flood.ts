// Load generator for bench/transport.bench.ts, a child process of its own so it does not share the server's
// event loop: heartbeats of many nodes over a few dealers, either as fast as the sockets take them or paced at
// one heartbeat per node per second. It takes its job and answers over the IPC channel.
import { randomUUID } from 'node:crypto';
import { curveKeyPair, Dealer } from 'zeromq';
import { encodeMessage } from '../src/protocol/frames.js';
import { envelopeFor } from '../src/protocol/messages.js';

interface Job {
  addr: string;
  curveServerKey: string | null;
  org: string;
  nodes: Array<{ name: string; key: string }>;
  dealers: number;
  seconds: number;
  /** Heartbeats per node per second; 0 floods. */
  rate: number;
}

async function main(job: Job): Promise<number> {
  const keys = job.nodes.map((n) => ({
    name: n.name,
    key: Buffer.from(n.key, 'base64'),
    incarnation: randomUUID(),
    seq: 0,
  }));
  const sockets = Array.from({ length: job.dealers }, () => {
    const curve = job.curveServerKey ? curveKeyPair() : null;
    const d = new Dealer({
      linger: 0,
      sendHighWaterMark: 100_000,
      ...(curve && job.curveServerKey
        ? { curveServerKey: job.curveServerKey, curvePublicKey: curve.publicKey, curveSecretKey: curve.secretKey }
        : {}),
    });
    d.connect(job.addr);
    return d;
  });
  let sent = 0;
  const until = Date.now() + job.seconds * 1000;
  await Promise.all(
    sockets.map(async (socket, s) => {
      const mine = keys.filter((_, i) => i % job.dealers === s);
      while (Date.now() < until) {
        const roundStart = Date.now();
        for (const n of mine) {
          n.seq += 1;
          const body = {
            type: 'heartbeat',
            ...envelopeFor(job.org, n.name, n.incarnation, n.seq, Date.now()),
            job_state: 'idle',
            job_id: null,
          };
          await socket.send(encodeMessage(body, n.key));
          sent += 1;
          if (Date.now() >= until) break;
        }
        if (job.rate > 0) {
          const wait = 1000 / job.rate - (Date.now() - roundStart);
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
      }
    }),
  );
  for (const d of sockets) d.close();
  return sent;
}

process.once('message', (job: Job) => {
  main(job).then(
    (sent) => process.send?.({ sent }, () => process.exit(0)),
    (e: unknown) => process.send?.({ error: String(e) }, () => process.exit(1)),
  );
});
