// One server process as a member of a cluster on a Redis store. It registers itself, and every tick it reads who
// else is alive, works out which partitions it should own (rendezvous hashing, ownership.ts), takes the leases of
// those that are free and adopts their organizations, and hands over those another member should own. Every write
// is fenced by its partition's lease (src/store/fencing.ts), so a process that lost a lease writes nothing of that
// partition, and lets it go the moment it learns so.
import { hostname } from 'node:os';
import type { ClusterStatus } from '../api/status-schema.js';
import type { Logger } from '../lib/logger.js';
import { delay, realTimers, type Timers } from '../lib/timers.js';
import { leaseKey } from '../store/layout.js';
import { ALL_PARTITIONS, partitionName, type Partition } from '../store/partitions.js';
import type { RedisStore } from '../store/redis-store.js';
import { Leases } from './leases.js';
import { Members, type Member } from './members.js';
import { planOwnership } from './ownership.js';
import { SettlingMembers } from './settling.js';

/** What the server does when this process comes to own a partition, or stops owning it. */
export interface PartitionPorts {
  /** Serves the partition's organizations, restored from the store. */
  adopt(partition: Partition): Promise<void>;
  /**
   * Stops serving them. `settle`: a hand-over, so what they accepted is stored first; otherwise the lease is lost
   * already and nothing more of theirs can be written.
   */
  release(partition: Partition, settle: boolean): Promise<void>;
}

export interface ClusterMemberOptions {
  id: string;
  url: string;
  /** Where nodes reach this member's API (see Member.api_url). */
  apiUrl?: string;
  ttlMs?: number;
  log: Logger;
  /** The timers of its ticks, its registration's renewals and its leases'. */
  timers?: Timers;
}

/** Where a partition's requests go: this process, another member's API, or nowhere right now (a take-over). */
export type Owner = { kind: 'here' } | { kind: 'member'; member: Member } | { kind: 'none' };

/**
 * A member's leases last as long as its registration; they are also checked this often, in case a key was changed
 * by hand. Seldom: the check costs a command a lease, and Redis losing its data is found by the store's marker.
 */
const LEASE_CHECK_EVERY_MS = 300_000;

/** How long a partition's owner as read from Redis is trusted before it is read again. */
const OWNER_CACHE_MS = 1000;

/** Ticks between two looks for leases that name this member but that it does not hold (Leases.repair). */
const REPAIR_EVERY_TICKS = 5;

/** Lease times to live a member that joined (or came back) stays live before it is handed partitions. */
const SETTLE_TTLS = 3;
/** Partitions one member hands over in a tick at most. */
const RELEASES_PER_TICK = 8;
/** How long a member that left counts as one that may come back at its address (SettlingMembers). */
const FORGET_LEFT_MS = 600_000;

/** A partition's lease holder as last read from Redis (null: none), and when. */
interface CachedOwner {
  member: string | null;
  at: number;
}

export class ClusterMember {
  readonly leases: Leases;
  readonly members: Members;
  /** Partitions whose organizations run here: their lease is held and their adoption finished. */
  private readonly ready = new Set<Partition>();
  private ports: PartitionPorts | undefined;
  private readonly timers: Timers;
  /** Stops the ticks' timer, once they run. */
  private stopTicks: (() => void) | undefined;
  /** Ticks, hand-overs and losses, one at a time. */
  private queue: Promise<void> = Promise.resolve();
  private readonly owners = new Map<Partition, CachedOwner>();
  private leaving = false;
  private ticks = 0;
  /** Set when Redis answers again: the next tick looks for leases to repair at once. */
  private repairDue = false;
  /** Which live members may be handed partitions (hysteresis for members that come and go). */
  private readonly settling: SettlingMembers;
  private readonly membersListeners: Array<(members: readonly Member[]) => void> = [];
  private readonly lapseListeners: Array<() => void> = [];

