// infra-server's log as an operator reads it: JSON lines with log_format :json from start to stop, and the
// line saying why a start failed written before the process exits.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { z } from 'zod';
import { runBin } from '../support/process-run.js';
import { occupiedPort, pushPorts, settingsText, startServerProcess } from '../support/server-process.js';

const jsonLine = z.looseObject({ level: z.number(), time: z.number(), msg: z.string() });
const jsonLines = (output: string) =>
  output
    .trimEnd()
    .split('\n')
    .map((line) => jsonLine.parse(JSON.parse(line)));

t.test('with log_format :json every line is pino JSON, from the settings line to stopping', async (t) => {
  const server = await startServerProcess(t, {
    settings: { log_format: 'json' },
    readyLine: /"msg":"API listening on (\S+?)"}\n/,
  });
  t.equal((await fetch(`${server.url}/_status`)).status, 200);
  t.strictSame(await server.stop(), { code: 0, signal: null });
  const lines = jsonLines(server.output());
  t.match(lines[0], { level: 30, msg: /^infra-server \S+: settings / });
  t.ok(
    lines.some((l) => l.component === 'setup' && typeof l.key === 'string'),
    'the first start names its key files',
  );
  t.match(lines.at(-1), { level: 30, msg: 'stopping', signal: 'SIGTERM' });
});

t.test('a start that fails logs why at error before the process exits 1', async (t) => {
  const { dir, port: apiPort } = await occupiedPort(t);
  const settingsFile = join(dir, 'push-jobs-server.rb');
  await writeFile(
    settingsFile,
    settingsText({
      api_listen_address: '127.0.0.1',
      api_port: apiPort,
      ...(await pushPorts()),
      data_dir: join(dir, 'data'),
      log_format: 'json',
    }),
  );
  const r = await runBin('infra-server', ['-c', settingsFile], { cwd: dir });
  t.equal(r.code, 1);
  t.equal(r.stderr, '');
  t.match(jsonLines(r.stdout).at(-1), { level: 50, msg: 'could not start', error: /EADDRINUSE/ });
});
