// The streams between owners and gateways on a real Redis: a fan-out to many nodes of one gateway is one entry; an
// owner acknowledges an inbox entry only once it is stored; what an owner read and never acknowledged (it died) is
// claimed and applied by the next; and an entry that does not parse is skipped and counted.
import { Redis } from 'ioredis';
import t from 'tap';
import { NodeLink, type NodeLinkOptions } from '../../src/cluster/node-link.js';
import type { InboxEntry } from '../../src/cluster/node-link-messages.js';
import { gatewayKey, INBOX_GROUP, inboxKey, leaseKey } from '../../src/store/layout.js';
import { until } from '../support/deadline.js';
import { openRedis } from '../../src/store/redis-connection.js';
import { recordingLogger } from '../support/logs.js';
import { answer, linkOn } from '../support/node-link.js';
import { startPrivateRedis } from '../support/private-redis.js';
import { testRedisUrl, uniquePrefix } from '../support/redis.js';

const WAIT_MS = 10_000;
const PARTITION = 7;

async function pending(redis: Redis, prefix: string): Promise<number> {
  const summary = (await redis.xpending(inboxKey(prefix, PARTITION), INBOX_GROUP)) as [number, ...unknown[]];
  return summary[0];
}

/** How many entries were ever added to a stream (its gateway trims what it has read). */
async function entriesAdded(redis: Redis, key: string): Promise<number> {
  const info = (await redis.xinfo('STREAM', key)) as unknown[];
  return Number(info[info.indexOf('entries-added') + 1]);
}

t.test('a fan-out to many nodes of a gateway is one stream entry naming them all', async (t) => {
  const redis = new Redis(await testRedisUrl());
  t.teardown(() => redis.quit());
  const prefix = uniquePrefix();
  const owner = linkOn(t, redis, prefix, 'owner');
  const gateway = linkOn(t, redis, prefix, 'gw');
  const commit = { type: 'commit' as const, job_id: 'j1', command: 'hello', run_timeout: 60 };
  const nodes = Array.from({ length: 200 }, (_, i) => `n${i}`);
  // The gateway reads what is written from when it joined: a roll call goes again until its first read hears one.
  await until(
    'the gateway to hear an order',
    async () => {
      if (gateway.heard.orders.length > 0) return true;
      owner.link.order('gw', { t: 'roll_call', org: 'acme', epoch: 1 });
      return undefined;
    },
    WAIT_MS,
  );
  const before = await entriesAdded(redis, gatewayKey(prefix, 'gw'));
  for (const node of nodes)
    owner.link.order('gw', { t: 'send', org: 'acme', epoch: 1, nodes: [node], message: commit }, commit);
  await until(
    'the fan-out to arrive',
    async () => (gateway.heard.orders.some((o) => o.t === 'send') ? true : undefined),
    WAIT_MS,
  );
  t.equal((await entriesAdded(redis, gatewayKey(prefix, 'gw'))) - before, 1, 'one entry');
  const sends = gateway.heard.orders.filter((o) => o.t === 'send');
  t.equal(sends.length, 1, 'one order');
  t.same(sends[0]?.t === 'send' ? sends[0].nodes : [], nodes, 'naming every node, in order');
});

t.test('an inbox entry is acknowledged once stored, and not before', async (t) => {
  const redis = new Redis(await testRedisUrl());
  t.teardown(() => redis.quit());
  const prefix = uniquePrefix();
  let release: (stored: boolean) => void = () => undefined;
  const owner = linkOn(t, redis, prefix, 'owner', () => new Promise<boolean>((resolve) => (release = resolve)));
  await owner.link.serve(PARTITION);
  const gateway = linkOn(t, redis, prefix, 'gw');
  gateway.link.event(PARTITION, answer('n1'));
  await until('the owner to read the entry', async () => (owner.heard.inbox.length > 0 ? true : undefined), WAIT_MS);
  t.same(owner.heard.inbox[0], { gateway: 'gw', events: [answer('n1')] });
  t.equal(await pending(redis, prefix), 1, 'read but not acknowledged while it is being stored');
  release(true);
  await until(
    'the entry to be acknowledged',
    async () => ((await pending(redis, prefix)) === 0 ? true : undefined),
    WAIT_MS,
  );
  t.pass('acknowledged once stored');
});

