// The cli's command line: which command a line names, its options, argument counts, and the usage errors
// a user sees before anything is sent.
import t, { type Test } from 'tap';
import type { Cli } from '../../src/cli/cli-connection.js';
import { type CommandLine as ToolLine, parseCommandLine as parseFor } from '../../src/cli/command-line.js';
import { CLI, type CliConnection } from '../../src/cli/commands.js';

type CommandLine = ToolLine<Cli, CliConnection>;
const COMMANDS = CLI.commands;
const parseCommandLine = (argv: readonly string[]): CommandLine => parseFor(CLI, argv);

function ran(t: Test, line: CommandLine): Extract<CommandLine, { kind: 'run' }> {
  if (line.kind !== 'run') throw new Error(`expected a command to run, got ${JSON.stringify(line)}`);
  t.pass(`runs ${line.name}`);
  return line;
}

function usageOf(line: CommandLine): Extract<CommandLine, { kind: 'usage' }> {
  if (line.kind !== 'usage') throw new Error(`expected a usage error, got ${line.kind}`);
  return line;
}

t.test('every command of the brief is known by its words', async (t) => {
  t.same(Object.keys(COMMANDS).sort(), [
    'job abort',
    'job list',
    'job output',
    'job start',
    'job status',
    'job watch',
    'node status',
    'node whitelist list',
    'node whitelist remove',
    'node whitelist set',
    'schedule add',
    'schedule delete',
    'schedule list',
    'schedule pause',
    'schedule resume',
    'schedule show',
    'user create',
    'user delete',
    'user edit',
    'user list',
    'user show',
  ]);
});

t.test('a command is found by its words, options may come anywhere after it', async (t) => {
  const line = ran(
    t,
    parseCommandLine(['job', 'start', 'echo hi', 'n1', '--capture', '-q', '50%', 'n2', '-F', 'json']),
  );
  t.equal(line.name, 'job start');
  t.equal(line.format, 'json');
  t.same(line.connection, {});
});

t.test('connection options override config.rb and may also come before the command', async (t) => {
  const line = ran(
    t,
    parseCommandLine([
      '-c',
      'my.rb',
      '--server-url=http://h:1/organizations/o',
      'job',
      'list',
      '-u',
      'bob',
      '--key',
      'bob.pem',
    ]),
  );
  t.equal(line.name, 'job list');
  t.same(line.connection, { config: 'my.rb', serverUrl: 'http://h:1/organizations/o', user: 'bob', key: 'bob.pem' });
  t.equal(ran(t, parseCommandLine(['-Fjson', 'node', 'status'])).format, 'json');
});

t.test("spec 4.6's hyphenated spelling names the same command", async (t) => {
  t.equal(ran(t, parseCommandLine(['user-list'])).name, 'user list');
  t.equal(ran(t, parseCommandLine(['user-show', 'alice'])).name, 'user show');
});

t.test('three-word commands: node whitelist list|set|remove', async (t) => {
  t.equal(
    ran(t, parseCommandLine(['node', 'whitelist', 'set', 'web1', 'restart', 'systemctl restart app'])).name,
    'node whitelist set',
  );
  const missing = usageOf(parseCommandLine(['node', 'whitelist', 'set', 'web1', 'restart']));
  t.equal(missing.message, 'cli node whitelist set takes 3 arguments, got 2');
  t.match(missing.text, /^Usage: cli node whitelist set NODE NAME COMMAND/);
});

t.test('help: the whole list, a group, one command', async (t) => {
  for (const argv of [['--help'], ['help'], ['-h']]) {
    const line = parseCommandLine(argv);
    t.equal(line.kind, 'help', argv.join(' '));
    if (line.kind === 'help') t.match(line.text, /^Usage: cli COMMAND/);
  }
  const group = parseCommandLine(['job', '--help']);
  t.equal(group.kind, 'help');
  if (group.kind === 'help') t.match(group.text, /job start .*\n.*job status/s);
  const one = parseCommandLine(['job', 'start', '--help']);
  t.equal(one.kind, 'help');
  if (one.kind === 'help') {
    t.match(one.text, /^Usage: cli job start COMMAND \[NODE \.\.\.\]/);
    for (const option of [
      '--timeout SECONDS',
      '-q, --quorum N|N%',
      '--search QUERY',
      '--capture',
      '--env JSON',
      '--in-dir DIR',
      '--as-user USER',
      '--file FILE',
      '--nowait',
      '-F, --format FORMAT',
      '-c, --config FILE',
    ]) {
      t.ok(one.text.includes(option), option);
    }
  }
});

