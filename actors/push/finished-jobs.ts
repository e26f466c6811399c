// Finished jobs answered from memory, newest last, until they hold FINISHED_CACHE_NODES nodes: the latest ones are
// those asked about most, and each answers from how it looked when it ended, serialized once.
import type { JobBody } from '../../src/api/push-jobs.js';
import type { FinishedJob } from './job-answers.js';

/** Finished jobs answered from memory, counted in nodes. */
const FINISHED_CACHE_NODES = 200_000;

export class FinishedJobs {
  private readonly jobs = new Map<string, FinishedJob>();
  private nodes = 0;

  get(id: string): FinishedJob | undefined {
    return this.jobs.get(id);
  }

  remember(id: string, body: JobBody): void {
    this.jobs.set(id, { body });
    this.nodes += nodeCount(body);
    for (const [oldest, old] of this.jobs) {
      if (this.nodes <= FINISHED_CACHE_NODES || oldest === id) break;
      this.jobs.delete(oldest);
      this.nodes -= nodeCount(old.body);
    }
  }

  forget(id: string): void {
    const job = this.jobs.get(id);
    if (job === undefined) return;
    this.jobs.delete(id);
    this.nodes -= nodeCount(job.body);
  }

  entries(): IterableIterator<[string, FinishedJob]> {
    return this.jobs.entries();
  }
}

function nodeCount(body: JobBody): number {
  return Object.values(body.nodes).reduce((n, names) => n + names.length, 0);
}
