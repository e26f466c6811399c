// The leases this process holds on partitions, and the tokens its store writes under. A lease is a Redis key
// holding `epoch:member`; the epoch rises with every new lease, and every write checks the token inside Redis
// (src/store/redis-scripts.ts), so no consensus of our own is needed: Redis is the one place that decides who may
// write.
//
// A lease lasts as long as its member's registration (members.ts), which the member renews a third of the time to
// live apart: one renewal for every lease it holds, so Redis's load does not grow with the partitions held. Another
// member takes a lease only from a member whose registration ran out (checked in Redis just before, then taken only
// if the lease is still what it read). Locally a lease counts as valid until the time to live, measured from when
// the last registration renewal that succeeded was sent, runs out (less a margin): past that another process may
// hold it, so this one stops writing before it could have passed.
//
// On a Redis Cluster each lease is backed instead by its holder's registration in the partition's own slot
// (registrationPerPartition), where every member renews its registration too (a slot judges a silent holder by its
// other members' beats, as the global registrations are judged): a failover of the global slot's master would
// otherwise stop every partition, where now it stops only those whose data that master holds as well.
//
// After a renewal that finds the registration had lapsed (the process was paused, or cut off from Redis), every
// lease is checked: one whose epoch is unchanged comes back (nobody took it, so nobody else wrote); one with
// another epoch is lost; one whose epoch is gone says Redis lost the partition's data, and the lease is taken
// again so that what this process holds can be written back. Standalone holders (holdEveryPartition), which no
// registration backs, check their leases on a timer instead.
import { randomUUID } from 'node:crypto';
import { realTimers, type Timers } from '../lib/timers.js';
import { epochKey, leaseKey, memberExpiryKey, memberHeardKey } from '../store/layout.js';
import { duplicateOf } from '../store/redis-connection.js';
import type { Fencing } from '../store/fencing.js';
import { ALL_PARTITIONS, partitionName, type Partition } from '../store/partitions.js';
import { withScripts, type RedisClient, type ScriptCommands } from '../store/redis-scripts.js';

export const DEFAULT_LEASE_TTL_MS = 5000;

export interface LeaseEvents {
  /** Another process took the lease: nothing of the partition may be served from memory any more. */
  lost(partition: Partition): void;
  /**
   * Redis lost these partitions' data, and this process holds their leases again: what it holds must be written
   * back before anything else reads the store.
   */
  dataLost(partitions: readonly Partition[]): void;
}

/**
 * The Redis commands the leases send: all they need of the connection, so that a unit test can answer them. Leases
 * and registrations expire by Redis's clock (the scripts in src/store/redis-scripts.ts), never by this process's.
 */
export interface LeaseCommands extends Pick<
  ScriptCommands,
  'leaseTake' | 'leaseTakeRegistered' | 'partitionBeat' | 'leaseCheck' | 'leaseRelease' | 'memberAlive'
> {
  get(key: string): Promise<string | null>;
  quit(): Promise<unknown>;
}

export interface LeaseOptions {
  ttlMs?: number;
  /**
   * A Redis Cluster: each lease is backed by its holder's registration in the partition's own slot, which every
   * member renews there (PARTITION_BEAT) a third of the time to live apart, instead of by the one registration in the
   * global slot. A failover of one slot's master then stops only the partitions whose data it holds too.
   */
  registrationPerPartition?: boolean;
  /** A monotonic clock in ms (tests step it); the timers' own by default. */
  now?: () => number;
  /** The renewals' timers, and by default the clock the leases' validity runs on. */
  timers?: Timers;
  events?: Partial<LeaseEvents>;
  /** The connection is the leases' own: stop() closes it. */
  closeWhenStopped?: boolean;
}

interface Held {
  token: string;
  /** Local time until which the token is used: the lease cannot have passed to anyone before. */
  validUntil: number;
}

export class Leases implements Fencing {
  readonly ttlMs: number;
  private readonly held = new Map<Partition, Held>();
  private readonly now: () => number;
  private readonly timers: Timers;
  /** Stop the checks' timer and the beats' (a Redis Cluster), while they run. */
  private stopChecks: (() => void) | undefined;
  private stopBeats: (() => void) | undefined;
  private renewing: Promise<void> | undefined;
  /** Each partition's beat in flight (a Redis Cluster): one slot's at a time. */
  private readonly beating = new Map<Partition, Promise<void>>();

  constructor(
    private readonly redis: LeaseCommands,
    private readonly prefix: string,
    readonly member: string,
    private readonly opts: LeaseOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    const timers = (this.timers = opts.timers ?? realTimers);
    this.now = opts.now ?? (() => timers.now());
  }

  /** The token while the lease is surely still this process's. */
  tokenFor(partition: Partition): string | undefined {
    const held = this.held.get(partition);
    return held !== undefined && this.now() < held.validUntil ? held.token : undefined;
  }

