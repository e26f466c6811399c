// /organizations/ORG/clients and their keys (reference 4.2, 4.3).
import type { Hono } from 'hono';
import type { InfraSystem } from '../../../actors/system.js';
import type { ClientInput } from '../../../actors/org/ops/clients.js';
import type { AuthEnv } from '../authenticate.js';
import { parseBody } from '../body.js';
import { askOrg, param, route } from '../respond.js';
import { clientCreateSchema, clientUpdateSchema } from '../schemas.js';
import { keyCreateInput, keyUpdateInput, refuseKeyFieldsSinceV1, withKey } from './keys.js';

export function clientRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  route(app, '/organizations/:org/clients', {
    GET: (c) => askOrg(c, system, { type: 'list_clients' }),
    POST: async (c) => {
      const body = parseBody(c, clientCreateSchema);
      const apiVersion = c.get('rc').apiVersion;
      const input: ClientInput = { name: body.name ?? body.clientname ?? '' };
      if (body.validator !== undefined) input.validator = body.validator;
      // API v0 always generates a key unless one is given; v1 only when asked (reference 4.2).
      const generate = apiVersion >= 1 ? body.create_key === true : body.public_key === undefined;
      return askOrg(c, system, { type: 'create_client', input: await withKey(input, body.public_key, generate) });
    },
  });

  route(app, '/organizations/:org/clients/:client', {
    GET: (c) => askOrg(c, system, { type: 'get_client', name: param(c, 'client') }),
    PUT: (c) => {
      const body = parseBody(c, clientUpdateSchema);
      refuseKeyFieldsSinceV1(c.get('rc').apiVersion, body);
      const input: { name?: string; validator?: boolean } = {};
      const newName = body.name ?? body.clientname;
      if (newName !== undefined) input.name = newName;
      if (body.validator !== undefined) input.validator = body.validator;
      return askOrg(c, system, { type: 'update_client', name: param(c, 'client'), input });
    },
    DELETE: (c) => askOrg(c, system, { type: 'delete_client', name: param(c, 'client') }),
  });

  route(app, '/organizations/:org/clients/:client/keys', {
    GET: (c) => askOrg(c, system, { type: 'list_client_keys', name: param(c, 'client') }),
    POST: async (c) =>
      askOrg(c, system, {
        type: 'create_client_key',
        name: param(c, 'client'),
        input: await keyCreateInput(c),
      }),
  });

  route(app, '/organizations/:org/clients/:client/keys/:key', {
    GET: (c) => askOrg(c, system, { type: 'get_client_key', name: param(c, 'client'), key: param(c, 'key') }),
    PUT: async (c) =>
      askOrg(c, system, {
        type: 'update_client_key',
        name: param(c, 'client'),
        key: param(c, 'key'),
        input: await keyUpdateInput(c),
      }),
    DELETE: (c) => askOrg(c, system, { type: 'delete_client_key', name: param(c, 'client'), key: param(c, 'key') }),
  });
}
