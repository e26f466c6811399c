// First start on an empty store: the superuser pivotal, the default organization with its validator, and
// the admin user in its admins group; their private keys and a cli config.rb go into data_dir. Each step
// checks what exists, so a start interrupted midway completes later, and a second start changes nothing.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Ref } from 'nact';
import { generateKeyPair } from '../auth/rsa-keys.js';
import { hashPassword } from '../auth/passwords.js';
import type { Logger } from '../lib/logger.js';
import { GLOBAL, SETUP_DONE } from '../store/collections.js';
import { ask, type InfraSystem } from '../../actors/system.js';
import type { Reply, RequestContext } from '../../actors/shared/reply.js';
import type { OrgOp } from '../../actors/org/handlers.js';
import type { UserOp } from '../../actors/users/user-ops.js';
import { newUserAcl } from '../../actors/users/user-ops.js';

export const SUPERUSER = 'pivotal';
export const DEFAULT_USER = 'admin';

export interface SetupOptions {
  system: InfraSystem;
  dataDir: string;
  orgName: string;
  /** Where the API answers, for config.rb's server_url. */
  apiUrl: string;
  /** Says what was created and where each file went. */
  log: Logger;
}

/** What every step works with: the superuser's requests, and the files written so far. */
interface Setup {
  o: SetupOptions;
  ctx: RequestContext;
  written: string[];
}

/** Returns the files written (empty on a later start). */
export async function firstStart(o: SetupOptions): Promise<string[]> {
  const { system } = o;
  if ((await system.store.get(GLOBAL, SETUP_DONE.id)) !== undefined) return [];
  await mkdir(o.dataDir, { recursive: true });
  const s: Setup = {
    o,
    ctx: {
      requestor: { kind: 'user', name: SUPERUSER, superuser: true, serverAdmin: true, validator: false },
      baseUrl: o.apiUrl,
      apiVersion: 1,
      authKey: '',
      authPublicKey: '',
    },
    written: [],
  };
  if (!(await exists(s, SUPERUSER))) await createSuperuser(s);
  if (!system.org(o.orgName)) await createDefaultOrg(s);
  if (!(await exists(s, DEFAULT_USER))) await createDefaultUser(s);
  await makeDefaultUserAdmin(s);
  await writeCliConfig(s);
  await system.store.put(GLOBAL, SETUP_DONE.id, SETUP_DONE.doc);
  return s.written;
}

function users(s: Setup, op: UserOp): Promise<Reply> {
  const { ctx } = s;
  return ask(s.o.system.users, (replyTo: Ref<Reply>) => ({ type: 'request' as const, ctx, op, replyTo }));
}

function org(s: Setup, op: OrgOp): Promise<Reply> {
  const { ctx, o } = s;
  const ref = o.system.org(o.orgName);
  if (!ref) throw new Error(`organization ${o.orgName} is missing`);
  return ask(ref, (replyTo: Ref<Reply>) => ({ type: 'request' as const, ctx, op, replyTo }));
}

function exists(s: Setup, name: string): Promise<boolean> {
  return ask(s.o.system.users, (replyTo: Ref<boolean>) => ({ type: 'exists' as const, name, replyTo }));
}

/** Writes a private key for its owner only, and says what it belongs to. */
async function saveKey(s: Setup, name: string, pem: string, created: string): Promise<void> {
  const file = join(s.o.dataDir, `${name}.pem`);
  await writeFile(file, pem, { mode: 0o600 });
  await chmod(file, 0o600);
  s.written.push(file);
  s.o.log.info(`first start: created ${created}`, { key: file });
}

/** Written outside any request (the users actor's `apply`): the superuser, and the server-admins group holding it. */
async function createSuperuser(s: Setup): Promise<void> {
  const key = await generateKeyPair();
  const doc = {
    username: SUPERUSER,
    email: `${SUPERUSER}@localhost`,
    display_name: SUPERUSER,
    superuser: true,
    keys: { default: { public_key: key.publicKeyPem, expiration_date: 'infinity' } },
    acl: newUserAcl(SUPERUSER),
  };
  expectOk(
    await ask(s.o.system.users, (replyTo: Ref<Reply>) => ({
      type: 'apply' as const,
      writes: [
        { coll: 'users' as const, id: SUPERUSER, doc },
        { coll: 'server-admins' as const, users: [SUPERUSER] },
      ],
      replyTo,
    })),
    'create the superuser',
  );
  await saveKey(s, SUPERUSER, key.privateKeyPem, `the superuser ${SUPERUSER}`);
}

async function createDefaultOrg(s: Setup): Promise<void> {
  const { ctx, o } = s;
  const validatorKey = await generateKeyPair();
  expectOk(
    await ask(o.system.root, (replyTo: Ref<Reply>) => ({
      type: 'create_org' as const,
      ctx,
      name: o.orgName,
      full_name: o.orgName,
      validatorKey,
      replyTo,
    })),
    'create the default organization',
  );
  await saveKey(
    s,
    `${o.orgName}-validator`,
    validatorKey.privateKeyPem,
    `the organization '${o.orgName}' and its validator client ${o.orgName}-validator`,
  );
}

async function createDefaultUser(s: Setup): Promise<void> {
  const generated = await generateKeyPair();
  expectOk(
    await users(s, {
      type: 'create_user',
      input: {
        username: DEFAULT_USER,
        email: `${DEFAULT_USER}@localhost`,
        display_name: DEFAULT_USER,
        password_hash: await hashPassword(randomBytes(18).toString('base64url')),
        generated,
      },
    }),
    'create the default user',
  );
  await saveKey(s, DEFAULT_USER, generated.privateKeyPem, `the user ${DEFAULT_USER}`);
}

/** The default user a member of the default organization and in its admins group. */
async function makeDefaultUserAdmin(s: Setup): Promise<void> {
  const member = await org(s, { type: 'get_member', username: DEFAULT_USER });
  if (member.status === 404)
    expectOk(await org(s, { type: 'add_member', username: DEFAULT_USER }), 'associate the default user');
  const admins = await org(s, { type: 'get_group', name: 'admins' });
  const adminUsers = (admins.body as { users?: string[] }).users ?? [];
  if (!adminUsers.includes(DEFAULT_USER)) {
    expectOk(
      await org(s, {
        type: 'update_group',
        name: 'admins',
        newName: 'admins',
        members: { users: [...adminUsers, DEFAULT_USER] },
      }),
      'add the default user to admins',
    );
  }
}

async function writeCliConfig(s: Setup): Promise<void> {
  const { o } = s;
  const configFile = join(o.dataDir, 'config.rb');
  await writeFile(
    configFile,
    [
      '# cli configuration for the default user, written at first start',
      `server_url "${o.apiUrl}/organizations/${o.orgName}"`,
      `node_name "${DEFAULT_USER}"`,
      `client_key "${join(o.dataDir, `${DEFAULT_USER}.pem`)}"`,
      '',
    ].join('\n'),
  );
  s.written.push(configFile);
  o.log.info(`first start: wrote the cli configuration of the user ${DEFAULT_USER}`, { file: configFile });
}

function expectOk(reply: Reply, what: string): void {
  if (reply.status >= 300)
    throw new Error(`first start could not ${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
}
