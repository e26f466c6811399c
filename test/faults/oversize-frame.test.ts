// A peer that sends a 64 MB frame to the command port, as anyone holding the server's Curve key and a session
// could: libzmq closes the connection as soon as it reads the frame's length (the routers' maxMessageSize), so the
// server's memory does not grow, the closed connection is counted, and the nodes go on heartbeating. Three such
// frames held by the server would grow it by ten times the 20 MB allowed; larger ones only cost the sender more
// time encrypting them (CurveZMQ seals a frame whole before its length goes out), which on a busy machine once
// outlasted the wait for the server to close the senders.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { Dealer } from 'zeromq';
import { connectSocket } from '../../src/protocol/socket-connect.js';
import { until } from '../support/deadline.js';
import { memoryOf, registerNode, statusOf } from '../support/hostile.js';
import { startNodeFleet, waitForNodes } from '../support/node-fleet.js';
import { startJob, waitForEnd } from '../support/push-api.js';
import { startServerProcess } from '../support/server-process.js';

const FRAME_BYTES = 64 * 1024 * 1024;
const MB = 1024 * 1024;
const ATTACKERS = 3;

t.test('64 MB frames cost the server no memory, are counted, and the nodes keep heartbeating', async (t) => {
  const server = await startServerProcess(t, { settings: { heartbeat_interval: 500 } });
  const admin = await server.client('admin');
  const dir = await mkdtemp(join(tmpdir(), 'oversize-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const nodes = await startNodeFleet(t, {
    serverUrl: server.url,
    validationKey: join(server.dataDir, 'default-validator.pem'),
    dir,
    names: ['steady-1', 'steady-2'],
    whitelist: () => ({ hello: 'echo hello' }),
  });
  await waitForNodes(admin, nodes, 'available', 20_000);

  // A node of its own, with a session and an admitted Curve key: the most an outsider can get.
  const attacker = await registerNode(admin, server.url, 'big-sender');
  const before = await statusOf(server.url);
  const closedBefore = before.push_jobs?.connections?.closed_after_handshake ?? 0;
  const memoryBefore = await memoryOf(server.pid);

  const frame = Buffer.alloc(FRAME_BYTES, 0x61);
  const dealers = Array.from({ length: ATTACKERS }, () => {
    const dealer = new Dealer({
      linger: 0,
      curveServerKey: attacker.config.curve_public_key ?? '',
      curvePublicKey: attacker.curve.publicKey,
      curveSecretKey: attacker.curve.secretKey,
    });
    connectSocket(dealer, attacker.config.push_jobs.heartbeat.command_addr);
    return dealer;
  });
  t.teardown(() => dealers.forEach((d) => d.close()));
  await Promise.all(dealers.map((d) => d.send(frame)));

  const after = await until(
    'the server to close the senders of the oversize frames',
    async () => {
      const s = await statusOf(server.url);
      const closed = s.push_jobs?.connections?.closed_after_handshake ?? 0;
      return closed >= closedBefore + ATTACKERS ? s : undefined;
    },
    20_000,
  );
  for (const d of dealers) d.close();
  const memoryAfter = await memoryOf(server.pid);
  const grew = (memoryAfter.rss - memoryBefore.rss) / MB;
  const peaked = (memoryAfter.peak - memoryBefore.peak) / MB;
  t.ok(grew < 20, `resident memory grew by ${grew.toFixed(1)} MB (less than 20 MB)`);
  t.ok(peaked < 20, `its peak grew by ${peaked.toFixed(1)} MB (less than 20 MB)`);
  t.ok(
    (after.push_jobs?.connections?.closed_after_handshake ?? 0) >= closedBefore + ATTACKERS,
    'each sender is counted among the connections closed after their handshake',
  );

  // The nodes went on: their heartbeats still arrive, they are available, and they run a job.
  const beats = after.push_jobs?.heartbeats ?? 0;
  await until(
    'more heartbeats from the nodes',
    async () => ((await statusOf(server.url)).push_jobs?.heartbeats ?? 0) >= beats + 4 || undefined,
    10_000,
  );
  await waitForNodes(admin, nodes, 'available');
  const id = await startJob(admin, { command: 'hello', nodes: nodes.map((n) => n.name) });
  t.equal((await waitForEnd(admin, id)).status, 'complete', 'a job runs on them afterwards');
});
