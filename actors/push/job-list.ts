// Every job's header of one organization, kept in creation order so the job list pages newest first without
// sorting: GET /pushy/jobs costs O(page), not O(jobs), with 100,000 jobs held.
import type { JobHeader } from './job-store.js';

export class JobList extends Map<string, JobHeader> {
  /** Ids oldest first; may hold ids deleted since (skipped, and dropped at the next compaction). */
  private order: string[] = [];
  private sorted = true;
  private stale = 0;

  override set(id: string, header: JobHeader): this {
    if (!this.has(id)) {
      const last = this.get(this.order.at(-1) ?? '');
      if (last !== undefined && older(header, last)) this.sorted = false;
      this.order.push(id);
    }
    return super.set(id, header);
  }

  override delete(id: string): boolean {
    const had = super.delete(id);
    if (had) this.stale++;
    return had;
  }

  override clear(): void {
    super.clear();
    this.order = [];
    this.sorted = true;
    this.stale = 0;
  }

  /** Newest first: `limit` headers after skipping `offset`. */
  newestFirst(offset: number, limit: number): JobHeader[] {
    this.tidy();
    const page: JobHeader[] = [];
    for (let i = this.order.length - 1 - offset; i >= 0 && page.length < limit; i--) {
      const header = this.get(this.order[i] ?? '');
      if (header !== undefined) page.push(header);
    }
    return page;
  }

  /** Drops deleted ids, and restores creation order after out-of-order inserts (a load from the store). */
  private tidy(): void {
    if (this.stale > 0) {
      this.order = this.order.filter((id) => this.has(id));
      this.stale = 0;
    }
    if (!this.sorted) {
      this.order.sort((a, b) => {
        const [x, y] = [this.get(a), this.get(b)];
        return x === undefined || y === undefined ? 0 : older(x, y) ? -1 : older(y, x) ? 1 : 0;
      });
      this.sorted = true;
    }
  }
}

/** Creation order; jobs created in the same millisecond by id, as the list always showed them. */
function older(a: JobHeader, b: JobHeader): boolean {
  return a.created_at < b.created_at || (a.created_at === b.created_at && a.id < b.id);
}
