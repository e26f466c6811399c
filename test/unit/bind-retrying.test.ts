// A push-jobs port taken for a moment is bound once it is free; taken for longer, the bind fails saying so. EAGAIN
// counts as taken (see bind-retrying.ts). A fake socket and the test's own clock: nothing waits.
import t from 'tap';
import { BIND_RETRY_MS, bindRetrying, type BindClock } from '../../src/transport/bind-retrying.js';

function failure(code: string): Error {
  return Object.assign(new Error(code === 'EAGAIN' ? 'Operation was not possible or timed out' : code), { code });
}

/** A socket whose binds fail with `codes`, in order, then succeed; and a clock that steps when waited on. */
function setup(codes: string[]) {
  let clock = 0;
  const binds: number[] = [];
  const socket = {
    bind: async () => {
      binds.push(clock);
      const code = codes.shift();
      if (code !== undefined) throw failure(code);
    },
  };
  const time: BindClock = { now: () => clock, wait: async (ms) => void (clock += ms) };
  return { socket, time, binds };
}

t.test('a port taken for a moment, reported as EADDRINUSE or as EAGAIN, is bound once free', async (t) => {
  const s = setup(['EADDRINUSE', 'EAGAIN', 'EAGAIN']);
  await bindRetrying(s.socket, 'tcp://127.0.0.1:10000', s.time);
  t.equal(s.binds.length, 4, 'bound at the fourth try');
});

t.test('a port still taken past the retry time: the bind fails', async (t) => {
  const taken = setup(Array.from({ length: 1000 }, () => 'EADDRINUSE'));
  await t.rejects(bindRetrying(taken.socket, 'tcp://127.0.0.1:10000', taken.time), { code: 'EADDRINUSE' });
  t.ok((taken.binds.at(-1) ?? 0) > BIND_RETRY_MS, 'after trying for the retry time');
  const eagain = setup(Array.from({ length: 1000 }, () => 'EAGAIN'));
  await t.rejects(bindRetrying(eagain.socket, 'tcp://127.0.0.1:10000', eagain.time), {
    message: 'tcp://127.0.0.1:10000 could not be bound (in use, or not an address of this host)',
  });
});

t.test('any other failure is not retried', async (t) => {
  const s = setup(['ENODEV']);
  await t.rejects(bindRetrying(s.socket, 'tcp://nowhere:10000', s.time), { code: 'ENODEV' });
  t.equal(s.binds.length, 1);
});
