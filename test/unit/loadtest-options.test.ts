// infra-loadtest's command line: what it makes of good options, and refusals that name the option at fault.
import t from 'tap';
import { parseLoadOptions, type LoadOptions } from '../../src/loadtest/options.js';

function options(argv: string[]): LoadOptions {
  const parsed = parseLoadOptions(argv);
  if (parsed.kind !== 'run') throw new Error(`expected ${argv.join(' ')} to run, got ${JSON.stringify(parsed)}`);
  return parsed.options;
}

function refusal(argv: string[]): string {
  const parsed = parseLoadOptions(argv);
  if (parsed.kind !== 'usage') throw new Error(`expected ${argv.join(' ')} to be refused, got ${parsed.kind}`);
  return parsed.message;
}

t.test('a spawned run with its defaults', async (t) => {
  const o = options(['--spawn', '--nodes', '50']);
  t.same(o.server, { kind: 'spawn', redis: null, heartbeatIntervalMs: null });
  t.equal(o.nodes, 50);
  t.equal(o.jobNodes, 50, 'a job takes every node unless told');
  t.same(o.quorum, { kind: 'percent', value: 100 });
  t.equal(o.jobs, 1);
  t.equal(o.prefix, 'lt-');
  t.equal(o.user, 'admin');
  t.equal(o.org, 'default');
  t.ok(o.workers >= 1 && o.workers <= 50);
  t.equal(o.json, false);
});

t.test('shares, quorum and the organization from the server URL', async (t) => {
  const o = options([
    '--server',
    'http://127.0.0.1:9000/organizations/acme',
    '--key',
    'admin.pem',
    '--nodes',
    '100',
    '--job-nodes',
    '20',
    '--concurrency',
    '5',
    '--quorum',
    '15',
    '--nack',
    '10%',
    '--silent',
    '2.5',
    '--flap',
    '0%',
    '--json',
  ]);
  t.same(o.server, { kind: 'url', baseUrl: 'http://127.0.0.1:9000' });
  t.equal(o.org, 'acme');
  t.same(o.quorum, { kind: 'count', value: 15 });
  t.equal(o.behaviour.nack, 0.1);
  t.equal(o.behaviour.silent, 0.025);
  t.equal(o.concurrency, 5);
  t.equal(o.json, true);
});

t.test('--heartbeat-only runs no job', async (t) => {
  const o = options(['--spawn', '--nodes', '10', '--heartbeat-only', '--seconds', '5']);
  t.equal(o.jobs, 0);
  t.equal(o.seconds, 5);
  t.match(refusal(['--spawn', '--nodes', '10', '--heartbeat-only', '--jobs', '3']), /--heartbeat-only/);
});

t.test('--record names the file of the nodes’ own records; none by default', async (t) => {
  t.equal(options(['--spawn', '--nodes', '10', '--record', 'nodes.jsonl']).record, 'nodes.jsonl');
  t.equal(options(['--spawn', '--nodes', '10']).record, null);
});

t.test('--waves, --max-failures and --pause make the rollout of each job; none by default', async (t) => {
  t.equal(options(['--spawn', '--nodes', '10']).rollout, null);
  const o = options(['--spawn', '--nodes', '30', '--waves', '1,10%,100%', '--max-failures', '5%', '--pause', '2']);
  t.same(o.rollout, { waves: [1, '10%', '100%'], max_failures: '5%', pause: 2 });
  t.same(options(['--spawn', '--nodes', '30', '--waves', '10%']).rollout, { waves: ['10%'] });
  t.same(options(['--spawn', '--nodes', '30', '--waves', '3', '--quorum', '3']).quorum, { kind: 'count', value: 3 });
});

