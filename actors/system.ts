// Starts the actor tree: nact, the root actor that owns the organization registry, the global users actor,
// and one actor per organization, all restored from the store before the first request is taken.
import { dispatch, query, spawn, start, stop, type Ref } from 'nact';
import type { Store } from '../src/store/store.js';
import { validatorName, newOrgWrites } from './org-create.js';
import { spawnOrg, type OrgHandle, type OrgMsg } from './org.js';
import type { NodeMsg } from './node.js';
import type { PushPorts } from './push-ports.js';
import { applyWrites, emptyOrgState, loadOrg, persistWrites, ORGS_COLLECTION, type OrgState } from './org-state.js';
import { fail, failBare, forbidden, ok, type Reply, type RequestContext } from './reply.js';
import { loadUsers, spawnUsers, storeFailure, type UsersMsg } from './users.js';

export type RootMsg =
  | { type: 'list_orgs'; ctx: RequestContext; replyTo: Ref<Reply> }
  | { type: 'create_org'; ctx: RequestContext; name: string; full_name: string; validatorKey: { privateKeyPem: string; publicKeyPem: string }; replyTo: Ref<Reply> }
  | { type: 'org_deleted'; name: string };

export interface InfraSystem {
  store: Store;
  root: Ref<RootMsg>;
  users: Ref<UsersMsg>;
  /** The actor of an organization, or undefined when there is no such organization. */
  org(name: string): Ref<OrgMsg> | undefined;
  orgNames(): string[];
  /** The push-jobs transport's way in: the actor of a node with a verified message, or undefined. */
  nodeActor(org: string, node: string): Ref<NodeMsg> | undefined;
  stop(): Promise<void>;
}

export const ASK_TIMEOUT_MS = 30_000;

/** The server acting on its own behalf. */
const SERVER_CONTEXT: RequestContext = {
  requestor: { kind: 'user', name: 'pivotal', superuser: true, serverAdmin: true, validator: false },
  baseUrl: '', apiVersion: 1, authKey: '', authPublicKey: '',
};

/** Sends a request into the tree and waits for the answer. */
export function ask<M, R>(ref: Ref<M>, build: (replyTo: Ref<R>) => M, timeoutMs = ASK_TIMEOUT_MS): Promise<R> {
  return query(ref, build, timeoutMs) as Promise<R>;
}

export async function startSystem(store: Store, push: PushPorts, now: () => number = Date.now): Promise<InfraSystem> {
  const nact = start();
  const registry = new Map<string, OrgHandle>();

  const orgStates: OrgState[] = [];
  for (const raw of (await store.load(ORGS_COLLECTION)).values()) orgStates.push(await loadOrg(store, raw));
  const usersState = await loadUsers(store);
  for (const s of orgStates) {
    usersState.orgInfo.set(s.org.name, { full_name: s.org.full_name, guid: s.org.guid });
    for (const username of s.members.keys()) {
      const orgs = usersState.orgsOf.get(username) ?? new Set<string>();
      orgs.add(s.org.name);
      usersState.orgsOf.set(username, orgs);
    }
  }

  let root: Ref<RootMsg> | undefined;
  const users = spawnUsers(nact, usersState, {
    store, now,
    userDeleted: (org, username) => {
      const handle = registry.get(org);
      if (handle) dispatch(handle.ref, { type: 'user_deleted', username });
    },
    // Every organization, members or not: ACL entries may name a user that has left.
    userRenamed: (from, to) => {
      for (const [name, { ref }] of registry) {
        void ask(ref, (replyTo: Ref<Reply>) => ({ type: 'request' as const, ctx: SERVER_CONTEXT, op: { type: 'rename_member' as const, from, to }, replyTo }))
          .then((reply) => {
            if (reply.status >= 300) console.error(`organization ${name} could not rename user ${from} to ${to}: ${JSON.stringify(reply.body)}`);
          }, (e: unknown) => console.error(`organization ${name} could not rename user ${from} to ${to}:`, e));
      }
    },
  });

  const orgPorts = {
    store, now, users, push,
    deleted: (name: string) => {
      if (root) dispatch(root, { type: 'org_deleted', name });
    },
  };

  root = spawn(nact, async (_: null, msg: RootMsg, ctx) => {
    switch (msg.type) {
      case 'list_orgs': {
        // Listing every organization needs read on the global organizations container: superusers only.
        if (!msg.ctx.requestor.superuser) {
          dispatch(msg.replyTo, forbidden('read'));
          break;
        }
        const names = [...registry.keys()].sort();
        dispatch(msg.replyTo, ok(Object.fromEntries(names.map((n) => [n, `${msg.ctx.baseUrl}/organizations/${n}`]))));
        break;
      }
      case 'create_org': {
        if (!msg.ctx.requestor.superuser) {
          dispatch(msg.replyTo, forbidden('create'));
          break;
        }
        if (registry.has(msg.name)) {
          dispatch(msg.replyTo, failBare(409, 'Organization already exists'));
          break;
        }
        const creator = msg.ctx.requestor.kind === 'user' ? msg.ctx.requestor.name : null;
        const writes = newOrgWrites(msg.name, msg.full_name, msg.validatorKey.publicKeyPem, now(), creator);
        const org = writes[0];
        if (org?.coll !== 'org' || org.doc === null) {
          dispatch(msg.replyTo, fail(500, 'internal service error'));
          break;
        }
        const state = emptyOrgState(org.doc);
        try {
          // The organization document goes last: a crash midway leaves no organization to restore.
          await persistWrites(store, msg.name, writes.slice(1));
          await persistWrites(store, msg.name, writes.slice(0, 1));
        } catch (e) {
          dispatch(msg.replyTo, storeFailure(e));
          break;
        }
        applyWrites(state, writes);
        dispatch(users, { type: 'org_info', org: msg.name, full_name: state.org.full_name, guid: state.org.guid });
        registry.set(msg.name, spawnOrg(ctx.self, state, orgPorts));
        const uri = `${msg.ctx.baseUrl}/organizations/${msg.name}`;
        dispatch(msg.replyTo, ok({ uri, clientname: validatorName(msg.name), private_key: msg.validatorKey.privateKeyPem }, 201, uri));
        break;
      }
      case 'org_deleted': {
        const handle = registry.get(msg.name);
        registry.delete(msg.name);
        if (handle) {
          void handle.stop();
          stop(handle.ref);
        }
        break;
      }
    }
    return null;
  }, 'root', { initialState: null });

  for (const s of orgStates) registry.set(s.org.name, spawnOrg(root, s, orgPorts));

  return {
    store,
    root,
    users,
    org: (name) => registry.get(name)?.ref,
    orgNames: () => [...registry.keys()].sort(),
    nodeActor: (org, node) => registry.get(org)?.nodeActor(node),
    stop: async () => {
      await Promise.all([...registry.values()].map((handle) => handle.stop()));
      stop(nact);
      await store.close();
    },
  };
}
