// push-jobs-client's command line (spec 4.5) and how it overrides client.rb.
import { join } from 'node:path';
import t from 'tap';
import { clientConfigSchema } from '../../src/config/client-config.js';
import { parseClientArgs, resolveSettings, SettingsError, type ClientArgs } from '../../src/client/options.js';

function args(argv: string[]): ClientArgs {
  const parsed = parseClientArgs(argv);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.args;
}

function refusal(argv: string[]): string {
  const parsed = parseClientArgs(argv);
  if (parsed.ok) throw new Error(`expected ${argv.join(' ')} to be refused`);
  return parsed.message;
}

const config = (settings: Record<string, unknown>) => clientConfigSchema.parse(settings);

t.test('every option of spec 4.5 has its short and long form', async (t) => {
  const long = args([
    '--config',
    'c.rb',
    '--client-key',
    'k.pem',
    '--log_level',
    'debug',
    '--logfile',
    'x.log',
    '--node-name',
    'web1',
    '--server',
    'https://infra.example.com/organizations/acme',
  ]);
  const short = args([
    '-c',
    'c.rb',
    '-k',
    'k.pem',
    '-l',
    'debug',
    '-L',
    'x.log',
    '-N',
    'web1',
    '-S',
    'https://infra.example.com/organizations/acme',
  ]);
  const expected = {
    help: false,
    version: false,
    config: 'c.rb',
    clientKey: 'k.pem',
    logLevel: 'debug',
    logfile: 'x.log',
    nodeName: 'web1',
    server: 'https://infra.example.com/organizations/acme',
  };
  t.strictSame(long, expected);
  t.strictSame(short, expected);
  t.strictSame(args(['-h']), { help: true, version: false });
  t.strictSame(args(['--version']), { help: false, version: true });
  t.strictSame(args([]), { help: false, version: false });
});

t.test('bad values are refused with the option named', async (t) => {
  t.match(refusal(['-l', 'loud']), "-l: unknown log level 'loud'");
  t.match(
    refusal(['-S', 'https://infra.example.com/acme']),
    "-S: 'https://infra.example.com/acme' is not an http(s) URL ending in /organizations/ORG",
  );
  t.match(refusal(['-N', 'web 1']), "-N: 'web 1' is not a name");
  t.match(refusal(['--frobnicate']), "Unknown option '--frobnicate'");
  t.match(refusal(['-c']), "Option '-c, --config <value>' argument missing");
  t.match(refusal(['extra']), 'extra');
  t.match(refusal(['-k', '']), '--client-key needs a value');
});

t.test('the command line overrides client.rb; client.rb paths are taken from its folder', async (t) => {
  const file = join('/etc/infra', 'client.rb');
  const fromFile = config({
    server_url: 'https://infra.example.com/organizations/acme',
    node_name: 'from-file',
    client_key: 'keys/client.pem',
    validation_key: 'validation.pem',
    log_level: 'warn',
    log_location: 'logs/push.log',
    file_dir: 'files',
    whitelist: { uptime: 'uptime' },
  });
  const plain = resolveSettings(args([]), fromFile, file, '/home/me');
  t.strictSame(plain, {
    servers: ['https://infra.example.com'],
    org: 'acme',
    nodeName: 'from-file',
    clientKey: '/etc/infra/keys/client.pem',
    validationClientName: 'acme-validator',
    validationKey: '/etc/infra/validation.pem',
    whitelist: { uptime: 'uptime' },
    logLevel: 'warn',
    log: { file: '/etc/infra/logs/push.log' },
    fileDir: '/etc/infra/files',
    allowUnencrypted: false,
  });
  const overridden = resolveSettings(
    args([
      '-S',
      'http://10.0.0.1:8080/infra/organizations/dev',
      '-N',
      'web2',
      '-k',
      'my.pem',
      '-l',
      'debug',
      '-L',
      'out.log',
    ]),
    fromFile,
    file,
    '/home/me',
  );
  t.match(overridden, {
    servers: ['http://10.0.0.1:8080/infra'],
    org: 'dev',
    nodeName: 'web2',
    clientKey: '/home/me/my.pem',
    validationClientName: 'dev-validator',
    logLevel: 'debug',
    log: { file: '/home/me/out.log' },
  });
});

t.test('validation_client_name and STDOUT/STDERR come from client.rb', async (t) => {
  const base = { server_url: 'https://h/organizations/acme' };
  t.equal(
    resolveSettings(args([]), config({ ...base, validation_client_name: 'acme-bootstrap' }), null, '/')
      .validationClientName,
    'acme-bootstrap',
  );
  t.strictSame(resolveSettings(args([]), config(base), null, '/').log, { stream: 'stdout' });
  t.strictSame(resolveSettings(args([]), config({ ...base, log_location: { constant: 'STDERR' } }), null, '/').log, {
    stream: 'stderr',
  });
});

t.test('without a server URL in client.rb or -S the client cannot run', async (t) => {
  t.throws(
    () => resolveSettings(args([]), config({}), '/etc/infra/client.rb', '/'),
    new SettingsError('no server: set chef_server_url in /etc/infra/client.rb or pass -S URL'),
  );
  t.equal(resolveSettings(args(['-S', 'https://h/organizations/acme']), config({}), null, '/').org, 'acme');
});

t.test('server_url may list the members of a cluster; -S names one server and replaces them', async (t) => {
  const listed = config({
    server_url: [
      'http://infra-a:10003/organizations/acme',
      'https://infra-b.example.com/push/organizations/acme',
      'http://infra-a:10003/organizations/acme/',
    ],
  });
  const settings = resolveSettings(args([]), listed, null, '/');
  t.strictSame(settings.servers, ['http://infra-a:10003', 'https://infra-b.example.com/push'], 'in order, each once');
  t.equal(settings.org, 'acme');
  t.equal(settings.validationClientName, 'acme-validator');
  t.strictSame(resolveSettings(args(['-S', 'http://infra-c:10003/organizations/acme']), listed, null, '/').servers, [
    'http://infra-c:10003',
  ]);
});
