// /organizations/ORG/groups and /organizations/ORG/containers (reference 4.4, 4.5).
import type { Hono } from 'hono';
import type { InfraSystem } from '../../../actors/system.js';
import type { GroupMembers } from '../../../actors/org/ops/groups.js';
import type { AuthEnv } from '../authenticate.js';
import { parseBody } from '../body.js';
import { askOrg, param, route } from '../respond.js';
import { containerCreateSchema, groupCreateSchema, groupUpdateSchema } from '../schemas.js';

export function groupRoutes(app: Hono<AuthEnv>, system: InfraSystem): void {
  route(app, '/organizations/:org/groups', {
    GET: (c) => askOrg(c, system, { type: 'list_groups' }),
    POST: (c) => {
      const body = parseBody(c, groupCreateSchema);
      return askOrg(c, system, { type: 'create_group', name: body.id ?? body.groupname ?? '' });
    },
  });

  route(app, '/organizations/:org/groups/:group', {
    GET: (c) => askOrg(c, system, { type: 'get_group', name: param(c, 'group') }),
    PUT: (c) => {
      const body = parseBody(c, groupUpdateSchema);
      const name = param(c, 'group');
      const members: GroupMembers = {};
      if (body.actors?.users !== undefined) members.users = body.actors.users;
      if (body.actors?.clients !== undefined) members.clients = body.actors.clients;
      if (body.actors?.groups !== undefined) members.groups = body.actors.groups;
      return askOrg(c, system, { type: 'update_group', name, newName: body.groupname ?? name, members });
    },
    DELETE: (c) => askOrg(c, system, { type: 'delete_group', name: param(c, 'group') }),
  });

  route(app, '/organizations/:org/containers', {
    GET: (c) => askOrg(c, system, { type: 'list_containers' }),
    POST: (c) =>
      askOrg(c, system, {
        type: 'create_container',
        name: parseBody(c, containerCreateSchema).containername,
      }),
  });

  route(app, '/organizations/:org/containers/:container', {
    GET: (c) => askOrg(c, system, { type: 'get_container', name: param(c, 'container') }),
    DELETE: (c) => askOrg(c, system, { type: 'delete_container', name: param(c, 'container') }),
  });
}
