// Opening HTTP connections until the server refuses them. From one address, max_connections_per_address answers 429
// and a real push-jobs-client, from another, still registers and runs a job. From many, the server keeps its last
// open files (node_connection_reserve) for node connections: HTTP gets 503 while a node's channels still connect.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { Dealer } from 'zeromq';
import { connectSocket } from '../../src/protocol/socket-connect.js';
import { until } from '../support/deadline.js';
import { connectFrom, registerNode, statusOf, type RawConnection } from '../support/hostile.js';
import { startNodeFleet, waitForNodes } from '../support/node-fleet.js';
import { startJob, waitForEnd } from '../support/push-api.js';
import { startServerProcess } from '../support/server-process.js';

const PER_ADDRESS = 100;
const FILES = { soft: 256, hard: 700 };
/** A tenth of the hard limit, which the server raises its soft limit to as it starts. */
const RESERVE = 70;

/** Opens `count` connections from `from`, sending nothing on them. */
async function flood(port: number, from: string, count: number): Promise<RawConnection[]> {
  return Promise.all(Array.from({ length: count }, () => connectFrom(port, from)));
}
const answeredWith = (conns: RawConnection[], code: number) =>
  conns.filter((c) => c.answer().startsWith(`HTTP/1.1 ${code} `));

t.test('connections past the caps are refused, and nodes still connect and run jobs', async (t) => {
  const server = await startServerProcess(t, {
    settings: { heartbeat_interval: 500, max_connections_per_address: PER_ADDRESS },
    openFiles: FILES,
  });
  const admin = await server.client('admin');
  const started = await statusOf(server.url);
  t.same(
    started.limits?.files,
    { ...started.limits?.files, limit: FILES.hard, hard_limit: FILES.hard, node_connection_reserve: RESERVE },
    'the server raised its soft open-file limit to the hard one, and keeps a tenth for node connections',
  );
  const held: RawConnection[] = [];
  t.teardown(() => held.forEach((c) => c.socket.destroy()));

  // One address opens connections until the server refuses them.
  const one = await flood(server.ports.api, '127.0.0.2', PER_ADDRESS + 50);
  held.push(...one);
  await until(
    '50 connections past the cap to be refused',
    () => answeredWith(one, 429).length >= 50 || undefined,
    10_000,
  );
  t.equal(answeredWith(one, 429).length, 50, `past ${PER_ADDRESS} connections from one address, each gets 429`);
  t.match(answeredWith(one, 429)[0]?.answer(), /max_connections_per_address/, 'naming the setting');

  // Meanwhile a real client registers, connects and runs a job.
  const dir = await mkdtemp(join(tmpdir(), 'http-conns-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const [client] = await startNodeFleet(t, {
    serverUrl: server.url,
    validationKey: join(server.dataDir, 'default-validator.pem'),
    dir,
    names: ['calm'],
    whitelist: () => ({ hello: 'echo hello' }),
  });
  if (client === undefined) throw new Error('no client');
  await waitForNodes(admin, [client], 'available', 20_000);
  const id = await startJob(admin, { command: 'hello', nodes: ['calm'] });
  t.equal((await waitForEnd(admin, id)).status, 'complete', 'the client runs a job');

  // Many addresses: the server refuses HTTP with 503 once only its reserve is left, and node channels still connect.
  const probe = await registerNode(admin, server.url, 'probe');
  const many: RawConnection[] = [];
  for (let host = 3; host <= 10 && answeredWith(many, 503).length === 0; host++) {
    const batch = await flood(server.ports.api, `127.0.0.${host}`, PER_ADDRESS);
    many.push(...batch);
    held.push(...batch);
  }
  await until('HTTP to be refused with 503', () => answeredWith(many, 503).length > 0 || undefined, 10_000);
  t.match(answeredWith(many, 503)[0]?.answer(), /node_connection_reserve/, '503 names the setting');
  // Deep in the reserve a refusal is not even answered: the answer would hold a file until it is read.
  const refusedNow = await connectFrom(server.ports.api, '127.0.0.20');
  held.push(refusedNow);
  await refusedNow.closed;
  t.match(refusedNow.answer(), /^(HTTP\/1\.1 503 .*)?$/s, 'a new HTTP connection from anywhere is refused');

  const dealer = new Dealer({
    linger: 0,
    curveServerKey: probe.config.curve_public_key ?? '',
    curvePublicKey: probe.curve.publicKey,
    curveSecretKey: probe.curve.secretKey,
  });
  t.teardown(() => dealer.close());
  const handshake = (async () => {
    for await (const event of dealer.events) if (event.type === 'handshake') return true;
    return false;
  })();
  connectSocket(dealer, probe.config.push_jobs.heartbeat.heartbeat_addr);
  t.equal(await handshake, true, "meanwhile a node's channel connects and completes its CurveZMQ handshake");
  dealer.close();

  for (const c of held) c.socket.destroy();
  const after = await until(
    'HTTP to be served again',
    async () => (await statusOf(server.url).catch(() => undefined)) ?? undefined,
    10_000,
  );
  t.ok((after.limits?.http.refused.max_connections_per_address ?? 0) >= 50, 'GET /_status counts the 429s');
  t.ok((after.limits?.http.refused.node_connection_reserve ?? 0) >= 1, 'and the 503s');
  t.equal(after.limits?.http.refused.accept_failed, 0, 'the server never ran out of open files');
  await waitForNodes(admin, [client], 'available');
  const next = await startJob(admin, { command: 'hello', nodes: ['calm'] });
  t.equal((await waitForEnd(admin, next)).status, 'complete', 'the node stayed, and runs the next job');
});
