// One organization actor: every org-scoped request enters here, is decided by a pure handler, persisted,
// applied, then answered. Requests never see a change the store does not hold.
import { dispatch, spawn, type Ref } from 'nact';
import type { Store } from '../src/store/store.js';
import { liveKeys } from './key-ops.js';
import { handleClientOp, type ClientOp } from './org-clients.js';
import { handleAclOp, type AclOp } from './org-acl.js';
import { handleGroupOp, renameWrites, type GroupOp } from './org-groups.js';
import { handleObjectOp, type ObjectOp } from './org-objects.js';
import { handlePushOp, PUSH_OPS, type PushOp, type PushOutcome } from './org-push.js';
import { OrgPush, type PushReport } from './org-push-runtime.js';
import { handleSearchOp, type SearchOp } from './org-search.js';
import type { NodeMsg } from './node.js';
import type { PushPorts } from './push-ports.js';
import { handleOrgObjectOp, type OrgObjectOp, type OrgObjectOutcome } from './org-object.js';
import { applyWrites, persistWrites, type OrgState, type OrgWrite, type Outcome } from './org-state.js';
import { fail, type Reply, type RequestContext } from './reply.js';
import { storeFailure, type UsersMsg } from './users.js';

export type OrgOp = ClientOp | GroupOp | OrgObjectOp | ObjectOp | AclOp | PushOp | SearchOp;

export interface OrgPrincipal {
  /** Live keys of the client of that name, if any. */
  clientKeys: Array<{ name: string; pem: string }>;
  validator: boolean;
  /** Is a user of that name associated with the organization? */
  member: boolean;
}

export type OrgMsg =
  | { type: 'principal'; name: string; replyTo: Ref<OrgPrincipal | null> }
  | { type: 'request'; ctx: RequestContext; op: OrgOp; replyTo: Ref<Reply> }
  | { type: 'user_deleted'; username: string }
  | PushReport;

export interface OrgPorts {
  store: Store;
  now: () => number;
  users: Ref<UsersMsg>;
  /** Called once the organization's data is gone from the store. */
  deleted: (name: string) => void;
  push: PushPorts;
}

/** What the registry keeps of an organization: its actor, and the way in for the push-jobs transport. */
export interface OrgHandle {
  ref: Ref<OrgMsg>;
  /** The node's actor, spawned on demand: the transport calls this only for authenticated messages. */
  nodeActor(node: string): Ref<NodeMsg>;
  stop(): Promise<void>;
}

const CLIENT_OPS = new Set<OrgOp['type']>([
  'list_clients', 'create_client', 'get_client', 'update_client', 'delete_client',
  'list_client_keys', 'get_client_key', 'create_client_key', 'update_client_key', 'delete_client_key',
]);
const GROUP_OPS = new Set<OrgOp['type']>([
  'list_groups', 'create_group', 'get_group', 'update_group', 'delete_group',
  'list_containers', 'create_container', 'get_container', 'delete_container',
]);

const OBJECT_OPS = new Set<OrgOp['type']>([
  'list_objects', 'create_object', 'get_object', 'update_object', 'delete_object',
  'list_items', 'create_item', 'get_item', 'update_item', 'delete_item',
]);

function decide(state: OrgState, ctx: RequestContext, op: OrgOp, nowMs: number, push: PushPorts): OrgObjectOutcome & PushOutcome {
  if (PUSH_OPS.has(op.type)) return handlePushOp(state, ctx, op as PushOp, push.settings, nowMs);
  if (CLIENT_OPS.has(op.type)) return handleClientOp(state, ctx, op as ClientOp, nowMs);
  if (GROUP_OPS.has(op.type)) return handleGroupOp(state, ctx, op as GroupOp);
  if (OBJECT_OPS.has(op.type)) return handleObjectOp(state, ctx, op as ObjectOp);
  if (op.type === 'get_acl' || op.type === 'put_acl') return handleAclOp(state, ctx, op);
  if (op.type === 'search' || op.type === 'list_indexes') return handleSearchOp(state, ctx, op);
  return handleOrgObjectOp(state, ctx, op as OrgObjectOp, nowMs);
}

