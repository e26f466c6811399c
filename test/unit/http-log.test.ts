// The HTTP facade's log lines, on an in-memory Hono app: one debug line per request, and a failure that is
// not an ApiError logged at error with its stack and answered 500.
import { Hono } from 'hono';
import t from 'tap';
import type { AuthEnv } from '../../src/http/authenticate.js';
import { ApiError, errorHandler } from '../../src/http/errors.js';
import { requestLog } from '../../src/http/request-log.js';
import { LEVEL, recordingLogger } from '../support/logs.js';

function appWithLog() {
  const { logger, records } = recordingLogger('debug');
  const app = new Hono<AuthEnv>();
  app.onError(errorHandler(logger));
  app.use('*', requestLog(logger));
  app.get('/ok', (c) => c.json({ ok: true }));
  app.get('/gone', () => {
    throw ApiError.of(404, 'no such thing');
  });
  app.get('/bug', () => {
    throw new TypeError('cannot read properties of undefined');
  });
  return { app, records };
}

t.test('a request is one debug line with method, path, status and duration', async (t) => {
  const { app, records } = appWithLog();
  t.equal((await app.request('/ok?x=1')).status, 200);
  t.equal(records.length, 1);
  t.match(records[0], {
    level: LEVEL.debug,
    msg: 'request',
    method: 'GET',
    path: '/ok',
    status: 200,
    duration_ms: Number,
  });
  t.notOk(records[0] && 'requestor' in records[0], 'nobody signed it');
});

t.test('an ApiError keeps its answer and is no error in the log', async (t) => {
  const { app, records } = appWithLog();
  const res = await app.request('/gone');
  t.equal(res.status, 404);
  t.strictSame(await res.json(), { error: ['no such thing'] });
  t.strictSame(
    records.map((r) => [r.level, r.status]),
    [[LEVEL.debug, 404]],
  );
});

t.test('anything else is answered 500 and logged at error with its stack', async (t) => {
  const { app, records } = appWithLog();
  const res = await app.request('/bug', { method: 'GET' });
  t.equal(res.status, 500);
  t.strictSame(await res.json(), { error: ['internal service error'] });
  const [failure, request] = records;
  t.match(failure, {
    level: LEVEL.error,
    msg: 'request failed',
    method: 'GET',
    path: '/bug',
    err: { type: 'TypeError', message: 'cannot read properties of undefined', stack: /^TypeError: .*\n {4}at / },
  });
  t.match(request, { level: LEVEL.debug, msg: 'request', status: 500 });
});
