// How a store fences its writes: each write of a partition carries the token of the lease its writer holds, and
// Redis refuses it unless that lease is still the writer's (checked inside Redis, in the same script as the
// write). src/cluster/leases.ts holds the leases; the store only asks for tokens and reports refusals.
import type { Partition } from './partitions.js';
import { partitionName } from './partitions.js';

export interface Fencing {
  /** The token of this process's lease on `partition`, or undefined when it holds none. */
  tokenFor(partition: Partition): string | undefined;
  /** Redis refused a write under `token`: the lease has passed to another process, or was lost. */
  refused(partition: Partition, token: string): void;
}

/** A write of a partition this process does not own (any more): nothing of it was written. */
export class FencedError extends Error {
  override name = 'FencedError';

  constructor(readonly partition: Partition) {
    super(`this server does not own partition ${partitionName(partition)} (any more): the write was refused`);
  }
}
