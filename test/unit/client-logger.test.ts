// The client's log lines: ISO timestamp, level, one line per event, filtered by level.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { createLogger, formatLine } from '../../src/client/logger.js';

t.test('a line is the ISO time, the level and the message, with inner newlines escaped', async (t) => {
  t.equal(
    formatLine('warn', 'no heartbeat\nfrom the server', Date.UTC(2026, 0, 2, 3, 4, 5, 6)),
    '2026-01-02T03:04:05.006Z WARN no heartbeat\\nfrom the server\n',
  );
});

t.test('lines below the chosen level are not written; the file and its folder are created', async (t) => {
  const file = join(t.testdir({}), 'logs', 'client.log');
  const log = createLogger('info', { file }, () => 0);
  log.debug('hidden');
  log.info('shown');
  log.error('also shown');
  t.equal(
    readFileSync(file, 'utf8'),
    '1970-01-01T00:00:00.000Z INFO shown\n1970-01-01T00:00:00.000Z ERROR also shown\n',
  );
});