t.test('what a dead owner read and never acknowledged is claimed and applied by the next', async (t) => {
  const redis = new Redis(await testRedisUrl());
  t.teardown(() => redis.quit());
  const prefix = uniquePrefix();
  const dead = linkOn(t, redis, prefix, 'dead', () => new Promise<boolean>(() => undefined)); // dies mid-store
  await dead.link.serve(PARTITION);
  const gateway = linkOn(t, redis, prefix, 'gw');
  gateway.link.event(PARTITION, answer('n1'));
  gateway.link.event(PARTITION, answer('n2'));
  await until('the first owner to read', async () => (dead.heard.inbox.length > 0 ? true : undefined), WAIT_MS);
  dead.link.unserve(PARTITION);
  const next = linkOn(t, redis, prefix, 'next');
  await next.link.serve(PARTITION);
  t.same(
    next.heard.inbox.flatMap((e) => e.events),
    [answer('n1'), answer('n2')],
    'the new owner applies what the dead one left, before anything newer',
  );
  t.equal(await pending(redis, prefix), 0, 'and acknowledges it');
  gateway.link.event(PARTITION, answer('n3'));
  await until('the next entry', async () => (next.heard.inbox.length > 1 ? true : undefined), WAIT_MS);
  t.same(next.heard.inbox.at(-1)?.events, [answer('n3')], 'then reads on');
});

t.test('an owner whose lease passed before its entry was stored leaves the entry for the next owner', async (t) => {
  const redis = new Redis(await testRedisUrl());
  t.teardown(() => redis.quit());
  const prefix = uniquePrefix();
  const lease = leaseKey(prefix, PARTITION);
  await redis.set(lease, '1:old');
  let store: (stored: boolean) => void = () => undefined;
  const old = linkOn(t, redis, prefix, 'old', () => new Promise<boolean>((resolve) => (store = resolve)), {
    fencing: { tokenFor: () => '1:old' },
  });
  await old.link.serve(PARTITION);
  const gateway = linkOn(t, redis, prefix, 'gw');
  gateway.link.event(PARTITION, answer('n1'));
  await until('the old owner to read the entry', async () => (old.heard.inbox.length > 0 ? true : undefined), WAIT_MS);
  // Another member takes the lease while the old owner stores (it was paused, say): its store says done.
  await redis.set(lease, '2:new');
  store(true);
  await until('the acknowledgement to be refused', async () => (old.link.fencedAcks === 1 ? true : undefined), WAIT_MS);
  t.equal(await pending(redis, prefix), 1, 'the entry stays pending');
  old.link.unserve(PARTITION);
  const next = linkOn(t, redis, prefix, 'new', undefined, { fencing: { tokenFor: () => '2:new' } });
  await next.link.serve(PARTITION);
  t.same(
    next.heard.inbox.flatMap((e) => e.events),
    [answer('n1')],
    'the new owner claims and applies it',
  );
  t.equal(await pending(redis, prefix), 0, 'and acknowledges it under its own lease');
});

