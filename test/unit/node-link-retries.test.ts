// The node link's retries on a clock moved by hand, over a fake of the Redis connection: a write Redis refused is
// tried again after its backoff, with what was held first and in order; a read that failed is sent again after its
// backoff; a wake-up of the inboxes' read that came too early is tried again after its own. The streams themselves
// are tested on Redis in test/integration/node-link.test.ts.
import { EventEmitter } from 'node:events';
import t from 'tap';
import { GatewayReader } from '../../src/cluster/gateway-reader.js';
import { InboxReader } from '../../src/cluster/inbox-reader.js';
import type { GatewayOrder, InboxEntry } from '../../src/cluster/node-link-messages.js';
import { RETRY_MS, StreamWatch } from '../../src/cluster/streams.js';
import { StreamWriter } from '../../src/cluster/stream-writer.js';
import { inboxKey } from '../../src/store/layout.js';
import type { RedisClient } from '../../src/store/redis-scripts.js';
import { quietLogger } from '../support/logs.js';
import { ManualClock } from '../support/manual-clock.js';
import { answer } from '../support/node-link.js';

const PREFIX = 't:';
const WAKE_RETRY_MS = 20;

type Reply = unknown;

/** A connection that answers the commands the link sends, as the test scripts them; it never connects anywhere. */
class FakeConnection extends EventEmitter {
  status = 'ready';
  /** Entries appended: the key and the JSON of the entry. */
  readonly added: Array<[string, unknown]> = [];
  /** While set, XADD is refused. */
  away = false;
  xaddCalls = 0;
  /** The blocking reads' answers, in order (XREAD and XREADGROUP with BLOCK): past them, reads block. */
  readonly reads: Array<Reply | Error> = [];
  /** The streams named by each blocking read. */
  readonly readsSent: string[][] = [];
  /** CLIENT UNBLOCK's answers, in order (0: not blocking yet); the rest answer 1. */
  readonly unblocks: number[] = [];
  /** When each CLIENT UNBLOCK was sent. */
  readonly unblocksAt: number[] = [];
  pendingReads = 0;
  /** The connections made from this one (the readers' own). */
  readonly duplicates: FakeConnection[] = [];
  private ended: ((e: Error) => void) | undefined;
  private readonly blocked = new Set<(reply: Reply) => void>();

  constructor(private readonly clock: ManualClock) {
    super();
  }

  duplicate(): FakeConnection {
    const conn = new FakeConnection(this.clock);
    this.duplicates.push(conn);
    return conn;
  }

  defineCommand(): void {}
  disconnect(): void {
    this.status = 'end';
    this.ended?.(new Error('Connection is closed.'));
  }
  xadd(key: string, _id: string, _field: string, json: string): Promise<string> {
    this.xaddCalls += 1;
    if (this.away) return Promise.reject(new Error('Connection is closed.'));
    this.added.push([key, JSON.parse(json)]);
    return Promise.resolve(`${this.added.length}-0`);
  }
  del(): Promise<number> {
    return Promise.resolve(1);
  }
  xtrim(): Promise<number> {
    return Promise.resolve(0);
  }
  xack(): Promise<number> {
    return Promise.resolve(1);
  }
  xgroup(): Promise<string> {
    return Promise.resolve('OK');
  }
  xautoclaim(): Promise<[string, string[]]> {
    return Promise.resolve(['0-0', []]);
  }
  inboxTrim(): Promise<number> {
    return Promise.resolve(0);
  }
  /** CLIENT ID, or CLIENT UNBLOCK of the reads blocked on this connection's duplicates. */
  client(what: string): Promise<number> {
    if (what === 'ID') return Promise.resolve(7);
    this.unblocksAt.push(this.clock.now());
    const ended = this.unblocks.shift() ?? 1;
    if (ended === 1) for (const conn of this.duplicates) for (const resolve of conn.blocked) resolve(null);
    return Promise.resolve(ended);
  }
  xread(...args: unknown[]): Promise<Reply> {
    return this.read(args);
  }
  xreadgroup(...args: unknown[]): Promise<Reply> {
    // Without BLOCK: this member's own pending entries, of which there are none.
    return args.includes('BLOCK') ? this.read(args) : Promise.resolve(null);
  }

  private read(args: unknown[]): Promise<Reply> {
    const streams = args.slice(args.indexOf('STREAMS') + 1).map(String);
    this.readsSent.push(streams.slice(0, streams.length / 2));
    if (this.reads.length > 0) {
      const next = this.reads.shift();
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    }
    this.pendingReads += 1;
    return new Promise((resolve, reject) => {
      const done = (reply: Reply) => {
        this.blocked.delete(done);
        this.pendingReads -= 1;
        resolve(reply);
      };
      this.blocked.add(done);
      this.ended = reject;
    });
  }
}

const asClient = (conn: FakeConnection) => conn as unknown as RedisClient;