  /** Redis refused a write: a renewal tells whether the lease ran out unnoticed (and comes back) or was taken. */
  refused(partition: Partition, token: string): void {
    if (this.held.get(partition)?.token === token) void this.renew();
  }

  /** The partitions held now. */
  partitions(): Partition[] {
    return [...this.held.keys()];
  }

  /** The epoch of the lease held on `partition` (event ids and stream entries carry it), or undefined. */
  epochOf(partition: Partition): number | undefined {
    const token = this.held.get(partition)?.token;
    return token === undefined ? undefined : epochOfToken(token);
  }

  /**
   * The epoch of the lease on `partition` while it is surely still this process's (see tokenFor), or undefined: what
   * an owner orders its gateways carries it, and it orders nothing without it.
   */
  validEpoch(partition: Partition): number | undefined {
    const token = this.tokenFor(partition);
    return token === undefined ? undefined : epochOfToken(token);
  }

  /**
   * Takes the lease if it is free, or held by a member whose registration ran out (by Redis's clock); true when
   * this process holds it afterwards.
   */
  async acquire(partition: Partition): Promise<boolean> {
    if (this.held.has(partition)) return true;
    const sent = this.now();
    const lease = leaseKey(this.prefix, partition);
    const current = (await this.redis.get(lease)) ?? '';
    const holder = holderOfToken(current);
    const registry = this.registrationOf(partition);
    if (current !== '' && holder !== this.member) {
      const alive = await this.redis.memberAlive(registry.expiry, registry.heard, holder, this.ttlMs);
      if (alive === 1) return false;
    }
    const epoch = epochKey(this.prefix, partition);
    const token = this.opts.registrationPerPartition
      ? await this.redis.leaseTakeRegistered(
          lease,
          epoch,
          registry.expiry,
          registry.heard,
          this.member,
          current,
          this.ttlMs,
        )
      : await this.redis.leaseTake(lease, epoch, this.member, current);
    if (token === null) return false;
    this.held.set(partition, { token, validUntil: this.validFrom(sent) });
    return true;
  }

  /**
   * This member's registration was renewed by a beat sent at `sent` (this class's clock). Had it lapsed before, the
   * leases are checked first; else none can have passed to another, and each is good for another time to live.
   */
  registered(sent: number, lapsed: boolean): Promise<void> {
    if (this.opts.registrationPerPartition) return Promise.resolve(); // each lease's own registration backs it
    if (lapsed) return this.renew();
    const validUntil = this.validFrom(sent);
    for (const held of this.held.values()) if (validUntil > held.validUntil) held.validUntil = validUntil;
    return Promise.resolve();
  }

  /** The clock the leases' validity runs on (a registration's `sent` is read from it). */
  clock(): number {
    return this.now();
  }

  /** Lets the lease go (after the partition's writes settled), so another process may take it at once. */
  async release(partition: Partition): Promise<void> {
    const held = this.held.get(partition);
    if (!held) return;
    this.held.delete(partition);
    // Refused (Redis away): the key names this member still, and repair() lets it go later.
    await this.redis.leaseRelease(leaseKey(this.prefix, partition), held.token).catch(() => 0);
  }

  /**
   * Lets go of the leases Redis names this member the holder of while it holds none of them: a release whose command
   * failed (Redis away), or a failover whose new master missed it, leaves the key naming a live member that serves
   * nothing there, which no other member would take it from. Answers the partitions freed. Not while a round of
   * checks runs (it may be taking a lease again); the next call looks again.
   */
  async repair(): Promise<Partition[]> {
    if (this.renewing !== undefined || this.beating.size > 0) return [];
    const freed: Partition[] = [];
    await Promise.all(
      ALL_PARTITIONS.filter((p) => !this.held.has(p)).map(async (p) => {
        const lease = leaseKey(this.prefix, p);
        const token = await this.redis.get(lease);
        // Held meanwhile: the token read may be the one just taken.
        if (token === null || holderOfToken(token) !== this.member || this.held.has(p)) return;
        if ((await this.redis.leaseRelease(lease, token)) === 1) freed.push(p);
      }),
    );
    return freed;
  }

  /**
   * Checks every lease `everyMs` apart: a third of the time to live for a standalone holder, whose checks are what
   * keeps its leases valid; seldom for a member, whose registration does that, in case a key was changed by hand.
   */
  start(everyMs = this.ttlMs / 3): void {
    this.stopChecks ??= this.timers.every(everyMs, () => void this.renew(), { unref: true });
    if (this.opts.registrationPerPartition)
      this.stopBeats ??= this.timers.every(this.ttlMs / 3, () => void this.beat(), { unref: true });
  }

  /** Stops renewing; with `release`, lets every lease go (a process that stops on purpose). */
  async stop(release = false): Promise<void> {
    this.stopChecks?.();
    this.stopBeats?.();
    this.stopChecks = undefined;
    this.stopBeats = undefined;
    await Promise.all([this.renewing, ...this.beating.values()]);
    if (release) await Promise.allSettled(this.partitions().map((p) => this.release(p)));
    if (this.opts.closeWhenStopped) await this.redis.quit().catch(() => undefined);
  }

