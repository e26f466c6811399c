// /users, their keys and organizations, and /server-admins (reference 4.1, 4.3; spec 2.2, 4.6).
import { PERMISSIONS, type Permission } from '../../auth/acl.js';
import { acePutSchema } from '../object-schemas.js';
import type { Hono } from 'hono';
import { hashPassword } from '../../auth/passwords.js';
import type { InfraSystem } from '../../../actors/system.js';
import type { UserInput } from '../../../actors/users/user-ops.js';
import type { AuthEnv } from '../authenticate.js';
import { parseBody } from '../body.js';
import { ApiError } from '../errors.js';
import { askUsers, param, route, type Ctx } from '../respond.js';
import { serverAdminAddSchema, userCreateSchema, userUpdateSchema } from '../schemas.js';
import { keyCreateInput, keyUpdateInput, refuseKeyFieldsSinceV1, withKey } from './keys.js';

/** Users answer only on global paths: a client is never a user (reference 1.6). */
function requireUser(c: Ctx): void {
  if (c.get('rc').requestor.kind !== 'user') throw ApiError.of(403, 'missing read permission');
}

export function userRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  accountRoutes(app, system);
  userAclRoutes(app, system);
  userKeyRoutes(app, system);
  serverAdminRoutes(app, system);
}

function accountRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  route(app, '/users', {
    GET: (c) =>
      askUsers(c, system, {
        type: 'list_users',
        email: c.req.query('email'),
        verbose: c.req.query('verbose') === 'true',
      }),
    POST: async (c) => askUsers(c, system, { type: 'create_user', input: await userCreateInput(c) }),
  });

  route(app, '/users/:user', {
    GET: (c) => askUsers(c, system, { type: 'get_user', name: param(c, 'user') }),
    PUT: async (c) => {
      const input = await userUpdateInput(c);
      return askUsers(c, system, { type: 'update_user', name: param(c, 'user'), input });
    },
    DELETE: (c) => askUsers(c, system, { type: 'delete_user', name: param(c, 'user') }),
  });
}

/** A new user from its body; a key pair is made for it when create_key asks (API v1) or no public_key is given. */
async function userCreateInput(c: Ctx): Promise<UserInput> {
  const body = parseBody(c, userCreateSchema);
  const apiVersion = c.get('rc').apiVersion;
  const input: UserInput = {
    username: body.username ?? body.name ?? '',
    email: body.email,
    display_name: body.display_name,
    password_hash: await hashPassword(body.password),
  };
  if (body.first_name !== undefined) input.first_name = body.first_name;
  if (body.middle_name !== undefined) input.middle_name = body.middle_name;
  if (body.last_name !== undefined) input.last_name = body.last_name;
  const generate = apiVersion >= 1 ? body.create_key === true : body.public_key === undefined;
  return withKey(input, body.public_key, generate);
}

/** The fields a PUT changes; since API v1 its keys change only through /users/USER/keys. */
async function userUpdateInput(c: Ctx): Promise<Partial<UserInput>> {
  const body = parseBody(c, userUpdateSchema);
  refuseKeyFieldsSinceV1(c.get('rc').apiVersion, body);
  const input: Partial<UserInput> = {};
  const newName = body.username ?? body.name;
  if (newName !== undefined) input.username = newName;
  for (const f of ['email', 'display_name', 'first_name', 'middle_name', 'last_name'] as const) {
    const v = body[f];
    if (v !== undefined) input[f] = v;
  }
  if (body.password !== undefined) input.password_hash = await hashPassword(body.password);
  return input;
}

function userAclRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  route(app, '/users/:user/_acl', {
    GET: (c) =>
      askUsers(c, system, {
        type: 'get_user_acl',
        name: param(c, 'user'),
        granular: c.req.query('detail') === 'granular',
      }),
  });
  route(app, '/users/:user/_acl/:perm', {
    PUT: (c) => {
      const perm = param(c, 'perm');
      if (!(PERMISSIONS as readonly string[]).includes(perm))
        throw ApiError.of(400, `Invalid permission '${perm}': expected one of ${PERMISSIONS.join(', ')}`);
      const p = perm as Permission;
      const ace = parseBody(c, acePutSchema(p))[p];
      if (ace === undefined) throw ApiError.of(400, `Field '${p}' missing`);
      const input: { actors: string[]; groups: string[]; users?: string[]; clients?: string[] } = {
        actors: ace.actors,
        groups: ace.groups,
      };
      if (ace.users !== undefined) input.users = ace.users;
      if (ace.clients !== undefined) input.clients = ace.clients;
      return askUsers(c, system, { type: 'put_user_acl', name: param(c, 'user'), perm: p, ace: input });
    },
  });
}

/** A user's organizations, and its keys. */
function userKeyRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  route(app, '/users/:user/organizations', {
    GET: (c) => askUsers(c, system, { type: 'list_user_orgs', name: param(c, 'user') }),
  });

  route(app, '/users/:user/keys', {
    GET: (c) => askUsers(c, system, { type: 'list_user_keys', name: param(c, 'user') }),
    POST: async (c) =>
      askUsers(c, system, {
        type: 'create_user_key',
        name: param(c, 'user'),
        input: await keyCreateInput(c),
      }),
  });

  route(app, '/users/:user/keys/:key', {
    GET: (c) => askUsers(c, system, { type: 'get_user_key', name: param(c, 'user'), key: param(c, 'key') }),
    PUT: async (c) =>
      askUsers(c, system, {
        type: 'update_user_key',
        name: param(c, 'user'),
        key: param(c, 'key'),
        input: await keyUpdateInput(c),
      }),
    DELETE: (c) => askUsers(c, system, { type: 'delete_user_key', name: param(c, 'user'), key: param(c, 'key') }),
  });
}

/** Our own administration path for the global group (reference 9.12: the original used SQL). */
function serverAdminRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  route(app, '/server-admins', {
    GET: (c) => {
      requireUser(c);
      return askUsers(c, system, { type: 'list_server_admins' });
    },
    POST: (c) => {
      requireUser(c);
      const body = parseBody(c, serverAdminAddSchema);
      return askUsers(c, system, { type: 'grant_server_admin', name: body.username });
    },
  });
  route(app, '/server-admins/:user', {
    DELETE: (c) => {
      requireUser(c);
      return askUsers(c, system, { type: 'remove_server_admin', name: param(c, 'user') });
    },
  });
}
