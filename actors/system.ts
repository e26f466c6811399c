// Starts the actor tree: nact, the root actor that answers for the organization registry, the global users actor,
// and one actor per organization this process serves (org-registry.ts), those named at start restored from the
// store before the first request is taken. Every actor is supervised (shared/supervision.ts); crashes are logged
// and counted here.
import { realTimers, type Timers } from '../src/lib/timers.js';
import { dispatch, query, start, stop, type Ref } from 'nact';
import { FeedHub, type FeedSettings } from '../src/feeds/feed-hub.js';
import type { Counters } from '../src/lib/counters.js';
import type { Logger } from '../src/lib/logger.js';
import { ORGS } from '../src/store/collections.js';
import type { Store } from '../src/store/store.js';
import { newOrgWrites, validatorName } from './org/new-org.js';
import type { NodeStateCount } from './org/ops/push.js';
import { publishPrincipals, spawnOrg, type OrgMsg, type OrgPorts } from './org/org.js';
import { applyWrites, emptyOrgState } from './org/org-state.js';
import { MemberPlaces } from './org/group-store.js';
import { persistWrites } from './org/org-store.js';
import { OrgRegistry } from './org-registry.js';
import type { NodeFollower } from './push/node.js';
import { JOB_LINGER_MS } from './push/push-runtime.js';
import type { PushParts, PushPorts } from './push/ports.js';
import type { NodeEvent } from '../src/cluster/node-link-messages.js';
import {
  failBare,
  forbidden,
  internalError,
  ok,
  storeFailure,
  type Reply,
  type RequestContext,
} from './shared/reply.js';
import { PrincipalDirectory, type PrincipalView } from './shared/principals.js';
import { spawnSupervised, type CrashReporter } from './shared/supervision.js';
import { followHints, spawnUsers, type UsersMsg } from './users/users.js';
import { loadUsers } from './users/users-store.js';
import type { HintBus } from './users/users-sync.js';

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

export interface InfraSystem {
  store: Store;
  root: Ref<RootMsg>;
  users: Ref<UsersMsg>;
  /** The actor of an organization, or undefined when this process does not serve one of that name. */
  org(name: string): Ref<OrgMsg> | undefined;
  /** The organizations this process serves. */
  orgNames(): string[];
  /**
   * Serves a stored organization here, restored as at a start: false when the store holds none of that name, true
   * once it runs (at once when it runs already).
   */
  adoptOrg(name: string): Promise<boolean>;
  /**
   * Stops serving an organization here, which goes on existing for another process to adopt: not found from the
   * call on, it resolves once what it had accepted is stored and its actors are stopped.
   */
  releaseOrg(name: string): Promise<void>;
  /** Users, clients and memberships as authentication reads them, kept current by the actors. */
  principals: PrincipalView;
  /** `actor_crashes`, `job_ignored` and `node_ignored`, for GET /_status. */
  counters: Counters;
  /** The job and organization feeds the job actors publish to. */
  feeds: FeedHub;
  /** The push-jobs transport's way in: the actor of a node with a verified message, or undefined. */
  nodeFollower(org: string, node: string): NodeFollower | undefined;
  /**
   * Resumes the restored organizations' jobs in flight and starts their nodes' silence clocks: the transport calls
   * this just before it starts reading.
   */
  resumePush(): void;
  /** What the push-jobs actors are given: a gateway's node followers get the same. */
  pushPorts: PushPorts;
  /**
   * What a gateway heard from nodes of an organization this process serves, applied in order: resolves true once
   * stored, false when the organization is not served here (the entry waits for the process that serves it).
   */
  fromGateway(org: string, gateway: string, events: readonly NodeEvent[]): Promise<boolean>;
  /** Members of the cluster left: the nodes they were the gateway of are watched until they connect elsewhere. */
  gatewaysGone(gateways: ReadonlySet<string>): void;
  /** Every organization's node counts by status and availability, as node_states shows them. */
  nodeCounts(): Array<NodeStateCount & { org: string }>;
  /** Writes everything the actors hold again, for a store that lost it; rejects unless all of it is written. */
  writeBack(): Promise<void>;
  stop(): Promise<void>;
}

