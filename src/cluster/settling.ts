// Which live members may be handed partitions: hysteresis for rebalancing. A member that comes back at an address
// another member just left (a process restarted there, or one woken from a pause) is handed nothing until it has
// stayed live a while, so that a member going and coming does not move partitions back and forth; any other member
// (a new cluster's, a member added) is handed its share at once. Kept per watching member, by its own clock.
import type { Member } from './members.js';

export class SettlingMembers {
  /** Since when each live member, by id, counts as live for this purpose. */
  private readonly liveSince = new Map<string, number>();
  /** When a member at each address last left. */
  private readonly leftAt = new Map<string, number>();
  /** The live members' addresses at the last update, by id. */
  private known = new Map<string, string>();

  constructor(
    /** How long a member back at an address stays live before it is settled (ms). */
    private readonly settleMs: number,
    /** How long an address that a member left is remembered (ms). */
    private readonly rememberMs: number,
  ) {}

  /** The ids of the members live `now` that are settled. */
  settled(live: readonly Member[], now: number): Set<string> {
    const urls = new Map(live.map((m) => [m.id, m.url]));
    for (const [url, at] of this.leftAt) if (now - at >= this.rememberMs) this.leftAt.delete(url);
    for (const [id, url] of this.known) if (!urls.has(id)) this.leftAt.set(url, now);
    this.known = urls;
    for (const id of [...this.liveSince.keys()]) if (!urls.has(id)) this.liveSince.delete(id);
    for (const [id, url] of urls)
      if (!this.liveSince.has(id)) this.liveSince.set(id, this.leftAt.has(url) ? now : -Infinity);
    return new Set(live.filter((m) => now - (this.liveSince.get(m.id) ?? now) >= this.settleMs).map((m) => m.id));
  }
}
