// 500 connections that each send their request's headers one byte a second (slowloris): header_timeout closes
// every one with 408, GET /_status counts them, and the API answers everyone else meanwhile.
import t from 'tap';
import { until } from '../support/deadline.js';
import { connectFrom } from '../support/hostile.js';
import { startTestServer } from '../support/server.js';

const CONNECTIONS = 500;
const HEADER_TIMEOUT_S = 2;
const REQUEST = 'GET /organizations/default/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' + 'z'.repeat(200);

t.test('connections sending a header byte a second are all closed by header_timeout', async (t) => {
  const s = await startTestServer(t, 'file', { header_timeout: HEADER_TIMEOUT_S, request_timeout: 10 });
  const port = Number(new URL(s.url).port);
  const slow = await Promise.all(Array.from({ length: CONNECTIONS }, () => connectFrom(port)));
  t.teardown(() => slow.forEach((c) => c.socket.destroy()));
  let sent = 0;
  const drip = setInterval(() => {
    const byte = REQUEST[sent % REQUEST.length] as string;
    sent += 1;
    for (const c of slow) if (!c.socket.destroyed) c.socket.write(byte);
  }, 1000);
  t.teardown(() => clearInterval(drip));

  const nodes = await s.admin.request('GET', '/organizations/default/nodes');
  t.equal(nodes.status, 200, 'the API answers others while they drip');
  await until(
    'every slow connection to be closed',
    () => (slow.every((c) => c.socket.destroyed || c.socket.readableEnded) ? true : undefined),
    (HEADER_TIMEOUT_S + 8) * 1000,
  );
  clearInterval(drip);
  t.ok(sent <= HEADER_TIMEOUT_S + 3, `closed after ${sent} bytes each (header_timeout ${HEADER_TIMEOUT_S} s)`);
  t.equal(
    slow.filter((c) => c.answer().startsWith('HTTP/1.1 408 ')).length,
    CONNECTIONS,
    'each was answered 408 Request Timeout',
  );
  t.match(slow[0]?.answer(), /header_timeout/, 'naming the setting');
  const status = (await s.admin.request('GET', '/_status')).body as {
    limits: { http: { refused: { header_timeout: number } } };
  };
  t.ok(status.limits.http.refused.header_timeout >= CONNECTIONS, 'GET /_status counts them under header_timeout');
});
