// When a simulated node fetches its config again: after the client's silence, with a splay, backing off while
// nothing changes, never while the server speaks; and which configs move it.
import t from 'tap';
import { backoffMs, endpointKey, MAX_BACKOFF_MS, SilenceWatch, silenceLimitMs } from '../../src/loadtest/follow.js';
import type { PushConfig } from '../../src/client/push-config.js';

const config: PushConfig = {
  heartbeatAddr: 'tcp://10.0.0.1:10000',
  commandAddr: 'tcp://10.0.0.1:10002',
  intervalMs: 1000,
  offlineThreshold: 3,
  curveServerKey: 'K'.repeat(40),
  sessionKey: Buffer.alloc(32, 1),
  lifetimeMs: 3_600_000,
  incarnationId: '11111111-1111-1111-1111-111111111111',
  maxMessageSkew: 900,
  maxBodySize: 65536,
  servers: [],
};

/** Checks `due` once a clock step over [from, to) and returns the first time it said yes, or null. */
function firstDue(w: SilenceWatch, from: number, to: number, step = 10): number | null {
  for (let at = from; at < to; at += step) if (w.due(at)) return at;
  return null;
}

t.test("the silence is the client's: the offline window plus as many intervals again", async (t) => {
  t.equal(silenceLimitMs(config), 6000);
  t.equal(silenceLimitMs({ intervalMs: 200, offlineThreshold: 5 }), 2000);
});

t.test('a server that keeps speaking never makes a node fetch', async (t) => {
  const w = new SilenceWatch(config, 0, () => 0);
  for (let at = 0; at < 60_000; at += 1000) {
    w.heard(at);
    t.notOk(w.due(at + 999));
  }
});

t.test('after the silence, the first fetch waits a splay below one interval', async (t) => {
  const late = new SilenceWatch(config, 0, () => 0.5);
  t.equal(firstDue(late, 0, 20_000), 6500, 'half an interval past the silence');
  const early = new SilenceWatch(config, 0, () => 0);
  t.equal(firstDue(early, 0, 20_000), 6000);
  t.notOk(early.due(6010), 'not again while the fetch is in flight');
  t.ok(early.inFlight);
});

t.test('fetches that change nothing back off, doubling, with jitter, up to a cap', async (t) => {
  const w = new SilenceWatch(config, 0, () => 1);
  let at = firstDue(w, 0, 20_000) ?? NaN;
  t.equal(at, 7000);
  const gaps: number[] = [];
  for (let i = 0; i < 9; i++) {
    w.done(at, i % 2 === 0 ? 'same' : 'failed');
    const next = firstDue(w, at, at + 200_000) ?? NaN;
    gaps.push(next - at);
    at = next;
  }
  t.same(gaps, [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  t.equal(
    backoffMs(1000, 0, () => 0),
    500,
    'the jitter takes up to half off',
  );
  t.equal(
    backoffMs(1000, 50, () => 1),
    MAX_BACKOFF_MS,
  );
});

t.test('a fetch the server asked to retry later waits that long, however far the back-off grew', async (t) => {
  const w = new SilenceWatch(config, 0, () => 0);
  let at = firstDue(w, 0, 20_000) ?? NaN;
  for (let i = 0; i < 6; i++) {
    w.done(at, 'failed');
    at = firstDue(w, at, at + 200_000) ?? NaN;
  }
  w.done(at, 'failed', 1000);
  t.equal((firstDue(w, at, at + 200_000) ?? NaN) - at, 1000, 'Retry-After: 1 (no jitter drawn here)');
});

t.test('hearing the server again resets the back-off; a move restarts the silence', async (t) => {
  const w = new SilenceWatch(config, 0, () => 0);
  t.equal(firstDue(w, 0, 20_000), 6000);
  w.done(6000, 'moved');
  t.equal(w.attempts, 1);
  t.equal(firstDue(w, 6000, 30_000), 12_000, 'the new channels get the whole silence');
  w.done(12_000, 'same');
  w.heard(12_100);
  t.equal(w.attempts, 0);
  t.equal(firstDue(w, 12_100, 30_000), 18_100, 'a splay again, not the back-off');
  w.done(18_100, 'same');
  w.restart(20_000);
  t.notOk(w.due(25_000), 'new channels (a restart): the silence counts from them');
});

t.test('a config moves a node when its channels, server key or incarnation differ', async (t) => {
  const same = endpointKey({ ...config });
  t.equal(endpointKey(config), same);
  const renewed: PushConfig = { ...config, sessionKey: Buffer.alloc(32, 2), lifetimeMs: 5 };
  t.equal(endpointKey(renewed), same, 'not the session key');
  for (const change of [
    { heartbeatAddr: 'tcp://10.0.0.2:10000' },
    { commandAddr: 'tcp://10.0.0.1:10012' },
    { curveServerKey: null },
    { incarnationId: '22222222-2222-2222-2222-222222222222' },
  ])
    t.not(endpointKey({ ...config, ...change }), same, JSON.stringify(change));
});