t.test('each wrong value is refused naming its option', async (t) => {
  const base = ['--spawn', '--nodes', '10'];
  const cases: Array<[string[], RegExp]> = [
    [['--spawn'], /--nodes is required/],
    [['--spawn', '--nodes', 'ten'], /^--nodes: expected a whole number .*got 'ten'/],
    [['--spawn', '--nodes', '0'], /^--nodes: expected a whole number from 1/],
    [[...base, '--nack', '150%'], /^--nack: expected a percentage from 0% to 100%, got '150%'/],
    [[...base, '--silent', 'some'], /^--silent: expected a percentage/],
    [[...base, '--quorum', 'most'], /^--quorum: expected a count .* or a percentage/],
    [[...base, '--quorum', '120%'], /^--quorum: a percentage is at most 100%/],
    [[...base, '--quorum', '11'], /^--quorum: 11 is more than the 10 job nodes/],
    [[...base, '--job-nodes', '11'], /^--job-nodes: 11 is more than the 10 nodes/],
    [[...base, '--job-nodes', '4', '--concurrency', '3'], /^--concurrency: 3 jobs of 4 nodes need 12 nodes/],
    [[...base, '--nack', '60%', '--silent', '50%'], /--nack and --silent together exceed 100%/],
    [[...base, '--fail', '60%', '--crash-while-running', '50%'], /--crash-while-running and --fail/],
    [[...base, '--prefix', 'a b'], /^--prefix: expected up to 64 letters/],
    [[...base, '--redis', 'http://x'], /^--redis: expected a redis:\/\/ or rediss:\/\/ URL/],
    [[...base, '--slow-vote=-5'], /^--slow-vote: expected a whole number/],
    [[...base, '--bogus'], /bogus/],
    [[...base, 'extra'], /unexpected argument 'extra'/],
    [['--nodes', '10'], /either --server URL or --spawn/],
    [['--spawn', '--server', 'http://h:1', '--nodes', '10'], /either --server URL or --spawn/],
    [['--server', 'http://h:1', '--nodes', '10'], /--server needs --key/],
    [['--server', 'ftp://h', '--key', 'k', '--nodes', '10'], /^--server: expected http\(s\)/],
    [['--server', 'http://h:1', '--key', 'k', '--nodes', '10', '--processes', '2'], /--processes goes with --spawn/],
    [['--spawn', '--nodes', '10', '--processes', '3'], /--processes goes with --spawn and --redis/],
    [[...base, '--processes', '0'], /^--processes: expected a whole number from 1 to 32/],
    [
      ['--server', 'http://h:1', '--key', 'k', '--nodes', '10', '--heartbeat-interval', '200'],
      /--heartbeat-interval goes/,
    ],
    [[...base, '--heartbeat-interval', '5'], /^--heartbeat-interval: expected a whole number from 10/],
    [[...base, '--waves', '0'], /^--waves: '0' is not a node count or a percentage/],
    [[...base, '--waves', '5,5,5'], /^--waves: 3 waves need more nodes than the 10 job nodes/],
    [[...base, '--waves', '4', '--quorum', '3'], /^--quorum: 3 is more than the 2 nodes of the smallest wave/],
    [[...base, '--waves', '2', '--max-failures', 'some'], /^--max-failures: 'some' is not/],
    [[...base, '--waves', '2', '--pause', '1.5'], /^--pause: '1.5' is not a whole number of seconds/],
    [[...base, '--pause', '3'], /--max-failures and --pause apply to a rollout: give its --waves too/],
  ];
  for (const [argv, expected] of cases) t.match(refusal(argv), expected, argv.join(' '));
});

t.test('--redis with --server names the Redis read for commandstats; --processes spawns a cluster on it', async (t) => {
  const given = options(['--server', 'http://h:1', '--key', 'k', '--nodes', '10', '--redis', 'redis://r:6379']);
  t.same(given.server, { kind: 'url', baseUrl: 'http://h:1' });
  t.equal(given.redis, 'redis://r:6379');
  t.equal(given.processes, 1);
  const cluster = options(['--spawn', '--redis', 'redis://r:6379/3', '--processes', '3', '--nodes', '10']);
  t.same(cluster.server, { kind: 'spawn', redis: 'redis://r:6379/3', heartbeatIntervalMs: null });
  t.equal(cluster.redis, 'redis://r:6379/3');
  t.equal(cluster.processes, 3);
  t.equal(options(['--spawn', '--nodes', '10']).redis, null);
});

t.test('--help shows every option', async (t) => {
  const parsed = parseLoadOptions(['--help']);
  t.equal(parsed.kind, 'help');
  if (parsed.kind !== 'help') return;
  for (const name of [
    '--nodes',
    '--spawn',
    '--quorum',
    '--waves',
    '--crash-while-running',
    '--late-heartbeats',
    '--cleanup',
  ])
    t.match(parsed.text, name);
});
