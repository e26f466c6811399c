// Clients of one organization and their keys (reference 4.2, 4.3; spec 5.3 for the validator).
import { emptyAcl, mergeAcl, ownerAcl, renameInAcl } from '../../../src/auth/acl.js';
import type { ClientDoc } from '../../shared/documents.js';
import {
  createdWithKey,
  createKey,
  deleteKey,
  getKey,
  listKeys,
  updateKey,
  type KeyInput,
  type KeyResult,
} from '../../shared/key-ops.js';
import { accessFor, orgUri } from '../access.js';
import { renameWrites } from '../renames.js';
import type { OrgState, OrgWrite } from '../org-state.js';
import type { HandlerEnv, OrgOutcome } from '../outcome.js';
import { fail, forbidden, ok, type Reply, type RequestContext } from '../../shared/reply.js';

export interface ClientInput {
  name: string;
  validator?: boolean;
  public_key?: string;
  create_key?: boolean;
  generated?: { privateKeyPem: string; publicKeyPem: string };
}

export type ClientOp =
  | { type: 'list_clients' }
  | { type: 'create_client'; input: ClientInput }
  | { type: 'get_client'; name: string }
  | { type: 'update_client'; name: string; input: { name?: string; validator?: boolean } }
  | { type: 'delete_client'; name: string }
  | { type: 'list_client_keys'; name: string }
  | { type: 'get_client_key'; name: string; key: string }
  | { type: 'create_client_key'; name: string; input: KeyInput }
  | { type: 'update_client_key'; name: string; key: string; input: KeyInput }
  | { type: 'delete_client_key'; name: string; key: string };

export function handleClientOp(state: OrgState, ctx: RequestContext, op: ClientOp, env: HandlerEnv): OrgOutcome {
  const access = accessFor(state, ctx);
  const base = `${orgUri(ctx, state)}/clients`;
  switch (op.type) {
    case 'list_clients':
      if (!access.canContainer('clients', 'read')) return { reply: forbidden('read') };
      return { reply: ok(Object.fromEntries([...state.clients.keys()].sort().map((n) => [n, `${base}/${n}`]))) };
    case 'create_client':
      return createClient(state, ctx, op.input, base);
    case 'get_client': {
      const client = state.clients.get(op.name);
      if (!client) return missing(op.name);
      if (!access.can(client.acl, 'read')) return { reply: forbidden('read') };
      return { reply: ok(clientJson(state, client, ctx.apiVersion)) };
    }
    case 'update_client':
      return updateClient(state, ctx, op.name, op.input, base);
    case 'delete_client': {
      const client = state.clients.get(op.name);
      if (!client) return missing(op.name);
      if (!access.can(client.acl, 'delete')) return { reply: forbidden('delete') };
      const writes: OrgWrite[] = [
        { coll: 'clients', id: client.name, doc: null },
        ...renameWrites(state, 'clients', client.name, null, { coll: 'clients', id: client.name }),
      ];
      return { reply: ok(clientJson(state, client, ctx.apiVersion)), writes };
    }
    default:
      return handleClientKeyOp(state, ctx, op, base, env.now);
  }
}

function handleClientKeyOp(
  state: OrgState,
  ctx: RequestContext,
  op: Extract<ClientOp, { name: string }>,
  base: string,
  nowMs: number,
): OrgOutcome {
  const client = state.clients.get(op.name);
  if (!client) return missing(op.name);
  const access = accessFor(state, ctx);
  const uri = `${base}/${client.name}`;
  // Reading keys is governed by public_key_read_access (spec 4.3); changing them needs update on the client.
  const readable = access.inGroup('public_key_read_access') || access.can(client.acl, 'read');
  const self = ctx.requestor.kind === 'client' && ctx.requestor.name === client.name ? ctx.authKey : null;
  const save = (r: KeyResult): OrgOutcome =>
    r.keys
      ? { reply: r.reply, writes: [{ coll: 'clients', id: client.name, doc: { ...client, keys: r.keys } }] }
      : { reply: r.reply };
  switch (op.type) {
    case 'list_client_keys':
      return { reply: readable ? listKeys(client.keys, uri, nowMs) : keyReadDenied() };
    case 'get_client_key':
      return { reply: readable ? getKey(client.keys, op.key, client.name) : keyReadDenied() };
    case 'create_client_key':
      return access.can(client.acl, 'update')
        ? save(createKey(client.keys, op.input, uri))
        : { reply: forbidden('update') };
    case 'update_client_key':
      return access.can(client.acl, 'update')
        ? save(updateKey(client.keys, op.key, op.input, client.name, uri, self))
        : { reply: forbidden('update') };
    case 'delete_client_key':
      return access.can(client.acl, 'update')
        ? save(deleteKey(client.keys, op.key, client.name, self))
        : { reply: forbidden('update') };
    default:
      return { reply: fail(500, 'internal service error') };
  }
}

