// A push-jobs port taken for a moment is bound once it is free; taken for longer, the bind fails saying so. EAGAIN
// counts as taken (see bind-retrying.ts). A fake socket and a clock the test moves: nothing waits.
import t from 'tap';
import { BIND_RETRY_MS, bindRetrying } from '../../src/transport/bind-retrying.js';
import { ManualClock } from '../support/manual-clock.js';

function failure(code: string): Error {
  return Object.assign(new Error(code === 'EAGAIN' ? 'Operation was not possible or timed out' : code), { code });
}

/** A socket whose binds fail with `codes`, in order, then succeed; the clock it is bound on. */
function setup(codes: string[]) {
  const clock = new ManualClock();
  const binds: number[] = [];
  const socket = {
    bind: async () => {
      binds.push(clock.now());
      const code = codes.shift();
      if (code !== undefined) throw failure(code);
    },
  };
  /** Binds, with the clock moved on past the retry time meanwhile. */
  const bind = async (address: string) => {
    const bound = bindRetrying(socket, address, clock);
    bound.catch(() => undefined);
    await clock.advance(BIND_RETRY_MS + 100);
    return bound;
  };
  return { bind, binds };
}

t.test('a port taken for a moment, reported as EADDRINUSE or as EAGAIN, is bound once free', async (t) => {
  const s = setup(['EADDRINUSE', 'EAGAIN', 'EAGAIN']);
  await s.bind('tcp://127.0.0.1:10000');
  t.equal(s.binds.length, 4, 'bound at the fourth try');
});

t.test('a port still taken past the retry time: the bind fails', async (t) => {
  const taken = setup(Array.from({ length: 1000 }, () => 'EADDRINUSE'));
  await t.rejects(taken.bind('tcp://127.0.0.1:10000'), { code: 'EADDRINUSE' });
  t.ok((taken.binds.at(-1) ?? 0) > BIND_RETRY_MS, 'after trying for the retry time');
  const eagain = setup(Array.from({ length: 1000 }, () => 'EAGAIN'));
  await t.rejects(eagain.bind('tcp://127.0.0.1:10000'), {
    message: 'tcp://127.0.0.1:10000 could not be bound (in use, or not an address of this host)',
  });
});

t.test('any other failure is not retried', async (t) => {
  const s = setup(['ENODEV']);
  await t.rejects(s.bind('tcp://nowhere:10000'), { code: 'ENODEV' });
  t.equal(s.binds.length, 1);
});
