// What the heartbeat benchmarks share: a server configured for them, sessions opened for its nodes, and the
// nodes played by heartbeat-flood.ts in a child process of its own.
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { curveKeyPair, Router } from 'zeromq';
import { serverConfigSchema, type ServerConfig } from '../src/config/server-config.js';
import { parseHeader, signedText } from '../src/protocol/frames.js';
import { envelopeFor } from '../src/protocol/messages.js';
import { hmacVerify, newSessionKey } from '../src/protocol/signing.js';
import { keepaliveOptions } from '../src/protocol/keepalive.js';
import { receiveIntoOwnMemory } from '../src/protocol/zmq-context.js';
import type { startServer } from '../src/server.js';
import { Outbox } from '../src/transport/outbox.js';
import { LISTEN_BACKLOG } from '../src/transport/push-hub.js';

/**
 * The compiled benchmark module `name` (npm run bench compiles them first), whether this one runs from the sources
 * or from dist/bench. Processes that are measured run compiled, as a server does in production: run from the
 * sources, each of the server's worker threads would load its modules through the TypeScript loader, with a
 * loader thread of its own, and those threads' start and later collections would be counted as the server's.
 */
export function compiledBench(name: string): string {
  const fromSources = import.meta.url.endsWith('.ts');
  return fileURLToPath(new URL(fromSources ? `../dist/bench/${name}.js` : `./${name}.js`, import.meta.url));
}

export interface Load {
  addr: string;
  commandAddr?: string;
  curveServerKey: string;
  /**
   * The Curve key pair the player's dealers present: a server admits only keys its nodes' sessions name, so a load
   * on a server has its sessions opened with this key; a bare floor admits any.
   */
  curveClient?: { publicKey: string; secretKey: string };
  nodes: Array<{ name: string; key: string }>;
}

export interface Play {
  dealers: number;
  seconds: number;
  /** Heartbeats per node per second; 0 floods. */
  rate: number;
  /** The nodes also ack commits and run a no-op command for each `run`. */
  jobs?: boolean;
}

/** Plays the nodes; resolves with how many heartbeats were sent (0 when `stop` cut the play short). */
export function play(load: Load, how: Play, stop?: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = fork(compiledBench('heartbeat-flood'), { execArgv: [] });
    child.send({ ...load, org: 'default', ...how });
    child.once('message', (m: { sent?: number; error?: string }) =>
      m.error ? reject(new Error(m.error)) : resolve(m.sent ?? 0),
    );
    child.once('error', reject);
    // A child that dies first (say, the benchmarks are not compiled: run `npm run bench`) must not hang the run.
    child.once('exit', (code, signal) =>
      stop?.aborted
        ? resolve(0)
        : reject(new Error(`the node player exited (${signal ?? `code ${code}`}) before reporting`)),
    );
    stop?.addEventListener('abort', () => child.kill(), { once: true });
  });
}

/** A server on loopback with free ports, its store in `dir`, heartbeating every `intervalMs`. */
export function benchConfig(dir: string, intervalMs: number, extra: Partial<ServerConfig> = {}): ServerConfig {
  return {
    ...serverConfigSchema.parse({}),
    api_port: 0,
    api_listen_address: '127.0.0.1',
    data_dir: dir,
    server_heartbeat_port: 0,
    command_port: 0,
    queue_listen_address: 'tcp://127.0.0.1',
    server_name: '127.0.0.1',
    heartbeat_interval: intervalMs,
    log_level: 'warn',
    ...extra,
  };
}

type Server = Awaited<ReturnType<typeof startServer>>;

/** Opens a session for `count` nodes of the default organization, in batches, and the load that plays them. */
export async function serverLoad(s: Server, count: number): Promise<Load> {
  const nodes: Array<{ name: string; key: string }> = [];
  const curveClient = curveKeyPair();
  for (let i = 0; i < count; i += 500) {
    const batch = Array.from({ length: Math.min(500, count - i) }, (_, k) => `node-${i + k}`);
    const grants = await Promise.all(batch.map((name) => s.hub.openSession('default', name, curveClient.publicKey)));
    for (const [k, name] of batch.entries()) nodes.push({ name, key: grants[k]?.key.toString('base64') ?? '' });
  }
  const d = s.hub.describe();
  const curveServerKey = d.curve_public_key ?? '';
  return { addr: d.heartbeat_addr, commandAddr: d.command_addr, curveServerKey, curveClient, nodes };
}

