// How a member follows Sentinel's failovers from the announcements on its sentinels' channels. A plain Redis carries
// the same publish and subscribe as a sentinel, so here it stands in for one and the test publishes what a sentinel
// would; the clock is the test's own. (Real sentinels failing a master over: test/e2e/redis-sentinel.test.ts.)
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { SentinelFailovers } from '../../src/store/sentinel-failovers.js';
import { until } from '../support/deadline.js';
import { testRedisUrl, uniquePrefix } from '../support/redis.js';

async function setup(t: Test) {
  const url = new URL(await testRedisUrl());
  const publisher = new Redis(url.toString());
  let clock = 0;
  // A master name of this test's own: other tests' announcements on the shared channels name other masters.
  const name = `master-${uniquePrefix().replace(/[^a-z0-9]/gi, '')}`;
  const failovers = new SentinelFailovers([{ host: url.hostname, port: Number(url.port || 6379) }], name, () => clock);
  t.teardown(async () => {
    failovers.close();
    await publisher.quit();
  });
  const announce = (channel: string, message: string) => publisher.publish(channel, message);
  /** Announces the start of a failover of `master` until the member has heard it (it subscribes in the background). */
  const started = (master: string) =>
    until(
      'the failover’s start to be heard',
      async () => {
        await announce('+try-failover', `master ${master} 127.0.0.1 6379`);
        return failovers.began > 0 ? true : undefined;
      },
      10_000,
    );
  return { failovers, name, announce, started, step: (ms: number) => (clock += ms) };
}

t.test('a failover runs from its start to the master switched', async (t) => {
  const s = await setup(t);
  t.equal(s.failovers.running, false);
  await s.started(s.name);
  t.equal(s.failovers.running, true, 'running once a sentinel tries it');
  await s.announce('+switch-master', `${s.name} 127.0.0.1 6379 127.0.0.1 6380`);
  await until('the switch to be heard', () => (s.failovers.running ? undefined : true), 10_000);
  // The start was announced until heard, perhaps more than once: counted from here, announcements arrive in order.
  const began = s.failovers.began;
  await s.announce('+try-failover', `master ${s.name} 127.0.0.1 6380`);
  await until('the next failover to be heard', () => (s.failovers.running ? true : undefined), 10_000);
  t.equal(s.failovers.began, began + 1, 'each failover tried counts once');
  await s.announce('-failover-abort-no-good-slave', `master ${s.name} 127.0.0.1 6380`);
  await until('the failover given up to be heard', () => (s.failovers.running ? undefined : true), 10_000);
  t.equal(s.failovers.running, false, 'a failover given up is over too');
});

t.test('a failover of another master is not this one’s', async (t) => {
  const s = await setup(t);
  await s.started(s.name);
  // The announcements reach the member in the order they were published: once it heard the last, it heard those
  // before it.
  await s.announce('+try-failover', `master other-${s.name} 127.0.0.1 6379`);
  await s.announce('+switch-master', `${s.name} 127.0.0.1 6379 127.0.0.1 6380`);
  await until('the switch to be heard', () => (s.failovers.running ? undefined : true), 10_000);
  const began = s.failovers.began;
  await s.announce('+try-failover', `master other-${s.name} 127.0.0.1 6379`);
  await s.announce('+try-failover', `master ${s.name} 127.0.0.1 6380`);
  await until('this master’s failover to be heard', () => (s.failovers.running ? true : undefined), 10_000);
  t.equal(s.failovers.began, began + 1, 'only this master’s failover is counted');
});

t.test('a failover whose end was never heard counts as over after 30 s', async (t) => {
  const s = await setup(t);
  await s.started(s.name);
  const began = s.failovers.began;
  s.step(29_999);
  t.equal(s.failovers.running, true, 'still running just inside 30 s');
  s.step(2);
  t.equal(s.failovers.running, false, 'over past 30 s, its end missed');
  t.equal(s.failovers.began, began, 'and it still counts as having begun');
});
