// What libzmq holds per connection, before the server adds anything: a bare Router's resident memory per
// connection as messages pass one at a time each way over CONNECTIONS dealers in another process, for two message
// sizes (under and over zeromq.js's 128 bytes, past which a received message stays in libzmq's memory until
// collected), with libzmq's default read buffers and with each message received into memory of its own (as the
// server does, src/protocol/zmq-context.ts). Each configuration runs in a fresh process.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { context, Dealer, Router } from 'zeromq';
import { connectSocket } from '../src/protocol/socket-connect.js';
import { receiveIntoOwnMemory } from '../src/protocol/zmq-context.js';
import { childOrMain } from './heartbeat-play.js';
import { report } from './support.js';

const CONNECTIONS = 500;
/** Messages each way per connection at each reading, in total. */
const READINGS = [0, 10, 100, 300, 1000];
const SIZES = [100, 300];

type Mode = 'default' | 'own';
type Reply = 'ready' | 'done';

/** The dealers' process: connects, then plays `rounds` messages each way whenever told. */
async function dealers(endpoint: string): Promise<void> {
  context.maxSockets = CONNECTIONS + 16;
  const sockets = Array.from({ length: CONNECTIONS }, (_, i) => {
    const d = new Dealer({ linger: 0, routingId: `d${i}` });
    connectSocket(d, endpoint);
    return d;
  });
  process.on('message', (m: { rounds: number; size: number } | 'stop') => {
    if (m === 'stop') process.exit(0);
    void (async () => {
      const body = 'x'.repeat(m.size);
      for (let r = 0; r < m.rounds; r++) {
        await Promise.all(sockets.map((d) => d.send(body)));
        await Promise.all(sockets.map((d) => d.receive()));
      }
      process.send?.('done' satisfies Reply);
    })();
  });
  process.send?.('ready' satisfies Reply);
}

/** The measured process: a Router echoing every message; KB per connection at each reading. */
async function router(mode: Mode, size: number): Promise<number[]> {
  if (mode === 'own') receiveIntoOwnMemory();
  const socket = new Router({ linger: 0, sendTimeout: 0 });
  await socket.bind('tcp://127.0.0.1:*');
  const base = process.memoryUsage().rss;
  void (async () => {
    for await (const [id, body] of socket) if (id && body) await socket.send([id, body]);
  })();
  const child = fork(fileURLToPath(import.meta.url), ['dealers', socket.lastEndpoint ?? '']);
  const next = () => new Promise<void>((resolve) => child.once('message', () => resolve()));
  await next();
  await new Promise((r) => setTimeout(r, 2000)); // every connection made
  const kb: number[] = [];
  let played = 0;
  for (const at of READINGS) {
    if (at > played) {
      child.send({ rounds: at - played, size });
      await next();
      played = at;
    }
    global.gc?.();
    kb.push((process.memoryUsage().rss - base) / CONNECTIONS / 1024);
  }
  child.send('stop');
  socket.close();
  return kb;
}

function measure(mode: Mode, size: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [mode, String(size)], {
      execArgv: [...process.execArgv, '--expose-gc'],
    });
    child.once('message', (m: number[] | { error: string }) =>
      'error' in m ? reject(new Error(m.error)) : resolve(m),
    );
    child.once('exit', (code) => reject(new Error(`the ${mode} router exited with code ${code} before reporting`)));
  });
}

async function main(): Promise<void> {
  console.log(`Resident memory of a bare Router per connection (KB), ${CONNECTIONS} connections, messages each way:\n`);
  console.log(`| message | received into | ${READINGS.map((n) => `after ${n}`).join(' | ')} |`);
  console.log(`|---|---|${READINGS.map(() => '---:').join('|')}|`);
  for (const size of SIZES)
    for (const mode of ['default', 'own'] as const) {
      const kb = await measure(mode, size);
      const how = mode === 'own' ? 'memory of its own' : "libzmq's read buffer";
      console.log(`| ${size} B | ${how} | ${kb.map((k) => k.toFixed(1)).join(' | ')} |`);
      report(
        `bare Router, ${size} B messages into ${how}: per connection after ${READINGS.at(-1)} each way`,
        `${kb.at(-1)?.toFixed(1)} KB`,
      );
    }
}

if (process.argv[2] === 'dealers') void dealers(process.argv[3] ?? '');
else childOrMain(['default', 'own'], (mode) => router(mode as Mode, Number(process.argv[3])), main);