  /** One round of checks (one at a time: a round started while one runs waits for it). */
  renew(): Promise<void> {
    this.renewing ??= this.renewAll().finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  /**
   * A Redis Cluster: renews this process's registration in the slot of every partition (one beat at a time in each
   * slot), held or not. Every member registers in every slot, as in the global one, so that a slot hears its members
   * beat while its holder is silent (paused, or gone), and judges the holder by that, not by a silence of Redis. A
   * lease held whose registration had lapsed there is checked; one whose slot does not answer lapses on its own, and
   * the others go on.
   */
  beat(): Promise<void> {
    const lostData: Partition[] = [];
    // Each slot's beat on its own: one whose master is away (a failover under way) holds up no other slot's renewal.
    const round = ALL_PARTITIONS.filter((p) => !this.beating.has(p)).map((partition) => {
      const beat = this.beatIn(partition, lostData).finally(() => this.beating.delete(partition));
      this.beating.set(partition, beat);
      return beat;
    });
    return Promise.all(round).then(() => {
      if (lostData.length > 0) this.opts.events?.dataLost?.(lostData);
    });
  }

  private async beatIn(partition: Partition, lostData: Partition[]): Promise<void> {
    const sent = this.now();
    const held = this.held.get(partition);
    const registry = this.registrationOf(partition);
    let lapsed: number;
    try {
      lapsed = await this.redis.partitionBeat(registry.expiry, registry.heard, this.member, this.ttlMs);
    } catch {
      return; // its slot's master is away: a lease there lapses on its own
    }
    if (held === undefined || this.held.get(partition) !== held) return;
    if (lapsed === 0) held.validUntil = Math.max(held.validUntil, this.validFrom(sent));
    else await this.check(partition, held, sent, lostData);
  }

  private async renewAll(): Promise<void> {
    const lostData: Partition[] = [];
    await Promise.all([...this.held].map(([partition, held]) => this.check(partition, held, this.now(), lostData)));
    if (lostData.length > 0) this.opts.events?.dataLost?.(lostData);
  }

  /**
   * Checks one lease in Redis (LEASE_CHECK) as of `sent`: still this process's, taken by another, or gone with the
   * partition's data (taken again, and added to `lostData`, so that what this process holds is written back).
   */
  private async check(partition: Partition, held: Held, sent: number, lostData: Partition[]): Promise<void> {
    let answer: number;
    try {
      answer = await this.redis.leaseCheck(
        leaseKey(this.prefix, partition),
        epochKey(this.prefix, partition),
        held.token,
      );
    } catch {
      return; // Redis away: the token lapses on its own, and the next round asks again.
    }
    if (this.held.get(partition) !== held) return; // released meanwhile
    if (answer === 1) held.validUntil = this.validFrom(sent);
    else if (answer === 0) this.lose(partition);
    else {
      this.held.delete(partition);
      if (await this.acquire(partition).catch(() => false)) lostData.push(partition);
      else this.lose(partition);
    }
  }

  /** Where the registration backing a lease on `partition` lives: the partition's own slot, or the global one. */
  private registrationOf(partition: Partition): { expiry: string; heard: string } {
    const where = this.opts.registrationPerPartition ? partition : 'global';
    return { expiry: memberExpiryKey(this.prefix, where), heard: memberHeardKey(this.prefix, where) };
  }

  private lose(partition: Partition): void {
    this.held.delete(partition);
    this.opts.events?.lost?.(partition);
  }

  /** A fifth of the time to live is kept back for the clocks of this host and Redis's to differ in pace. */
  private validFrom(sent: number): number {
    return sent + this.ttlMs - this.ttlMs / 5;
  }
}

function epochOfToken(token: string): number {
  return Number(token.slice(0, token.indexOf(':')));
}

function holderOfToken(token: string): string {
  return token.slice(token.indexOf(':') + 1);
}

/**
 * Takes every partition's lease for a process that writes the store alone (a benchmark, a test, a tool), fences
 * the store with them and keeps them renewed; `stop(true)` on the answer lets them go. Rejects when another
 * process holds one.
 */
export async function holdEveryPartition(
  store: { redis: RedisClient & ScriptCommands; keyPrefix: string; fenceWith(f: Fencing): void },
  member = `sole-${randomUUID()}`,
): Promise<Leases> {
  // A connection of the leases' own: the store may be closed before they are let go.
  const own = duplicateOf(store.redis);
  if (own.status !== 'ready') await new Promise((resolve) => own.once('ready', resolve));
  const leases = new Leases(withScripts(own), store.keyPrefix, member, { closeWhenStopped: true });
  for (const p of ALL_PARTITIONS)
    if (!(await leases.acquire(p))) throw new Error(`another process holds partition ${partitionName(p)}`);
  store.fenceWith(leases);
  leases.start();
  return leases;
}
