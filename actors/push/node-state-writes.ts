// Write-behind of an organization's node states: the records changed since the last flush go to the store in one
// batch per tick, never one write per heartbeat. Batches go one after another, so a later state never lands before
// an earlier one, and waiting for a flush waits for the one under way.
import { NODE_STATES_MAP, nodeStatesCollection } from '../../src/store/collections.js';
import type { Logger } from '../../src/lib/logger.js';
import type { Store } from '../../src/store/store.js';
import type { NodeAvailability, StoredNodeRecord } from './push-data.js';

export class NodeStateWrites {
  /** Node records changed since the last flush. */
  private readonly dirty = new Set<string>();
  /** The write under way (or the last one, settled): it never rejects, whatever the write did. */
  private flushing: Promise<void> = Promise.resolve();
  /** The organization is gone: nothing of it is written any more, not even what a failed batch kept. */
  private dropped = false;

  constructor(
    private readonly org: string,
    private readonly records: ReadonlyMap<string, NodeAvailability>,
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  changed(node: string): void {
    if (!this.dropped) this.dirty.add(node);
  }

  /**
   * Writes what changed. Rejects when the store did not take the batch (the states are kept for the next one): what
   * a gateway said is then not acknowledged, and is applied again.
   */
  flush(): Promise<void> {
    const write = this.flushing.then(() => this.writeDirty());
    this.flushing = write.catch(() => undefined);
    return write;
  }

  /** A flush whose failure is logged and left for the next tick: a stop or a release waits for it all the same. */
  settled(): Promise<void> {
    return this.flush().catch(() => undefined);
  }

  /** The organization is gone: nothing of it is written any more, once the write under way is done. */
  async drop(): Promise<void> {
    this.dropped = true;
    this.dirty.clear();
    await this.flushing;
  }

  /** Every record as it is now, for a store that lost them. */
  async writeAll(): Promise<void> {
    const records = [...this.records].map(([n, r]) => [n, storedOf(r)] as const);
    await this.store.putFields(nodeStatesCollection(this.org), NODE_STATES_MAP, records);
  }

  private async writeDirty(): Promise<void> {
    if (this.dirty.size === 0) return;
    const docs = [...this.dirty].flatMap((n) => {
      const r = this.records.get(n);
      return r ? [[n, storedOf(r)] as const] : [];
    });
    this.dirty.clear();
    try {
      await this.store.putFields(nodeStatesCollection(this.org), NODE_STATES_MAP, docs);
    } catch (e) {
      if (!this.dropped) for (const [n] of docs) this.dirty.add(n);
      this.log.error('saving node states failed; they are kept for the next tick', { org: this.org, error: e });
      throw e;
    }
  }
}

/** A node's record as stored: what it was told, without what jobs may make of it now. */
function storedOf(r: NodeAvailability): StoredNodeRecord {
  const { node_name, status, updated_at, incarnation, gateway } = r;
  return gateway === undefined
    ? { node_name, status, updated_at, incarnation }
    : { node_name, status, updated_at, incarnation, gateway };
}
