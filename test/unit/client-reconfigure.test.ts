// When the node's client asks for its config, on a manual clock: at start and after a failed reconfigure, again after
// a back-off that doubles up to a minute (or the server's Retry-After), each failure another member may not share
// moving it to the next server; a silent gateway left for the next member; the session renewed before its key
// expires; a restarted server asked after a splay below one interval. The servers are stand-ins answering per call;
// test/integration/client-servers.test.ts asks real HTTP servers.
import t from 'tap';
import type { Logger } from '../../src/client/logger.js';
import { ConfigFetchError, fetchFromPool, type PushConfig } from '../../src/client/push-config.js';
import { Reconfigurer } from '../../src/client/reconfigurer.js';
import { Retries, startTries } from '../../src/client/retries.js';
import { Servers } from '../../src/client/server-api.js';
import { ManualClock } from '../support/manual-clock.js';

const A = 'http://infra-a:10003';
const B = 'http://infra-b:10003';
const C = 'http://infra-c:10003';
/** Every jitter at its middle: a back-off wait is ¾ of base × 2^attempt, a Retry-After 1¼ of it. */
const RANDOM = 0.5;
const BACKOFF_JITTER = 0.75;

const unavailable = () => new ConfigFetchError('GET config: 503', false, { status: 503 });

function configOf(overrides: Partial<PushConfig> = {}): PushConfig {
  return {
    heartbeatAddr: 'tcp://infra-a:10000',
    commandAddr: 'tcp://infra-a:10002',
    intervalMs: 1000,
    offlineThreshold: 3,
    curveServerKey: 'k'.repeat(40),
    sessionKey: Buffer.alloc(32),
    lifetimeMs: 3_600_000,
    incarnationId: 'server-1',
    maxMessageSkew: 300,
    maxBodySize: 65_536,
    servers: [],
    ...overrides,
  };
}

/**
 * A client's config requests on a manual clock: each request takes the next of `answers` (the last one again once
 * they run out); `asked` says when each went, and to which server.
 */
function clientOf(answers: Array<PushConfig | ConfigFetchError>, random = () => RANDOM) {
  const clock = new ManualClock();
  const lines: string[] = [];
  const log: Logger = {
    debug: () => {},
    info: (line) => lines.push(line),
    warn: (line) => lines.push(line),
    error: (line) => lines.push(line),
  };
  const servers = new Servers([A, B, C], log, random);
  const retries = new Retries(clock, random);
  const asked: string[] = [];
  let next = 0;
  const request = async (server: string): Promise<PushConfig> => {
    asked.push(`${clock.now()} ${server}`);
    const answer = answers[Math.min(next++, answers.length - 1)];
    if (answer === undefined || answer instanceof Error) throw answer;
    return answer;
  };
  const fetch = () => fetchFromPool(servers, request, false);
  return { clock, log, lines, servers, retries, asked, fetch };
}

/** The client of clientOf, connected on `config`, reconfiguring as push-client.ts has it do. */
function connectedOf(config: PushConfig, answers: Array<PushConfig | ConfigFetchError>, random = () => RANDOM) {
  const c = clientOf(answers, random);
  const state = { config, online: true, connected: [] as number[] };
  const reconfigurer: Reconfigurer = new Reconfigurer({
    log: c.log,
    servers: c.servers,
    retries: c.retries,
    timers: c.clock,
    random,
    config: () => state.config,
    fetch: c.fetch,
    connect: (next) => {
      state.config = next;
      state.connected.push(c.clock.now());
      reconfigurer.connected(next);
    },
    online: () => state.online,
  });
  reconfigurer.connected(config);
  return { ...c, state, reconfigurer };
}

/** The times of `waits` one after another, from 0. */
function timesOf(waits: number[]): number[] {
  let at = 0;
  return [0, ...waits.map((w) => (at += w))];
}

const lastingWaits = (baseMs: number, count: number) =>
  Array.from({ length: count }, (_, i) => Math.min(60_000, baseMs * 2 ** i) * BACKOFF_JITTER);

