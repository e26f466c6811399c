// One organization actor: every org-scoped request enters here, is decided by a pure handler (handlers.ts),
// persisted, applied, then answered. Requests never see a change the store does not hold. Push-jobs requests,
// once authorized, go on to the organization's push supervisor, its one child.
import { dispatch, query, type Ref } from 'nact';
import type { Logger } from '../../src/lib/logger.js';
import { orgRoot } from '../../src/store/collections.js';
import type { Store } from '../../src/store/store.js';
import type { PushPorts, TransportOrgs } from '../push/ports.js';
import { batchable, WriteBatcher } from './write-batch.js';
import { spawnPushSupervisor, type PushSupervisor } from '../push/push-supervisor.js';
import type { GatewayReport } from '../../src/cluster/node-link-messages.js';
import type { JobState } from '../push/job-model.js';
import type { NodeFollower } from '../push/node.js';
import type { PrincipalDirectory } from '../shared/principals.js';
import { fail, internalError, storeFailure, type Reply, type RequestContext } from '../shared/reply.js';
import { spawnSupervised } from '../shared/supervision.js';
import type { UsersMsg } from '../users/users.js';
import { decide, type OrgOp } from './handlers.js';
import { countNodeStates, type NodeStateCount } from './ops/push.js';
import { applyWrites, type OrgState, type OrgWrite } from './org-state.js';
import type { MemberPlaces } from './group-store.js';
import { allWrites, persistWrites } from './org-store.js';
import { isRead, type OrgEffect, type OrgOutcome } from './outcome.js';
import { renameWrites } from './renames.js';

export type OrgMsg =
  | { type: 'request'; ctx: RequestContext; op: OrgOp; replyTo: Ref<Reply> }
  | { type: 'user_deleted'; username: string }
  /** The store lost what it held: everything the organization holds is written again; answers whether it was. */
  | { type: 'write_back'; replyTo: Ref<boolean> }
  /** Another process is to serve the organization: what was asked before is answered and stored, then it stops. */
  | { type: 'release'; replyTo: Ref<true> };

export interface OrgPorts {
  store: Store;
  now: () => number;
  users: Ref<UsersMsg>;
  /** Kept current with the organization's clients and members, for authentication. */
  principals: PrincipalDirectory;
  /** Called once the organization's data is gone from the store. */
  deleted: (name: string) => void;
  push: PushPorts;
  /** The transport's sessions of the organization, forgotten once it is deleted. */
  transportOrgs: TransportOrgs;
}

/** What the registry keeps of an organization: its actor, and the way in for the push-jobs transport. */
export interface OrgHandle {
  ref: Ref<OrgMsg>;
  /** The node's actor, spawned on demand: the transport calls this only for authenticated messages. */
  nodeFollower(node: string): NodeFollower;
  /** Node counts by status and availability, read between the actor's turns (for the metrics listener). */
  nodeCounts(): NodeStateCount[];
  /**
   * Resumes the jobs in flight and starts the silence clocks of the nodes that were up, once: when the transport
   * is about to read, so that a slow start (a large store to load) does not eat the time nodes have to reconnect.
   */
  resume(): void;
  /** Applies what a gateway heard from the organization's nodes; resolves once it is stored. */
  fromGateway(gateway: string, events: readonly GatewayReport[]): Promise<void>;
  /** Members of the cluster left: the nodes they were the gateway of are watched here until they connect elsewhere. */
  gatewaysGone(gateways: ReadonlySet<string>): void;
  stop(): Promise<void>;
  /**
   * Resolves once everything asked of the organization before is answered, its jobs are stopped and all of it is
   * stored; the caller then stops the actor. It waits as long as the store does: another process restores the
   * organization from what is stored.
   */
  release(): Promise<void>;
}

/** nact's longest timer: a release is not cut short (see OrgHandle.release). */
const NO_TIMEOUT_MS = 2_147_483_647;

