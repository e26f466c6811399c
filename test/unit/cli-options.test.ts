// The values behind the cli's options: quorum, seconds, the job environment and file, the whitelist attribute,
// the display name of a new user, and where the server, user and key come from.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parseServerUrl, resolveCliTarget } from '../../src/cli/cli-connection.js';
import { fileField } from '../../src/cli/job-body.js';
import { parseEnv, parseQuorum, parseSeconds } from '../../src/cli/job-options.js';
import { CommandError, EXIT } from '../../src/cli/terminal.js';
import { collectNames } from '../../src/cli/nodes.js';
import { displayNameFor } from '../../src/cli/users.js';
import { whitelistOf, withWhitelist } from '../../src/cli/whitelist-commands.js';

function usageError(t: Test, fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof CommandError) {
      t.equal(e.exitCode, EXIT.usage, 'a usage error');
      return e.message;
    }
    throw e;
  }
  throw new Error('expected a CommandError');
}

t.test('quorum: a count is sent as a number, a percentage as given', async (t) => {
  t.equal(parseQuorum('3'), 3);
  t.equal(parseQuorum('0'), 0);
  t.equal(parseQuorum('50%'), '50%');
  t.equal(parseQuorum('100%'), '100%');
  for (const bad of ['', '-1', '1.5', '50 %', '0%', '101%', 'all', '%']) {
    t.match(
      usageError(t, () => parseQuorum(bad)),
      /^-q\/--quorum: /,
      `'${bad}' is refused`,
    );
  }
});

t.test('seconds are whole and positive', async (t) => {
  t.equal(parseSeconds('--timeout', '300'), 300);
  t.equal(
    usageError(t, () => parseSeconds('--timeout', '1.5')),
    "--timeout: '1.5' is not a whole number of seconds greater than 0",
  );
  usageError(t, () => parseSeconds('--timeout', '-3'));
});

t.test('--env is a JSON object of strings; an error names the option', async (t) => {
  t.same(parseEnv('{"PATH": "/bin", "EMPTY": ""}'), { PATH: '/bin', EMPTY: '' });
  t.match(
    usageError(t, () => parseEnv('{"A": "b"')),
    /^--env: not valid JSON \(/,
  );
  t.equal(
    usageError(t, () => parseEnv('["A"]')),
    '--env: expected an object, such as {"NAME": "value"}',
  );
  t.equal(
    usageError(t, () => parseEnv('"A=b"')),
    '--env: expected an object, such as {"NAME": "value"}',
  );
  t.equal(
    usageError(t, () => parseEnv('null')),
    '--env: expected an object, such as {"NAME": "value"}',
  );
  t.equal(
    usageError(t, () => parseEnv('{"N": {"x": "y"}}')),
    `--env: the value of 'N' is not a string, such as {"NAME": "value"}`,
  );
});

t.test('--file: UTF-8 text goes as raw:, other bytes as base64:', async (t) => {
  t.equal(fileField(Buffer.from('#!/bin/sh\necho héllo\n')), 'raw:#!/bin/sh\necho héllo\n');
  const binary = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0xff, 0x00]);
  t.equal(fileField(binary), `base64:${binary.toString('base64')}`);
  t.equal(
    fileField(Buffer.from('\ufeffBOM kept', 'utf8')),
    'raw:\ufeffBOM kept',
    'a byte-order mark is part of the file',
  );
});

t.test('the whitelist lives at normal.push_jobs.whitelist; writing it keeps every other attribute', async (t) => {
  const node = {
    name: 'web1',
    run_list: ['recipe[app]'],
    normal: { tags: ['x'], push_jobs: { whitelist: { uptime: 'uptime' }, other: 1 } },
  };
  t.same(whitelistOf(node), { uptime: 'uptime' });
  t.same(whitelistOf({ name: 'bare' }), {});
  t.same(whitelistOf({ name: 'odd', normal: { push_jobs: 'nonsense' } }), {});
  const updated = withWhitelist(node, { uptime: 'uptime', restart: 'systemctl restart app' });
  t.same(updated, {
    name: 'web1',
    run_list: ['recipe[app]'],
    normal: { tags: ['x'], push_jobs: { whitelist: { uptime: 'uptime', restart: 'systemctl restart app' }, other: 1 } },
  });
  t.same(node.normal.push_jobs.whitelist, { uptime: 'uptime' }, 'the node read is left unchanged');
  t.same(withWhitelist({ name: 'bare' }, { a: 'b' }), {
    name: 'bare',
    normal: { push_jobs: { whitelist: { a: 'b' } } },
  });
});

