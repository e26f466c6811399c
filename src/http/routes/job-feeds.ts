// /organizations/ORG/pushy/job_status_feed: a job's status feed and its organization's, as event streams only
// (reference 6.5). Each stream counts against its reader's max_event_streams, and a reader that stops reading
// loses its connection.
import type { Hono } from 'hono';
import type { InfraSystem } from '../../../actors/system.js';
import type { JobBody } from '../../api/push-jobs.js';
import type { AuthEnv } from '../authenticate.js';
import { ApiError } from '../errors.js';
import type { EventStreams } from '../event-streams.js';
import { jobFeedResponse, orgFeedResponse, type StreamHooks } from '../feed-stream.js';
import { param, queryOrg, route, send, type Ctx } from '../respond.js';

export function jobFeedRoutes(app: Hono<AuthEnv>, system: InfraSystem, streams: EventStreams): void {
  /**
   * Counts the stream against its principal's max_event_streams (a client is one of its organization's), and drops a
   * reader whose connection stays full for keep_alive_time by closing it; undefined when the principal is at the cap.
   */
  const hooksFor = (c: Ctx): StreamHooks | undefined => {
    const { kind, name } = c.get('rc').requestor;
    const closed = streams.enter(kind === 'user' ? `user:${name}` : `client:${c.get('orgName') ?? ''}/${name}`);
    if (closed === undefined) return undefined;
    const socket = c.env?.incoming?.socket;
    return {
      closed,
      stalled: () => {
        streams.stalled();
        socket?.destroy();
      },
    };
  };
  const base = '/organizations/:org/pushy/job_status_feed';
  route(app, `${base}/:id`, {
    GET: async (c) => {
      acceptsEventStream(c);
      const id = param(c, 'id');
      const reply = await queryOrg(c, system, { type: 'get_job', id });
      if (reply.status !== 200) return send(c, reply);
      const hooks = hooksFor(c);
      if (hooks === undefined) return c.json(streams.refusal(), 429);
      const org = c.get('orgName') as string;
      return jobFeedResponse(system.feeds, org, id, c.req.header('Last-Event-ID'), reply.body as JobBody, hooks);
    },
  });
  route(app, base, {
    GET: async (c) => {
      acceptsEventStream(c);
      const reply = await queryOrg(c, system, { type: 'watch_jobs' });
      if (reply.status !== 200) return send(c, reply);
      const hooks = hooksFor(c);
      if (hooks === undefined) return c.json(streams.refusal(), 429);
      return orgFeedResponse(system.feeds, c.get('orgName') as string, c.req.header('Last-Event-ID'), hooks);
    },
  });
}

function acceptsEventStream(c: Ctx): void {
  if (!(c.req.header('Accept') ?? '').includes('text/event-stream'))
    throw ApiError.of(406, 'This feed is served only as text/event-stream: send Accept: text/event-stream');
}