t.test(
  'the first config is asked again after a back-off doubling from a second to a minute, server after server',
  async (t) => {
    const { clock, log, lines, retries, asked, fetch } = clientOf([unavailable()]);
    const started = retries.retrying(fetch, startTries('cannot get the push-jobs config', log));
    await clock.advance(140_000);
    const servers = [A, B, C, A, B, C, A, B, C];
    t.same(
      asked,
      timesOf(lastingWaits(1000, 8)).map((at, i) => `${at} ${servers[i]}`),
      '0.75, 1.5, 3, 6, 12, 24, then 45 s each time',
    );
    t.ok(lines.includes('cannot get the push-jobs config (GET config: 503); trying again in 750 ms'));
    retries.stop();
    t.equal(await started, undefined, 'a client stopped meanwhile gives up');
    t.equal(clock.pending, 0, 'and waits for nothing');
  },
);

t.test('a Retry-After is waited instead of the back-off, up to a minute', async (t) => {
  const busy = (seconds: number) =>
    new ConfigFetchError('GET config: 503', false, { status: 503, retryAfterMs: seconds * 1000 });
  const { clock, log, retries, asked, fetch } = clientOf([busy(1), busy(1), busy(1), busy(600), configOf()]);
  const started = retries.retrying(fetch, startTries('cannot get the push-jobs config', log));
  await clock.advance(70_000);
  t.same(
    asked,
    [`0 ${A}`, `1250 ${B}`, `2500 ${C}`, `3750 ${A}`, `63750 ${B}`],
    'no doubling; ten minutes is a minute',
  );
  t.same(await started, configOf());
});

t.test('a config answer names the members tried after client.rb’s', async (t) => {
  const D = 'http://infra-d:10003';
  const { clock, log, servers, retries, fetch } = clientOf([configOf({ servers: [A, D] })]);
  await retries.retrying(fetch, startTries('cannot get the push-jobs config', log));
  t.same(servers.all(), [A, B, C, D]);
  t.equal(clock.pending, 0);
});

t.test('a refusal no other server would answer otherwise ends the start, on the same server', async (t) => {
  const forbidden = new ConfigFetchError('GET config: 403', true, { status: 403 });
  const { clock, log, servers, retries, asked, fetch } = clientOf([forbidden]);
  await t.rejects(retries.retrying(fetch, startTries('cannot get the push-jobs config', log)), forbidden);
  t.same(asked, [`0 ${A}`]);
  t.equal(servers.current, A);
  t.equal(clock.pending, 0);
});

t.test('a failed reconfigure is tried again after a back-off doubling from one interval', async (t) => {
  const config = configOf({ intervalMs: 2000 });
  const answers = [...Array.from({ length: 7 }, unavailable), configOf({ incarnationId: 'server-2' })];
  const { clock, reconfigurer, asked, state } = connectedOf(config, answers);
  reconfigurer.serverRestarted();
  await clock.advance(140_000);
  const servers = [A, B, C, A, B, C, A, B];
  const splay = RANDOM * 2000;
  t.same(
    asked,
    timesOf(lastingWaits(2000, 7)).map((at, i) => `${at + splay} ${servers[i]}`),
    'a splay of half an interval, then 1.5, 3, 6, 12, 24 and 45 s',
  );
  t.same(state.connected, [splay + 1500 + 3000 + 6000 + 12_000 + 24_000 + 45_000 + 45_000]);
  t.equal(clock.pending, 1, 'only the renewal of the new session waits');
});

t.test('a server restarting twice in a row is asked once, a splay after the second', async (t) => {
  const { clock, reconfigurer, asked } = connectedOf(configOf(), [configOf({ incarnationId: 'server-2' })]);
  reconfigurer.serverRestarted();
  await clock.advance(200);
  reconfigurer.serverRestarted();
  await clock.advance(2000);
  t.same(asked, [`700 ${A}`]);
});

