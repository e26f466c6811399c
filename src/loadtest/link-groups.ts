// A worker's shared connections, with --nodes-per-connection above 1: each carries up to that many nodes, all
// bound for the same channels. Links are grouped by the channels their nodes' configs name (endpointKey) rather
// than a config fetched per link: each node's config names its own gateway (the cluster spreads an organization's
// nodes over its members by node), so nodes placed together may be sent to different processes.
import { randomBytes } from 'node:crypto';
import type { CurveKeys } from '../client/connection.js';
import type { PushConfig } from '../client/push-config.js';
import { endpointKey } from './follow.js';
import { SharedLink } from './shared-link.js';
import type { NodeSink } from './sim-node.js';

export class LinkGroups {
  private readonly groups = new Map<string, SharedLink[]>();

  constructor(
    private readonly org: string,
    private readonly perLink: number,
    /** The worker's Curve key pair, which each link presents when the server asks for Curve. */
    private readonly curve: CurveKeys,
    private readonly sink: Pick<NodeSink, 'drop' | 'error'>,
  ) {}

  /** The shared connection to `config`'s channels with room for one more node, or null when each has its own. */
  linkFor(config: PushConfig): SharedLink | null {
    if (this.perLink <= 1) return null;
    const key = endpointKey(config);
    const group = this.groups.get(key) ?? [];
    const last = group.at(-1);
    let link = last !== undefined && last.assigned < this.perLink ? last : group.find((l) => l.assigned < this.perLink);
    if (link === undefined) {
      const curve = config.curveServerKey === null ? null : this.curve;
      link = new SharedLink(this.org, config, curve, randomBytes(16).toString('hex'), {
        drop: (reason) => this.sink.drop(reason),
        error: (detail) => this.sink.error(`shared connection: ${detail}`),
      });
      group.push(link);
      this.groups.set(key, group);
    }
    link.assigned += 1;
    return link;
  }

  /** A node left `link`, which led to the channels of `key`, for other channels; the last one out closes it. */
  release(link: SharedLink, key: string): void {
    link.assigned -= 1;
    if (link.assigned > 0) return;
    link.close();
    const group = (this.groups.get(key) ?? []).filter((l) => l !== link);
    if (group.length === 0) this.groups.delete(key);
    else this.groups.set(key, group);
  }

  closeAll(): void {
    for (const group of this.groups.values()) for (const link of group) link.close();
  }
}