function entry(id: string, json: object): [string, string[]] {
  return [id, ['e', JSON.stringify(json)]];
}

t.test('events held while Redis refuses them are written again after the backoff, first and in order', async (t) => {
  const clock = new ManualClock();
  const redis = new FakeConnection(clock);
  const ports = { replicated: () => Promise.resolve(), fencing: undefined, resync: () => undefined };
  const writer = new StreamWriter(asClient(redis), PREFIX, 'gw', quietLogger(), ports, clock);
  redis.away = true;
  writer.event(1, answer('web1'));
  await clock.advance(0);
  t.equal(redis.xaddCalls, 1, 'written at the end of the turn, and refused');
  await clock.advance(RETRY_MS - 1);
  t.equal(redis.xaddCalls, 1, 'not tried again before the backoff');
  await clock.advance(1);
  t.equal(redis.xaddCalls, 2, 'tried again after it, and refused again');
  writer.event(1, answer('web2'));
  await clock.advance(0);
  t.equal(redis.added.length, 0, 'nothing written while Redis is away');
  redis.away = false;
  await clock.advance(RETRY_MS);
  t.same(
    redis.added.map(([key, json]) => [key, (json as InboxEntry).events.map((e) => e.node)]),
    [[inboxKey(PREFIX, 1), ['web1', 'web2']]],
    'once Redis answers, one entry: what was held first, then what came after',
  );
  writer.event(1, answer('web3'));
  await clock.advance(RETRY_MS);
  t.same(
    redis.added.map(([, json]) => (json as InboxEntry).events.map((e) => e.node)),
    [['web1', 'web2'], ['web3']],
    'nothing written twice',
  );
  await writer.close();
});

t.test("a failed read of the gateway's stream is sent again after the backoff", async (t) => {
  const clock = new ManualClock();
  const redis = new FakeConnection(clock);
  const got: GatewayOrder[] = [];
  const log = quietLogger();
  const reader = new GatewayReader(
    asClient(redis),
    PREFIX,
    'gw',
    (o) => got.push(...o),
    new StreamWatch(log),
    log,
    clock,
  );
  const order: GatewayOrder = { t: 'roll_call', org: 'acme', epoch: 1 };
  reader.start();
  const conn = redis.duplicates[0];
  if (!conn) throw new Error('the reader reads on a connection of its own');
  conn.reads.push(new Error('Connection is closed.'), [['k', [entry('1-0', { owner: 'o', orders: [order] })]]]);
  await clock.advance(0);
  t.equal(conn.readsSent.length, 1, 'the first read, refused');
  await clock.advance(RETRY_MS - 1);
  t.equal(conn.readsSent.length, 1, 'not sent again before the backoff');
  await clock.advance(1);
  t.same(got, [order], 'sent again after it, and what it read handed on');
  t.equal(conn.pendingReads, 1, 'then the next read waits for entries');
  reader.close();
  t.equal(clock.pending, 0, 'closed: no timer is left');
});

t.test('a failed read of the inboxes is sent again after the backoff; an early wake-up is tried again', async (t) => {
  const clock = new ManualClock();
  const redis = new FakeConnection(clock);
  const applied: string[] = [];
  const apply = (_p: unknown, e: InboxEntry) => Promise.resolve(applied.push(e.gateway) > 0);
  const log = quietLogger();
  const reader = new InboxReader(asClient(redis), PREFIX, 'owner', apply, new StreamWatch(log), log, { timers: clock });
  reader.start();
  const conn = redis.duplicates[0];
  if (!conn) throw new Error('the reader reads on a connection of its own');
  conn.reads.push(new Error('Connection is closed.'), [
    [inboxKey(PREFIX, 1), [entry('1-0', { gateway: 'gw', events: [answer('web1')] })]],
  ]);
  await reader.serve(1);
  await clock.advance(0);
  t.equal(conn.readsSent.length, 1, 'the first read, refused');
  await clock.advance(RETRY_MS - 1);
  t.equal(conn.readsSent.length, 1, 'not sent again before the backoff');
  await clock.advance(1);
  t.same(applied, ['gw'], 'sent again after it, and what it read applied');
  t.equal(conn.pendingReads, 1, 'the next read blocks');

  // Serving another partition ends the blocking read; CLIENT UNBLOCK says it was not blocking yet, twice.
  redis.unblocks.push(0, 0);
  const from = clock.now();
  await reader.serve(2);
  await clock.advance(3 * WAKE_RETRY_MS);
  t.same(
    redis.unblocksAt.map((at) => at - from),
    [0, WAKE_RETRY_MS, 2 * WAKE_RETRY_MS],
    'the wake-up is tried again after its backoff until the read ends',
  );
  t.same(conn.readsSent.at(-1), [inboxKey(PREFIX, 1), inboxKey(PREFIX, 2)], 'the next read covers both partitions');
  reader.close();
  t.equal(clock.pending, 0, 'closed: no timer is left');
});