export interface SystemOptions {
  now?: () => number;
  /** The push actors' timers (default: Node's). */
  timers?: Timers;
  /** Where `actor_crashes`, `job_ignored` and `node_ignored` are counted. */
  counters: Counters;
  log: Logger;
  /** Feed timings (defaults: the original's 5 s linger, 60 s org retention, 15 s keepalive). */
  feeds?: Partial<FeedSettings>;
  /** The stored organizations to serve from the start (default: all of them); others can be adopted later. */
  adopt?: 'all' | readonly string[];
  /**
   * Several processes on one store: the bus that tells the others of account and membership changes made here and
   * brings theirs, and when to read accounts and memberships again for the hints lost (default: every 30 s).
   */
  cluster?: {
    bus: HintBus;
    reloadEvery?: (tick: () => void) => () => void;
    /** Whether this process holds the global lease, and so writes the accounts. */
    holdsAccounts?: () => boolean;
    /** Whether the store holds everything written to it (not while it is written back after a loss). */
    storeIsWhole?: () => Promise<boolean>;
  };
}

export const ASK_TIMEOUT_MS = 30_000;

const DEFAULT_FEED_SETTINGS = {
  lingerMs: JOB_LINGER_MS,
  orgExpirationMs: 60_000,
  keepAliveMs: 15_000,
  readerAllowance: 10_000,
};

/** The server acting on its own behalf. */
const SERVER_CONTEXT: RequestContext = {
  requestor: { kind: 'user', name: 'pivotal', superuser: true, serverAdmin: true, validator: false },
  baseUrl: '',
  apiVersion: 1,
  authKey: '',
  authPublicKey: '',
};

/** Sends a request into the tree and waits for the answer. */
export function ask<M, R>(ref: Ref<M>, build: (replyTo: Ref<R>) => M, timeoutMs = ASK_TIMEOUT_MS): Promise<R> {
  return query(ref, build, timeoutMs) as Promise<R>;
}

