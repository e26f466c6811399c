// config.rb for the cli: which file is found first, and what is read from it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { findCliConfig, loadCliConfig } from '../../src/config/cli-config.js';
import { configErrorOf } from '../support/config-error.js';

const configRb = 'node_name "alice"\n';

type Tree = { [name: string]: string | Tree };

/** Builds `tree` under the system temp folder, so no folder above it holds a .infra/config.rb of the project's. */
function fixture(t: Test, tree: Tree): string {
  const root = mkdtempSync(join(tmpdir(), 'cli-config-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const build = (dir: string, node: Tree): void => {
    for (const [name, content] of Object.entries(node)) {
      const path = join(dir, name);
      if (typeof content === 'string') {
        writeFileSync(path, content);
      } else {
        mkdirSync(path);
        build(path, content);
      }
    }
  };
  build(root, tree);
  return root;
}

t.test('-c wins, relative to the working folder, even before the file exists', async (t) => {
  const root = fixture(t, {
    project: { '.infra': { 'config.rb': configRb } },
    home: { '.infra': { 'config.rb': configRb } },
  });
  const cwd = join(root, 'project');
  t.equal(findCliConfig({ explicit: 'other.rb', cwd, home: join(root, 'home') }), join(cwd, 'other.rb'));
  t.equal(findCliConfig({ explicit: '/etc/infra/cli.rb', cwd, home: join(root, 'home') }), '/etc/infra/cli.rb');
});

t.test('.infra/config.rb in the working folder comes before parents and home', async (t) => {
  const root = fixture(t, {
    repo: { '.infra': { 'config.rb': configRb }, app: { '.infra': { 'config.rb': configRb }, src: {} } },
    home: { '.infra': { 'config.rb': configRb } },
  });
  const home = join(root, 'home');
  t.equal(findCliConfig({ cwd: join(root, 'repo', 'app'), home }), join(root, 'repo', 'app', '.infra', 'config.rb'));
  const inApp = join(root, 'repo', 'app', '.infra', 'config.rb');
  t.equal(findCliConfig({ cwd: join(root, 'repo', 'app', 'src'), home }), inApp);
  t.equal(findCliConfig({ cwd: join(root, 'repo'), home }), join(root, 'repo', '.infra', 'config.rb'));
});

t.test('~/.infra/config.rb is used when no folder up the tree has one', async (t) => {
  const root = fixture(t, { work: { deep: {} }, home: { '.infra': { 'config.rb': configRb } }, empty: {} });
  const inHome = join(root, 'home', '.infra', 'config.rb');
  t.equal(findCliConfig({ cwd: join(root, 'work', 'deep'), home: join(root, 'home') }), inHome);
  t.equal(findCliConfig({ cwd: join(root, 'work', 'deep'), home: join(root, 'empty') }), null);
});

t.test('a folder named config.rb is not a config file', async (t) => {
  const root = fixture(t, { work: { '.infra': { 'config.rb': {} } }, home: {} });
  t.equal(findCliConfig({ cwd: join(root, 'work'), home: join(root, 'home') }), null);
});

t.test('config.rb gives the server, user and key; a relative key is beside the file', async (t) => {
  const dir = fixture(t, {
    '.infra': {
      'config.rb': [
        '# cli settings',
        'server_url "https://infra.example.com/organizations/acme"',
        'node_name "alice"',
        'client_key "alice.pem"',
        'cookbook_path ["../cookbooks"]',
        'knife_editor "vim"',
      ].join('\n'),
    },
  });
  const file = join(dir, '.infra', 'config.rb');
  t.strictSame(loadCliConfig(file), {
    server_url: 'https://infra.example.com/organizations/acme',
    node_name: 'alice',
    client_key: join(dir, '.infra', 'alice.pem'),
  });
});

t.test('an absolute client_key is kept and chef_server_url is accepted', async (t) => {
  const dir = fixture(t, { 'config.rb': 'chef_server_url "https://h/organizations/ops"\nclient_key "/keys/bob.pem"' });
  t.strictSame(loadCliConfig(join(dir, 'config.rb')), {
    server_url: 'https://h/organizations/ops',
    client_key: '/keys/bob.pem',
  });
});

t.test('config.rb errors name the file and line', async (t) => {
  const dir = fixture(t, {
    'bad-url.rb': 'node_name "alice"\nserver_url "https://infra.example.com"',
    'bad-line.rb': 'current_dir = File.dirname(__FILE__)',
  });
  t.equal(
    configErrorOf(() => loadCliConfig(join(dir, 'bad-url.rb'))).message,
    `${join(dir, 'bad-url.rb')}:2: server_url: expected an http(s) URL ending in /organizations/ORG, ` +
      'got "https://infra.example.com"',
  );
  t.equal(
    configErrorOf(() => loadCliConfig(join(dir, 'bad-line.rb'))).message,
    `${join(dir, 'bad-line.rb')}:1: "current_dir =" assignment is not supported; write: current_dir VALUE`,
  );
  t.equal(configErrorOf(() => loadCliConfig(join(dir, 'none.rb'))).message, `${join(dir, 'none.rb')}: no such file`);
});