export function spawnOrg(
  parent: Ref<unknown>,
  initial: OrgState,
  inFlight: JobState[],
  places: MemberPlaces,
  ports: OrgPorts,
): OrgHandle {
  const name = initial.org.name;
  const actor: OrgActor = new OrgActor(initial, places, ports, () => push);
  const self: Ref<OrgMsg> = spawnSupervised<OrgState, OrgMsg>(
    parent,
    {
      name: `org-${name}`,
      initial,
      receive: (state, msg) => actor.receive(state, msg),
      onCrash: (state, msg) => actor.onCrash(state, msg),
    },
    ports.push.reporter,
  );
  const push: PushSupervisor = spawnPushSupervisor(self, name, initial.push, ports.push);
  let resumed = false;
  return {
    ref: self,
    nodeFollower: (node) => push.nodeFollower(node),
    // The actors change `initial` and the records in place and never replace them; no turn runs while this does.
    nodeCounts: () => countNodeStates(push.records, initial.nodes),
    resume: () => {
      if (resumed) return;
      resumed = true;
      push.resume(inFlight);
    },
    fromGateway: (gateway, events) => push.fromGateway(gateway, events),
    gatewaysGone: (gateways) => dispatch(push.ref, { type: 'gateways_gone', gateways }),
    // Node states waiting for the write-behind and jobs' pending saves are stored, so a restart loses nothing.
    stop: async () => {
      await actor.drain();
      await push.stop();
    },
    release: async () => {
      await query(self, (replyTo: Ref<true>) => ({ type: 'release' as const, replyTo }), NO_TIMEOUT_MS);
    },
  };
}

/** One organization's actor: how a request is decided, stored and answered, and how its other messages run. */
class OrgActor {
  private readonly name: string;
  private readonly log: Logger;
  /** The state object lives as long as the actor: the batcher applies plain writes to it between turns. */
  private readonly batcher: WriteBatcher;
  /** Set by `release`: a request that still reaches the actor is answered as where the organization is not. */
  private released = false;

  constructor(
    initial: OrgState,
    private readonly places: MemberPlaces,
    private readonly ports: OrgPorts,
    /** The organization's push supervisor, its child, spawned once this actor is. */
    private readonly push: () => PushSupervisor,
  ) {
    this.name = initial.org.name;
    this.log = ports.push.log.child({ org: this.name });
    this.batcher = new WriteBatcher(initial, {
      store: (writes, before) => persistWrites(ports.store, this.name, writes, { places, before }),
      stored: (writes) => publishPrincipals(ports.principals, this.name, writes),
    });
  }

  drain(): Promise<void> {
    return this.batcher.drain();
  }

  async receive(state: OrgState, msg: OrgMsg): Promise<OrgState> {
    switch (msg.type) {
      case 'request':
        await this.request(state, msg);
        break;
      case 'user_deleted': {
        await this.batcher.drain();
        // A deleted account leaves no trace: membership, groups and ACL entries, so a later account with the
        // same name inherits nothing.
        const writes: OrgWrite[] = [
          { coll: 'members', id: msg.username, doc: null },
          ...renameWrites(state, 'users', msg.username, null),
        ];
        await this.persistAndApply(state, writes).catch((e: unknown) => storeFailure(this.log, e));
        break;
      }
      case 'write_back':
        try {
          await this.batcher.drain();
          await persistWrites(this.ports.store, this.name, allWrites(state), {
            places: this.places,
            before: new Map(),
          });
          dispatch(msg.replyTo, await this.push().writeBack());
        } catch (e) {
          this.log.error('writing the organization back failed', { error: e });
          dispatch(msg.replyTo, false);
        }
        break;
      case 'release':
        this.released = true;
        try {
          await this.batcher.drain();
          await this.push().release();
        } finally {
          dispatch(msg.replyTo, true);
        }
        break;
    }
    return state;
  }

  /**
   * Handlers are pure and writes apply only once stored, so the state before the throw is whole: the request that
   * met the bug gets a 500, and the organization goes on.
   */
  onCrash(state: OrgState, msg: OrgMsg): OrgState {
    if (msg.type === 'request') dispatch(msg.replyTo, internalError());
    else if (msg.type === 'write_back') dispatch(msg.replyTo, false);
    return state;
  }