export async function startSystem(store: Store, pushParts: PushParts, opts: SystemOptions): Promise<InfraSystem> {
  const now = opts.now ?? Date.now;
  const { counters, log } = opts;
  const reporter: CrashReporter = {
    crashed: (actor, error, fatal) => {
      // The actor's kind (`job`, `node`, `org`, `users`, `root`) names the count; the log names the actor.
      counters.inc('actor_crashes', actor.split('-')[0]);
      log.error(fatal ? 'actor crashed and was stopped' : 'actor crashed; its crash policy took over', {
        actor,
        error,
      });
    },
  };
  const nact = start();

  const usersState = await loadUsers(store);
  const principals = new PrincipalDirectory();
  principals.setServerAdmins(usersState.serverAdmins);
  for (const [name, doc] of usersState.users) principals.setUser(name, doc);

  const users = spawnUsers(nact, usersState, {
    store,
    now,
    reporter,
    log,
    principals,
    ...(opts.cluster ? { bus: opts.cluster.bus } : {}),
    ...(opts.cluster?.holdsAccounts ? { holdsAccounts: opts.cluster.holdsAccounts } : {}),
    ...(opts.cluster?.storeIsWhole ? { storeIsWhole: opts.cluster.storeIsWhole } : {}),
    userDeleted: (org, username) => {
      const handle = registry.get(org);
      if (handle) dispatch(handle.ref, { type: 'user_deleted', username });
    },
    // Every organization, members or not: ACL entries may name a user that has left.
    userRenamed: (from, to) => {
      for (const [name, { ref }] of registry.entries()) {
        const failed = (why: unknown) =>
          log.error('an organization could not rename a user', { org: name, from, to, error: why });
        void ask(ref, (replyTo: Ref<Reply>) => ({
          type: 'request' as const,
          ctx: SERVER_CONTEXT,
          op: { type: 'rename_member' as const, from, to },
          replyTo,
        })).then(
          (reply) => {
            if (reply.status >= 300) failed(JSON.stringify(reply.body));
          },
          (e: unknown) => failed(e),
        );
      }
    },
  });

  const feeds = new FeedHub({ ...DEFAULT_FEED_SETTINGS, now, ...opts.feeds });
  const { transport, sessions, settings, lag, cluster } = pushParts;
  const timers = opts.timers ?? realTimers;
  const push: PushPorts = { transport, settings, lag, cluster, store, now, timers, reporter, counters, log, feeds };
  const orgPorts: OrgPorts = {
    store,
    now,
    users,
    push,
    pushSessions: sessions,
    principals,
    deleted: (name: string) => {
      dispatch(root, { type: 'org_deleted', name });
    },
  };
  // The root actor, spawned below, is the parent of every organization's actor.
  const registry = new OrgRegistry({ store, sessions, users, principals, feeds, orgPorts, parent: () => root });

  const createOrg = async (msg: Extract<RootMsg, { type: 'create_org' }>, self: Ref<RootMsg>): Promise<Reply> => {
    if (!msg.ctx.requestor.superuser) return forbidden('create');
    if (registry.has(msg.name)) return failBare(409, 'Organization already exists');
    // Stored but served by another process (or not adopted yet): creating it again would overwrite it.
    try {
      if ((await store.get(ORGS, msg.name)) !== undefined) return failBare(409, 'Organization already exists');
    } catch (e) {
      return storeFailure(log, e);
    }
    const creator = msg.ctx.requestor.kind === 'user' ? msg.ctx.requestor.name : null;
    const writes = newOrgWrites(msg.name, msg.full_name, msg.validatorKey.publicKeyPem, now(), creator);
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
    dispatch(users, { type: 'org_info', org: msg.name, full_name: state.org.full_name, guid: state.org.guid });
    const handle = spawnOrg(self, state, [], places, orgPorts);
    handle.resume();
    registry.add(msg.name, handle);
    const uri = `${msg.ctx.baseUrl}/organizations/${msg.name}`;
    return ok({ uri, clientname: validatorName(msg.name), private_key: msg.validatorKey.privateKeyPem }, 201, uri);
  };

  const receive = async (_: null, msg: RootMsg, self: Ref<RootMsg>): Promise<null> => {
    switch (msg.type) {
      case 'list_orgs': {
        // Listing every organization needs read on the global organizations container: superusers only.
        if (!msg.ctx.requestor.superuser) {
          dispatch(msg.replyTo, forbidden('read'));
          break;
        }
        // Every stored organization, whichever process serves it.
        let names: string[];
        try {
          names = [...new Set([...registry.names(), ...(await store.load(ORGS)).keys()])].sort();
        } catch (e) {
          dispatch(msg.replyTo, storeFailure(log, e));
          break;
        }
        dispatch(msg.replyTo, ok(Object.fromEntries(names.map((n) => [n, `${msg.ctx.baseUrl}/organizations/${n}`]))));
        break;
      }
      case 'create_org':
        dispatch(msg.replyTo, await createOrg(msg, self));
        break;
      case 'org_deleted': {
        const handle = registry.remove(msg.name);
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
  const root = spawnSupervised(nact, { name: 'root', initial: null, receive, onCrash }, reporter);

  // Listening before the first reload: a change made meanwhile is read by one or the other.
  let stopFollowing = (): void => undefined;
  if (opts.cluster) {
    stopFollowing = await followHints(users, opts.cluster.bus, log, opts.cluster.reloadEvery);
    await ask(users, (replyTo: Ref<boolean>) => ({ type: 'reload' as const, replyTo }));
  }

  const adopt = opts.adopt ?? 'all';
  if (adopt === 'all') {
    for (const [name, raw] of await store.load(ORGS)) await registry.adopt(name, raw);
  } else {
    for (const name of adopt) await registry.adopt(name);
  }

  return {
    store,
    root,
    users,
    org: (name) => registry.get(name)?.ref,
    orgNames: () => registry.names(),
    adoptOrg: (name) => registry.adopt(name),
    releaseOrg: (name) => registry.release(name),
    principals,
    counters,
    feeds,
    resumePush: () => registry.resumePush(),
    nodeFollower: (org, node) => registry.get(org)?.nodeFollower(node),
    pushPorts: push,
    fromGateway: async (org, gateway, events) => {
      const handle = registry.get(org);
      if (!handle) return false;
      await handle.fromGateway(gateway, events);
      return true;
    },
    gatewaysGone: (gateways) => {
      for (const [, handle] of registry.entries()) handle.gatewaysGone(gateways);
    },
    nodeCounts: () =>
      [...registry.entries()].flatMap(([org, handle]) => handle.nodeCounts().map((c) => ({ org, ...c }))),
    writeBack: async () => {
      const asked = [
        ask(users, (replyTo: Ref<boolean>) => ({ type: 'write_back' as const, replyTo })),
        ...[...registry.entries()].map(([, { ref }]) =>
          ask(ref, (replyTo: Ref<boolean>) => ({ type: 'write_back' as const, replyTo })),
        ),
      ];
      if (!(await Promise.all(asked)).every(Boolean)) throw new Error('not everything could be written back');
    },
    stop: async () => {
      stopFollowing();
      await registry.idle();
      await Promise.all([...registry.entries()].map(([, handle]) => handle.stop()));
      stop(nact);
      await store.close();
    },
  };
}
