// The organization's JSON documents: nodes, roles, environments, data bags and their items (spec 2.3,
// 2.6; reference 5.2). Each kind lives under its container's ACL; a new document takes its creator's
// entry plus the container's ACL.
import { emptyAcl, mergeAcl, ownerAcl, type Acl, type Permission } from '../../../src/auth/acl.js';
import type { ObjectDoc } from '../../shared/documents.js';
import { accessFor, orgUri, type Access } from '../access.js';
import type { OrgState, OrgWrite } from '../org-state.js';
import type { OrgOutcome } from '../outcome.js';
import { fail, forbidden, ok, type RequestContext } from '../../shared/reply.js';

export type ObjectKind = 'nodes' | 'roles' | 'environments' | 'data';

interface KindInfo {
  /** Word used in messages: `Cannot load node web1`, `Node already exists`. */
  word: string;
  label: string;
}
const KINDS: Record<ObjectKind, KindInfo> = {
  nodes: { word: 'node', label: 'Node' },
  roles: { word: 'role', label: 'Role' },
  environments: { word: 'environment', label: 'Environment' },
  data: { word: 'data bag', label: 'Data Bag' },
};

/** `_default` is made with the organization and never changes (as environments work in such servers). */
export const DEFAULT_ENVIRONMENT = '_default';

export type ObjectOp =
  | { type: 'list_objects'; kind: ObjectKind }
  | { type: 'create_object'; kind: ObjectKind; name: string; body: Record<string, unknown> }
  | { type: 'get_object'; kind: ObjectKind; name: string }
  | { type: 'update_object'; kind: ObjectKind; name: string; body: Record<string, unknown> }
  | { type: 'delete_object'; kind: ObjectKind; name: string }
  | { type: 'list_items'; bag: string }
  | { type: 'create_item'; bag: string; id: string; body: Record<string, unknown> }
  | { type: 'get_item'; bag: string; id: string }
  | { type: 'update_item'; bag: string; id: string; body: Record<string, unknown> }
  | { type: 'delete_item'; bag: string; id: string };

export function handleObjectOp(state: OrgState, ctx: RequestContext, op: ObjectOp): OrgOutcome {
  const access = accessFor(state, ctx);
  switch (op.type) {
    case 'list_objects': {
      if (!access.canContainer(op.kind, 'read')) return { reply: forbidden('read') };
      const base = `${orgUri(ctx, state)}/${op.kind}`;
      return { reply: ok(Object.fromEntries([...state[op.kind].keys()].sort().map((n) => [n, `${base}/${n}`]))) };
    }
    case 'create_object': {
      if (!access.canContainer(op.kind, 'create')) return { reply: forbidden('create') };
      if (state[op.kind].has(op.name)) return { reply: fail(409, `${KINDS[op.kind].label} already exists`) };
      const doc: ObjectDoc = { name: op.name, body: op.body, acl: newObjectAcl(state, ctx, op.kind, op.name) };
      const uri = `${orgUri(ctx, state)}/${op.kind}/${op.name}`;
      return { reply: ok({ uri }, 201, uri), writes: [{ coll: op.kind, id: op.name, doc }] };
    }
    case 'get_object':
    case 'update_object':
    case 'delete_object':
      return oneObject(state, access, op);
    default:
      return handleItemOp(state, ctx, access, op);
  }
}

function oneObject(
  state: OrgState,
  access: Access,
  op: Extract<ObjectOp, { kind: ObjectKind; name: string }>,
): OrgOutcome {
  const doc = state[op.kind].get(op.name);
  if (!doc) return { reply: fail(404, `Cannot load ${KINDS[op.kind].word} ${op.name}`) };
  const perm: Permission = op.type === 'get_object' ? 'read' : op.type === 'update_object' ? 'update' : 'delete';
  if (!access.can(doc.acl, perm)) return { reply: forbidden(perm) };
  if (op.type === 'get_object') return { reply: ok(doc.body) };
  if (op.kind === 'environments' && op.name === DEFAULT_ENVIRONMENT) {
    return { reply: fail(405, `The '${DEFAULT_ENVIRONMENT}' environment cannot be modified.`) };
  }
  if (op.type === 'delete_object') {
    const writes: OrgWrite[] = [{ coll: op.kind, id: op.name, doc: null }];
    if (op.kind === 'data') {
      for (const id of state.items.keys())
        if (id.startsWith(`${op.name}/`)) writes.push({ coll: 'items', id, doc: null });
    }
    return { reply: ok(doc.body), writes };
  }
  return { reply: ok(op.body), writes: [{ coll: op.kind, id: op.name, doc: { ...doc, body: op.body } }] };
}

function handleItemOp(
  state: OrgState,
  ctx: RequestContext,
  access: Access,
  op: Extract<ObjectOp, { bag: string }>,
): OrgOutcome {
  const bag = state.data.get(op.bag);
  if (!bag) return { reply: fail(404, `Cannot load data bag ${op.bag}`) };
  // Items share their bag's ACL: reading needs read on the bag, changing them needs update.
  const perm: Permission = op.type === 'list_items' || op.type === 'get_item' ? 'read' : 'update';
  if (!access.can(bag.acl, perm)) return { reply: forbidden(perm) };
  if (op.type === 'list_items') {
    const base = `${orgUri(ctx, state)}/data/${op.bag}`;
    const prefix = `${op.bag}/`;
    const ids = [...state.items.keys()]
      .filter((k) => k.startsWith(prefix))
      .map((k) => k.slice(prefix.length))
      .sort();
    return { reply: ok(Object.fromEntries(ids.map((id) => [id, `${base}/${id}`]))) };
  }
  const key = `${op.bag}/${op.id}`;
  const item = state.items.get(key);
  if (op.type === 'create_item') {
    if (item) return { reply: fail(409, 'Data Bag Item already exists') };
    const uri = `${orgUri(ctx, state)}/data/${op.bag}/${op.id}`;
    return { reply: ok(op.body, 201, uri), writes: [{ coll: 'items', id: key, doc: { name: op.id, body: op.body } }] };
  }
  if (!item) return { reply: fail(404, `Cannot load data bag item ${op.id} for data bag ${op.bag}`) };
  if (op.type === 'get_item') return { reply: ok(item.body) };
  if (op.type === 'delete_item') return { reply: ok(item.body), writes: [{ coll: 'items', id: key, doc: null }] };
  return { reply: ok(op.body), writes: [{ coll: 'items', id: key, doc: { name: op.id, body: op.body } }] };
}

/** Creator entry + container ACL; a node also grants its own client everything but create (spec 2.3). */
export function newObjectAcl(state: OrgState, ctx: RequestContext, kind: ObjectKind, name: string): Acl {
  const r = ctx.requestor;
  const creator = r.superuser ? emptyAcl() : ownerAcl(r.kind, r.name);
  const acl = mergeAcl(creator, state.containers.get(kind)?.acl ?? emptyAcl());
  if (kind === 'nodes' && state.clients.has(name)) {
    for (const p of ['read', 'update', 'delete', 'grant'] as const) {
      if (!acl[p].clients.includes(name)) acl[p].clients.push(name);
    }
  }
  return acl;
}
