// The node's heartbeat intervals on a manual clock, as a user would check them: a heartbeat at each connection and
// every interval after, jobs refused once the server has missed offline_threshold heartbeats, a reconfigure once
// its silence lasts through the grace after that, and a result sent again, further apart each time, until the
// server acknowledges it. test/unit/client-heartbeat.test.ts holds the liveness machine's rows one by one.
import t from 'tap';
import { HeartbeatLoop } from '../../src/client/heartbeat-loop.js';
import type { JobAnswer } from '../../src/client/job-runner.js';
import type { Logger } from '../../src/client/logger.js';
import { ResultReports } from '../../src/client/result-reports.js';
import { ManualClock } from '../support/manual-clock.js';

const quiet: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const INTERVAL_MS = 1000;
const THRESHOLD = 3;
const SERVER = 'server-1';
const timing = { intervalMs: INTERVAL_MS, offlineThreshold: THRESHOLD, incarnationId: SERVER };
const JOB = 'a'.repeat(32);
const result: JobAnswer = { type: 'succeeded', job_id: JOB, exit_status: 0 };

/** A loop on a manual clock; `beats`, `effects` and `resent` say when each happened. */
function loopOf() {
  const clock = new ManualClock();
  const reports = new ResultReports(quiet);
  const beats: number[] = [];
  const effects: string[] = [];
  const resent: number[] = [];
  const channel = { queued: () => false, sendCommand: () => void resent.push(clock.now()) };
  const loop = new HeartbeatLoop(
    reports,
    {
      beat: () => beats.push(clock.now()),
      effect: (e) => effects.push(`${clock.now()} ${e.type === 'reconfigure' ? `reconfigure:${e.reason}` : e.type}`),
    },
    clock,
  );
  /** New channels, as the client opens them: every result again, and a first heartbeat at once. */
  const connect = () => {
    loop.connected(timing, channel);
    loop.resend(true);
    loop.tick();
  };
  return { clock, reports, loop, beats, effects, resent, connect };
}

t.test('the node sends a heartbeat when it connects and then once every interval', async (t) => {
  const { clock, loop, beats, connect } = loopOf();
  connect();
  await clock.advance(3500);
  t.same(beats, [0, 1000, 2000, 3000]);
  connect();
  await clock.advance(1000);
  t.same(beats, [0, 1000, 2000, 3000, 3500, 4500], 'new channels start the intervals over, without the old ones');
  loop.stop();
  await clock.advance(10_000);
  t.equal(beats.length, 6, 'no heartbeat once stopped');
  t.equal(clock.pending, 0);
});

t.test('a server that keeps sending heartbeats stays online', async (t) => {
  const { clock, loop, effects, connect } = loopOf();
  connect();
  for (let i = 0; i < 20; i++) {
    await clock.advance(INTERVAL_MS);
    loop.heard(SERVER);
  }
  t.equal(loop.online, true);
  t.same(effects, []);
});

t.test('a silent server is counted down after offline_threshold intervals, then reconfigured from', async (t) => {
  const { clock, loop, effects, connect } = loopOf();
  connect();
  await clock.advance(THRESHOLD * INTERVAL_MS + INTERVAL_MS - 1);
  t.equal(loop.online, true, 'three missed heartbeats are not yet too many');
  await clock.advance(1);
  t.equal(loop.online, false, 'the first tick past offline_threshold intervals of silence refuses jobs');
  t.same(effects, ['4000 went_offline']);
  await clock.advance(3000);
  t.same(effects, ['4000 went_offline', '7000 reconfigure:server_silent'], 'the grace is as many intervals again');
  await clock.advance(60_000);
  t.equal(effects.length, 2, 'one reconfigure per connection');
  loop.heard(SERVER);
  t.equal(loop.online, true, 'the first heartbeat back brings the server back');
  t.same(effects.slice(2), ['67000 back_online']);
});

t.test('a heartbeat from a new server incarnation asks for a reconfigure', async (t) => {
  const { clock, loop, effects, connect } = loopOf();
  connect();
  await clock.advance(1500);
  loop.heard('server-2');
  loop.heard('server-2');
  t.same(effects, ['1500 reconfigure:incarnation_changed']);
  t.equal(loop.online, true);
});

t.test('a result is sent again, further apart each time, until the server acknowledges it', async (t) => {
  const { clock, reports, resent, connect } = loopOf();
  connect();
  reports.sent(result, clock.now());
  await clock.advance(100_000);
  // An offline window (3 s) after it was sent, then twice as long after each resend: 3, 6, 12, 24 and 48 s.
  t.same(resent, [3000, 9000, 21_000, 45_000, 93_000]);
  await clock.advance(100_000);
  t.same(resent.slice(5), [153_000], 'the spacing stops growing at a minute');
  reports.acknowledged(JOB);
  await clock.advance(300_000);
  t.equal(resent.length, 6, 'acknowledged: never again');
});

t.test('new channels send every unacknowledged result again at once, and the spacing starts over', async (t) => {
  const { clock, reports, resent, connect } = loopOf();
  connect();
  reports.sent(result, clock.now());
  await clock.advance(10_000);
  t.same(resent, [3000, 9000]);
  connect();
  t.same(resent, [3000, 9000, 10_000]);
  await clock.advance(3000);
  t.same(resent, [3000, 9000, 10_000, 13_000]);
});
