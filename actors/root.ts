// The root actor: parent of every organization's actor, it answers for the organizations as a whole, listing every
// stored one and creating new ones (stored first, then served here), and forgets one that was deleted.
import { dispatch, stop, type Ref } from 'nact';
import type { Logger } from '../src/lib/logger.js';
import { ORGS } from '../src/store/collections.js';
import type { Store } from '../src/store/store.js';
import { MemberPlaces } from './org/group-store.js';
import { newOrgWrites, validatorName } from './org/new-org.js';
import { publishPrincipals, spawnOrg, type OrgPorts } from './org/org.js';
import { applyWrites, emptyOrgState } from './org/org-state.js';
import { persistWrites } from './org/org-store.js';
import type { OrgRegistry } from './org-registry.js';
import type { PrincipalDirectory } from './shared/principals.js';
import {
  failBare,
  forbidden,
  internalError,
  ok,
  storeFailure,
  type Reply,
  type RequestContext,
} from './shared/reply.js';
import { spawnSupervised, type CrashReporter } from './shared/supervision.js';
import type { UsersMsg } from './users/users.js';

export type RootMsg =
  | { type: 'list_orgs'; ctx: RequestContext; replyTo: Ref<Reply> }
  | {
      type: 'create_org';
      ctx: RequestContext;
      name: string;
      full_name: string;
      validatorKey: { privateKeyPem: string; publicKeyPem: string };
      replyTo: Ref<Reply>;
    }
  | { type: 'org_deleted'; name: string };

export interface RootPorts {
  store: Store;
  now: () => number;
  log: Logger;
  reporter: CrashReporter;
  users: Ref<UsersMsg>;
  principals: PrincipalDirectory;
  /** What a new organization's actor is given. */
  orgPorts: OrgPorts;
  registry: OrgRegistry;
}

export function spawnRoot(parent: Ref<unknown>, ports: RootPorts): Ref<RootMsg> {
  const receive = async (_: null, msg: RootMsg, self: Ref<RootMsg>): Promise<null> => {
    switch (msg.type) {
      case 'list_orgs':
        dispatch(msg.replyTo, await listOrgs(ports, msg.ctx));
        break;
      case 'create_org':
        dispatch(msg.replyTo, await createOrg(ports, msg, self));
        break;
      case 'org_deleted': {
        const handle = ports.registry.remove(msg.name);
        if (handle) {
          void handle.stop();
          stop(handle.ref);
        }
        break;
      }
    }
    return null;
  };
  const onCrash = (_: null, msg: RootMsg): null => {
    if (msg.type !== 'org_deleted') dispatch(msg.replyTo, internalError());
    return null;
  };
  return spawnSupervised(parent, { name: 'root', initial: null, receive, onCrash }, ports.reporter);
}

/** Every stored organization, whichever process serves it. */
async function listOrgs({ registry, store, log }: RootPorts, ctx: RequestContext): Promise<Reply> {
  // Listing every organization needs read on the global organizations container: superusers only.
  if (!ctx.requestor.superuser) return forbidden('read');
  let names: string[];
  try {
    names = [...new Set([...registry.names(), ...(await store.load(ORGS)).keys()])].sort();
  } catch (e) {
    return storeFailure(log, e);
  }
  return ok(Object.fromEntries(names.map((n) => [n, `${ctx.baseUrl}/organizations/${n}`])));
}

/** A new organization, stored with its validator client and groups, then served here. */
async function createOrg(
  ports: RootPorts,
  msg: Extract<RootMsg, { type: 'create_org' }>,
  self: Ref<RootMsg>,
): Promise<Reply> {
  const { store, log, registry, principals } = ports;
  if (!msg.ctx.requestor.superuser) return forbidden('create');
  if (registry.has(msg.name)) return failBare(409, 'Organization already exists');
  // Stored but served by another process (or not adopted yet): creating it again would overwrite it.
  try {
    if ((await store.get(ORGS, msg.name)) !== undefined) return failBare(409, 'Organization already exists');
  } catch (e) {
    return storeFailure(log, e);
  }
  const creator = msg.ctx.requestor.kind === 'user' ? msg.ctx.requestor.name : null;
  const writes = newOrgWrites(msg.name, msg.full_name, msg.validatorKey.publicKeyPem, ports.now(), creator);
  const org = writes[0];
  if (org?.coll !== 'org' || org.doc === null) return internalError();
  const state = emptyOrgState(org.doc);
  const places = new MemberPlaces();
  try {
    await persistWrites(store, msg.name, writes, { places, before: new Map() });
  } catch (e) {
    return storeFailure(log, e);
  }
  applyWrites(state, writes);
  publishPrincipals(principals, msg.name, writes);
  dispatch(ports.users, { type: 'org_info', org: msg.name, full_name: state.org.full_name, guid: state.org.guid });
  const handle = spawnOrg(self, state, [], places, ports.orgPorts);
  handle.resume();
  registry.add(msg.name, handle);
  const uri = `${msg.ctx.baseUrl}/organizations/${msg.name}`;
  return ok({ uri, clientname: validatorName(msg.name), private_key: msg.validatorKey.privateKeyPem }, 201, uri);
}