export interface Floor {
  load: Load;
  accepted(): number;
  /** Nodes whose verified `aborted` was read on the command channel (with `rehab`). */
  answers(): number;
  /**
   * A job as bare as it gets, over every node heard: a signed `commit` to each on the command channel, every
   * `ack_commit` read and verified, then a signed `run` to each, and every `ack_run` and `succeeded` read and
   * verified; nothing decided, kept or saved. Resolves when the last node has succeeded.
   */
  job(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The floor: bare ZeroMQ routers configured as the server's (CurveZMQ, libzmq's defaults) that receive,
 * parse and verify each heartbeat and send a signed heartbeat back to every node each interval, and do nothing
 * else. With `command`, a second router takes the nodes' command connections, as the server's does. With `rehab`
 * too, the floor also makes the exchange every server makes with a node it hears for the first time: a signed
 * `abort` written on the command channel, and the node's `aborted` read there, parsed and verified.
 */
export async function startFloor(
  count: number,
  intervalMs: number,
  opts: { command: boolean; rehab?: boolean },
): Promise<Floor> {
  const curve = curveKeyPair();
  // sendTimeout 0 as the server's: a Router never waits to send, and zeromq.js then skips a check per send. Messages
  // are read into memory of their own, and a fleet connects through the same listen backlog with the same TCP
  // keepalives, as the server's are; and, as the server's, a node reconnecting under its routing id takes it over
  // (handover), where a connection it left still holds it (a handshake timed out under a fleet connecting at once).
  receiveIntoOwnMemory();
  const router = () =>
    new Router({
      handover: true,
      linger: 0,
      sendTimeout: 0,
      backlog: LISTEN_BACKLOG,
      ...keepaliveOptions(serverConfigSchema.parse({}).idle_timeout),
      curveServer: true,
      curveSecretKey: curve.secretKey,
    });
  const heartbeat = router();
  await heartbeat.bind('tcp://127.0.0.1:*');
  const command = opts.command ? router() : undefined;
  await command?.bind('tcp://127.0.0.1:*');
  // A router takes one send at a time when a peer's pipe is full: the floor queues as the server does.
  const out = new Outbox(heartbeat, () => undefined);
  const commands = command === undefined ? undefined : new Outbox(command, () => undefined);
  const rehab = opts.rehab === true ? commands : undefined;
  const names = Array.from({ length: count }, (_, i) => `node-${i}`);
  const keys = new Map(names.map((n) => [n, newSessionKey()]));
  const heard = new Map<string, Buffer>();
  const incarnation = '00000000-0000-4000-8000-000000000000';
  let accepted = 0;
  let sequence = 0;
  /** Nodes sent an abort and not yet heard answering it. */
  const inRehab = new Set<string>();
  const send = (outbox: Outbox, node: string, id: Buffer, key: Buffer, body: Record<string, unknown>): void => {
    const envelope = envelopeFor('default', node, incarnation, ++sequence, Date.now());
    outbox.push([id, ...signedText({ type: body.type, ...envelope, ...body }, key)]);
  };
  const sendAbort = (outbox: Outbox, node: string, id: Buffer, key: Buffer): void =>
    send(outbox, node, id, key, { type: 'abort', job_id: null });
  const beat = setInterval(() => {
    const now = Date.now();
    // As the server, an abort not yet answered is sent again each interval: one written before the node's
    // command connection was up went nowhere.
    for (const node of inRehab) {
      const id = heard.get(node);
      const key = keys.get(node);
      if (rehab && id && key) sendAbort(rehab, node, id, key);
    }
    for (const [node, id] of heard) {
      const key = keys.get(node);
      if (!key) continue;
      const body = {
        type: 'heartbeat',
        ...envelopeFor('default', node, incarnation, ++sequence, now),
        server: 'x',
        interval_ms: intervalMs,
      };
      out.push([id, ...signedText(body, key)]);
    }
  }, intervalMs);
  /** The type, node and key of a signed message, once verified. */
  const verified = (header: Buffer, body: Buffer): { type: string; node: string; key: Buffer } | undefined => {
    const h = parseHeader(header);
    const msg = JSON.parse(body.toString('utf8')) as { type: string; node: string };
    const key = keys.get(msg.node);
    return h.ok && key && hmacVerify(key, body, h.signature) ? { type: msg.type, node: msg.node, key } : undefined;
  };
  const receiving = (async () => {
    for await (const [id, header, body] of heartbeat) {
      if (!id || !header || !body) continue;
      const from = verified(header, body);
      if (!from) continue;
      if (rehab && !heard.has(from.node)) {
        inRehab.add(from.node);
        sendAbort(rehab, from.node, id, from.key);
      }
      heard.set(from.node, id);
      accepted += 1;
    }
  })();
  let answers = 0;
  /** The job's phase under way: the answer it waits for, and the nodes that have not sent it yet. */
  let phase: { answer: string; left: Set<string>; done: () => void } | undefined;
  const answering = (async () => {
    if (!command) return;
    for await (const [id, header, body] of command) {
      const from = id && header && body ? verified(header, body) : undefined;
      if (!from) continue;
      if (from.type === 'aborted' && inRehab.delete(from.node)) answers += 1;
      if (phase?.answer === from.type && phase.left.delete(from.node) && phase.left.size === 0) phase.done();
    }
  })();
  /** Sends `body` to every node heard and resolves once each has sent back `answer`. */
  const fanOut = (body: Record<string, unknown>, answer: string): Promise<void> =>
    new Promise((done) => {
      if (!commands) throw new Error('a job needs the command channel');
      phase = { answer, left: new Set(heard.keys()), done };
      for (const [node, id] of heard) {
        const key = keys.get(node);
        if (key) send(commands, node, id, key, body);
      }
    });
  return {
    load: {
      addr: heartbeat.lastEndpoint ?? '',
      ...(command ? { commandAddr: command.lastEndpoint ?? '' } : {}),
      curveServerKey: curve.publicKey,
      nodes: names.map((name) => ({ name, key: keys.get(name)?.toString('base64') ?? '' })),
    },
    accepted: () => accepted,
    answers: () => answers,
    job: async () => {
      const job_id = randomUUID();
      await fanOut({ type: 'commit', job_id, command: 'noop', run_timeout: 3600 }, 'ack_commit');
      await fanOut({ type: 'run', job_id }, 'succeeded');
    },
    stop: async () => {
      clearInterval(beat);
      heartbeat.close();
      command?.close();
      await Promise.all([receiving.catch(() => undefined), answering.catch(() => undefined)]);
    },
  };
}

/**
 * Runs the compiled benchmark `bench` (see compiledBench) as a measuring child in role `role`, in a fresh process
 * of its own so that no measure inherits another's heap or timers, and resolves with the figure it sends
 * (childOrMain is the other side).
 */
export function measureInChild<T extends object>(bench: string, role: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = fork(compiledBench(bench), [role], { execArgv: [] });
    child.once('message', (m: T | { error: string }) => ('error' in m ? reject(new Error(m.error)) : resolve(m)));
    child.once('error', reject);
    // A child that dies first (libzmq aborts on a failed assertion) would otherwise leave nothing to wait for, and
    // the parent would end without a word.
    child.once('exit', (code, signal) =>
      reject(new Error(`the ${role} process exited (${signal ?? `code ${code}`}) before reporting`)),
    );
  });
}

/**
 * Runs `child` when this file was started as a measuring child (`process.argv[2]` one of `roles`), sending its
 * figure to the parent; else runs `main`.
 */
export function childOrMain<T>(
  roles: readonly string[],
  child: (role: string) => Promise<T>,
  main: () => Promise<void>,
): void {
  const role = process.argv[2];
  if (role !== undefined && roles.includes(role)) {
    child(role).then(
      (figure) => process.send?.(figure, () => process.exit(0)),
      (e: unknown) => process.send?.({ error: String(e) }, () => process.exit(1)),
    );
    return;
  }
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
