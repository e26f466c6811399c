// One server process as a member of a cluster on a Redis store: it registers itself, holds leases, and says what it
// holds. The processes of a cluster share the store; the one holding the global lease runs the organizations,
// and the others stand by, registered and answering `starting`, until its leases run out (it died, or stopped
// answering Redis) and they take them over. Every write is fenced by its partition's lease (src/store/fencing.ts),
// so a process that lost its leases writes nothing, and steps down.
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClusterStatus } from '../api/status.js';
import type { Logger } from '../lib/logger.js';
import { leaseKey } from '../store/keys.js';
import { ALL_PARTITIONS, partitionName, type Partition } from '../store/partitions.js';
import type { RedisStore } from '../store/redis-store.js';
import { Leases } from './leases.js';
import { Members, type Member } from './members.js';

export interface ClusterMemberOptions {
  id: string;
  url: string;
  ttlMs?: number;
  log: Logger;
  /** A lease this process held was taken by another process: it must stop serving at once. */
  lost: (partition: Partition) => void;
}

export class ClusterMember {
  readonly leases: Leases;
  readonly members: Members;
  #role: ClusterStatus['role'] = 'standby';

  constructor(
    private readonly store: RedisStore,
    private readonly opts: ClusterMemberOptions,
  ) {
    const { id, url, log } = opts;
    this.leases = new Leases(store.redis, store.keyPrefix, id, {
      ...(opts.ttlMs === undefined ? {} : { ttlMs: opts.ttlMs }),
      events: {
        lost: (p) => {
          this.#role = 'stepped_down';
          log.error('another server took a partition this server held: it stops serving it', {
            partition: partitionName(p),
          });
          opts.lost(p);
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
    this.members = new Members(store.redis, store.keyPrefix, me, this.leases.ttlMs, (members) =>
      log.info('cluster members changed', { members: members.map((m) => m.id) }),
    );
    store.fenceWith(this.leases);
  }

  get id(): string {
    return this.opts.id;
  }

  /** `standby` until it holds every partition, `active` then, `stepped_down` once another took one over. */
  get role(): ClusterStatus['role'] {
    return this.#role;
  }

  /** Registers this process and keeps its registration and its leases fresh. */
  async join(): Promise<void> {
    await this.members.beat();
    this.members.start();
    this.leases.start();
  }

  /**
   * Waits until this process holds every partition: the global lease first, so that two processes starting
   * together never each hold a part and wait for the other's. A standby waits here for as long as the active
   * process keeps its leases; `signal` stops the wait.
   */
  async takeEverything(signal?: AbortSignal): Promise<void> {
    const step = this.leases.ttlMs / 5;
    let told = false;
    while (!(await this.leases.acquire('global'))) {
      if (!told) {
        this.opts.log.info('another server holds the store: this one stands by to take over', {
          member: this.opts.id,
        });
        told = true;
      }
      await sleep(step, undefined, { signal });
    }
    // A process that died holding partitions frees them when their leases run out.
    for (;;) {
      const missing = [];
      for (const p of ALL_PARTITIONS) if (!(await this.leases.acquire(p))) missing.push(p);
      if (missing.length === 0) break;
      await sleep(step, undefined, { signal });
    }
    this.#role = 'active';
  }

  /** This member, the live members, and how many partitions each holds (read from the leases). */
  async status(): Promise<ClusterStatus> {
    const { redis, keyPrefix } = this.store;
    const holders = await Promise.all(ALL_PARTITIONS.map((p) => redis.get(leaseKey(keyPrefix, p)).catch(() => null)));
    const counts = new Map<string, number>();
    for (const token of holders) {
      if (token === null) continue;
      const member = token.slice(token.indexOf(':') + 1);
      counts.set(member, (counts.get(member) ?? 0) + 1);
    }
    return {
      member: this.opts.id,
      role: this.#role,
      members: this.members.members().map((m) => ({
        id: m.id,
        url: m.url,
        host: m.host,
        pid: m.pid,
        partitions: counts.get(m.id) ?? 0,
      })),
      partitions: this.leases.partitions().length,
      lease_ttl_ms: this.leases.ttlMs,
      redis_mode: this.store.mode,
    };
  }

  /** Stops renewing, lets the leases go (the writes before this have settled) and leaves. */
  async leave(): Promise<void> {
    await this.leases.stop(this.#role === 'active');
    await this.members.stop();
  }
}