  constructor(
    private readonly store: RedisStore,
    private readonly opts: ClusterMemberOptions,
  ) {
    const { id, url, log } = opts;
    const timers = (this.timers = opts.timers ?? realTimers);
    this.leases = new Leases(store.redis, store.keyPrefix, id, {
      ...(opts.ttlMs === undefined ? {} : { ttlMs: opts.ttlMs }),
      timers,
      registrationPerPartition: store.mode === 'cluster',
      events: {
        lost: (p) => {
          log.error('another server took a partition this server held: it stops serving it', {
            partition: partitionName(p),
          });
          this.enqueue(() => this.letGo(p, false));
        },
        dataLost: (ps) => {
          log.warn('Redis lost partitions this server held; their leases are taken again', {
            partitions: ps.map(partitionName),
          });
          void store.checkLoss();
        },
      },
    });
    const me: Member = { id, url, host: hostname(), pid: process.pid, started_at: Date.now() };
    if (opts.apiUrl !== undefined) me.api_url = opts.apiUrl;
    this.members = new Members(
      store.redis,
      store.keyPrefix,
      me,
      this.leases.ttlMs,
      (members) => {
        log.info('cluster members changed', { members: members.map((m) => m.id) });
        for (const listener of this.membersListeners) listener(members);
      },
      (sent, lapsed) => {
        if (lapsed && this.leases.partitions().length > 0)
          log.warn('this server’s registration had lapsed (paused, or cut off from Redis): its leases are checked');
        if (lapsed) for (const listener of this.lapseListeners) listener();
        return this.leases.registered(sent, lapsed);
      },
      () => this.leases.clock(),
      timers,
    );
    store.fenceWith(this.leases);
    this.settling = new SettlingMembers(SETTLE_TTLS * this.leases.ttlMs, FORGET_LEFT_MS);
  }

  /**
   * Calls `listener` when this member's registration is renewed after it had lapsed (it was paused, or cut off from
   * Redis, past its time to live): the others counted it gone meanwhile, and owners watch the nodes it holds.
   */
  onRegistrationLapsed(listener: () => void): void {
    this.lapseListeners.push(listener);
  }

  /** Calls `listener` with the live members whenever a member joins or leaves. */
  onMembersChanged(listener: (members: readonly Member[]) => void): void {
    this.membersListeners.push(listener);
  }

  get id(): string {
    return this.opts.id;
  }

  /**
   * Registers this process and keeps its registration and its leases fresh, each on a timer of its own: a member
   * busy restoring organizations must not look dead to the others.
   */
  async join(): Promise<void> {
    await this.members.beat();
    this.members.start();
    // Back from a reconnection (Redis restarted or failed over): renewed at once, not at the next turn of the timer,
    // since this member's partitions answer 503 until its registration is renewed.
    this.store.redis.on('ready', () => {
      this.members.renewNow();
      // A release refused while Redis was away left its lease naming this member: let go at the next tick.
      this.repairDue = true;
    });
    this.leases.start(LEASE_CHECK_EVERY_MS);
  }

  /**
   * Before a cluster is set up (no first start done yet), one process does it: the first to take the global
   * lease, which then takes every partition too (it creates the first organization, wherever it hashes) and hands
   * them over once done. True for that process; the others wait here until `setUpDone` says so.
   */
  async setUpFirst(setUpDone: () => Promise<boolean>, signal: AbortSignal): Promise<boolean> {
    const step = this.leases.ttlMs / 5;
    for (;;) {
      if (await setUpDone()) return false;
      if (await this.leases.acquire('global')) break;
      await delay(this.timers, step, { signal });
    }
    if (await setUpDone()) return false; // done by another just before
    for (;;) {
      const missing = [];
      for (const p of ALL_PARTITIONS) if (!(await this.leases.acquire(p))) missing.push(p);
      if (missing.length === 0) break;
      await delay(this.timers, step, { signal });
    }
    for (const p of ALL_PARTITIONS) this.ready.add(p);
    return true;
  }

  /**
   * From now on, every tick (a fifth of the lease's time to live) owns what this member should; resolves once the
   * first tick is done.
   */
  run(ports: PartitionPorts): Promise<void> {
    this.ports = ports;
    this.enqueue(() => this.tick());
    this.stopTicks = this.timers.every(this.leases.ttlMs / 5, () => this.enqueue(() => this.tick()), { unref: true });
    return this.queue;
  }

  /** Whether this process serves the partition's organizations now. */
  serves(partition: Partition): boolean {
    return this.ready.has(partition) && this.leases.tokenFor(partition) !== undefined;
  }

  /**
   * Where the partition's requests go: here, another member (its lease read from Redis, and kept a second), or
   * nowhere yet (read again at the next request, so a new owner is found at once). While Redis is away the owner
   * last read stands (it still answers reads from memory); rejects when there is none.
   */
  async ownerOf(partition: Partition, now = Date.now()): Promise<Owner> {
    if (this.serves(partition)) return { kind: 'here' };
    const cached = this.owners.get(partition);
    const kept = cached && now - cached.at <= OWNER_CACHE_MS ? this.liveOwner(cached) : undefined;
    const member = kept ?? this.liveOwner(await this.readOwner(partition, now, cached));
    return member ? { kind: 'member', member } : { kind: 'none' };
  }

