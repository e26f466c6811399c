// infra-server with metrics_port in push-jobs-server.rb: the listener an operator points Prometheus at, and a
// start that cannot take that port failing with a line that says so.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { scrape, valueOf } from '../support/metrics.js';
import { runBin } from '../support/process-run.js';
import { freePort, occupiedPort, serverPorts, settingsText, startServerProcess } from '../support/server-process.js';

t.test('metrics_port in push-jobs-server.rb starts the metrics listener and the log says where', async (t) => {
  const port = await freePort();
  const server = await startServerProcess(t, { settings: { metrics_port: port } });
  const url = `http://127.0.0.1:${port}/metrics`;
  t.match(server.output(), `INFO metrics listening on ${url}`);
  const m = await scrape(url);
  t.equal(m.status, 200);
  t.equal(valueOf(m, 'infra_nodes', { org: 'default', status: 'up', availability: 'available' }), 0);
  t.ok(valueOf(m, 'process_resident_memory_bytes')! > 0, 'process memory is exported');
  t.equal(
    (await fetch(`${server.url}/metrics`)).status,
    400,
    'the API port refuses an unsigned GET /metrics like any other path',
  );
  t.strictSame(await server.stop(), { code: 0, signal: null });
});

t.test('a metrics_port already taken stops the start with a line naming it', async (t) => {
  const { dir, port: metricsPort } = await occupiedPort(t);
  const settingsFile = join(dir, 'push-jobs-server.rb');
  await writeFile(
    settingsFile,
    settingsText({
      api_listen_address: '127.0.0.1',
      ...(await serverPorts()),
      metrics_port: metricsPort,
      data_dir: join(dir, 'data'),
    }),
  );
  const r = await runBin('infra-server', ['-c', settingsFile], { cwd: dir });
  t.equal(r.code, 1);
  t.match(r.stdout, `cannot listen for metrics on 127.0.0.1:${metricsPort}`);
  t.match(r.stdout, /EADDRINUSE/);
});
