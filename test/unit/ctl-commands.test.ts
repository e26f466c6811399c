// infra-server-ctl's command line: which command a line names, where its options may stand, the help asked for
// at each level, and the usage errors a user sees before anything is sent.
import t, { type Test } from 'tap';
import { type CommandLine, parseCommandLine } from '../../src/cli/command-line.js';
import { CTL } from '../../src/cli/ctl/commands.js';
import type { Ctl } from '../../src/cli/ctl/connection.js';
import type { ServerConfigSource } from '../../src/config/server-config.js';

type CtlLine = CommandLine<Ctl, ServerConfigSource>;
const parse = (argv: readonly string[]): CtlLine => parseCommandLine(CTL, argv);

function ran(t: Test, line: CtlLine): Extract<CtlLine, { kind: 'run' }> {
  if (line.kind !== 'run') throw new Error(`expected a command to run, got ${JSON.stringify(line)}`);
  t.pass(`runs ${line.name}`);
  return line;
}

function usageOf(line: CtlLine): Extract<CtlLine, { kind: 'usage' }> {
  if (line.kind !== 'usage') throw new Error(`expected a usage error, got ${line.kind}`);
  return line;
}

function helpOf(argv: string[]): string {
  const line = parse(argv);
  if (line.kind !== 'help') throw new Error(`${argv.join(' ')}: expected help, got ${JSON.stringify(line)}`);
  return line.text;
}

t.test('every command of spec 4.6 is known by its hyphenated name', async (t) => {
  t.same(Object.keys(CTL.commands).sort(), [
    'grant-server-admin-permissions',
    'list-server-admins',
    'org-create',
    'org-delete',
    'org-list',
    'org-show',
    'org-user-add',
    'org-user-remove',
    'remove-server-admin-permissions',
    'user-create',
    'user-delete',
    'user-list',
    'user-show',
  ]);
});

t.test('-c and -F may come before or after the command', async (t) => {
  for (const argv of [
    ['-c', 'server.rb', 'org-list'],
    ['org-list', '-c', 'server.rb'],
    ['--config', 'server.rb', 'org-list', '-a'],
    ['--config=server.rb', 'org-list'],
    ['org-list', '-w', '--config=server.rb'],
  ]) {
    const line = ran(t, parse(argv));
    t.equal(line.name, 'org-list', argv.join(' '));
    t.same(line.connection, { file: 'server.rb' }, argv.join(' '));
  }
  t.same(ran(t, parse(['org-list'])).connection, {}, 'without -c the server finds its settings itself');
  for (const argv of [
    ['-F', 'json', 'org-show', 'acme'],
    ['-Fjson', '-c', 'server.rb', 'org-show', 'acme'],
    ['org-show', 'acme', '--format', 'json'],
  ]) {
    t.equal(ran(t, parse(argv)).format, 'json', argv.join(' '));
  }
  t.match(
    usageOf(parse(['-a', 'org-list'])).message,
    /^unknown option '-a'; run infra-server-ctl --help/,
    "a command's own options go after it",
  );
});

t.test('--help at every level goes to the help of that level', async (t) => {
  const main = helpOf(['--help']);
  t.match(main, /^Usage: infra-server-ctl COMMAND \[ARGUMENTS\] \[OPTIONS\]\n\nCommands \(each signs/);
  t.match(main, /^ {2}grant-server-admin-permissions +add a user to server-admins$/m);
  t.match(main, /^Options, before or after the command:\n {2}-c, --config FILE +the server settings file/m);
  for (const argv of [['-h'], ['help'], ['-c', 'server.rb', '--help'], ['-c', 'server.rb', 'help']]) {
    t.equal(helpOf(argv), main, argv.join(' '));
  }
  const create = helpOf(['org-create', '--help']);
  t.match(create, /^Usage: infra-server-ctl org-create ORG_NAME "ORG_FULL_NAME" \[options\]\n\nCreate an organization/);
  for (const option of ['-a, --association_user USER', '-f, --filename FILE', '-c, --config FILE', '-h, --help']) {
    t.ok(create.includes(option), option);
  }
  t.equal(helpOf(['help', 'org-create']), create, 'help COMMAND');
  t.equal(helpOf(['-c', 'server.rb', 'org-create', '-h']), create, 'after a common option');
  t.equal(helpOf(['org-create', 'acme', '--help']), create, 'with some of its arguments');
});

t.test('usage errors name what is wrong and show the usage', async (t) => {
  const none = usageOf(parse([]));
  t.equal(none.message, null);
  t.match(none.text, /^Usage: infra-server-ctl COMMAND/);
  t.equal(usageOf(parse(['-c', 'server.rb'])).message, null, 'options without a command');
  const unknown = usageOf(parse(['frobnicate']));
  t.equal(unknown.message, "unknown command 'frobnicate'; run infra-server-ctl --help for the list");
  t.match(unknown.text, /^Usage: infra-server-ctl COMMAND/);
  t.equal(
    usageOf(parse(['org-frob'])).message,
    "unknown command 'org-frob'; run infra-server-ctl --help for the list",
    'a hyphenated name is said as typed',
  );
  const short = usageOf(parse(['org-create', 'gamma']));
  t.equal(short.message, 'You must specify an ORG_NAME and an ORG_FULL_NAME');
  t.match(short.text, /^Usage: infra-server-ctl org-create /);
  t.equal(usageOf(parse(['user-create', 'dave', 'Dave'])).message, 'user-create takes 5 to 6 arguments, got 2');
  t.equal(usageOf(parse(['org-show'])).message, 'org-show takes 1 argument, got 0');
  t.equal(
    usageOf(parse(['list-server-admins', '-F', 'xml'])).message,
    "unknown format 'xml': use one of summary, text, json",
  );
  t.match(usageOf(parse(['org-list', '--bogus'])).message, /--bogus/);
});