  private async request(state: OrgState, msg: Extract<OrgMsg, { type: 'request' }>): Promise<void> {
    const { batcher, ports } = this;
    if (state.deleted || this.released) {
      dispatch(msg.replyTo, fail(404, `organization '${this.name}' does not exist.`));
      return;
    }
    const { max_body_size, incarnation_id, curve_public_key } = ports.push.transport.describe();
    const push = { voting_timeout: ports.push.settings.voting_timeout, max_body_size, incarnation_id };
    const decideNow = () =>
      decide(state, msg.ctx, msg.op, { now: ports.now(), push: { ...push, curve: curve_public_key !== null } });
    let out = decideNow();
    if (out.writes && batchable(out.writes) && (out.effects ?? []).length === 0) {
      const { reply } = out;
      const { replyTo } = msg;
      batcher.add(out.writes, (error) =>
        dispatch(replyTo, error === undefined ? reply : storeFailure(this.log, error)),
      );
      return;
    }
    // Nothing is answered from writes a batch may yet undo. A read is answered once what it saw is stored (and
    // decided again if that was undone), while the actor goes on; anything else waits for the store.
    if (batcher.pending && isRead(out)) {
      const { ctx, replyTo } = msg;
      const seen = out;
      batcher.afterApplied((error) => void this.answer(state, error === undefined ? seen : decideNow(), ctx, replyTo));
      return;
    }
    if (batcher.pending) {
      await batcher.drain();
      out = decideNow();
    }
    await this.answer(state, out, msg.ctx, msg.replyTo);
  }

  /** Stores the outcome's writes, then runs its effects; the reply goes out unless an effect answered. */
  private async answer(state: OrgState, out: OrgOutcome, ctx: RequestContext, replyTo: Ref<Reply>): Promise<void> {
    try {
      if (out.writes) await this.persistAndApply(state, out.writes);
      let answered = false;
      for (const effect of out.effects ?? []) answered = (await this.perform(effect, ctx, replyTo)) || answered;
      if (!answered) dispatch(replyTo, out.reply);
    } catch (e) {
      dispatch(replyTo, storeFailure(this.log, e));
    }
  }

  /** Runs one effect; true when it answered the request itself. */
  private async perform(effect: OrgEffect, ctx: RequestContext, replyTo: Ref<Reply>): Promise<boolean> {
    const { ports, name } = this;
    switch (effect.type) {
      case 'associate':
        dispatch(ports.users, { type: 'association', org: name, username: effect.username, member: effect.member });
        return false;
      case 'drop_org':
        await this.push().drop(); // nothing of a deleted organization may be written after its data is dropped
        await ports.store.drop(orgRoot(name)).catch((e: unknown) => storeFailure(this.log, e));
        dispatch(ports.users, { type: 'org_deleted', org: name });
        ports.transportOrgs.closeOrg(name);
        ports.push.feeds.orgDeleted(name);
        ports.deleted(name);
        return false;
      case 'answer_with_user': {
        const readBy = effect.readBy === undefined ? {} : { readBy: effect.readBy };
        dispatch(ports.users, {
          type: 'render_user',
          name: effect.name,
          apiVersion: ctx.apiVersion,
          ...readBy,
          replyTo,
        });
        return true;
      }
      case 'push': {
        const { request } = effect;
        dispatch(this.push().ref, { type: 'request', request, requesterKey: ctx.authPublicKey, replyTo });
        return true;
      }
    }
  }

  private async persistAndApply(state: OrgState, writes: readonly OrgWrite[]): Promise<void> {
    const { ports, name } = this;
    await persistWrites(ports.store, name, writes, { places: this.places, before: state.groups });
    applyWrites(state, writes);
    publishPrincipals(ports.principals, name, writes);
    const org = writes.find((w) => w.coll === 'org');
    if (org?.coll === 'org' && org.doc !== null)
      dispatch(ports.users, { type: 'org_info', org: name, full_name: org.doc.full_name, guid: org.doc.guid });
  }
}

/** Tells the directory what applied writes changed of an organization's clients and members. */
export function publishPrincipals(principals: PrincipalDirectory, org: string, writes: readonly OrgWrite[]): void {
  for (const w of writes) {
    if (w.coll === 'clients') principals.setClient(org, w.id, w.doc);
    else if (w.coll === 'members') principals.setMember(org, w.id, w.doc !== null);
    else if (w.coll === 'org') {
      if (w.doc === null) principals.dropOrg(org);
      else principals.addOrg(org);
    }
  }
}
