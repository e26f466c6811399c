// The leases' timing on a clock moved by hand, over a fake of the Redis commands they send: when renewals fall
// due, how long a lease counts as surely held after the last renewal that went through, and that on a Redis
// Cluster each partition's slot is renewed on its own. test/integration/cluster-members.test.ts runs them on Redis.
import t from 'tap';
import { Leases, type LeaseCommands } from '../../src/cluster/leases.js';
import { memberExpiryKey } from '../../src/store/layout.js';
import { ALL_PARTITIONS, type Partition } from '../../src/store/partitions.js';
import { ManualClock } from '../support/manual-clock.js';

const PREFIX = 't:';
const TTL_MS = 3000;
/** A renewal sent at `sent` keeps a lease surely held until `sent + VALID_MS` (a fifth is kept back). */
const VALID_MS = 2400;

/** Answers the leases' commands: every lease is free and taken, checks and beats answer as the test says. */
class FakeRedis implements LeaseCommands {
  checks = 0;
  /** Beats sent, per partition. */
  readonly beats = new Map<Partition, number>();
  /** What LEASE_CHECK answers (1 still this member's, 0 taken by another); throwing: Redis is away. */
  check: () => Promise<number> = () => Promise.resolve(1);
  /** What PARTITION_BEAT answers in a partition's slot (0: the registration had not lapsed). */
  beat: (partition: Partition) => Promise<number> = () => Promise.resolve(0);
  private epoch = 0;

  get(_key: string): Promise<string | null> {
    return Promise.resolve(null);
  }
  quit(): Promise<unknown> {
    return Promise.resolve('OK');
  }
  memberAlive(): Promise<number> {
    return Promise.resolve(0);
  }
  leaseTake(_lease: string, _epoch: string, member: string): Promise<string | null> {
    return Promise.resolve(`${++this.epoch}:${member}`);
  }
  leaseTakeRegistered(_lease: string, _epoch: string, _e: string, _h: string, member: string): Promise<string | null> {
    return this.leaseTake('', '', member);
  }
  leaseRelease(): Promise<number> {
    return Promise.resolve(1);
  }
  leaseCheck(): Promise<number> {
    this.checks += 1;
    return this.check();
  }
  partitionBeat(expiry: string): Promise<number> {
    const partition = ALL_PARTITIONS.find((p) => memberExpiryKey(PREFIX, p) === expiry);
    if (partition === undefined) throw new Error(`no partition's registration is ${expiry}`);
    this.beats.set(partition, (this.beats.get(partition) ?? 0) + 1);
    return this.beat(partition);
  }
}

function leasesOn(redis: FakeRedis, clock: ManualClock, perPartition = false, lost: Partition[] = []): Leases {
  return new Leases(redis, PREFIX, 'me', {
    ttlMs: TTL_MS,
    timers: clock,
    registrationPerPartition: perPartition,
    events: { lost: (p) => lost.push(p) },
  });
}

t.test('a holder checks its leases at the period it is given, and each check keeps them valid', async (t) => {
  const clock = new ManualClock();
  const redis = new FakeRedis();
  const leases = leasesOn(redis, clock);
  t.ok(await leases.acquire(1));
  leases.start(1000);
  await clock.advance(999);
  t.equal(redis.checks, 0, 'no check before its period');
  await clock.advance(1);
  t.equal(redis.checks, 1, 'the first at its period');
  await clock.advance(2000);
  t.equal(redis.checks, 3, 'then one each period');
  await clock.advance(VALID_MS + 1000);
  t.ok(leases.tokenFor(1), 'renewed all along: still surely held');
  await leases.stop();
  t.equal(clock.pending, 0, 'stopped: no timer is left');
});