/** The refusal of an organization's key read to a requestor outside public_key_read_access (reference 2). */
export function keyReadDenied(): Reply {
  return fail(
    403,
    'Requestor not found to be a member of group public_key_read_access which is necessary for read access for this request.',
  );
}

function createClient(state: OrgState, ctx: RequestContext, input: ClientInput, base: string): OrgOutcome {
  const r = ctx.requestor;
  if (r.validator) {
    if (input.validator) return { reply: forbidden('create') };
  } else if (!accessFor(state, ctx).canContainer('clients', 'create')) {
    return { reply: forbidden('create') };
  }
  if (state.clients.has(input.name)) return { reply: fail(409, 'Client already exists') };
  const publicKey = input.generated?.publicKeyPem ?? input.public_key;
  const keys: ClientDoc['keys'] = publicKey ? { default: { public_key: publicKey, expiration_date: 'infinity' } } : {};
  // New object ACL = creator entry + container ACL (reference 5.2); a client also holds all rights on itself.
  const creator = r.superuser || r.validator ? emptyAcl() : ownerAcl(r.kind, r.name);
  const acl = mergeAcl(
    mergeAcl(creator, state.containers.get('clients')?.acl ?? emptyAcl()),
    ownerAcl('client', input.name),
  );
  const doc: ClientDoc = { name: input.name, validator: input.validator ?? false, keys, acl };
  const writes: OrgWrite[] = [{ coll: 'clients', id: doc.name, doc }];
  const clientsGroup = state.groups.get('clients');
  if (clientsGroup && !doc.validator)
    writes.push({
      coll: 'groups',
      id: 'clients',
      doc: { ...clientsGroup, clients: [...clientsGroup.clients, doc.name] },
      appendedClients: [doc.name],
    });
  const uri = `${base}/${doc.name}`;
  return { reply: ok(createdWithKey(uri, publicKey, input.generated, ctx.apiVersion, true), 201, uri), writes };
}

function updateClient(
  state: OrgState,
  ctx: RequestContext,
  name: string,
  input: { name?: string; validator?: boolean },
  base: string,
): OrgOutcome {
  const client = state.clients.get(name);
  if (!client) return missing(name);
  if (!accessFor(state, ctx).can(client.acl, 'update')) return { reply: forbidden('update') };
  const newName = input.name ?? name;
  if (newName !== name && state.clients.has(newName)) return { reply: fail(409, 'Client already exists') };
  const doc: ClientDoc = { ...client, name: newName, validator: input.validator ?? client.validator };
  const writes: OrgWrite[] = [{ coll: 'clients', id: newName, doc }];
  if (newName !== name) {
    // The client keeps its rights on itself and on what it created under the new name.
    doc.acl = renameInAcl(client.acl, 'clients', name, newName) ?? client.acl;
    writes.push(
      { coll: 'clients', id: name, doc: null },
      ...renameWrites(state, 'clients', name, newName, { coll: 'clients', id: name }),
    );
  }
  const body = clientJson(state, doc, ctx.apiVersion);
  return newName !== name ? { reply: ok(body, 201, `${base}/${newName}`), writes } : { reply: ok(body), writes };
}

function clientJson(state: OrgState, c: ClientDoc, apiVersion: number): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: c.name,
    clientname: c.name,
    validator: c.validator,
    orgname: state.org.name,
    json_class: 'Chef::ApiClient',
    chef_type: 'client',
  };
  if (apiVersion < 1 && c.keys.default) body.public_key = c.keys.default.public_key;
  return body;
}

function missing(name: string): OrgOutcome {
  return { reply: fail(404, `Cannot load client ${name}`) };
}