t.test('the server heard again while a reconfigure waits: it is asked at once', async (t) => {
  const { clock, reconfigurer, asked, state } = connectedOf(configOf(), [unavailable(), configOf()]);
  reconfigurer.serverRestarted();
  await clock.advance(600);
  t.same(asked, [`500 ${A}`], 'the next try would be 750 ms later');
  reconfigurer.heard();
  await clock.advance(0);
  t.same(asked, [`500 ${A}`, `600 ${B}`]);
  t.same(state.connected, [600]);
});

t.test('a gateway silent through its grace is left for the next member, later each time in a row', async (t) => {
  const { clock, reconfigurer, asked, state } = connectedOf(configOf({ gatewayServer: A }), [
    configOf({ gatewayServer: B }),
    configOf({ gatewayServer: C }),
    configOf({ gatewayServer: A }),
  ]);
  state.online = false;
  reconfigurer.serverSilent();
  await clock.advance(0);
  t.same(asked, [`0 ${B}`], 'the first time at once');
  reconfigurer.serverSilent();
  await clock.advance(749);
  t.same(asked, [`0 ${B}`], 'the second after a back-off of an interval');
  await clock.advance(1);
  t.same(asked, [`0 ${B}`, `750 ${C}`]);
  reconfigurer.serverSilent();
  await clock.advance(1500);
  t.same(asked, [`0 ${B}`, `750 ${C}`, `2250 ${A}`], 'the third after twice as long');
  reconfigurer.heard();
  reconfigurer.serverSilent();
  await clock.advance(0);
  t.equal(asked.length, 4, 'a heartbeat in between: at once again');
});

t.test('a silence that ends before the wait does keeps the member; a balancer is kept too', async (t) => {
  const balancer = 'http://infra-lb:10003';
  const { clock, reconfigurer, asked, state } = connectedOf(configOf({ gatewayServer: balancer }), [configOf()]);
  state.online = false;
  reconfigurer.serverSilent();
  await clock.advance(0);
  t.same(asked, [`0 ${A}`], 'the gateway is a member this client does not ask: it stays on its server');
  state.config = configOf({ gatewayServer: A });
  reconfigurer.serverSilent();
  await clock.advance(300);
  state.online = true;
  reconfigurer.heard();
  await clock.advance(0);
  t.same(asked, [`0 ${A}`, `300 ${A}`], 'heard again: asked at once, on the same server');
});

t.test('the session is renewed before its key expires, at 80 to 90% of its lifetime', async (t) => {
  const least = () => 0;
  const { clock, asked, state } = connectedOf(configOf({ lifetimeMs: 3_600_000 }), [configOf()], least);
  await clock.advance(2_880_000 - 1);
  t.same(asked, [], 'not before 80%, with the least jitter');
  await clock.advance(1);
  t.same(asked, [`2880000 ${A}`]);
  t.same(state.connected, [2_880_000]);
  await clock.advance(2_880_000);
  t.same(state.connected, [2_880_000, 5_760_000], 'and so again on the new session');
});

t.test('a lifetime beyond what a timer holds is renewed at the longest a timer waits', async (t) => {
  const longest = 2 ** 31 - 1;
  const { clock, asked } = connectedOf(configOf({ lifetimeMs: 90 * 86_400_000 }), [configOf()]);
  await clock.advance(longest - 1);
  t.same(asked, [], 'not at once, as an overlong setTimeout would');
  await clock.advance(1);
  t.same(asked, [`${longest} ${A}`]);
});

t.test('stop ends every wait: nothing is asked after it', async (t) => {
  const { clock, reconfigurer, retries, asked } = connectedOf(configOf(), [unavailable()]);
  reconfigurer.serverRestarted();
  await clock.advance(1000);
  t.same(asked, [`500 ${A}`]);
  reconfigurer.stop();
  retries.stop();
  await clock.advance(0);
  t.equal(clock.pending, 0);
  reconfigurer.serverRestarted();
  await clock.advance(10_000);
  t.same(asked, [`500 ${A}`]);
});
