// Following the job and organization feeds in tests: a signed GET with Accept: text/event-stream, read item by
// item until the server ends the stream, a condition holds, or the deadline passes.
import { readEventStream, type StreamItem } from '../../src/api/event-stream.js';
import type { ApiClient } from '../../src/auth/api-client.js';

export interface FeedRead {
  status: number;
  headers: Headers;
  items: StreamItem[];
  /** The server ended the stream (rather than the reader stopping it). */
  ended: boolean;
}

export interface FeedReadOptions {
  lastEventId?: string;
  /** Stop reading once this holds for the items so far. */
  until?: (items: StreamItem[]) => boolean;
  /** Called once the answer's head is in, before any item is read (to start what the feed should show). */
  opened?: () => Promise<unknown>;
  timeoutMs?: number;
}

export async function readFeed(by: ApiClient, path: string, opts: FeedReadOptions = {}): Promise<FeedRead> {
  const abort = new AbortController();
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const timer = setTimeout(() => abort.abort(new Error(`feed ${path}: no end within ${timeoutMs} ms`)), timeoutMs);
  const items: StreamItem[] = [];
  try {
    const res = await by.stream(path, abort.signal, opts.lastEventId);
    const opened = opts.opened?.();
    if (res.body === null || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      await opened;
      return { status: res.status, headers: res.headers, items, ended: true };
    }
    let ended = true;
    for await (const item of readEventStream(res.body)) {
      items.push(item);
      if (opts.until?.(items) === true) {
        ended = false;
        break;
      }
    }
    await opened;
    return { status: res.status, headers: res.headers, items, ended };
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : String(e)}; items so far: ${JSON.stringify(items)}`, {
      cause: e,
    });
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

/** The events among the items, with their data parsed. */
export function eventsOf(
  items: StreamItem[],
): Array<{ event: string; id: string | undefined; data: Record<string, unknown> }> {
  return items.flatMap((i) =>
    i.kind === 'event'
      ? [{ event: i.value.event, id: i.value.id, data: JSON.parse(i.value.data) as Record<string, unknown> }]
      : [],
  );
}