t.test('an owner whose lease is in doubt applies nothing of what it reads', async (t) => {
  const redis = new Redis(await testRedisUrl());
  t.teardown(() => redis.quit());
  const prefix = uniquePrefix();
  let valid = true;
  const owner = linkOn(t, redis, prefix, 'owner', undefined, {
    fencing: { tokenFor: () => (valid ? '1:owner' : undefined) },
  });
  await redis.set(leaseKey(prefix, PARTITION), '1:owner');
  await owner.link.serve(PARTITION);
  valid = false;
  const gateway = linkOn(t, redis, prefix, 'gw');
  gateway.link.event(PARTITION, answer('n1'));
  await until('the entry to be read', async () => ((await pending(redis, prefix)) === 1 ? true : undefined), WAIT_MS);
  t.equal(owner.heard.inbox.length, 0, 'read, not applied');
  valid = true;
  await owner.link.claim(PARTITION, 0);
  t.same(
    owner.heard.inbox.flatMap((e) => e.events),
    [answer('n1')],
    'applied once the lease is sure again',
  );
  t.equal(await pending(redis, prefix), 0, 'and acknowledged');
});

t.test('an inbox is trimmed of what every owner is done with, never of what is unread or pending', async (t) => {
  const redis = new Redis(await testRedisUrl());
  t.teardown(() => redis.quit());
  const prefix = uniquePrefix();
  const key = inboxKey(prefix, PARTITION);
  await redis.xgroup('CREATE', key, INBOX_GROUP, '0', 'MKSTREAM');
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await redis.xadd(key, '*', 'e', String(i))) as string);
  await redis.xreadgroup('GROUP', INBOX_GROUP, 'someone', 'COUNT', 2, 'STREAMS', key, '>');
  await redis.xack(key, INBOX_GROUP, ids[0] as string);
  const { link } = linkOn(t, redis, prefix, 'owner');
  await link.trim(PARTITION);
  const left = async () => ((await redis.xrange(key, '-', '+')) as Array<[string, string[]]>).map(([id]) => id);
  t.same(await left(), ids.slice(1), 'only the acknowledged entry goes: the pending one and the unread ones stay');
  await redis.xack(key, INBOX_GROUP, ids[1] as string);
  await link.trim(PARTITION);
  t.same(await left(), ids.slice(2), 'once acknowledged, the pending one goes too');
  await redis.xreadgroup('GROUP', INBOX_GROUP, 'someone', 'STREAMS', key, '>');
  await redis.xack(key, INBOX_GROUP, ...ids.slice(2));
  await link.trim(PARTITION);
  t.same(await left(), [], 'and everything read and acknowledged');
});

t.test('a gateway reads the orders written for it before its reads began', async (t) => {
  const redis = new Redis(await testRedisUrl());
  t.teardown(() => redis.quit());
  const prefix = uniquePrefix();
  // An owner writes as soon as the member is registered, which comes before its stream is read.
  const owner = linkOn(t, redis, prefix, 'owner');
  owner.link.order('gw', { t: 'roll_call', org: 'acme', epoch: 1 });
  await until(
    'the order to be written',
    async () => ((await redis.xlen(gatewayKey(prefix, 'gw'))) > 0 ? true : undefined),
    WAIT_MS,
  );
  const gateway = linkOn(t, redis, prefix, 'gw');
  await until('the gateway to hear it', async () => (gateway.heard.orders.length > 0 ? true : undefined), WAIT_MS);
  t.same(gateway.heard.orders, [{ t: 'roll_call', org: 'acme', epoch: 1 }], 'the order is read');
  await until(
    'the read order to be trimmed',
    async () => ((await redis.xlen(gatewayKey(prefix, 'gw'))) === 0 ? true : undefined),
    WAIT_MS,
  );
  t.pass('and trimmed from the stream once read');
});

/** Whether a connection named `name` blocks in a read of inboxes now (CLIENT LIST). */
async function inboxReadBlocking(redis: Redis, name: string): Promise<true | undefined> {
  const clients = (await redis.client('LIST')) as string;
  return clients
    .split('\n')
    .some((c) => c.includes(` name=${name} `) && / flags=\w*b/.test(c) && / cmd=xreadgroup/.test(c))
    ? true
    : undefined;
}

// A read that blocks a minute: an entry heard within WAIT_MS was read because the change ended the read under way.
const MINUTE_READS: NodeLinkOptions = { inboxBlockMs: 60_000 };

