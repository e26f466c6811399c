// A node's channels connect even while signals keep landing on its process. The sampling profiler interrupts the
// main thread thousands of times a second (SIGPROF), as a job's child process exiting does once (SIGCHLD): with
// zeromq.js's own connect about one connect in a hundred then fails with EINTR.
import { Session } from 'node:inspector/promises';
import t from 'tap';
import { Context, Dealer } from 'zeromq';
import { connectSocket } from '../../src/protocol/socket-connect.js';

const SOCKETS = 500;
// Rounds go on until bare connects were interrupted a few times: on a loaded machine the signals land less often.
const MIN_ROUNDS = 3;
const WANTED_INTERRUPTIONS = 3;
const DEADLINE_MS = 30_000;
// Nothing listens here: a connect only records the address, the connection is attempted in the background.
const ADDRESS = 'tcp://127.0.0.1:9';
// libzmq frees a closed socket's slot when its reaper thread gets to it: on a loaded machine a round's sockets can
// still hold theirs while the next round opens 500 more, past the default context's 1,023 (EMFILE).
const context = new Context({ maxSockets: SOCKETS * 8 });

/** Connects SOCKETS new Dealers with `connect` while the profiler samples every 5 µs; the number that threw. */
async function interruptedConnects(connect: (socket: Dealer) => void): Promise<{ failed: number; other: string[] }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 5 });
  await session.post('Profiler.start');
  const sockets: Dealer[] = [];
  const other: string[] = [];
  let failed = 0;
  try {
    for (let i = 0; i < SOCKETS; i++) {
      const socket = new Dealer({ linger: 0, context });
      sockets.push(socket);
      try {
        connect(socket);
      } catch (e) {
        failed++;
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'EINTR') other.push(String(code));
      }
    }
  } finally {
    await session.post('Profiler.stop');
    session.disconnect();
    for (const s of sockets) s.close();
  }
  return { failed, other };
}

t.test('connects survive signals that make a bare connect fail with EINTR', async (t) => {
  let bareFailures = 0;
  let ourFailures = 0;
  const otherCodes: string[] = [];
  const started = Date.now();
  let rounds = 0;
  while (rounds < MIN_ROUNDS || (bareFailures < WANTED_INTERRUPTIONS && Date.now() - started < DEADLINE_MS)) {
    rounds++;
    const bare = await interruptedConnects((s) => s.connect(ADDRESS));
    otherCodes.push(...bare.other);
    bareFailures += bare.failed;
    ourFailures += (await interruptedConnects((s) => connectSocket(s, ADDRESS))).failed;
  }
  t.same(otherCodes, [], 'a bare connect fails only with EINTR');
  t.ok(bareFailures > 0, `the signals interrupted bare connects (${bareFailures} failed in ${rounds} rounds)`);
  t.equal(ourFailures, 0, 'no connect of a node channel failed');
});

t.test('a connect that fails for another reason still fails', async (t) => {
  const socket = new Dealer({ linger: 0 });
  t.teardown(() => socket.close());
  t.throws(() => connectSocket(socket, 'not-a-transport://x'), { code: 'EPROTONOSUPPORT' });
});
