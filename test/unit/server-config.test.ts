// push-jobs-server.rb: defaults, every setting, discovery, REDIS_URL, and the errors an operator sees.
import { readFileSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { configErrorOf } from '../support/config-error.js';
import { loadServerConfig, SERVER_SETTINGS_DOC, serverConfigSchema } from '../../src/config/server-config.js';

/** Loads `text` as ./push-jobs-server.rb in a fresh folder. */
function loadText(t: Test, text: string, env: NodeJS.ProcessEnv = {}) {
  const cwd = t.testdir({ 'push-jobs-server.rb': text });
  return { cwd, ...loadServerConfig({ cwd, env }) };
}
const errorText = (t: Test, text: string): string => {
  const cwd = t.testdir({ 'push-jobs-server.rb': text });
  return configErrorOf(() => loadServerConfig({ cwd, env: {} })).message.replace(`${cwd}/`, '');
};

t.test('without a file every setting has its default', async (t) => {
  const cwd = t.testdir({});
  const { config, file } = loadServerConfig({ cwd, env: {} });
  t.equal(file, null);
  t.strictSame(config, {
    command_port: 10002,
    heartbeat_interval: 1000,
    server_heartbeat_port: 10000,
    server_name: hostname(),
    queue_listen_address: 'tcp://*',
    api_port: 10003,
    api_listen_address: '0.0.0.0',
    metrics_listen_address: '127.0.0.1',
    data_dir: join(cwd, '.infra-data'),
    default_orgname: 'default',
    auth_skew: 900,
    signature_threads: Math.min(4, Math.max(1, availableParallelism() - 1)),
    voting_timeout: 60,
    max_body_size: 65536,
    max_message_skew: 300,
    offline_threshold: 3,
    online_threshold: 2,
    curve_encryption: true,
    session_key_lifetime: 3600,
    store_timeout: 2,
    processes: 1,
    lease_ttl: 5,
    job_retention_days: 30,
    schedule_catchup: 300,
    keep_alive_time: 15,
    org_feed_expiration: 60,
    max_json_depth: 100,
    max_name_length: 255,
    max_job_nodes: 100_000,
    max_command_length: 255,
    idle_timeout: 60,
    header_timeout: 20,
    request_timeout: 60,
    handshake_timeout: 5,
    max_event_streams: 100,
    max_connections_per_address: 1000,
    ui_session_timeout: 3600,
    log_level: 'info',
    log_format: 'text',
  });
});

t.test('every setting is read from push-jobs-server.rb in the working folder', async (t) => {
  const { cwd, config, file } = loadText(
    t,
    [
      '# push jobs server',
      'command_port 20002',
      'heartbeat_interval 5_000',
      'server_heartbeat_port 20000',
      'server_name "push.example.com"',
      "queue_listen_address 'tcp://10.0.0.5'",
      'api_port(20003)',
      'api_listen_address "127.0.0.1"',
      'metrics_port 9464',
      'metrics_listen_address "10.0.0.5"',
      'data_dir "/var/opt/infra"',
      'redis_url "redis://cache:6380/2"',
      'default_orgname "acme_ops-1"',
      'auth_skew 60',
      'signature_threads 0',
      'voting_timeout 30',
      'max_body_size 131_072',
      'max_message_skew 120',
      'offline_threshold 5',
      'online_threshold 1',
      'curve_encryption false',
      'session_key_lifetime 7200',
      'store_timeout 0.5',
      'job_retention_days 7',
      'schedule_catchup 60',
      'keep_alive_time 5',
      'org_feed_expiration 120',
      'max_json_depth 20',
      'max_name_length 64',
      'max_job_nodes 5000',
      'max_command_length 100',
      'idle_timeout 30',
      'header_timeout 5',
      'request_timeout 30',
      'handshake_timeout 2',
      'max_event_streams 10',
      'max_connections_per_address 50',
      'node_connection_reserve 500',
      'ui_session_timeout 900',
      'log_level :debug',
      'log_format :json',
    ].join('\n'),
  );
  t.equal(file, join(cwd, 'push-jobs-server.rb'));
  t.strictSame(config, {
    command_port: 20002,
    heartbeat_interval: 5000,
    server_heartbeat_port: 20000,
    server_name: 'push.example.com',
    queue_listen_address: 'tcp://10.0.0.5',
    api_port: 20003,
    api_listen_address: '127.0.0.1',
    metrics_port: 9464,
    metrics_listen_address: '10.0.0.5',
    data_dir: '/var/opt/infra',
    redis_url: 'redis://cache:6380/2',
    default_orgname: 'acme_ops-1',
    auth_skew: 60,
    signature_threads: 0,
    voting_timeout: 30,
    max_body_size: 131072,
    max_message_skew: 120,
    offline_threshold: 5,
    online_threshold: 1,
    curve_encryption: false,
    session_key_lifetime: 7200,
    store_timeout: 0.5,
    processes: 1,
    lease_ttl: 5,
    job_retention_days: 7,
    schedule_catchup: 60,
    keep_alive_time: 5,
    org_feed_expiration: 120,
    max_json_depth: 20,
    max_name_length: 64,
    max_job_nodes: 5000,
    max_command_length: 100,
    idle_timeout: 30,
    header_timeout: 5,
    request_timeout: 30,
    handshake_timeout: 2,
    max_event_streams: 10,
    max_connections_per_address: 50,
    node_connection_reserve: 500,
    ui_session_timeout: 900,
    log_level: 'debug',
    log_format: 'json',
  });
});

t.test('log_format is :text or :json, written as a symbol or a string like log_level', async (t) => {
  t.equal(loadText(t, 'log_format :text').config.log_format, 'text');
  t.equal(loadText(t, 'log_format "json"').config.log_format, 'json');
  t.equal(loadText(t, "log_format 'text'").config.log_format, 'text');
  t.equal(loadText(t, 'log_level "warn"\nlog_format :json').config.log_level, 'warn');
});

t.test('-c names the file, relative to the working folder, and it must exist', async (t) => {
  const cwd = t.testdir({ etc: { 'push.rb': 'api_port 8443' }, 'push-jobs-server.rb': 'api_port 1' });
  const { config, file } = loadServerConfig({ file: 'etc/push.rb', cwd, env: {} });
  t.equal(file, join(cwd, 'etc', 'push.rb'));
  t.equal(config.api_port, 8443);
  const err = configErrorOf(() => loadServerConfig({ file: 'missing.rb', cwd, env: {} }));
  t.equal(err.message, `${join(cwd, 'missing.rb')}: no such file`);
  t.equal(err.file, join(cwd, 'missing.rb'));
});

t.test('a relative data_dir is taken from the working folder', async (t) => {
  const { cwd, config } = loadText(t, 'data_dir "state/infra"');
  t.equal(config.data_dir, join(cwd, 'state', 'infra'));
});

t.test('listen addresses accept host names, IPv4 and IPv6', async (t) => {
  t.equal(loadText(t, 'queue_listen_address "tcp://[::1]"').config.queue_listen_address, 'tcp://[::1]');
  t.equal(loadText(t, 'queue_listen_address "tcp://push-1.local"').config.queue_listen_address, 'tcp://push-1.local');
  t.equal(loadText(t, 'api_listen_address "::"').config.api_listen_address, '::');
  t.equal(loadText(t, 'api_listen_address "localhost"').config.api_listen_address, 'localhost');
});

t.test('REDIS_URL applies only when the file does not set redis_url', async (t) => {
  t.equal(loadText(t, '', { REDIS_URL: 'redis://env:6379' }).config.redis_url, 'redis://env:6379');
  const tls = 'rediss://user:pw@env:6380/1';
  t.equal(loadText(t, '', { REDIS_URL: tls }).config.redis_url, tls);
  t.equal(
    loadText(t, 'redis_url "redis://file:6379"', { REDIS_URL: 'redis://env:6379' }).config.redis_url,
    'redis://file:6379',
  );
  t.equal(loadText(t, '', { REDIS_URL: '' }).config.redis_url, undefined);
  t.equal(loadServerConfig({ cwd: t.testdir({}), env: { REDIS_URL: 'redis://env' } }).config.redis_url, 'redis://env');
  const err = configErrorOf(() => loadText(t, '', { REDIS_URL: 'http://env:6379' }));
  t.equal(err.message, 'environment variable REDIS_URL: expected a redis:// or rediss:// URL, got "http://env:6379"');
  t.equal(err.setting, 'redis_url');
});

t.test('wrong values name the file, line, setting and what was expected', async (t) => {
  const port = 'expected a port number from 1 to 65535';
  t.equal(errorText(t, '\ncommand_port 70000'), `push-jobs-server.rb:2: command_port: ${port}, got 70000`);
  t.equal(errorText(t, 'api_port 0'), `push-jobs-server.rb:1: api_port: ${port}, got 0`);
  t.equal(
    errorText(t, 'server_heartbeat_port "10000"'),
    `push-jobs-server.rb:1: server_heartbeat_port: ${port}, got "10000"`,
  );
  t.equal(
    errorText(t, 'heartbeat_interval 5'),
    'push-jobs-server.rb:1: heartbeat_interval: expected a whole number of milliseconds, at least 10, got 5',
  );
  t.equal(
    errorText(t, 'voting_timeout 0'),
    'push-jobs-server.rb:1: voting_timeout: expected a whole number of seconds greater than 0, got 0',
  );
  t.equal(
    errorText(t, 'auth_skew 1.5'),
    'push-jobs-server.rb:1: auth_skew: expected a whole number of seconds greater than 0, got 1.5',
  );
  t.equal(
    errorText(t, 'queue_listen_address "tcp://*:10000"'),
    'push-jobs-server.rb:1: queue_listen_address: expected an address like tcp://HOST, got "tcp://*:10000"',
  );
  t.equal(
    errorText(t, 'redis_url "http://localhost:6379"'),
    'push-jobs-server.rb:1: redis_url: expected a redis:// or rediss:// URL, or redis+sentinel://HOST:PORT[,HOST:PORT]/MASTER_NAME, got "http://localhost:6379"',
  );
  t.equal(
    errorText(t, 'default_orgname "Acme"'),
    'push-jobs-server.rb:1: default_orgname: expected an organization name: 1 to 255 of a-z 0-9 _ -, ' +
      'starting with a letter or digit, got "Acme"',
  );
  t.equal(
    errorText(t, 'curve_encryption "yes"'),
    'push-jobs-server.rb:1: curve_encryption: expected true or false, got "yes"',
  );
  t.equal(
    errorText(t, 'log_level :verbose'),
    'push-jobs-server.rb:1: log_level: expected one of :debug, :info, :warn, :error, got "verbose"',
  );
  t.equal(
    errorText(t, 'log_level :info\nlog_format :yaml'),
    'push-jobs-server.rb:2: log_format: expected one of :text, :json, got "yaml"',
  );
  t.equal(errorText(t, 'log_format true'), 'push-jobs-server.rb:1: log_format: expected one of :text, :json, got true');
  t.equal(
    errorText(t, 'server_name "bad name"'),
    'push-jobs-server.rb:1: server_name: expected a host name or IP address, got "bad name"',
  );
});

t.test('the server file is strict: unknown and repeated settings are errors', async (t) => {
  t.equal(errorText(t, 'api_port 1\ncomand_port 2'), 'push-jobs-server.rb:2: unknown setting comand_port');
  t.equal(errorText(t, 'api_port 1\napi_port 2'), 'push-jobs-server.rb:2: api_port is already set on line 1');
  t.equal(
    errorText(t, 'api_port 1\napi_port = 2'),
    'push-jobs-server.rb:2: "api_port =" assignment is not supported; write: api_port VALUE',
  );
});

t.test('processes above 1 needs redis_url, and a Sentinel URL is one', async (t) => {
  t.equal(
    errorText(t, 'api_port 10003\nprocesses 4'),
    'push-jobs-server.rb:2: processes 4 needs redis_url: the embedded file store serves one process',
  );
  t.equal(loadText(t, 'processes 4', { REDIS_URL: 'redis://127.0.0.1:6379' }).config.processes, 4);
  const sentinel = 'redis+sentinel://:pw@10.0.0.1:26379,10.0.0.2:26379/infra';
  t.equal(loadText(t, `redis_url "${sentinel}"`).config.redis_url, sentinel);
  t.equal(
    errorText(t, 'processes 0'),
    'push-jobs-server.rb:1: processes: expected a whole number of processes from 1 to 64, got 0',
  );
});

t.test('redis_min_replicas is unset unless given, and a bad value names file, line and setting', async (t) => {
  t.equal(loadText(t, '').config.redis_min_replicas, undefined, 'unset: the store picks 1 through Sentinel, else 0');
  t.equal(loadText(t, 'redis_min_replicas 2').config.redis_min_replicas, 2);
  t.equal(loadText(t, 'redis_min_replicas 0').config.redis_min_replicas, 0);
  t.equal(
    errorText(t, 'api_port 10003\nredis_min_replicas -1'),
    'push-jobs-server.rb:2: redis_min_replicas: expected a whole number of replicas from 0 to 16, got -1',
  );
  t.equal(
    errorText(t, 'redis_min_replicas 1.5'),
    'push-jobs-server.rb:1: redis_min_replicas: expected a whole number of replicas from 0 to 16, got 1.5',
  );
});

t.test('the README table documents every setting in schema order with its default', async (t) => {
  t.strictSame(
    SERVER_SETTINGS_DOC.map((d) => d.name),
    Object.keys(serverConfigSchema.shape),
  );
  const defaults: Record<string, unknown> = serverConfigSchema.parse({});
  for (const doc of SERVER_SETTINGS_DOC) {
    t.ok(doc.meaning.length > 0 && doc.meaning.length <= 80, `${doc.name} has a short meaning`);
    const machineDependent = [
      'server_name',
      'api_url',
      'redis_url',
      'redis_min_replicas',
      'metrics_port',
      'signature_threads',
      'node_connection_reserve',
    ];
    if (machineDependent.includes(doc.name)) continue;
    t.equal(doc.default, String(defaults[doc.name]), `${doc.name} default`);
  }
});

function plain(cell: string | undefined): string {
  return (cell ?? '').replaceAll('`', '').replaceAll('\\|', '|');
}

t.test('the settings table in README.md says what SERVER_SETTINGS_DOC says, row for row', async (t) => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const table = readme.slice(readme.indexOf('`push-jobs-server.rb` ('));
  const rows = [...table.matchAll(/^\| `(\w+)` +\| (.*?) +\| (.*?) +\|$/gm)]
    // The README sets names and commands in code type; the text is the same.
    .map(([, name, def, meaning]) => ({ name, default: plain(def), meaning: plain(meaning) }))
    .slice(0, SERVER_SETTINGS_DOC.length);
  t.strictSame(
    rows,
    SERVER_SETTINGS_DOC.map((d) => ({ ...d })),
  );
});

