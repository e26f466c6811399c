// Nodes, roles, environments and data bags with their items: JSON documents under their containers' ACLs.
import type { Hono } from 'hono';
import type { z } from 'zod';
import type { InfraSystem } from '../../../actors/system.js';
import type { ObjectKind } from '../../../actors/org/ops/objects.js';
import type { AuthEnv } from '../authenticate.js';
import { parseBody } from '../body.js';
import { ApiError } from '../errors.js';
import { askOrg, notAllowed, param, route, type Ctx } from '../respond.js';
import { getAcl, putAce } from './acls.js';
import { dataBagItemSchema, dataBagSchema, environmentSchema, nodeSchema, roleSchema } from '../object-schemas.js';

type DocSchema = z.ZodType<{ name: string } & Record<string, unknown>>;
const DOCUMENTS: Array<{ kind: Exclude<ObjectKind, 'data'>; schema: DocSchema; label: string }> = [
  { kind: 'nodes', schema: nodeSchema, label: 'Node' },
  { kind: 'roles', schema: roleSchema, label: 'Role' },
  { kind: 'environments', schema: environmentSchema, label: 'Environment' },
];

export function objectRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  for (const { kind, schema, label } of DOCUMENTS) {
    route(app, `/organizations/:org/${kind}`, {
      GET: (c) => askOrg(c, system, { type: 'list_objects', kind }),
      POST: (c) => {
        const body = parseBody(c, schema);
        return askOrg(c, system, { type: 'create_object', kind, name: body.name, body });
      },
    });
    route(app, `/organizations/:org/${kind}/:name`, {
      GET: (c) => askOrg(c, system, { type: 'get_object', kind, name: param(c, 'name') }),
      PUT: (c) => {
        const name = param(c, 'name');
        const body = parseBody(c, schema);
        if (body.name !== name) throw ApiError.of(400, `${label} name mismatch.`);
        return askOrg(c, system, { type: 'update_object', kind, name, body });
      },
      DELETE: (c) => askOrg(c, system, { type: 'delete_object', kind, name: param(c, 'name') }),
    });
  }

  route(app, '/organizations/:org/data', {
    GET: (c) => askOrg(c, system, { type: 'list_objects', kind: 'data' }),
    POST: (c) => {
      const { name } = parseBody(c, dataBagSchema);
      return askOrg(c, system, {
        type: 'create_object',
        kind: 'data',
        name,
        body: { name, json_class: 'Chef::DataBag', chef_type: 'data_bag' },
      });
    },
  });
  route(app, '/organizations/:org/data/:bag', {
    GET: (c) => askOrg(c, system, { type: 'list_items', bag: param(c, 'bag') }),
    POST: (c) => {
      const item = parseBody(c, dataBagItemSchema);
      return askOrg(c, system, { type: 'create_item', bag: param(c, 'bag'), id: item.id, body: item });
    },
    DELETE: (c) => askOrg(c, system, { type: 'delete_object', kind: 'data', name: param(c, 'bag') }),
  });
  // A bag's `_acl` and `_acl/PERM` share the item's routes, as the item `_acl`: the router takes no fixed segment
  // beside a parameter (app.ts). They answer as when they had routes of their own (acls.ts).
  const item = '/organizations/:org/data/:bag/:item';
  const isAcl = (c: Ctx) => param(c, 'item') === '_acl';
  app.get(item, (c) =>
    isAcl(c)
      ? getAcl(c, system, 'data', param(c, 'bag'))
      : askOrg(c, system, { type: 'get_item', bag: param(c, 'bag'), id: param(c, 'item') }),
  );
  app.put(item, (c) => (isAcl(c) ? notAllowed(c, 'GET') : updateItem(c, system)));
  app.delete(item, (c) =>
    isAcl(c)
      ? notAllowed(c, 'GET')
      : askOrg(c, system, { type: 'delete_item', bag: param(c, 'bag'), id: param(c, 'item') }),
  );
  app.all(item, (c) => notAllowed(c, isAcl(c) ? 'GET' : 'GET, PUT, DELETE'));
  const notFound = () => {
    throw ApiError.of(404, 'not found');
  };
  app.put(`${item}/:perm`, (c) => (isAcl(c) ? putAce(c, system, 'data', param(c, 'bag')) : notFound()));
  app.all(`${item}/:perm`, (c) => (isAcl(c) ? notAllowed(c, 'PUT') : notFound()));
}

function updateItem(c: Ctx, system: InfraSystem): Promise<Response> {
  const id = param(c, 'item');
  // An item may be sent without its id; the URL names it.
  const item = parseBody(c, dataBagItemSchema.partial({ id: true }));
  if (item.id !== undefined && item.id !== id) throw ApiError.of(400, 'DataBagItem name mismatch.');
  return askOrg(c, system, { type: 'update_item', bag: param(c, 'bag'), id, body: { ...item, id } });
}
