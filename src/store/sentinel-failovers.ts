// The failovers Sentinel runs, as its sentinels announce them. From the moment a sentinel tries one (+try-failover)
// until it has switched the master (+switch-master) or given up, a write the old master takes can be confirmed by a
// replica that has not been turned yet and is then lost with it: WAIT alone cannot tell (redis-replication.ts).
// Every sentinel named is listened to, since only the one that runs a failover announces its start.
import { Redis } from 'ioredis';

/** Whether a failover runs now, and how many began since start. */
export interface Failovers {
  readonly began: number;
  readonly running: boolean;
}

/** A failover announced and never ended (its end missed) counts as over after this long. */
const LONGEST_MS = 30_000;

/** The channels that start or end a failover of a master. */
const STARTS = ['+try-failover'];
const ENDS = ['+switch-master', '-failover-abort-not-elected', '-failover-abort-no-good-slave', '+failover-end'];

export class SentinelFailovers implements Failovers {
  #began = 0;
  #runningSince: number | undefined;
  private readonly connections: Redis[] = [];

  constructor(
    sentinels: ReadonlyArray<{ host: string; port: number }>,
    /** The master's name, which Sentinel's messages carry. */
    private readonly name: string,
    private readonly now: () => number = Date.now,
  ) {
    for (const { host, port } of sentinels) {
      // Retried for ever, and subscribed again after each reconnection; a sentinel away announces nothing.
      const conn = new Redis({ host, port, lazyConnect: true, maxRetriesPerRequest: null });
      conn.on('error', () => undefined);
      conn.on('message', (channel: string, message: string) => this.heard(channel, message));
      void conn.subscribe(...STARTS, ...ENDS).catch(() => undefined);
      this.connections.push(conn);
    }
  }

  get began(): number {
    return this.#began;
  }

  get running(): boolean {
    if (this.#runningSince !== undefined && this.now() - this.#runningSince > LONGEST_MS)
      this.#runningSince = undefined;
    return this.#runningSince !== undefined;
  }

  close(): void {
    for (const conn of this.connections) conn.disconnect();
  }

  /** `+switch-master` says `NAME OLD_IP OLD_PORT NEW_IP NEW_PORT`; the others `master NAME IP PORT`. */
  private heard(channel: string, message: string): void {
    const words = message.split(' ');
    const name = channel === '+switch-master' ? words[0] : words[0] === 'master' ? words[1] : undefined;
    if (name !== this.name) return;
    if (STARTS.includes(channel)) {
      this.#began += 1;
      this.#runningSince = this.now();
    } else this.#runningSince = undefined;
  }
}
