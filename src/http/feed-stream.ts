// Feeds as `text/event-stream` responses (reference 6.5). The stream pulls from the feed's log as fast as the
// reader takes it, so a slow reader holds back nothing but itself; one that falls too far behind gets a final
// comment and its stream ends, and one whose connection stays full for keep_alive_time is dropped. A quiet stream
// gets `:keepalive` comments.
import { feedTimestamp } from '../api/job-feed.js';
import type { JobBody } from '../api/push-jobs.js';
import type { FeedEvent, FeedHub, FeedLog, FeedReader } from '../feeds/feed-hub.js';

const encoder = new TextEncoder();
/** Bytes the response may hold unsent before the stream stops pulling from the log. */
const HIGH_WATER_BYTES = 64 * 1024;

export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  // Proxies such as nginx buffer responses unless told not to, and a feed must arrive as it happens.
  'X-Accel-Buffering': 'no',
} as const;

/** What the route wants to know of its stream: when it ends, and when its reader stopped reading (drop it). */
export interface StreamHooks {
  closed?: () => void;
  stalled?: () => void;
}

/** `event: NAME\nid: ID\ndata: JSON\n\n`. */
export function sseEvent(e: Pick<FeedEvent, 'id' | 'event' | 'data'>): string {
  return `event: ${e.event}\nid: ${e.id}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/**
 * A job's feed: the events after `lastEventId` (all of them when it is absent or unknown), then live ones until the
 * job is over; once its actor is gone, one `summary` event holding the job as GET shows it.
 */
export function jobFeedResponse(
  feeds: FeedHub,
  org: string,
  job: string,
  lastEventId: string | undefined,
  summary: JobBody,
  hooks: StreamHooks = {},
): Response {
  const log = feeds.jobLog(org, job);
  if (log === undefined) {
    hooks.closed?.();
    const text = sseEvent({ id: 'job-1', event: 'summary', data: summary as unknown as Record<string, unknown> });
    return new Response(text, { headers: SSE_HEADERS });
  }
  const after = lastEventId === undefined ? undefined : log.seqOf(lastEventId);
  return streamOf(feeds, log, after === undefined ? 1 : after + 1, [], hooks);
}

/**
 * An organization's feed: no history without `Last-Event-ID`; the events after a known id; after an unknown or
 * expired one, `start_of_history` (stamped with the horizon) and every event kept. It never ends by itself.
 */
export function orgFeedResponse(
  feeds: FeedHub,
  org: string,
  lastEventId: string | undefined,
  hooks: StreamHooks = {},
): Response {
  const log = feeds.orgLog(org);
  if (lastEventId === undefined) return streamOf(feeds, log, log.end, [], hooks);
  const after = log.seqOf(lastEventId);
  if (after !== undefined) return streamOf(feeds, log, after + 1, [], hooks);
  const horizon = feeds.settings.now() - feeds.settings.orgExpirationMs;
  const start = sseEvent({
    id: 'start_id',
    event: 'start_of_history',
    data: { timestamp: feedTimestamp(horizon) },
  });
  return streamOf(feeds, log, log.start, [start], hooks);
}

function streamOf(feeds: FeedHub, log: FeedLog, from: number, preface: string[], hooks: StreamHooks): Response {
  const { keepAliveMs, readerAllowance } = feeds.settings;
  let reader: FeedReader | undefined;
  let cancelTimer: (() => void) | undefined;
  /**
   * Cancels the timer set while the stream holds as much as it may and its reader takes nothing: the connection is
   * full. Held for keep_alive_time, the reader is dropped: it holds a connection, and its events, for nothing.
   */
  let stall: (() => void) | undefined;
  let left = false;
  const leave = () => {
    cancelTimer?.();
    stall?.();
    if (left) return;
    left = true;
    if (reader !== undefined) log.leave(reader);
    hooks.closed?.();
  };
  const full = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if ((controller.desiredSize ?? 0) > 0 || hooks.stalled === undefined) return;
    stall = feeds.timers.after(keepAliveMs, () => {
      hooks.stalled?.();
      leave();
    });
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        reader = log.read(from, readerAllowance);
        for (const text of preface) controller.enqueue(encoder.encode(text));
      },
      async pull(controller) {
        stall?.();
        stall = undefined;
        const r = reader as FeedReader;
        for (;;) {
          if (r.dropped) {
            controller.enqueue(encoder.encode(':dropped: this reader fell too far behind the feed\n\n'));
            leave();
            return controller.close();
          }
          const e = log.at(r.next);
          if (e !== undefined) {
            r.next += 1;
            controller.enqueue(encoder.encode(sseEvent(e)));
            if ((controller.desiredSize ?? 0) <= 0) return full(controller);
            continue;
          }
          if (log.done) {
            leave();
            return controller.close();
          }
          // Nothing to send: wait for the log, or say the stream is alive after keep_alive_time.
          const woken = await new Promise<boolean>((resolve) => {
            r.wake = () => resolve(true);
            cancelTimer = feeds.timers.after(keepAliveMs, () => resolve(false));
          });
          cancelTimer?.();
          r.wake = null;
          if (!woken) {
            controller.enqueue(encoder.encode(':keepalive\n\n'));
            return full(controller);
          }
        }
      },
      cancel: leave,
    },
    { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
  );
  return new Response(stream, { headers: SSE_HEADERS });
}
