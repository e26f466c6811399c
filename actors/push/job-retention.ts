// Retention (job_retention_days): finished jobs last changed longer ago leave the job list at once, then the store
// (header first, so a purge cut short leaves nothing the API shows), a batch per pass; a pass that found a full
// batch runs again on the next tick.
import type { Logger } from '../../src/lib/logger.js';
import { isFinished } from '../../src/push/job-states.js';
import type { Store } from '../../src/store/store.js';
import { purgeJobs } from './job-store.js';
import type { JobList } from './job-list.js';

/**
 * How often finished jobs past job_retention_days are looked for (or every half retention period, when shorter),
 * and how many one pass removes at most.
 */
const PURGE_EVERY_MS = 3_600_000;
const PURGE_BATCH = 1000;
const DAY_MS = 86_400_000;

export interface RetentionPorts {
  org: string;
  headers: JobList;
  store: Store;
  log: Logger;
  days: number;
  /** Whether the job still runs here (a live job is never purged, whatever its header says). */
  live(id: string): boolean;
  /** The job left the list: forget how it answered. */
  forget(id: string): void;
}

export class JobRetention {
  private nextPurge = 0;
  /** The purge writing to the store now, if any: a stopping server waits for it. */
  private purging: Promise<void> | null = null;

  constructor(private readonly ports: RetentionPorts) {}

  /** The purge under way, if any. */
  get underWay(): Promise<void> | null {
    return this.purging;
  }

  /** A tick at `now`: purges a batch when one is due. */
  tick(now: number): void {
    if (now >= this.nextPurge) this.purge(now);
  }

  private purge(now: number): void {
    const { days, headers, org, log } = this.ports;
    if (days === 0 || this.purging !== null) return;
    const before = now - days * DAY_MS;
    const expired: string[] = [];
    for (const [id, h] of headers) {
      if (isFinished(h.status) && h.updated_at < before && !this.ports.live(id)) expired.push(id);
      if (expired.length === PURGE_BATCH) break;
    }
    this.nextPurge = expired.length === PURGE_BATCH ? now : now + Math.min(PURGE_EVERY_MS, (days * DAY_MS) / 2);
    if (expired.length === 0) return;
    for (const id of expired) {
      headers.delete(id);
      this.ports.forget(id);
    }
    this.purging = purgeJobs(this.ports.store, org, expired)
      .then(() => log.info('purged finished jobs past job_retention_days', { org, jobs: expired.length, days }))
      .catch((e: unknown) => {
        // Gone from the list already; what is left in the store is looked for again after a restart.
        log.error('purging finished jobs failed', { org, error: e });
      })
      .finally(() => (this.purging = null));
  }
}
