// The command framework as a user meets it, through a small tool: help on stdout with exit 0, usage errors on
// stderr with exit 2, and a command run with the connection its options name, in the format asked for.
import { PassThrough } from 'node:stream';
import t from 'tap';
import { runTool } from '../../src/cli/command-line.js';
import { at, type Tool } from '../../src/cli/framework.js';
import { CommandError, type Ui } from '../../src/cli/terminal.js';

interface Ctx {
  ui: Ui;
  server: string;
}

const TOOL: Tool<Ctx, string> = {
  name: 'demo',
  heading: 'Commands:',
  commands: {
    'greet one': {
      args: 'NAME',
      summary: 'greet NAME',
      options: {},
      positionals: [1, 1],
      plan: (a) => async (ctx) => ctx.ui.output({ greeted: at(a, 0), server: ctx.server }),
    },
    'greet none': {
      args: '',
      summary: 'fail on purpose',
      options: {},
      positionals: [0, 0],
      plan: () => async () => {
        throw new CommandError('nobody to greet');
      },
    },
  },
  common: { server: { type: 'string', short: 's', arg: 'HOST', help: 'where to greet' } },
  label: (name) => `demo ${name}`,
  connection: (values) => (typeof values.server === 'string' ? values.server : 'localhost'),
};

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string; connected: string[] }> {
  const [stdout, stderr] = [new PassThrough(), new PassThrough()];
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (d: Buffer) => out.push(d.toString()));
  stderr.on('data', (d: Buffer) => err.push(d.toString()));
  const connected: string[] = [];
  const code = await runTool(TOOL, argv, { stdout, stderr, stdin: new PassThrough() }, async (server, ui) => {
    connected.push(server);
    return { ui, server };
  });
  return { code, stdout: out.join(''), stderr: err.join(''), connected };
}

t.test('help is printed on stdout, exits 0 and connects to nothing', async (t) => {
  for (const argv of [['--help'], ['help'], ['greet', '--help'], ['greet', 'one', '-h'], ['-s', 'h', 'help']]) {
    const r = await run(argv);
    t.equal(r.code, 0, argv.join(' '));
    t.match(r.stdout, /^Usage: demo /, argv.join(' '));
    t.equal(r.stderr, '', argv.join(' '));
    t.same(r.connected, [], argv.join(' '));
  }
});

t.test('a usage error is printed on stderr above the usage, exits 2 and connects to nothing', async (t) => {
  const r = await run(['greet', 'one']);
  t.equal(r.code, 2);
  t.equal(r.stdout, '');
  t.match(r.stderr, /^ERROR: demo greet one takes 1 argument, got 0\nUsage: demo greet one NAME \[options\]\n/);
  t.same(r.connected, []);
  const bare = await run([]);
  t.equal(bare.code, 2);
  t.match(bare.stderr, /^Usage: demo COMMAND/, 'no command: the usage alone');
});

t.test(
  'a command runs with the connection its options name, before or after it, in the format asked for',
  async (t) => {
    const before = await run(['-s', 'far', '-F', 'json', 'greet', 'one', 'ann']);
    t.equal(before.code, 0, before.stderr);
    t.same(JSON.parse(before.stdout), { greeted: 'ann', server: 'far' });
    t.same(before.connected, ['far']);
    const after = await run(['greet', 'one', 'ann', '--server=near']);
    t.equal(after.stdout, 'greeted: ann\nserver:  near\n');
    const failed = await run(['greet', 'none']);
    t.equal(failed.code, 1);
    t.equal(failed.stderr, 'ERROR: nobody to greet\n');
  },
);
