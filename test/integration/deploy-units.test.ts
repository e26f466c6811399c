// The systemd units under deploy/ (docs/install.md): each starts an executable of the package with flags that
// executable accepts, the sample settings beside them load and agree with the units' folders, and where systemd's
// tools are installed, `systemd-analyze verify` finds nothing to say of the units and `systemd-sysusers` takes
// their users. Runs the built executables and systemd's tools as child processes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import t from 'tap';
import { DEFAULT_CLIENT_CONFIG_FILE, loadClientConfig } from '../../src/config/client-config.js';
import { loadServerConfig, SERVER_CONFIG_FILE_NAME } from '../../src/config/server-config.js';
import { distBin, REPO_ROOT, runBin, type BinName } from '../support/process-run.js';

const DEPLOY = join(REPO_ROOT, 'deploy');
const UNITS = ['infra-server', 'push-jobs-client'] as const;
const BINS = Object.keys(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).bin as object);

/** A unit file's settings as section -> key -> values (a key may be given more than once). */
type Unit = Map<string, Map<string, string[]>>;

function parseUnit(text: string): Unit {
  const unit: Unit = new Map();
  let section: Map<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = new Map();
      unit.set(header[1] ?? '', section);
      continue;
    }
    const eq = line.indexOf('=');
    if (section === undefined || eq < 0) throw new Error(`not a unit line: ${line}`);
    const key = line.slice(0, eq).trim();
    section.set(key, [...(section.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return unit;
}

function one(unit: Unit, section: string, key: string): string {
  const values = unit.get(section)?.get(key) ?? [];
  if (values.length !== 1) throw new Error(`[${section}] ${key} is given ${values.length} times`);
  return values[0] ?? '';
}

function readUnit(name: string): { text: string; unit: Unit; command: BinName; args: string[] } {
  const text = readFileSync(join(DEPLOY, `${name}.service`), 'utf8');
  const unit = parseUnit(text);
  const execStart = one(unit, 'Service', 'ExecStart');
  if (/["'\\$%]/.test(execStart)) throw new Error(`ExecStart is to stay plain words: ${execStart}`);
  const [command = '', ...args] = execStart.split(/\s+/);
  return { text, unit, command: command as BinName, args };
}

/** The value after `flag` (short or long) in `args`. */
function flagValue(args: readonly string[], ...flags: string[]): string | undefined {
  const i = args.findIndex((a) => flags.includes(a));
  return i < 0 ? undefined : args[i + 1];
}

/** Whether `command` runs here; its --version exits 0. */
function installed(command: string): boolean {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
}

for (const name of UNITS) {
  t.test(`${name}.service starts the ${name} executable with flags it accepts`, async (t) => {
    const { command, args } = readUnit(name);
    t.equal(command, name, 'ExecStart names the executable, found on the search path where npm install -g puts it');
    t.ok(BINS.includes(command), `${command} is an executable of package.json`);
    const help = await runBin(command, ['--help']);
    const options = new Set([...help.stdout.matchAll(/^\s+(-\w), (--[\w-]+)/gm)].flatMap((m) => [m[1], m[2]]));
    for (const flag of args.filter((a) => a.startsWith('-')))
      t.ok(options.has(flag), `${command} --help lists ${flag}`);
    const parsed = await runBin(command, [...args, '--help']);
    t.equal(parsed.code, 0, `${command} ${args.join(' ')} --help parses`, { stderr: parsed.stderr });
    t.match(parsed.stdout, /^Usage: /);
  });
}

t.test(
  'infra-server.service: settings in /etc/infra-server, data in its state folder, files for many nodes',
  async (t) => {
    const { unit, args } = readUnit('infra-server');
    const config = flagValue(args, '-c', '--config') ?? '';
    t.equal(config, `/etc/infra-server/${SERVER_CONFIG_FILE_NAME}`);
    const sample = loadServerConfig({ file: join(DEPLOY, basename(config)) }).config;
    const state = `/var/lib/${one(unit, 'Service', 'StateDirectory')}`;
    t.equal(sample.data_dir, state, 'the sample settings keep data_dir in the folder the service may write');
    t.equal(one(unit, 'Service', 'User'), 'infra-server');
    // Two open files per node and a tenth of the limit kept for them: 65536 serves some 29,000 nodes.
    t.ok(
      Number(one(unit, 'Service', 'LimitNOFILE')) >= 65536,
      'LimitNOFILE leaves room for tens of thousands of nodes',
    );
    t.equal(one(unit, 'Service', 'ProtectSystem'), 'strict');
  },
);

t.test(
  'push-jobs-client.service: client.rb where the client looks, its key and records in its state folder',
  async (t) => {
    const { unit, args } = readUnit('push-jobs-client');
    const config = flagValue(args, '-c', '--config') ?? '';
    t.equal(config, DEFAULT_CLIENT_CONFIG_FILE, 'the same client.rb the client reads when started by hand');
    const warnings: string[] = [];
    const sample = loadClientConfig(join(DEPLOY, basename(config)), warnings);
    t.strictSame(warnings, [], 'the sample client.rb has no setting the client skips');
    const state = `/var/lib/${one(unit, 'Service', 'StateDirectory')}`;
    t.equal(dirname(flagValue(args, '-k', '--client-key') ?? ''), state, 'the key written at first start is kept');
    t.equal(dirname(sample.file_dir), state, 'file_dir outlives a restart, unlike the private /tmp');
    t.equal(sample.validation_key, '/etc/infra/validation.pem');
    t.equal(one(unit, 'Service', 'User'), 'push-jobs-client');
  },
);

t.test(
  'systemd-analyze verify finds nothing to say of the units',
  {
    skip: installed('systemd-analyze')
      ? false
      : 'systemd-analyze is not installed here (Debian: apt-get install systemd)',
  },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'deploy-units-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    for (const name of UNITS) {
      const { text, command } = readUnit(name);
      // verify checks that the executable exists: here it is the build, run by this Node.
      const file = join(dir, `${name}.service`);
      writeFileSync(file, text.replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath} ${distBin(command)}`));
      const run = spawnSync('systemd-analyze', ['verify', '--man=no', file], { encoding: 'utf8', timeout: 30_000 });
      const said = `${run.stdout}${run.stderr}`
        .split('\n')
        .filter((line) => line.includes(`${name}.service`))
        .join('\n');
      t.equal(run.status, 0, `systemd-analyze verify ${name}.service exits 0`, { said });
      // Unknown keys and bad values are only warnings: verify still exits 0.
      t.equal(said, '', `systemd-analyze verify has no warning for ${name}.service`);
    }
  },
);

t.test(
  'systemd-sysusers takes the units’ users',
  {
    skip: installed('systemd-sysusers')
      ? false
      : 'systemd-sysusers is not installed here (Debian: apt-get install systemd)',
  },
  async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'deploy-sysusers-'));
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    mkdirSync(join(root, 'etc'));
    for (const name of UNITS) {
      const file = join(DEPLOY, 'sysusers.d', `${name}.conf`);
      const user = one(readUnit(name).unit, 'Service', 'User');
      t.match(readFileSync(file, 'utf8'), new RegExp(`^u ${user} `, 'm'), `sysusers.d/${name}.conf makes ${user}`);
      // --dry-run under a root of its own: it says what it would write, and writes nothing.
      const run = spawnSync('systemd-sysusers', [`--root=${root}`, '--dry-run', file], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      t.equal(run.status, 0, `systemd-sysusers takes ${name}.conf`, { stderr: run.stderr });
      t.match(run.stderr + run.stdout, new RegExp(`Creating user '${user}'`), `it would create ${user}`);
    }
  },
);
