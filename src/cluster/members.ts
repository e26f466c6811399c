// The cluster's members: every server process registers itself in Redis with a time to live and refreshes it, and
// each refresh answers who else is alive. Expiry is judged by Redis's clock, so the hosts' clocks never matter.
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { realTimers, type Timers } from '../lib/timers.js';
import { memberExpiryKey, memberHeardKey, membersKey } from '../store/layout.js';
import type { RedisClient, ScriptCommands } from '../store/redis-scripts.js';

export const memberSchema = z.object({
  id: z.string(),
  /**
   * Where the other members reach this one's API (`http://host:port`): with `processes N`, a port of this process's
   * own, which nodes must not be given (see `api_url`).
   */
  url: z.string(),
  /**
   * Where nodes reach this member's API (api_url, else `http://server_name:api_port`, the port the processes of
   * one machine share): config answers list the live members' (`server_urls`). Absent from older members.
   */
  api_url: z.string().optional(),
  host: z.string(),
  pid: z.number().int(),
  /** When the process started, ms since the epoch. */
  started_at: z.number(),
  /**
   * Where nodes reach this member as their gateway (its ZeroMQ channels, and the incarnation its heartbeats carry);
   * absent until its transport is bound.
   */
  push: z.object({ heartbeat_addr: z.string(), command_addr: z.string(), incarnation_id: z.string() }).optional(),
  /** How many partitions it served at its last renewal (GET /_status shows it without reading the leases). */
  partitions: z.number().int().nonnegative().optional(),
});
export type Member = z.infer<typeof memberSchema>;

export class Members {
  private live: Member[] = [];
  /** Stops the refreshes' timer, while they run. */
  private stopBeats: (() => void) | undefined;

  constructor(
    private readonly redis: RedisClient & ScriptCommands,
    private readonly prefix: string,
    readonly me: Member,
    private readonly ttlMs: number,
    private readonly changed: (members: readonly Member[]) => void = () => undefined,
    /**
     * A renewal went through: `sent` when it was sent (read from `clock`), `lapsed` when the registration had run
     * out before it (the leases it backs are checked then, leases.ts).
     */
    private readonly renewed: (sent: number, lapsed: boolean) => Promise<void> | void = () => undefined,
    private readonly clock: () => number = () => performance.now(),
    private readonly timers: Timers = realTimers,
  ) {}

  /** Registers (or refreshes) this member and answers the live members, sorted by id. */
  async beat(): Promise<readonly Member[]> {
    const sent = this.clock();
    const [lapsed, ...raw] = await this.redis.memberBeat(
      membersKey(this.prefix),
      memberExpiryKey(this.prefix),
      memberHeardKey(this.prefix),
      this.me.id,
      JSON.stringify(this.me),
      this.ttlMs,
    );
    await this.renewed(sent, lapsed === '1');
    const members = raw
      .flatMap((json) => {
        const parsed = memberSchema.safeParse(safeJson(json));
        return parsed.success ? [parsed.data] : [];
      })
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const before = this.live.map((m) => m.id).join(',');
    this.live = members;
    if (members.map((m) => m.id).join(',') !== before) this.changed(members);
    return members;
  }

  /** Says where nodes reach this member; the next refresh publishes it. */
  describe(push: NonNullable<Member['push']>): void {
    this.me.push = push;
  }

  /** The members alive at the last refresh. */
  members(): readonly Member[] {
    return this.live;
  }

  /** The member with this id, if alive at the last refresh. */
  find(id: string): Member | undefined {
    return this.live.find((m) => m.id === id);
  }

  /** Refreshes a third of the time to live apart (a failed refresh is tried again at the next). */
  start(): void {
    this.stopBeats ??= this.timers.every(this.ttlMs / 3, () => void this.beat().catch(() => undefined), {
      unref: true,
    });
  }

  /** Refreshes at once, unless stopped (a member that left stays gone). */
  renewNow(): void {
    if (this.stopBeats !== undefined) void this.beat().catch(() => undefined);
  }

  /** Stops refreshing and leaves at once, so the others need not wait for this registration to run out. */
  async stop(): Promise<void> {
    this.stopBeats?.();
    this.stopBeats = undefined;
    await this.redis.memberLeave(membersKey(this.prefix), memberExpiryKey(this.prefix), this.me.id).catch(() => 0);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
