// What a running server logs, read from its JSON lines: the first start's files, the ready line, one debug
// line per HTTP request, and the transport's dropped messages.
import t from 'tap';
import { Dealer } from 'zeromq';
import { connectSocket } from '../../src/protocol/socket-connect.js';
import { until } from '../support/deadline.js';
import { LEVEL, recordingLogger } from '../support/logs.js';
import { startTestServer } from '../support/server.js';

t.test('server log', async (t) => {
  const { logger, records } = recordingLogger('debug');
  const s = await startTestServer(t, 'file', { curve_encryption: false }, logger);

  t.test('the first start names each file it wrote, then the API says where it listens', async (t) => {
    const setup = records.filter((r) => r.component === 'setup');
    t.ok(
      setup.every((r) => r.level === LEVEL.info),
      'at info',
    );
    t.strictSame(
      setup.map((r) => r.key ?? r.file),
      s.running.setupFiles,
    );
    t.match(setup[0], { msg: 'first start: created the superuser pivotal' });
    const ready = records.findIndex((r) => r.msg === `API listening on ${s.url}`);
    t.ok(ready > records.indexOf(setup.at(-1)!), 'after the setup lines');
    t.equal(records[ready]?.level, LEVEL.info);
  });

  t.test('each request is one debug line with method, path, status, duration and requestor', async (t) => {
    const res = await s.admin.request('GET', '/organizations/default/nodes');
    t.equal(res.status, 200);
    const signed = records.filter((r) => r.msg === 'request' && r.path === '/organizations/default/nodes');
    t.equal(signed.length, 1);
    t.match(signed[0], {
      level: LEVEL.debug,
      component: 'http',
      method: 'GET',
      status: 200,
      duration_ms: Number,
      requestor: 'admin',
    });

    const anonymous = await fetch(`${s.url}/organizations/default/roles`);
    t.equal(anonymous.status, 400);
    const unsigned = records.find((r) => r.msg === 'request' && r.path === '/organizations/default/roles');
    t.match(unsigned, { method: 'GET', status: 400 });
    t.notOk(unsigned && 'requestor' in unsigned, 'no requestor before authentication');
  });

  t.test('a dropped push-jobs message is logged at warn with its reason', async (t) => {
    const dealer = new Dealer({ linger: 0 });
    t.teardown(() => dealer.close());
    connectSocket(dealer, s.running.hub.describe().heartbeat_addr);
    await dealer.send('one frame where three belong');
    const drop = await until(
      'the drop line',
      () => records.find((r) => r.component === 'push-jobs' && r.level === LEVEL.warn),
      10_000,
    );
    t.match(drop, { msg: /^dropped message \(frame_count\)/, reason: 'frame_count' });
  });
});