t.test('a partition served while the inboxes are read is read at once, and one let go is read no more', async (t) => {
  const name = `nl-${process.pid}-${Date.now()}`;
  const redis = new Redis(await testRedisUrl(), { connectionName: name });
  t.teardown(() => redis.quit());
  const prefix = uniquePrefix();
  const owner = linkOn(t, redis, prefix, 'owner', undefined, MINUTE_READS);
  const gateway = linkOn(t, redis, prefix, 'gw');
  await owner.link.serve(1);
  await until('the owner to block reading partition 1', () => inboxReadBlocking(redis, name), WAIT_MS);
  await owner.link.serve(PARTITION);
  gateway.link.event(PARTITION, answer('n1'));
  await until(
    'the owner to read the newly served partition',
    async () => (owner.heard.inbox.length > 0 ? true : undefined),
    WAIT_MS,
  );
  t.same(owner.heard.inbox.at(-1)?.events, [answer('n1')], 'read within the read that was blocking');

  await until('the owner to block reading both', () => inboxReadBlocking(redis, name), WAIT_MS);
  owner.link.unserve(PARTITION);
  const next = linkOn(t, redis, prefix, 'next');
  await next.link.serve(PARTITION);
  gateway.link.event(PARTITION, answer('n2'));
  await until('the next owner to read', async () => (next.heard.inbox.length > 0 ? true : undefined), WAIT_MS);
  t.same(next.heard.inbox.at(-1)?.events, [answer('n2')], 'the next owner reads what came after');
  t.equal(owner.heard.inbox.length, 1, 'the owner that let the partition go read nothing more of it');
  t.equal(await pending(redis, prefix), 0, 'and nothing waits for it');
});

t.test('an inbox entry that does not parse is skipped, counted and acknowledged', async (t) => {
  const redis = new Redis(await testRedisUrl());
  t.teardown(() => redis.quit());
  const prefix = uniquePrefix();
  const owner = linkOn(t, redis, prefix, 'owner');
  await owner.link.serve(PARTITION);
  await redis.xadd(inboxKey(prefix, PARTITION), '*', 'e', JSON.stringify({ gateway: 'gw', events: [{ t: 'bogus' }] }));
  await redis.xadd(inboxKey(prefix, PARTITION), '*', 'e', 'not json');
  await until('both to be skipped', async () => (owner.link.skipped === 2 ? true : undefined), WAIT_MS);
  t.equal(owner.heard.inbox.length, 0, 'nothing applied');
  await until(
    'them to be acknowledged',
    async () => ((await pending(redis, prefix)) === 0 ? true : undefined),
    WAIT_MS,
  );
  t.pass('acknowledged');
});

t.test('an order a gateway does not know is skipped, and the others of its entry still apply', async (t) => {
  const redis = new Redis(await testRedisUrl());
  t.teardown(() => redis.quit());
  const prefix = uniquePrefix();
  const gateway = linkOn(t, redis, prefix, 'gw');
  const orders = [
    { t: 'from_a_newer_member', org: 'acme', epoch: 1 },
    { t: 'roll_call', org: 'acme', epoch: 1 },
  ];
  await redis.xadd(gatewayKey(prefix, 'gw'), '*', 'e', JSON.stringify({ owner: 'owner', orders }));
  await until('the known order to be heard', async () => (gateway.heard.orders.length > 0 ? true : undefined), WAIT_MS);
  t.same(gateway.heard.orders, [{ t: 'roll_call', org: 'acme', epoch: 1 }], 'the roll call applies');
  t.equal(gateway.link.skipped, 1, 'the unknown order is counted');
});