t.test(
  'a lease not renewed in time is in doubt once its validity, counted from the last renewal, runs out',
  async (t) => {
    const clock = new ManualClock();
    const redis = new FakeRedis();
    const leases = leasesOn(redis, clock);
    t.ok(await leases.acquire(1));
    leases.start(1000);
    await clock.advance(1000); // renewed as of 1000: valid until 3400
    redis.check = () => Promise.reject(new Error('Redis is away'));
    await clock.advance(VALID_MS - 1);
    t.ok(leases.tokenFor(1), 'the renewals that failed do not end it early');
    await clock.advance(1);
    t.equal(leases.tokenFor(1), undefined, 'in doubt at the last renewal plus its validity, to the millisecond');
    t.same(leases.partitions(), [1], 'in doubt, not lost: Redis did not say another holds it');
    redis.check = () => Promise.resolve(1);
    await clock.advance(1000);
    t.ok(leases.tokenFor(1), 'the next check that goes through makes it sure again');
    await leases.stop();
  },
);

t.test('a lease another member took is counted lost at the check that finds it so', async (t) => {
  const clock = new ManualClock();
  const redis = new FakeRedis();
  const lost: Partition[] = [];
  const leases = leasesOn(redis, clock, false, lost);
  t.ok(await leases.acquire(2));
  leases.start(1000);
  redis.check = () => Promise.resolve(0);
  await clock.advance(999);
  t.same(lost, [], 'not before the check');
  await clock.advance(1);
  t.same(lost, [2], 'lost at the check');
  t.same(leases.partitions(), [], 'and no longer held');
  await leases.stop();
});

t.test("on a Redis Cluster each partition's slot is beaten a third of the time to live apart", async (t) => {
  const clock = new ManualClock();
  const redis = new FakeRedis();
  const leases = leasesOn(redis, clock, true);
  leases.start(300_000);
  await clock.advance(TTL_MS / 3 - 1);
  t.equal(redis.beats.size, 0, 'no beat before a third of the time to live');
  await clock.advance(1);
  t.same(
    ALL_PARTITIONS.map((p) => redis.beats.get(p)),
    ALL_PARTITIONS.map(() => 1),
    'every slot beaten once, held or not',
  );
  await clock.advance(TTL_MS);
  t.equal(redis.beats.get(5), 4, 'then one each third of the time to live');
  await leases.stop();
});

t.test("a slot that does not answer holds back no other slot's renewal, and its lease alone lapses", async (t) => {
  const clock = new ManualClock();
  const redis = new FakeRedis();
  const leases = leasesOn(redis, clock, true);
  t.ok(await leases.acquire(1));
  t.ok(await leases.acquire(2));
  let answerSlow: ((lapsed: number) => void) | undefined;
  redis.beat = (p) => (p === 2 ? new Promise((resolve) => (answerSlow = resolve)) : Promise.resolve(0));
  leases.start(300_000);
  await clock.advance(VALID_MS - 1);
  t.ok(leases.tokenFor(2), 'the silent slot: valid until its last renewal (its take) ran out');
  await clock.advance(1);
  t.equal(leases.tokenFor(2), undefined, "the silent slot's lease is in doubt at its validity's end");
  t.ok(leases.tokenFor(1), 'the other, renewed meanwhile, is not');
  await clock.advance(4 * TTL_MS);
  t.ok(leases.tokenFor(1), 'and goes on being renewed');
  t.equal(redis.beats.get(2), 1, 'the silent slot is not beaten again while its beat waits');
  t.equal(redis.beats.get(1), 14, 'the other slot is, at every round');
  answerSlow?.(0);
  redis.beat = () => Promise.resolve(0);
  await clock.advance(TTL_MS / 3);
  t.ok(leases.tokenFor(2), 'once its slot answers, the next beat renews it');
  await leases.stop();
});

t.test('a lease is taken with its validity counted from when the take was sent', async (t) => {
  const clock = new ManualClock(500);
  const redis = new FakeRedis();
  const leases = leasesOn(redis, clock);
  t.ok(await leases.acquire(3));
  t.ok(leases.tokenFor(3), 'held');
  t.equal(leases.epochOf(3), 1);
  await clock.advance(VALID_MS - 1);
  t.ok(leases.tokenFor(3));
  await clock.advance(1);
  t.equal(leases.tokenFor(3), undefined, 'no renewal: in doubt at the take plus its validity');
});