t.test('a new user is displayed as FIRST LAST unless a display name is given', async (t) => {
  t.equal(displayNameFor('bob', { first_name: 'Bob', last_name: 'Stone' }), 'Bob Stone');
  t.equal(displayNameFor('bob', {}), 'bob');
  t.equal(displayNameFor('bob', { first_name: 'Bob', display_name: 'B' }), 'B');
});

t.test('server URLs: with an organization, or bare for the global commands', async (t) => {
  t.same(parseServerUrl('https://infra.example.com/organizations/acme'), {
    baseUrl: 'https://infra.example.com',
    org: 'acme',
  });
  t.same(parseServerUrl('http://10.0.0.1:8443/prefix/organizations/acme/'), {
    baseUrl: 'http://10.0.0.1:8443/prefix',
    org: 'acme',
  });
  t.same(parseServerUrl('http://127.0.0.1:10003'), { baseUrl: 'http://127.0.0.1:10003', org: null });
  t.equal(parseServerUrl('ftp://host/organizations/acme'), null);
  t.equal(parseServerUrl('http://host/organizations/'), null);
  t.equal(parseServerUrl('not a url'), null);
});

t.test('config.rb gives the server, user and key; the options override each', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'cli-target-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const project = join(root, 'project', 'deep');
  mkdirSync(join(root, 'project', '.infra'), { recursive: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(root, 'project', '.infra', 'config.rb'),
    'server_url "http://h:1/organizations/acme"\nnode_name "alice"\nclient_key "alice.pem"\n',
  );
  const home = join(root, 'home');

  const found = resolveCliTarget({ cwd: project, home });
  t.same(found, {
    serverUrl: 'http://h:1/organizations/acme',
    baseUrl: 'http://h:1',
    org: 'acme',
    user: 'alice',
    keyFile: join(root, 'project', '.infra', 'alice.pem'),
    configFile: join(root, 'project', '.infra', 'config.rb'),
  });
  const overridden = resolveCliTarget({ cwd: project, home, serverUrl: 'http://other:2', user: 'bob', key: 'bob.pem' });
  t.same(overridden, {
    ...found,
    serverUrl: 'http://other:2',
    baseUrl: 'http://other:2',
    org: null,
    user: 'bob',
    keyFile: join(project, 'bob.pem'),
  });

  const nowhere = usageError(t, () => resolveCliTarget({ cwd: home, home }));
  t.match(nowhere, /^no server URL: no config\.rb was found .*; pass --server-url URL$/);
  t.match(
    usageError(t, () => resolveCliTarget({ cwd: home, home, serverUrl: 'http://h:1' })),
    /^no user name: .*pass --user NAME$/,
  );
  t.match(
    usageError(t, () => resolveCliTarget({ cwd: home, home, serverUrl: 'http://h:1', user: 'u' })),
    /^no key: .*pass --key FILE$/,
  );
  t.match(
    usageError(t, () => resolveCliTarget({ cwd: project, home, serverUrl: 'h:1' })),
    /^--server-url: 'h:1' is not an http\(s\) URL/,
  );
});

t.test('a node search is read page after page until the total is reached', async (t) => {
  const all = ['a', 'b', 'c', 'd', 'e'];
  const asked: number[] = [];
  const names = await collectNames(async (start) => {
    asked.push(start);
    return { total: all.length, start, rows: all.slice(start, start + 2).map((name) => ({ name })) };
  });
  t.same(names, all);
  t.same(asked, [0, 2, 4]);
  t.same(
    await collectNames(async (start) => ({ total: 9, start, rows: start === 0 ? [{ name: 'x' }, { name: 'x' }] : [] })),
    ['x'],
    'an empty page ends the walk, and a name is listed once',
  );
});