  /** The live member, other than this one, that `read` names; a holder gone or none is read again next time. */
  private liveOwner(read: CachedOwner): Member | undefined {
    const member = read.member === null ? undefined : this.members.find(read.member);
    return member && member.id !== this.opts.id ? member : undefined;
  }

  /** The partition's lease holder as Redis says now; the `stale` answer while Redis is away, if there is one. */
  private async readOwner(partition: Partition, now: number, stale?: CachedOwner): Promise<CachedOwner> {
    let token: string | null;
    try {
      token = await this.store.redis.get(leaseKey(this.store.keyPrefix, partition));
    } catch (e) {
      if (stale) return stale;
      throw e;
    }
    const read = { member: token === null ? null : token.slice(token.indexOf(':') + 1), at: now };
    this.owners.set(partition, read);
    return read;
  }

  /**
   * This member, the live members, and how many partitions each serves (as each said at its last renewal: no
   * lease is read, so polling GET /_status costs Redis nothing).
   */
  async status(): Promise<ClusterStatus> {
    return {
      member: this.opts.id,
      role: this.ready.size > 0 ? 'active' : 'standby',
      members: this.members.members().map((m) => ({
        id: m.id,
        url: m.url,
        host: m.host,
        pid: m.pid,
        partitions: m.id === this.opts.id ? this.ready.size : (m.partitions ?? 0),
      })),
      partitions: this.ready.size,
      held: [...this.ready].map(partitionName),
      lease_ttl_ms: this.leases.ttlMs,
      redis_mode: this.store.mode,
    };
  }

  /** Hands every partition over (their writes settle first), lets the leases go, and leaves. */
  async leave(): Promise<void> {
    this.leaving = true;
    this.stopTicks?.();
    this.enqueue(async () => {
      for (const p of [...this.ready]) await this.letGo(p, true);
    });
    await this.queue;
    await this.leases.stop(true);
    await this.members.stop();
  }

  private enqueue(step: () => Promise<void>): void {
    this.queue = this.queue.then(step).catch((error: unknown) => {
      this.opts.log.error('a cluster step failed; the next tick tries again', { error });
    });
  }

  /** Hands over what another member should own, takes what this one should and is free. */
  private async tick(): Promise<void> {
    this.members.me.partitions = this.ready.size;
    if (this.leaving || !this.ports) return;
    const live = this.members.members();
    const ids = live.map((m) => m.id);
    const held = new Set(this.leases.partitions());
    const plan = planOwnership(this.opts.id, held, ids, {
      settled: this.settling.settled(live, this.leases.clock()),
      maxReleases: RELEASES_PER_TICK,
    });
    // A hand-over stores what the partition accepted and lets its lease go: not while its lease is in doubt
    // (Redis away, say), when neither could be done and the lease would be left naming this member.
    for (const p of plan.release) if (this.leases.tokenFor(p) !== undefined) await this.letGo(p, true);
    if (this.ticks++ % REPAIR_EVERY_TICKS === 0 || this.repairDue) await this.repair();
    for (const p of plan.acquire) {
      if (this.leaving || !(await this.leases.acquire(p))) continue;
      try {
        await this.ports.adopt(p);
        this.ready.add(p);
      } catch (error) {
        this.opts.log.error('adopting a partition failed; it is let go for another try', {
          partition: partitionName(p),
          error,
        });
        await this.ports.release(p, false).catch(() => undefined);
        await this.leases.release(p);
      }
    }
  }

  /** Lets go of leases that name this member while it holds none (Leases.repair). */
  private async repair(): Promise<void> {
    this.repairDue = false;
    const freed = await this.leases.repair();
    if (freed.length > 0)
      this.opts.log.warn('leases naming this server that it did not hold were let go', {
        partitions: freed.map(partitionName),
      });
  }

  /** Stops serving the partition; with `settle`, what it accepted is stored before its lease is let go. */
  private async letGo(p: Partition, settle: boolean): Promise<void> {
    const wasReady = this.ready.delete(p);
    this.owners.delete(p);
    if (wasReady && this.ports) await this.ports.release(p, settle);
    if (settle) await this.leases.release(p);
  }
}
