// Which organizations this process serves, and how one comes and goes. Adopting restores an organization from the
// store and does for it all that a start does; releasing stops serving it at once, lets what it accepted settle in
// the store, then forgets it, so that another process can adopt it. Adoptions and releases of one organization
// run one at a time, in the order asked.
import { dispatch, stop, type Ref } from 'nact';
import type { FeedHub } from '../src/feeds/feed-hub.js';
import { ORGS } from '../src/store/collections.js';
import type { Store } from '../src/store/store.js';
import { spawnOrg, type OrgHandle, type OrgPorts } from './org/org.js';
import type { OrgState } from './org/org-state.js';
import { loadOrg } from './org/org-store.js';
import type { TransportOrgs } from './push/ports.js';
import type { PrincipalDirectory } from './shared/principals.js';
import type { UsersMsg } from './users/users.js';

export interface OrgRegistryPorts {
  store: Store;
  transportOrgs: TransportOrgs;
  users: Ref<UsersMsg>;
  principals: PrincipalDirectory;
  feeds: FeedHub;
  orgPorts: OrgPorts;
  /** The root actor, parent of every organization's actor; it exists before the first adoption. */
  parent: () => Ref<unknown>;
}

export class OrgRegistry {
  private readonly handles = new Map<string, OrgHandle>();
  /** The adoption or release of each organization under way, and those asked after it. */
  private readonly turns = new Map<string, Promise<unknown>>();
  /** Whether the transport reads yet: until then an adopted organization's push state waits (see resumePush). */
  private pushResumed = false;

  constructor(private readonly ports: OrgRegistryPorts) {}

  get(name: string): OrgHandle | undefined {
    return this.handles.get(name);
  }

  has(name: string): boolean {
    return this.handles.has(name);
  }

  names(): string[] {
    return [...this.handles.keys()].sort();
  }

  entries(): IterableIterator<[string, OrgHandle]> {
    return this.handles.entries();
  }

  /** An organization just created here: its actor runs and its push state is resumed already. */
  add(name: string, handle: OrgHandle): void {
    this.handles.set(name, handle);
  }

  /** A deleted organization's handle, forgotten; its actor stops itself. */
  remove(name: string): OrgHandle | undefined {
    const handle = this.handles.get(name);
    this.handles.delete(name);
    return handle;
  }

  /**
   * Serves the stored organization `name` here: false when the store holds none of that name, true once it runs
   * (at once when it runs already). `raw`: its document, when the caller read it already.
   */
  adopt(name: string, raw?: unknown): Promise<boolean> {
    return this.inTurn(name, async () => {
      if (this.handles.has(name)) return true;
      const { store, transportOrgs, orgPorts } = this.ports;
      const doc = raw ?? (await store.get(ORGS, name));
      if (doc === undefined) return false;
      const { state, inFlight, places } = await loadOrg(store, doc);
      // Before the organization is reachable: a config request would open a key that the load then replaced.
      await transportOrgs.openOrg(name);
      if (this.handles.has(name)) return true; // created here meanwhile
      this.introduce(state);
      const handle = spawnOrg(this.ports.parent(), state, inFlight, places, orgPorts);
      this.handles.set(name, handle);
      if (this.pushResumed) handle.resume();
      return true;
    });
  }

  /**
   * Stops serving the organization here: from the call on it is not found (the HTTP facade answers 404, the
   * transport drops its nodes' messages), unless an adoption of it is under way, which the release then follows.
   * What it accepted before is answered and stored, then its actors stop and its principals and feeds are
   * forgotten. Its data stays in the store, and the users actor keeps knowing it and its members: the organization
   * still exists, served by another process. Nothing happens when it is not here.
   */
  release(name: string): Promise<void> {
    const taken = this.turns.has(name) ? undefined : this.take(name);
    return this.inTurn(name, async () => {
      const handle = taken ?? this.take(name);
      if (!handle) return;
      const { transportOrgs, principals, feeds } = this.ports;
      try {
        await handle.release();
      } finally {
        stop(handle.ref);
        // Once more: what the jobs sent their nodes while they settled goes to the new owner's jobs' nodes.
        transportOrgs.releaseOrg(name);
        principals.dropOrg(name);
        feeds.forgetOrg(name);
      }
    });
  }

  /** Makes the organization unreachable: neither requests nor its nodes' messages find it any more. */
  private take(name: string): OrgHandle | undefined {
    const handle = this.handles.get(name);
    if (!handle) return undefined;
    this.handles.delete(name);
    // The transport keeps each node's actor once it has spoken: forgetting them here stops node messages now.
    this.ports.transportOrgs.releaseOrg(name);
    return handle;
  }

  /**
   * The transport is about to read: the organizations adopted so far resume their jobs in flight and start their
   * nodes' silence clocks, and those adopted later do so as they are adopted.
   */
  resumePush(): void {
    this.pushResumed = true;
    for (const handle of this.handles.values()) handle.resume();
  }

  /** Resolves once no adoption or release is under way. */
  async idle(): Promise<void> {
    while (this.turns.size > 0) await Promise.all(this.turns.values());
  }

  /** Authentication and the users actor learn of the organization, its clients and its members. */
  private introduce(state: OrgState): void {
    const { principals, users } = this.ports;
    const { name, full_name, guid } = state.org;
    principals.addOrg(name);
    for (const [client, doc] of state.clients) principals.setClient(name, client, doc);
    for (const username of state.members.keys()) principals.setMember(name, username, true);
    dispatch(users, { type: 'org_adopted', org: name, full_name, guid, members: [...state.members.keys()] });
  }

  /**
   * Runs `work` after every earlier adoption or release of `name` has ended, however it ended. The last one forgets
   * the queue before its caller resumes, so a release asked for right after an adoption finds no turn under way.
   */
  private inTurn<T>(name: string, work: () => Promise<T>): Promise<T> {
    const run = (this.turns.get(name) ?? Promise.resolve()).then(async () => {
      try {
        return await work();
      } finally {
        if (this.turns.get(name) === done) this.turns.delete(name);
      }
    });
    const done = run.then(
      () => undefined,
      () => undefined,
    );
    this.turns.set(name, done);
    return run;
  }
}
