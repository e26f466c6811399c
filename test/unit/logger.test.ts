// The server's logger: the text and JSON lines, level filtering, and the fields child loggers bind.
import t from 'tap';
import { z } from 'zod';
import { createLogger, type Logger, type LoggerOptions } from '../../src/lib/logger.js';

const AT = Date.UTC(2026, 0, 2, 3, 4, 5, 6);
const STAMP = '2026-01-02T03:04:05.006Z';

/** A logger and the lines it wrote. */
function capture(level: LoggerOptions['level'], format: LoggerOptions['format']): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = createLogger({ level, format, destination: { write: (line) => void lines.push(line) }, now: () => AT });
  return { log, lines };
}

const jsonLine = z.looseObject({ level: z.number(), time: z.number(), msg: z.string() });

t.test('text: one line per event with the time, the level, the message and key=value fields', async (t) => {
  const { log, lines } = capture('debug', 'text');
  log.info('API listening on http://127.0.0.1:10003');
  log.debug('request', { method: 'GET', path: '/_status', status: 200, duration_ms: 1.5, requestor: null });
  log.warn('dropped message', { detail: 'web1: bad "sig"', quorum: true, counts: { skew: 2 } });
  log.error('two\nlines', { empty: '' });
  t.strictSame(lines, [
    `${STAMP} INFO API listening on http://127.0.0.1:10003\n`,
    `${STAMP} DEBUG request method=GET path=/_status status=200 duration_ms=1.5 requestor=null\n`,
    `${STAMP} WARN dropped message detail="web1: bad \\"sig\\"" quorum=true counts={"skew":2}\n`,
    `${STAMP} ERROR two\\nlines empty=""\n`,
  ]);
});

t.test('text: an error field shows its stack on the same line', async (t) => {
  const { log, lines } = capture('info', 'text');
  log.error('request failed', { err: new Error('boom') });
  t.equal(lines.length, 1);
  t.match(lines[0], /^\S+ ERROR request failed err="Error: boom\\n {4}at .*"\n$/);
});

t.test('json: pino lines with the level number, the time, the message and the fields', async (t) => {
  const { log, lines } = capture('info', 'json');
  log.info('API listening', { url: 'http://127.0.0.1:10003' });
  log.error('request failed', { err: new TypeError('bad') });
  t.equal(lines.length, 2);
  const [first, second] = lines.map((l) => jsonLine.parse(JSON.parse(l)));
  t.match(first, { level: 30, time: AT, msg: 'API listening', url: 'http://127.0.0.1:10003', pid: process.pid });
  t.match(second, {
    level: 50,
    msg: 'request failed',
    err: { type: 'TypeError', message: 'bad', stack: /^TypeError: bad\n/ },
  });
  t.ok(
    lines.every((l) => l.endsWith('}\n') && !l.slice(0, -1).includes('\n')),
    'one line each',
  );
});

t.test('lines below the chosen level are not written; silent writes nothing', async (t) => {
  const messageOf = (line: string) =>
    line.startsWith('{') ? jsonLine.parse(JSON.parse(line)).msg : line.trimEnd().split(' ')[2];
  for (const format of ['text', 'json'] as const) {
    const warn = capture('warn', format);
    warn.log.debug('debug');
    warn.log.info('info');
    warn.log.warn('warn');
    warn.log.error('error');
    t.strictSame(warn.lines.map(messageOf), ['warn', 'error'], format);
    const silent = capture('silent', format);
    silent.log.error('error');
    silent.log.child({ a: 1 }).error('error');
    t.strictSame(silent.lines, [], `${format}, silent`);
  }
});

t.test('a child logger binds fields to every line, after its parent’s, and leaves the parent alone', async (t) => {
  const text = capture('debug', 'text');
  const http = text.log.child({ component: 'http' });
  http.child({ requestor: 'admin' }).debug('request', { status: 200 });
  text.log.info('plain');
  t.strictSame(text.lines, [
    `${STAMP} DEBUG request component=http requestor=admin status=200\n`,
    `${STAMP} INFO plain\n`,
  ]);

  const json = capture('debug', 'json');
  json.log.child({ component: 'push-jobs', err: new Error('bound') }).warn('channel stopped', { channel: 'command' });
  t.match(jsonLine.parse(JSON.parse(json.lines[0] ?? '')), {
    level: 40,
    component: 'push-jobs',
    channel: 'command',
    err: { type: 'Error', message: 'bound' },
  });
});