t.test('usage errors name what is wrong', async (t) => {
  const none = usageOf(parseCommandLine([]));
  t.equal(none.message, null);
  t.match(none.text, /^Usage: cli COMMAND/);
  t.equal(
    usageOf(parseCommandLine(['frobnicate'])).message,
    "unknown command 'frobnicate'; run cli --help for the list",
  );
  const group = usageOf(parseCommandLine(['job', 'frob']));
  t.equal(group.message, "unknown command 'job frob'");
  t.match(group.text, /^Usage: cli job SUBCOMMAND/);
  t.equal(usageOf(parseCommandLine(['job'])).message, null);
  t.match(usageOf(parseCommandLine(['job', 'list', '--bogus'])).message, /--bogus/);
  t.equal(usageOf(parseCommandLine(['job', 'start'])).message, 'cli job start takes at least 1 argument, got 0');
  t.equal(usageOf(parseCommandLine(['job', 'status'])).message, 'cli job status takes 1 argument, got 0');
  t.equal(
    usageOf(parseCommandLine(['job', 'list', '-F', 'yaml'])).message,
    "unknown format 'yaml': use one of summary, text, json",
  );
});

t.test('job start options are checked before anything is sent', async (t) => {
  const bad = (args: string[]) => usageOf(parseCommandLine(['job', 'start', 'uptime', 'n1', ...args])).message;
  t.equal(bad(['-q', 'half']), "-q/--quorum: 'half' is not a node count or a percentage from 1% to 100%");
  t.equal(bad(['--timeout', '0']), "--timeout: '0' is not a whole number of seconds greater than 0");
  t.equal(bad(['--env', '{"A": 1}']), `--env: the value of 'A' is not a string, such as {"NAME": "value"}`);
  t.match(bad(['--env', '{nope']), /^--env: not valid JSON \(/);
  t.equal(bad(['--poll-interval', 'soon']), "--poll-interval: 'soon' is not a number of seconds greater than 0");
  t.equal(parseCommandLine(['job', 'start', 'uptime', 'n1', '-q', '2', '--env', '{"A":"b"}']).kind, 'run');
});

t.test(
  'job output takes stdout or stderr; user create needs an email and a password; user edit needs a change',
  async (t) => {
    t.equal(
      usageOf(parseCommandLine(['job', 'output', 'j1', 'n1', '--channel', 'stdin'])).message,
      "--channel: 'stdin' is neither stdout nor stderr",
    );
    t.equal(parseCommandLine(['job', 'output', 'j1', 'n1', '--channel', 'stderr']).kind, 'run');
    t.equal(
      usageOf(parseCommandLine(['user', 'create', 'bob', '--password', 'secret1'])).message,
      'user create needs --email ADDRESS',
    );
    t.equal(
      usageOf(parseCommandLine(['user', 'create', 'bob', '--email', 'b@example.com'])).message,
      'user create needs --password PASSWORD',
    );
    t.match(usageOf(parseCommandLine(['user', 'edit', 'bob'])).message, /^nothing to change/);
    t.equal(parseCommandLine(['user', 'edit', 'bob', '--new-name', 'robert']).kind, 'run');
  },
);

t.test('the options every command takes may come before or after the command', async (t) => {
  const expected = { config: 'my.rb' };
  for (const argv of [
    ['-c', 'my.rb', 'job', 'list'],
    ['job', 'list', '-c', 'my.rb'],
    ['--config=my.rb', 'job', 'list'],
    ['-c', 'my.rb', 'user-list'],
  ]) {
    t.same(ran(t, parseCommandLine(argv)).connection, expected, argv.join(' '));
  }
  for (const argv of [
    ['--format', 'json', 'job', 'list'],
    ['job', 'list', '--format', 'json'],
    ['-F', 'json', '-c', 'my.rb', 'node', 'whitelist', 'list', 'web1'],
  ]) {
    t.equal(ran(t, parseCommandLine(argv)).format, 'json', argv.join(' '));
  }
  t.match(
    usageOf(parseCommandLine(['-c', 'my.rb', '--bogus', 'job', 'list'])).message,
    /^unknown option '--bogus'; run cli --help/,
    "a command's own options go after it",
  );
  t.match(usageOf(parseCommandLine(['--format'])).message, /--format/, 'a missing value is named');
});

t.test('--help at every level shows that level, whatever else the line holds', async (t) => {
  const helpOf = (argv: string[]): string => {
    const line = parseCommandLine(argv);
    if (line.kind !== 'help') throw new Error(`${argv.join(' ')}: expected help, got ${JSON.stringify(line)}`);
    return line.text;
  };
  const main = helpOf(['--help']);
  t.match(main, /^Usage: cli COMMAND \[ARGUMENTS\] \[OPTIONS\]\n/);
  t.match(main, /^ {2}node whitelist set +add NAME to a node's whitelist/m);
  t.match(main, /^Options, before or after the command:\n {2}-c, --config FILE +config\.rb to use/m);
  t.match(main, /^ {2}-F, --format FORMAT +output format/m);
  for (const argv of [['-h'], ['help'], ['-c', 'my.rb', '--help'], ['-c', 'my.rb', 'help']]) {
    t.equal(helpOf(argv), main, argv.join(' '));
  }

  const job = helpOf(['job', '--help']);
  t.match(job, /^Usage: cli job SUBCOMMAND \.\.\.\n\n {2}job list /);
  t.notMatch(job, /node status/);
  t.equal(helpOf(['--help', 'job']), job, '--help before the group');
  t.equal(helpOf(['help', 'job']), job, 'help GROUP');
  t.equal(helpOf(['job', '-c', 'my.rb', '-h']), job, 'with a common option in between');

  const whitelist = helpOf(['node', 'whitelist', '--help']);
  t.match(whitelist, /^Usage: cli node whitelist SUBCOMMAND/);
  for (const sub of ['list', 'set', 'remove']) t.match(whitelist, new RegExp(`^ {2}node whitelist ${sub} `, 'm'));
  t.notMatch(whitelist, /node status/);

  const add = helpOf(['schedule', 'add', '--help']);
  t.match(add, /^Usage: cli schedule add NAME CRON COMMAND \[NODE \.\.\.\] \[options\]\n/);
  for (const option of ['--time-zone TZ', '--allow-overlap', '--keep-jobs N', '-q, --quorum N|N%', '--waves N|N%,...'])
    t.ok(add.includes(option), `schedule add takes ${option}`);
  t.notMatch(add, /--nowait|--poll-interval/, 'nor does it wait for a job');
  t.match(helpOf(['schedule', '--help']), /^ {2}schedule pause +stop a schedule firing/m);

  const start = helpOf(['job', 'start', '--help']);
  t.match(start, /^Usage: cli job start COMMAND \[NODE \.\.\.\] \[options\]\n\nRun COMMAND on nodes/);
  t.equal(helpOf(['help', 'job', 'start']), start, 'help COMMAND');
  t.equal(helpOf(['-h', 'job', 'start']), start, '-h before the command');
  t.equal(helpOf(['job', 'start', 'uptime', 'n1', '--help']), start, 'after arguments');
  t.match(helpOf(['user-create', '--help']), /^Usage: cli user create USER /);
});

t.test('a command is looked up by name only, never among built-in object properties', async (t) => {
  t.equal(
    usageOf(parseCommandLine(['constructor'])).message,
    "unknown command 'constructor'; run cli --help for the list",
  );
  t.equal(usageOf(parseCommandLine(['job', 'toString'])).message, "unknown command 'job toString'");
  t.equal(usageOf(parseCommandLine(['job', '-c', 'my.rb'])).message, null, 'a group without its subcommand');
});
