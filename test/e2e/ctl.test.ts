// infra-server-ctl as a child process against a real infra-server child process (spec 4.6, reference 6).
// The subtests share one server and run in order, each building on the accounts the earlier ones made.
import { createPrivateKey } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { runBin, type RunOptions, type RunResult } from '../support/process-run.js';
import { freePort, settingsText, startServerProcess } from '../support/server-process.js';

// Dozens of cli processes, one after another: on two busy cores this file takes a minute and more.
t.setTimeout(300_000);
const server = await startServerProcess(t);
const pivotal = await server.client('pivotal');
const scratch = await mkdtemp(join(tmpdir(), 'infra-ctl-'));
t.teardown(() => rm(scratch, { recursive: true, force: true }));

/** Runs infra-server-ctl with `-c` naming the server's settings file. */
const ctl = (args: string[], opts: RunOptions = {}): Promise<RunResult> =>
  runBin('infra-server-ctl', [...args, '-c', server.settingsFile], { cwd: scratch, ...opts });

const show = (r: RunResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
const PEM = /^-----BEGIN (RSA )?PRIVATE KEY-----\n[\s\S]+\n-----END (RSA )?PRIVATE KEY-----\n$/;

async function groupUsers(org: string, group: string): Promise<string[]> {
  return ((await pivotal.call('GET', `/organizations/${org}/groups/${group}`)) as { users: string[] }).users;
}

async function statusOf(path: string): Promise<number> {
  return (await pivotal.request('GET', path)).status;
}

t.test('help lists every command; a missing or unknown command is a usage error', async (t) => {
  const [help, one, none, unknown] = await Promise.all([
    runBin('infra-server-ctl', ['--help']),
    runBin('infra-server-ctl', ['org-user-remove', '-h']),
    runBin('infra-server-ctl', []),
    runBin('infra-server-ctl', ['frobnicate']),
  ]);
  t.equal(help.code, 0, show(help));
  for (const name of [
    'org-create',
    'org-delete',
    'org-list',
    'org-show',
    'org-user-add',
    'org-user-remove',
    'user-create',
    'user-list',
    'user-show',
    'user-delete',
    'grant-server-admin-permissions',
    'remove-server-admin-permissions',
    'list-server-admins',
  ]) {
    t.match(help.stdout, new RegExp(`^  ${name} `, 'm'), name);
  }
  t.equal(one.code, 0, show(one));
  t.match(one.stdout, /^Usage: infra-server-ctl org-user-remove ORG_NAME USER_NAME/);
  t.match(one.stdout, /--force/);
  t.equal(none.code, 2, show(none));
  t.match(none.stderr, /^Usage: infra-server-ctl COMMAND/);
  t.equal(unknown.code, 2, show(unknown));
  t.match(unknown.stderr, "ERROR: unknown command 'frobnicate'");
});

t.test('org-create prints a validator key that signs as ORG-validator', async (t) => {
  const r = await ctl(['org-create', 'acme', 'Acme Inc']);
  t.equal(r.code, 0, show(r));
  t.match(r.stdout, PEM);
  t.equal(r.stderr, '');
  const validator = await server.client('acme-validator', r.stdout);
  const registered = await validator.request('POST', '/organizations/acme/clients', { name: 'web1', create_key: true });
  t.equal(registered.status, 201, JSON.stringify(registered.body));
  t.match(await pivotal.call('GET', '/organizations/acme'), { name: 'acme', full_name: 'Acme Inc' });
});

t.test('org-create of an existing organization shows the 409 text', async (t) => {
  const r = await ctl(['org-create', 'acme', 'Acme Again']);
  t.equal(r.code, 1, show(r));
  t.equal(r.stdout, '');
  t.equal(r.stderr, 'ERROR: Organization already exists (409 Conflict)\n');
});

t.test('org-create -f writes the key with mode 0600 and -a makes the user an admin', async (t) => {
  await pivotal.call('POST', '/users', {
    username: 'olivia',
    email: 'olivia@example.com',
    display_name: 'Olivia',
    password: 'secret123',
  });
  const file = join(scratch, 'beta-validator.pem');
  const r = await ctl(['org-create', 'beta', 'Beta Corp', '-a', 'olivia', '-f', file]);
  t.equal(r.code, 0, show(r));
  t.equal(r.stdout, '');
  t.equal((await stat(file)).mode & 0o777, 0o600);
  const validator = await server.client('beta-validator', await readFile(file, 'utf8'));
  t.equal(
    (await validator.request('POST', '/organizations/beta/clients', { name: 'web1', create_key: true })).status,
    201,
  );
  t.equal(await statusOf('/organizations/beta/users/olivia'), 200);
  t.ok((await groupUsers('beta', 'admins')).includes('olivia'), 'olivia is in admins');
  t.ok((await groupUsers('beta', 'billing_admins')).includes('olivia'), 'olivia is in billing_admins');
});

t.test('org-create usage errors exit 2; an unknown -a user creates nothing', async (t) => {
  const [short, option, badName, nobody] = await Promise.all([
    ctl(['org-create', 'gamma']),
    ctl(['org-create', 'gamma', 'Gamma', '--bogus']),
    ctl(['org-create', 'Gamma_Corp', 'Gamma']),
    ctl(['org-create', 'gamma', 'Gamma', '-a', 'nobody']),
  ]);
  t.equal(short.code, 2, show(short));
  t.match(
    short.stderr,
    /^ERROR: You must specify an ORG_NAME and an ORG_FULL_NAME\nUsage: infra-server-ctl org-create /,
  );
  t.equal(option.code, 2, show(option));
  t.match(option.stderr, /--bogus/);
  t.equal(badName.code, 2, show(badName));
  t.match(badName.stderr, "invalid organization name 'Gamma_Corp'");
  t.equal(nobody.code, 1, show(nobody));
  t.equal(nobody.stderr, 'ERROR: Could not find user nobody (404 Not Found)\n');
  t.equal(await statusOf('/organizations/gamma'), 404, 'the organization was not created');
});

t.test('org-list hides pre-created names unless -a; -w adds aligned URIs', async (t) => {
  await pivotal.call('POST', '/organizations', { name: 'abcdefghijklmnopqrst', full_name: 'Pre-created' });
  const [plain, all, uris, json] = await Promise.all([
    ctl(['org-list']),
    ctl(['org-list', '-a']),
    ctl(['org-list', '-w']),
    ctl(['org-list', '-F', 'json']),
  ]);
  t.equal(plain.code, 0, show(plain));
  t.equal(plain.stdout, 'acme\nbeta\ndefault\n');
  t.equal(all.stdout, 'abcdefghijklmnopqrst\nacme\nbeta\ndefault\n');
  const u = server.url;
  t.equal(
    uris.stdout,
    `acme:    ${u}/organizations/acme\nbeta:    ${u}/organizations/beta\ndefault: ${u}/organizations/default\n`,
  );
  t.same(JSON.parse(json.stdout), ['acme', 'beta', 'default']);
});

t.test('org-show prints the organization; an unknown one is an error', async (t) => {
  const [r, json, missing] = await Promise.all([
    ctl(['org-show', 'acme']),
    ctl(['org-show', 'acme', '-F', 'json']),
    ctl(['org-show', 'nope']),
  ]);
  t.equal(r.code, 0, show(r));
  t.match(r.stdout, /^full_name: Acme Inc\nguid: {6}[0-9a-f]{32}\nname: {6}acme\n$/);
  t.same(JSON.parse(json.stdout), await pivotal.call('GET', '/organizations/acme'));
  t.equal(missing.code, 1, show(missing));
  t.equal(missing.stderr, "ERROR: organization 'nope' does not exist. (404 Not Found)\n");
});

t.test('user-create prints a working key; -f writes it 0600 and -o associates', async (t) => {
  const r = await ctl(['user-create', 'alice', 'Alice', 'Smith', 'alice@example.com', 'secret123']);
  t.equal(r.code, 0, show(r));
  t.match(r.stdout, PEM);
  const alice = await server.client('alice', r.stdout);
  t.match(await alice.call('GET', '/users/alice'), {
    username: 'alice',
    first_name: 'Alice',
    last_name: 'Smith',
    email: 'alice@example.com',
  });
  await writeFile(join(scratch, 'alice.pem'), r.stdout);

  const file = join(scratch, 'carol.pem');
  const carol = await ctl([
    'user-create',
    'carol',
    'Carol',
    'Ann',
    'King',
    'carol@example.com',
    'secret123',
    '-f',
    file,
    '-o',
    'acme',
  ]);
  t.equal(carol.code, 0, show(carol));
  t.equal(carol.stdout, '');
  t.equal((await stat(file)).mode & 0o777, 0o600);
  const pem = await readFile(file, 'utf8');
  t.doesNotThrow(() => createPrivateKey(pem), 'the file holds a private key');
  t.equal(await statusOf('/organizations/acme/users/carol'), 200);
  t.match(await pivotal.call('GET', '/users/carol'), { middle_name: 'Ann', display_name: 'Carol King' });

  const [again, short] = await Promise.all([
    ctl(['user-create', 'alice', 'A', 'S', 'other@example.com', 'secret123']),
    ctl(['user-create', 'dave', 'Dave']),
  ]);
  t.equal(again.code, 1, show(again));
  t.equal(again.stderr, 'ERROR: Username or email address already in use. (409 Conflict)\n');
  t.equal(short.code, 2, show(short));
  t.match(short.stderr, /^ERROR: user-create takes 5 to 6 arguments, got 2\nUsage: /);
});

t.test('user-list and user-show print users; an unknown user is an error', async (t) => {
  const [list, uris, info, user, missing] = await Promise.all([
    ctl(['user-list']),
    ctl(['user-list', '-w']),
    ctl(['user-list', '-a']),
    ctl(['user-show', 'carol', '-l']),
    ctl(['user-show', 'nobody']),
  ]);
  t.equal(list.code, 0, show(list));
  t.equal(list.stdout, 'admin\nalice\ncarol\nolivia\npivotal\n');
  t.match(uris.stdout, `alice:   ${server.url}/users/alice\n`);
  t.match(uris.stdout, `pivotal: ${server.url}/users/pivotal\n`);
  t.match(
    info.stdout,
    'alice:\n  display_name: Alice Smith\n  email:        alice@example.com\n  first_name:   Alice\n  last_name:    Smith\n',
  );
  t.equal(user.code, 0, show(user));
  t.equal(
    user.stdout,
    [
      'display_name:  Carol King',
      'email:         carol@example.com',
      'first_name:    Carol',
      'last_name:     King',
      'middle_name:   Ann',
      'organizations: acme',
      'username:      carol',
      '',
    ].join('\n'),
  );
  t.equal(missing.code, 1, show(missing));
  t.equal(missing.stderr, 'ERROR: Could not find user nobody (404 Not Found)\n');
});

t.test('org-user-add associates, says when it already was, and --admin adds the admin groups', async (t) => {
  const add = await ctl(['org-user-add', 'acme', 'alice']);
  t.equal(add.code, 0, show(add));
  t.equal(add.stdout + add.stderr, '');
  t.equal(await statusOf('/organizations/acme/users/alice'), 200);
  t.notOk((await groupUsers('acme', 'admins')).includes('alice'), 'a plain add is not an admin');
  const again = await ctl(['org-user-add', 'acme', 'alice', '--admin']);
  t.equal(again.code, 0, show(again));
  t.equal(again.stderr, 'User alice already associated with organization acme\n');
  t.equal(again.stdout, 'User alice is added to admins and billing_admins group\n');
  t.ok((await groupUsers('acme', 'admins')).includes('alice'), 'alice is in admins');
  t.ok((await groupUsers('acme', 'billing_admins')).includes('alice'), 'alice is in billing_admins');
  const nobody = await ctl(['org-user-add', 'acme', 'nobody']);
  t.equal(nobody.code, 1, show(nobody));
  t.equal(nobody.stderr, 'ERROR: Could not find user nobody (404 Not Found)\n');
});

t.test('org-user-remove of an admin needs --force, and --force keeps one admin', async (t) => {
  const refused = await ctl(['org-user-remove', 'acme', 'alice']);
  t.equal(refused.code, 1, show(refused));
  t.equal(
    refused.stderr,
    [
      'ERROR: Error removing user alice from organization acme.',
      "User alice is in the organization's admin group. Removing users from an organization without removing them from the admins group is not allowed.",
      'Re-run this command with --force to remove this user from the admins prior to removing it from the organization.',
      '',
    ].join('\n'),
  );
  t.equal(await statusOf('/organizations/acme/users/alice'), 200, 'alice is still a member');

  const last = await ctl(['org-user-remove', 'acme', 'alice', '--force']);
  t.equal(last.code, 1, show(last));
  t.match(
    last.stderr,
    /^ERROR: Error removing user alice from organization acme\.\n.*--force.*\n.*removing alice from the admins group would leave it empty/,
  );
  t.same(
    await groupUsers('acme', 'admins'),
    ['pivotal', 'alice'],
    'the only admin besides the creating superuser stays',
  );

  t.equal((await ctl(['org-user-add', 'acme', 'carol', '--admin'])).code, 0);
  const forced = await ctl(['org-user-remove', 'acme', 'alice', '--force']);
  t.equal(forced.code, 0, show(forced));
  t.equal(forced.stdout + forced.stderr, '');
  t.equal(await statusOf('/organizations/acme/users/alice'), 404, 'alice is no longer a member');
  t.same(await groupUsers('acme', 'admins'), ['pivotal', 'carol']);
  t.notOk((await groupUsers('acme', 'billing_admins')).includes('alice'), 'alice left billing_admins');

  const gone = await ctl(['org-user-remove', 'acme', 'alice']);
  t.equal(gone.code, 1, show(gone));
  t.equal(gone.stderr, 'ERROR: User alice is not associated with organization acme\n');
});

t.test('org-delete asks first: N keeps the organization, Y deletes it', async (t) => {
  await pivotal.call('POST', '/organizations', { name: 'doomed', full_name: 'Doomed Ltd' });
  const prompt = 'Do you want to delete the organization doomed? (Y/N) \n';
  const no = await ctl(['org-delete', 'doomed'], { input: 'N\n' });
  t.equal(no.code, 3, show(no));
  t.equal(no.stdout, `${prompt}You said no, so I'm done here.\n`);
  t.equal(await statusOf('/organizations/doomed'), 200, 'N keeps it');
  const closed = await ctl(['org-delete', 'doomed']);
  t.equal(closed.code, 3, show(closed));
  t.match(closed.stderr, 'no answer on standard input');
  const yes = await ctl(['org-delete', 'doomed'], { input: 'maybe\nY\n' });
  t.equal(yes.code, 0, show(yes));
  t.match(
    yes.stdout,
    /^Do you want .*\nI have no idea what to do with 'maybe'\nJust say Y or N, please\.\nDo you want .*\nfull_name: Doomed Ltd\nguid: {6}[0-9a-f]{32}\nname: {6}doomed\n$/,
  );
  t.equal(await statusOf('/organizations/doomed'), 404, 'Y deletes it');
  const unknown = await ctl(['org-delete', 'doomed'], { input: 'Y\n' });
  t.equal(unknown.code, 1, show(unknown));
  t.equal(unknown.stdout, '', 'no question about an organization that does not exist');
  const skip = await ctl(['org-delete', 'abcdefghijklmnopqrst', '-y']);
  t.equal(skip.code, 0, show(skip));
  t.match(skip.stdout, /^full_name: Pre-created\n/);
});

t.test('user-delete asks first, never deletes pivotal', async (t) => {
  await pivotal.call('POST', '/users', {
    username: 'dave',
    email: 'dave@example.com',
    display_name: 'Dave',
    password: 'secret123',
  });
  const no = await ctl(['user-delete', 'dave'], { input: 'n\n' });
  t.equal(no.code, 3, show(no));
  t.equal(no.stdout, "Do you want to delete the user dave? (Y/N) \nYou said no, so I'm done here.\n");
  t.equal(await statusOf('/users/dave'), 200);
  const yes = await ctl(['user-delete', 'dave', '-y']);
  t.equal(yes.code, 0, show(yes));
  t.equal(yes.stdout, 'Deleted user dave\n');
  t.equal(await statusOf('/users/dave'), 404);
  const self = await ctl(['user-delete', 'pivotal', '-y']);
  t.equal(self.code, 1, show(self));
  t.match(self.stderr, /^ERROR: You cannot delete the superuser pivotal/);
  t.equal(await statusOf('/users/pivotal'), 200);
});

t.test('server-admins: grant, list and remove; pivotal stays', async (t) => {
  const alice = await server.client('alice', await readFile(join(scratch, 'alice.pem'), 'utf8'));
  t.equal((await alice.request('GET', '/users')).status, 403, 'a plain user cannot list users');
  const before = await ctl(['list-server-admins']);
  t.equal(before.code, 0, show(before));
  t.equal(before.stdout, 'pivotal\n');

  const grant = await ctl(['grant-server-admin-permissions', 'alice']);
  t.equal(grant.code, 0, show(grant));
  t.match(
    grant.stdout,
    /^User alice was added to server-admins\. This user can now list, read, create, and delete users/,
  );
  t.equal((await ctl(['list-server-admins'])).stdout, 'alice\npivotal\n');
  t.equal((await alice.request('GET', '/users')).status, 200, 'a server-admin can list users');
  const twice = await ctl(['grant-server-admin-permissions', 'alice']);
  t.equal(twice.code, 0, show(twice));
  t.equal(twice.stdout, 'User alice is already a member of server-admins.\n');

  const remove = await ctl(['remove-server-admin-permissions', 'alice']);
  t.equal(remove.code, 0, show(remove));
  t.match(remove.stdout, /^User alice was removed from the server-admins group\./);
  t.same(JSON.parse((await ctl(['list-server-admins', '-F', 'json'])).stdout), ['pivotal']);
  t.equal((await alice.request('GET', '/users')).status, 403, 'the right is gone');

  const [base, notMember, unknown, two, extra, format] = await Promise.all([
    ctl(['remove-server-admin-permissions', 'pivotal']),
    ctl(['remove-server-admin-permissions', 'alice']),
    ctl(['grant-server-admin-permissions', 'nobody']),
    ctl(['grant-server-admin-permissions', 'alice', 'carol']),
    ctl(['list-server-admins', 'alice']),
    ctl(['list-server-admins', '-F', 'xml']),
  ]);
  t.equal(base.code, 1, show(base));
  t.equal(base.stderr, 'ERROR: You cannot remove the base superuser pivotal from server-admins. (403 Forbidden)\n');
  t.equal(notMember.code, 1, show(notMember));
  t.match(notMember.stderr, 'User alice is not a member of server-admins so it cannot be removed.');
  t.equal(unknown.code, 1, show(unknown));
  t.match(unknown.stderr, 'User nobody was not found.');
  t.equal(two.code, 2, show(two));
  t.match(
    two.stderr,
    /^ERROR: Username is the only argument to grant-server-admin-permissions\.\nPlease pass a single argument\.\n/,
  );
  t.equal(extra.code, 2, show(extra));
  t.match(extra.stderr, /^ERROR: This command does not accept arguments\.\n/);
  t.equal(format.code, 2, show(format));
  t.match(format.stderr, "unknown format 'xml'");
});

t.test('without -c the settings file in the working folder is read', async (t) => {
  const r = await runBin('infra-server-ctl', ['org-list'], { cwd: server.dir });
  t.equal(r.code, 0, show(r));
  t.equal(r.stdout, 'acme\nbeta\ndefault\n');
});

t.test('-c and -F may come before the command as well as after it', async (t) => {
  const [before, json, mixed] = await Promise.all([
    runBin('infra-server-ctl', ['-c', server.settingsFile, 'org-list'], { cwd: scratch }),
    runBin('infra-server-ctl', ['-F', 'json', '--config', server.settingsFile, 'org-list'], { cwd: scratch }),
    runBin('infra-server-ctl', ['-c', server.settingsFile, 'org-show', 'acme', '-F', 'json'], { cwd: scratch }),
  ]);
  t.equal(before.code, 0, show(before));
  t.equal(before.stdout, 'acme\nbeta\ndefault\n');
  t.equal(before.stderr, '');
  t.equal(json.code, 0, show(json));
  t.same(JSON.parse(json.stdout), ['acme', 'beta', 'default']);
  t.equal(mixed.code, 0, show(mixed));
  t.match(JSON.parse(mixed.stdout), { name: 'acme', full_name: 'Acme Inc' });
});

t.test('help at every level is printed on stdout and exits 0', async (t) => {
  const [help, create, helpCreate, withConfig] = await Promise.all([
    runBin('infra-server-ctl', ['help']),
    runBin('infra-server-ctl', ['org-create', '--help']),
    runBin('infra-server-ctl', ['help', 'org-create']),
    runBin('infra-server-ctl', ['-c', server.settingsFile, '-h']),
  ]);
  for (const r of [help, create, helpCreate, withConfig]) {
    t.equal(r.code, 0, show(r));
    t.equal(r.stderr, '');
  }
  t.match(help.stdout, /^Usage: infra-server-ctl COMMAND /);
  t.match(help.stdout, /^ {2}org-create +create an organization/m);
  t.match(help.stdout, /^Options, before or after the command:$/m);
  t.match(create.stdout, /^Usage: infra-server-ctl org-create ORG_NAME "ORG_FULL_NAME" \[options\]\n/);
  t.match(create.stdout, /^ {2}-a, --association_user USER +associate USER/m);
  t.equal(helpCreate.stdout, create.stdout);
  t.equal(withConfig.stdout, help.stdout);
});

t.test('a broken settings file exits 2 naming FILE:LINE', async (t) => {
  const file = join(scratch, 'broken.rb');
  await writeFile(file, `data_dir ${JSON.stringify(server.dataDir)}\napi_port "ten"\n`);
  const [r, missing] = await Promise.all([
    runBin('infra-server-ctl', ['org-list', '-c', file]),
    runBin('infra-server-ctl', ['org-list', '-c', join(scratch, 'absent.rb')]),
  ]);
  t.equal(r.code, 2, show(r));
  t.equal(r.stdout, '');
  t.match(r.stderr, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: api_port: expected a port number`));
  t.equal(missing.code, 2, show(missing));
  t.match(missing.stderr, 'absent.rb: no such file');
});

t.test('a server that does not answer, a missing key or a wrong key is a clear error', async (t) => {
  const port = await freePort();
  const off = join(scratch, 'off.rb');
  await writeFile(off, settingsText({ api_listen_address: '0.0.0.0', api_port: port, data_dir: server.dataDir }));
  const nokey = join(scratch, 'nokey.rb');
  await writeFile(nokey, settingsText({ api_port: server.ports.api, data_dir: join(scratch, 'empty') }));
  const wrongDir = join(scratch, 'wrong');
  await mkdir(wrongDir);
  await writeFile(join(wrongDir, 'pivotal.pem'), await server.keyOf('admin'));
  const wrong = join(scratch, 'wrong.rb');
  await writeFile(wrong, settingsText({ api_port: server.ports.api, data_dir: wrongDir }));
  const [down, r, unknownKey] = await Promise.all([
    runBin('infra-server-ctl', ['org-list', '-c', off]),
    runBin('infra-server-ctl', ['org-list', '-c', nokey]),
    runBin('infra-server-ctl', ['org-list', '-c', wrong]),
  ]);
  t.equal(down.code, 1, show(down));
  t.match(down.stderr, `ERROR: cannot reach infra-server at http://127.0.0.1:${port}: is it running?\n`);
  t.equal(r.code, 1, show(r));
  t.match(r.stderr, `ERROR: cannot read the superuser key ${join(scratch, 'empty', 'pivotal.pem')}`);
  t.equal(unknownKey.code, 1, show(unknownKey));
  t.match(
    unknownKey.stderr,
    `(401 Unauthorized)\nThe key ${join(wrongDir, 'pivotal.pem')} is not the one the server at ${server.url} knows for pivotal.`,
  );
});
