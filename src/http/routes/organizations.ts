// /organizations, /organizations/ORG, the organization's user associations and its members' keys (reference 3, 4.3).
import type { Hono } from 'hono';
import type { Ref } from 'nact';
import { generateKeyPair } from '../../auth/rsa-keys.js';
import { ask, type InfraSystem } from '../../../actors/system.js';
import type { Reply } from '../../../actors/shared/reply.js';
import type { AuthEnv } from '../authenticate.js';
import { parseBody } from '../body.js';
import { ApiError } from '../errors.js';
import { askOrg, askUsers, param, queryOrg, route, send, type Ctx } from '../respond.js';
import { memberAddSchema, orgCreateSchema, orgUpdateSchema } from '../schemas.js';

export function organizationRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  route(app, '/organizations', {
    GET: async (c) => {
      const ctx = c.get('rc');
      return send(c, await ask(system.root, (replyTo: Ref<Reply>) => ({ type: 'list_orgs' as const, ctx, replyTo })));
    },
    POST: async (c) => {
      const ctx = c.get('rc');
      if (!ctx.requestor.superuser) throw ApiError.of(403, 'missing create permission');
      const body = parseBody(c, orgCreateSchema);
      const validatorKey = await generateKeyPair();
      return send(
        c,
        await ask(system.root, (replyTo: Ref<Reply>) => ({
          type: 'create_org' as const,
          ctx,
          name: body.name,
          full_name: body.full_name,
          validatorKey,
          replyTo,
        })),
      );
    },
  });

  route(app, '/organizations/:org', {
    GET: (c) => askOrg(c, system, { type: 'get_org' }),
    PUT: (c) => {
      const body = parseBody(c, orgUpdateSchema);
      return askOrg(c, system, { type: 'update_org', name: body.name, full_name: body.full_name });
    },
    DELETE: (c) => askOrg(c, system, { type: 'delete_org' }),
  });

  route(app, '/organizations/:org/users', {
    GET: (c) => askOrg(c, system, { type: 'list_members' }),
    POST: async (c) => {
      const body = parseBody(c, memberAddSchema);
      const username = body.username ?? body.user ?? '';
      const exists = await ask(system.users, (replyTo: Ref<boolean>) => ({
        type: 'exists' as const,
        name: username,
        replyTo,
      }));
      if (!exists) throw new ApiError(404, { error: `Could not find user ${username}` });
      return askOrg(c, system, { type: 'add_member', username });
    },
  });

  route(app, '/organizations/:org/users/:user', {
    GET: (c) => askOrg(c, system, { type: 'get_member', username: param(c, 'user') }),
    DELETE: (c) => askOrg(c, system, { type: 'remove_member', username: param(c, 'user') }),
  });

  // GET only (reference 4.3): the organization decides, then the users actor, which holds the keys, answers.
  const memberKeys = async (c: Ctx, key?: string) => {
    const username = param(c, 'user');
    const allowed = await queryOrg(c, system, { type: 'check_key_read', username });
    if (allowed.status !== 200) return send(c, allowed);
    return askUsers(
      c,
      system,
      key === undefined
        ? { type: 'read_member_keys', name: username }
        : { type: 'read_member_keys', name: username, key },
    );
  };
  route(app, '/organizations/:org/users/:user/keys', { GET: (c) => memberKeys(c) });
  route(app, '/organizations/:org/users/:user/keys/:key', { GET: (c) => memberKeys(c, param(c, 'key')) });
}
