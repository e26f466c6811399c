// Starts the actor tree: nact, the root actor that answers for the organizations (root.ts), the global users
// actor, and one actor per organization this process serves (org-registry.ts), those named at start restored from
// the store before the first request is taken. Every actor is supervised (shared/supervision.ts); crashes are
// logged and counted here. What the tree hands the facades is InfraSystem.
import { dispatch, start, stop, type Ref } from 'nact';
import { FeedHub, type FeedSettings } from '../src/feeds/feed-hub.js';
import type { Counters } from '../src/lib/counters.js';
import type { Logger } from '../src/lib/logger.js';
import { realTimers, type Timers } from '../src/lib/timers.js';
import { ORGS } from '../src/store/collections.js';
import type { Store } from '../src/store/store.js';
import type { GatewayReport } from '../src/cluster/node-link-messages.js';
import { accountFanOut } from './account-fan-out.js';
import { ask } from './ask.js';
import type { NodeStateCount } from './org/ops/push.js';
import type { OrgMsg, OrgPorts } from './org/org.js';
import { OrgRegistry } from './org-registry.js';
import type { NodeFollower } from './push/node.js';
import { JOB_LINGER_MS } from './push/push-runtime.js';
import type { PushParts, PushPorts } from './push/ports.js';
import { spawnRoot, type RootMsg } from './root.js';
import { PrincipalDirectory, type PrincipalView } from './shared/principals.js';
import type { CrashReporter } from './shared/supervision.js';
import { followHints } from './users/users-catch-up.js';
import type { UsersPorts } from './users/users-ports.js';
import { spawnUsers, type UsersMsg } from './users/users.js';
import type { UsersState } from './users/users-state.js';
import { loadUsers } from './users/users-store.js';
import type { HintBus } from './users/users-sync.js';

export { ask } from './ask.js';

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
  fromGateway(org: string, gateway: string, events: readonly GatewayReport[]): Promise<boolean>;
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
   * brings theirs, and the timers of the reload every RELOAD_MS (users-catch-up.ts) for the hints lost (default:
   * Node's).
   */
  cluster?: {
    bus: HintBus;
    timers?: Timers;
    /** Whether this process holds the global lease, and so writes the accounts. */
    holdsAccounts?: () => boolean;
    /** Whether the store holds everything written to it (not while it is written back after a loss). */
    storeIsWhole?: () => Promise<boolean>;
  };
}

const DEFAULT_FEED_SETTINGS = {
  lingerMs: JOB_LINGER_MS,
  orgExpirationMs: 60_000,
  keepAliveMs: 15_000,
  readerAllowance: 10_000,
};

export async function startSystem(store: Store, pushParts: PushParts, opts: SystemOptions): Promise<InfraSystem> {
  const now = opts.now ?? Date.now;
  const { counters, log } = opts;
  const reporter = crashReporter(counters, log);
  const nact = start();

  const usersState = await loadUsers(store);
  const principals = directoryOf(usersState);
  const users = spawnUsers(nact, usersState, {
    store,
    now,
    reporter,
    log,
    principals,
    ...(opts.cluster ? usersClusterPorts(opts.cluster) : {}),
    // The registry is made below, before any account can change.
    ...accountFanOut(() => registry, log),
  });

  const feeds = new FeedHub({ ...DEFAULT_FEED_SETTINGS, now, ...opts.feeds });
  const { orgs, ...parts } = pushParts;
  const timers = opts.timers ?? realTimers;
  const push: PushPorts = { ...parts, store, now, timers, reporter, counters, log, feeds };
  const orgPorts: OrgPorts = {
    store,
    now,
    users,
    push,
    transportOrgs: orgs,
    principals,
    deleted: (name: string) => {
      dispatch(root, { type: 'org_deleted', name });
    },
  };
  // The root actor, spawned next, is the parent of every organization's actor.
  const registry = new OrgRegistry({
    store,
    transportOrgs: orgs,
    users,
    principals,
    feeds,
    orgPorts,
    parent: () => root,
  });
  const root = spawnRoot(nact, { store, now, log, reporter, users, principals, orgPorts, registry });

  // Listening before the first reload: a change made meanwhile is read by one or the other.
  let stopFollowing = (): void => undefined;
  if (opts.cluster) {
    stopFollowing = await followHints(users, opts.cluster.bus, log, opts.cluster.timers);
    await ask(users, (replyTo: Ref<boolean>) => ({ type: 'reload' as const, replyTo }));
  }

  const adopt = opts.adopt ?? 'all';
  if (adopt === 'all') {
    for (const [name, raw] of await store.load(ORGS)) await registry.adopt(name, raw);
  } else {
    for (const name of adopt) await registry.adopt(name);
  }

  return systemOf({ store, root, users, principals, counters, feeds, registry, push }, async () => {
    stopFollowing();
    await registry.idle();
    await Promise.all([...registry.entries()].map(([, handle]) => handle.stop()));
    stop(nact);
    await store.close();
  });
}

/** Counts and logs every crash by the actor's kind (`job`, `node`, `org`, `users`, `root`); the log names the actor. */
function crashReporter(counters: Counters, log: Logger): CrashReporter {
  return {
    crashed: (actor, error, fatal) => {
      counters.inc('actor_crashes', actor.split('-')[0]);
      log.error(fatal ? 'actor crashed and was stopped' : 'actor crashed; its crash policy took over', {
        actor,
        error,
      });
    },
  };
}

/** Authentication's directory, holding the stored accounts and server-admins. */
function directoryOf(usersState: UsersState): PrincipalDirectory {
  const principals = new PrincipalDirectory();
  principals.setServerAdmins(usersState.serverAdmins);
  for (const [name, doc] of usersState.users) principals.setUser(name, doc);
  return principals;
}

/** The users actor's share of the cluster options. */
function usersClusterPorts(
  cluster: NonNullable<SystemOptions['cluster']>,
): Pick<UsersPorts, 'bus' | 'holdsAccounts' | 'storeIsWhole'> {
  return {
    bus: cluster.bus,
    ...(cluster.holdsAccounts ? { holdsAccounts: cluster.holdsAccounts } : {}),
    ...(cluster.storeIsWhole ? { storeIsWhole: cluster.storeIsWhole } : {}),
  };
}

/** The running tree as the facades see it. */
function systemOf(
  parts: Pick<InfraSystem, 'store' | 'root' | 'users' | 'principals' | 'counters' | 'feeds'> & {
    registry: OrgRegistry;
    push: PushPorts;
  },
  stopAll: () => Promise<void>,
): InfraSystem {
  const { registry, users, push, ...rest } = parts;
  return {
    ...rest,
    users,
    org: (name) => registry.get(name)?.ref,
    orgNames: () => registry.names(),
    adoptOrg: (name) => registry.adopt(name),
    releaseOrg: (name) => registry.release(name),
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
    stop: stopAll,
  };
}