export function spawnOrg(parent: Ref<unknown>, initial: OrgState, ports: OrgPorts): OrgHandle {
  const name = initial.org.name;
  let self: Ref<OrgMsg> | undefined;
  const push = new OrgPush(name, initial, ports.push, () => {
    if (!self) throw new Error(`organization ${name} is not running`);
    return self;
  });
  const commit = async (state: OrgState, writes: readonly OrgWrite[]) => {
    await persistWrites(ports.store, name, writes);
    applyWrites(state, writes);
    const org = writes.find((w) => w.coll === 'org');
    if (org?.coll === 'org' && org.doc !== null) dispatch(ports.users, { type: 'org_info', org: name, full_name: org.doc.full_name, guid: org.doc.guid });
  };

  self = spawn(parent as Ref<never>, async (state: OrgState, msg: OrgMsg) => {
    if (msg.type === 'node_availability' || msg.type === 'job_summary' || msg.type === 'push_tick') {
      push.report(msg);
      return state;
    }
    if (msg.type === 'principal') {
      if (state.deleted) {
        dispatch(msg.replyTo, null);
        return state;
      }
      const client = state.clients.get(msg.name);
      dispatch(msg.replyTo, {
        clientKeys: client ? liveKeys(client.keys, ports.now()) : [],
        validator: client?.validator ?? false,
        member: state.members.has(msg.name),
      });
      return state;
    }
    if (msg.type === 'user_deleted') {
      // A deleted account leaves no trace: membership, groups and ACL entries, so a later account with the
      // same name inherits nothing.
      const writes: OrgWrite[] = [{ coll: 'members', id: msg.username, doc: null }, ...renameWrites(state, 'users', msg.username, null)];
      await commit(state, writes).catch((e: unknown) => storeFailure(e));
      return state;
    }
    if (state.deleted) {
      dispatch(msg.replyTo, fail(404, `organization '${name}' does not exist.`));
      return state;
    }
    let out: OrgObjectOutcome & PushOutcome & Outcome;
    try {
      out = decide(state, msg.ctx, msg.op, ports.now(), ports.push);
      if (out.writes) await commit(state, out.writes);
      if (PUSH_OPS.has(msg.op.type)) {
        await push.run(out, msg.ctx, msg.replyTo);
        return state;
      }
    } catch (e) {
      dispatch(msg.replyTo, storeFailure(e));
      return state;
    }
    if (out.association) dispatch(ports.users, { type: 'association', org: name, ...out.association });
    if (out.orgDeleted) {
      state.push.dirty.clear(); // nothing of a deleted organization may be written after its data is dropped
      await ports.store.drop(`org/${name}`).catch((e: unknown) => storeFailure(e));
      dispatch(ports.users, { type: 'org_deleted', org: name });
      ports.push.closeOrg(name);
      ports.deleted(name);
    }
    if (out.renderUser !== undefined) {
      const readBy = msg.op.type === 'get_member' ? { readBy: msg.ctx } : {};
      dispatch(ports.users, { type: 'render_user', name: out.renderUser, apiVersion: msg.ctx.apiVersion, ...readBy, replyTo: msg.replyTo });
    } else {
      dispatch(msg.replyTo, out.reply);
    }
    return state;
  }, `org-${name}`, { initialState: initial });
  push.resume();
  // Ticks drive node silence detection and the write-behind of node states.
  const ticker = setInterval(() => self && dispatch(self, { type: 'push_tick' }), ports.push.settings.heartbeat_interval);
  ticker.unref();
  return {
    ref: self,
    nodeActor: (node) => push.nodeActor(node),
    // Node states still waiting for the write-behind are saved, so a restart brings back the latest.
    stop: async () => {
      clearInterval(ticker);
      await push.flush();
    },
  };
}