t.test('a link started on a client without an offline queue (as the store makes) logs no failed read', async (t) => {
  const redis = new Redis(await testRedisUrl(), { enableOfflineQueue: false });
  t.teardown(() => redis.quit());
  await redis
    .ping()
    .catch(() => until('the client to connect', async () => (redis.status === 'ready' ? true : undefined), WAIT_MS));
  const prefix = uniquePrefix();
  const { logger, records } = recordingLogger('warn');
  const heard: InboxEntry[] = [];
  const owner = new NodeLink(
    redis,
    prefix,
    'owner',
    { orders: () => undefined, resync: () => undefined, inbox: async (_p, e) => Boolean(heard.push(e)) },
    logger,
  );
  owner.start();
  t.teardown(() => owner.close());
  await owner.serve(PARTITION);
  const gateway = linkOn(t, redis, prefix, 'gw');
  gateway.link.event(PARTITION, answer('n1'));
  await until('the owner to read the answer', async () => (heard.length > 0 ? true : undefined), WAIT_MS);
  // Its reading connections are new when it starts: a read sent before they connect is refused by the client.
  t.same(
    records.map((r) => r.msg),
    [],
    'no warning',
  );
});

t.test('events whose writes fail while Redis is away are held, and written in order once it answers', async (t) => {
  const redis = await startPrivateRedis(t);
  const client = new Redis(redis.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
  client.on('error', () => undefined);
  t.teardown(() => client.disconnect());
  const prefix = uniquePrefix();
  const gateway = linkOn(t, client, prefix, 'gw');
  await redis.kill();
  gateway.link.event(PARTITION, answer('n1'));
  await until('the connection to be down', async () => (client.status !== 'ready' ? true : undefined), WAIT_MS);
  gateway.link.event(PARTITION, answer('n2'));
  await redis.start();
  const ownerClient = new Redis(redis.url);
  t.teardown(() => ownerClient.quit());
  const owner = linkOn(t, ownerClient, prefix, 'owner');
  await owner.link.serve(PARTITION);
  await until(
    'the owner to read what the gateway held',
    async () => (owner.heard.inbox.flatMap((e) => e.events).length >= 2 ? true : undefined),
    WAIT_MS,
  );
  t.same(
    owner.heard.inbox.flatMap((e) => e.events),
    [answer('n1'), answer('n2')],
    'both answers, in order',
  );
  t.equal(gateway.heard.resyncs, 0, 'nothing was let go, so nothing needs saying again');
});

t.test('reads cut off mid-block (a failover, a restart) go on once Redis answers again', async (t) => {
  // A Redis of the test's own: every blocking read on it is cut, as a failover cuts them.
  const redis = await startPrivateRedis(t);
  const opened = openRedis(redis.url);
  t.teardown(() => opened.redis.disconnect());
  await until('the client to connect', async () => (opened.redis.status === 'ready' ? true : undefined), WAIT_MS);
  const prefix = uniquePrefix();
  const owner = linkOn(t, opened.redis, prefix, 'owner');
  await owner.link.serve(PARTITION);
  const gateway = linkOn(t, opened.redis, prefix, 'gw');
  const blocked = async () => {
    const clients = (await opened.redis.client('LIST')) as string;
    return (clients.match(/ cmd=xread(group)? /g) ?? []).length;
  };
  await until('both links to block reading', async () => ((await blocked()) >= 2 ? true : undefined), WAIT_MS);
  await opened.redis.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
  // Each read is answered with an error when its connection closes (it was left unsettled before), and sent again.
  await until(
    'an order and an answer written after the cut to arrive',
    async () => {
      if (gateway.heard.orders.length > 0 && owner.heard.inbox.length > 0) return true;
      if (opened.redis.status !== 'ready') return undefined;
      if (gateway.heard.orders.length === 0) owner.link.order('gw', { t: 'roll_call', org: 'acme', epoch: 1 });
      if (owner.heard.inbox.length === 0) gateway.link.event(PARTITION, answer('n1'));
      return undefined;
    },
    WAIT_MS,
  );
  t.match(gateway.heard.orders[0], { t: 'roll_call' }, 'the gateway reads its stream again');
  t.same(owner.heard.inbox[0]?.events, [answer('n1')], 'the owner reads its inbox again');
});
