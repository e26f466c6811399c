// The _acl endpoints of an organization's objects and of the organization itself (spec 4.2; reference 5.1).
import type { Hono } from 'hono';
import { PERMISSIONS, type Permission } from '../../auth/acl.js';
import type { InfraSystem } from '../../../actors/system.js';
import type { AclKind } from '../../../actors/org/ops/acls.js';
import type { AuthEnv } from '../authenticate.js';
import { parseBody } from '../body.js';
import { ApiError } from '../errors.js';
import { askOrg, param, route, type Ctx } from '../respond.js';
import { acePutSchema } from '../object-schemas.js';

/** Data bags are not here: their items' routes serve their ACL (objects.ts). */
const KINDS: AclKind[] = ['nodes', 'roles', 'environments', 'clients', 'groups', 'containers'];

function permOf(c: Ctx): Permission {
  const p = param(c, 'perm');
  if (!(PERMISSIONS as readonly string[]).includes(p))
    throw ApiError.of(400, `Invalid permission '${p}': expected one of ${PERMISSIONS.join(', ')}`);
  return p as Permission;
}

/** PUT of one permission's ACE. */
export function putAce(c: Ctx, system: InfraSystem, kind: AclKind, name: string): Promise<Response> {
  const perm = permOf(c);
  const body = parseBody(c, acePutSchema(perm));
  const ace = body[perm];
  if (ace === undefined) throw ApiError.of(400, `Field '${perm}' missing`);
  const input: { actors: string[]; groups: string[]; users?: string[]; clients?: string[] } = {
    actors: ace.actors,
    groups: ace.groups,
  };
  if (ace.users !== undefined) input.users = ace.users;
  if (ace.clients !== undefined) input.clients = ace.clients;
  return askOrg(c, system, { type: 'put_acl', kind, name, perm, ace: input });
}

/** GET of an ACL; `?detail=granular` splits its actors into users and clients. */
export function getAcl(c: Ctx, system: InfraSystem, kind: AclKind, name: string): Promise<Response> {
  return askOrg(c, system, { type: 'get_acl', kind, name, granular: c.req.query('detail') === 'granular' });
}

/** Registered before the object routes so `_acl` never reads as an object name. */
export function aclRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  route(app, '/organizations/:org/organizations/_acl', {
    GET: (c) => getAcl(c, system, 'organization', ''),
  });
  route(app, '/organizations/:org/organizations/_acl/:perm', {
    PUT: (c) => putAce(c, system, 'organization', ''),
  });
  for (const kind of KINDS) {
    route(app, `/organizations/:org/${kind}/:name/_acl`, {
      GET: (c) => getAcl(c, system, kind, param(c, 'name')),
    });
    route(app, `/organizations/:org/${kind}/:name/_acl/:perm`, {
      PUT: (c) => putAce(c, system, kind, param(c, 'name')),
    });
  }
}
