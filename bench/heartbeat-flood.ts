// Load generator for the heartbeat benchmarks (played through heartbeat-play.ts), a child process of its own so it does not share the server's
// event loop: heartbeats of many nodes over a few dealers, either as fast as the sockets take them or paced at
// one heartbeat per node per second. It takes its job and answers over the IPC channel. Given the server's command
// address it also answers the server's `abort` with `aborted`, as every client does once its node comes up (the
// server holds a node in rehab, resending the abort every interval, until it does); with `jobs`, it also acks
// every `commit` and answers every `run` with `ack_run` and `succeeded`, as a client running a no-op command.
import { randomBytes, randomUUID } from 'node:crypto';
import { Context, curveKeyPair, Dealer } from 'zeromq';
import { encodeMessage, signedText } from '../src/protocol/frames.js';
import { envelopeFor } from '../src/protocol/messages.js';
import { connectSocket } from '../src/protocol/socket-connect.js';

interface Job {
  addr: string;
  /** The server's command channel, for answering aborts; null where nothing sends them (a bare floor). */
  commandAddr?: string | null;
  curveServerKey: string | null;
  /** The key pair the dealers present (a server admits only keys its sessions name); else one made per dealer. */
  curveClient?: { publicKey: string; secretKey: string };
  org: string;
  nodes: Array<{ name: string; key: string }>;
  dealers: number;
  seconds: number;
  /** Heartbeats per node per second; 0 floods. */
  rate: number;
  /** Answer commits and runs too, not only aborts. */
  jobs?: boolean;
}

async function main(job: Job): Promise<number> {
  const keys = job.nodes.map((n) => ({
    name: n.name,
    key: Buffer.from(n.key, 'base64'),
    incarnation: randomUUID(),
    seq: 0,
  }));
  const byName = new Map(keys.map((k) => [k.name, k]));
  const commands: Dealer[] = [];
  // A pair per node for the memory benchmark: past zeromq's default of 1,023 sockets a context.
  const context = new Context({ maxSockets: job.dealers * 2 + 16 });
  const sockets = Array.from({ length: job.dealers }, () => {
    const curve = job.curveServerKey ? (job.curveClient ?? curveKeyPair()) : null;
    // One routing id on both channels, as a client's two dealers: the server answers on the one it knows.
    const options = {
      context,
      linger: 0,
      sendHighWaterMark: 100_000,
      routingId: randomBytes(8).toString('hex'),
      ...(curve && job.curveServerKey
        ? { curveServerKey: job.curveServerKey, curvePublicKey: curve.publicKey, curveSecretKey: curve.secretKey }
        : {}),
    };
    // zeromq.js takes `context` out of the options it is given: each socket gets a copy.
    const d = new Dealer({ ...options });
    connectSocket(d, job.addr);
    if (job.commandAddr) {
      const command = new Dealer({ ...options });
      connectSocket(command, job.commandAddr);
      commands.push(command);
      void answerCommands(command, byName, job.org, job.jobs === true);
    }
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
  for (const d of [...sockets, ...commands]) d.close();
  return sent;
}

/**
 * `aborted` for every `abort` the server sends, and with `jobs` a no-op command's answers to `commit` and `run`
 * (unverified: the load generator trusts its own server).
 */
async function answerCommands(
  command: Dealer,
  byName: Map<string, { key: Buffer; incarnation: string; seq: number }>,
  org: string,
  jobs: boolean,
): Promise<void> {
  const answers: Record<string, readonly string[]> = {
    abort: ['aborted'],
    ...(jobs ? { commit: ['ack_commit'], run: ['ack_run', 'succeeded'] } : {}),
  };
  try {
    for await (const [, body] of command) {
      const m = JSON.parse(String(body)) as { type?: string; node?: string; job_id?: string | null };
      const n = m.node === undefined ? undefined : byName.get(m.node);
      const types = m.type === undefined ? undefined : answers[m.type];
      if (types === undefined || n === undefined || m.node === undefined) continue;
      for (const type of types) {
        n.seq += 1;
        const answer = {
          type,
          ...envelopeFor(org, m.node, n.incarnation, n.seq, Date.now()),
          job_id: m.job_id ?? null,
          ...(type === 'succeeded' ? { exit_status: 0 } : {}),
        };
        await command.send(signedText(answer, n.key));
      }
    }
  } catch {
    // closed at the end of the run
  }
}

process.once('message', (job: Job) => {
  main(job).then(
    (sent) => process.send?.({ sent }, () => process.exit(0)),
    (e: unknown) => process.send?.({ error: String(e) }, () => process.exit(1)),
  );
});
