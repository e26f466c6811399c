// When each job finished, as the organization's feed tells it (reference 6.5: the feed carries every job's
// `start` and `job_complete`). One stream for the whole run, where polling each job in flight every few
// milliseconds would have the tester's own GETs of 10,000-node jobs cost the server more than it spends on the
// job. The jobs are still polled, slowly, for whatever the feed misses (a server that does not serve it, or a
// stream cut by a restart).
import type { ApiClient } from '../auth/api-client.js';
import { readEventStream } from '../api/event-stream.js';
import { now } from './clock.js';

export class CompletionFeed {
  /** Finished jobs the feed told of, and when it did. */
  private readonly finished = new Map<string, number>();
  private readonly waiting = new Map<string, (at: number) => void>();
  private following = false;

  private constructor(private readonly abort: AbortController) {}

  /** Follows the organization's feed; a feed the server does not serve gives a watcher that never tells. */
  static async open(api: ApiClient, org: string): Promise<CompletionFeed> {
    const feed = new CompletionFeed(new AbortController());
    const path = `/organizations/${encodeURIComponent(org)}/pushy/job_status_feed`;
    const res = await api.stream(path, feed.abort.signal).catch(() => null);
    const type = res?.headers.get('content-type') ?? '';
    if (res === null || res.status !== 200 || res.body === null || !type.startsWith('text/event-stream')) {
      await res?.body?.cancel().catch(() => undefined);
      return feed;
    }
    feed.following = true;
    void feed.read(res.body);
    return feed;
  }

  /** Whether the feed is followed now: while it is, jobs need polling only as a safety net. */
  get live(): boolean {
    return this.following;
  }

  /** When the feed told that `id` finished: at once if it already has, else once it does. */
  finishedAt(id: string): Promise<number> {
    const at = this.finished.get(id);
    if (at !== undefined) return Promise.resolve(at);
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }

  close(): void {
    this.following = false;
    this.abort.abort();
  }

  private async read(body: AsyncIterable<Uint8Array>): Promise<void> {
    try {
      for await (const item of readEventStream(body)) {
        if (item.kind !== 'event' || item.value.event !== 'job_complete') continue;
        const at = now();
        const job = jobOf(item.value.data);
        if (job === undefined) continue;
        this.finished.set(job, at);
        this.waiting.get(job)?.(at);
        this.waiting.delete(job);
      }
    } catch {
      // Aborted by close(), or the stream broke: polling finds the rest.
    } finally {
      this.following = false;
    }
  }
}

function jobOf(data: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(data);
    const job = typeof parsed === 'object' && parsed !== null && 'job' in parsed ? parsed.job : undefined;
    return typeof job === 'string' ? job : undefined;
  } catch {
    return undefined;
  }
}