t.test('api_url names where nodes reach the API, a prefix allowed; anything else is refused', async (t) => {
  t.equal(loadText(t, '').config.api_url, undefined, 'unset: the server makes it from server_name and api_port');
  t.equal(loadText(t, 'api_url "https://push.example.com/infra"').config.api_url, 'https://push.example.com/infra');
  const expected = 'expected an http(s) URL such as https://push.example.com';
  for (const bad of ['push.example.com', 'ftp://push.example.com', 'https://push.example.com/?a=1'])
    t.equal(
      errorText(t, `api_url ${JSON.stringify(bad)}`),
      `push-jobs-server.rb:1: api_url: ${expected}, got ${JSON.stringify(bad)}`,
    );
});

t.test('metrics are off unless metrics_port is set; a bad metrics setting names file, line and setting', async (t) => {
  t.equal(loadText(t, '').config.metrics_port, undefined, 'no metrics_port: no metrics listener');
  t.equal(loadText(t, 'metrics_port 9464').config.metrics_listen_address, '127.0.0.1', 'loopback unless told');
  t.equal(loadText(t, 'metrics_listen_address "::"').config.metrics_listen_address, '::');
  const port = 'expected a port number from 1 to 65535';
  t.equal(errorText(t, 'api_port 10003\nmetrics_port 0'), `push-jobs-server.rb:2: metrics_port: ${port}, got 0`);
  t.equal(errorText(t, 'metrics_port 70000'), `push-jobs-server.rb:1: metrics_port: ${port}, got 70000`);
  t.equal(errorText(t, 'metrics_port "9464"'), `push-jobs-server.rb:1: metrics_port: ${port}, got "9464"`);
  t.equal(
    errorText(t, 'metrics_port 9464\n\nmetrics_listen_address "not a host"'),
    'push-jobs-server.rb:3: metrics_listen_address: expected a host name or IP address, got "not a host"',
  );
  const err = configErrorOf(() => loadText(t, 'metrics_port 9464.5'));
  t.equal(err.line, 1);
  t.equal(err.setting, 'metrics_port');
});

t.test('header_timeout cannot be longer than request_timeout, which covers the headers too', async (t) => {
  t.equal(
    errorText(t, 'request_timeout 10\nheader_timeout 30'),
    'push-jobs-server.rb:2: header_timeout 30 is longer than request_timeout 10',
  );
  t.equal(
    errorText(t, 'max_event_streams 0'),
    'push-jobs-server.rb:1: max_event_streams: expected a whole number of event streams greater than 0, got 0',
  );
});

t.test('max_command_length cannot pass what the wire carries', async (t) => {
  t.match(errorText(t, 'max_command_length 256'), /push-jobs-server\.rb:1: .*max_command_length.*from 1 to 255/);
});
