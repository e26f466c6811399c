// Event counts by name and label, kept by the process for GET /_status and metrics: what was dropped, ignored
// or crashed, and why. Counting is a map lookup and an add; nothing is allocated once a label has been seen.

export class Counters {
  private readonly counts = new Map<string, Map<string, number>>();

  inc(name: string, label = '', by = 1): void {
    let labels = this.counts.get(name);
    if (labels === undefined) {
      labels = new Map();
      this.counts.set(name, labels);
    }
    labels.set(label, (labels.get(label) ?? 0) + by);
  }

  get(name: string, label = ''): number {
    return this.counts.get(name)?.get(label) ?? 0;
  }

  /** Every label of `name` with its count. */
  snapshot(name: string): Record<string, number> {
    return Object.fromEntries(this.counts.get(name) ?? []);
  }
}
