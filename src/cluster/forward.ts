// HTTP between the processes of a cluster: any process answers any request. One for an organization goes to the
// process that owns the organization's partition, and one about users to the holder of the global lease, passed
// on as it came (signed headers and body untouched), so that the owner authenticates it once and answers from
// what it holds. A request that arrives forwarded is never forwarded again: ownership moved meanwhile, and the
// client is told to try again rather than sent round the cluster.
import { partitionOf, type Partition } from '../store/partitions.js';
import type { Owner } from './cluster-member.js';

/** Names the member that forwarded a request; such a request is answered where it lands. */
export const FORWARDED_BY = 'x-infra-forwarded-by';

/** A handler of web requests, as the HTTP server calls it (`env` carries Node's own request and response). */
export type Handler<E> = (req: Request, env: E) => Response | Promise<Response>;

export interface Owners {
  readonly id: string;
  ownerOf(partition: Partition): Promise<Owner>;
  /** Whether this process serves the partition's organizations now. */
  serves(partition: Partition): boolean;
}

/** The 413 a body past the API's limit gets, wherever it lands. */
export type TooLarge = () => Response;

/** The most a request's body may hold, by its path (the dashboard's forms take more than the API's JSON). */
export type BodyLimit = (pathname: string) => number;

/** Headers that belong to one connection, not to the request or answer passed on. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'host', 'content-length'];

/**
 * The partition whose owner answers a request, `body` when only its body says (the organization a POST to
 * /organizations creates), or undefined when any process answers it (status, the organization list, the
 * dashboard's sign-in and its list of organizations). The dashboard's pages of an organization go to its owner
 * as the API's do: only the owner holds the organization, and the session cookie is good on every process.
 */
export function partitionOfRequest(method: string, pathname: string): Partition | 'body' | undefined {
  const org = /^\/(?:organizations|ui\/orgs)\/([^/]+)/.exec(pathname);
  if (org?.[1] !== undefined) {
    try {
      return partitionOf(decodeURIComponent(org[1]));
    } catch {
      return undefined; // a malformed name: answered (refused) here
    }
  }
  if (pathname === '/organizations' || pathname === '/organizations/') return method === 'POST' ? 'body' : undefined;
  if (pathname === '/users' || pathname.startsWith('/users/')) return 'global';
  return undefined;
}

/**
 * Wraps the local handler: requests this process does not own go to their owner. A body is read here only up to
 * `maxBodyBytes`, the limit the owner's route applies, and one past it is refused here as the owner would refuse it.
 */
export function forwarding<E>(
  owners: Owners,
  local: Handler<E>,
  limit: { maxBodyBytes: BodyLimit; tooLarge: TooLarge },
): Handler<E> {
  return async (req, env) => {
    const url = new URL(req.url);
    const where = partitionOfRequest(req.method, url.pathname);
    if (where === undefined) return local(req, env);
    let body: ArrayBuffer | undefined;
    let partition: Partition;
    if (where === 'body' || (req.body !== null && req.method !== 'GET' && req.method !== 'HEAD')) {
      body = await readUpTo(req, limit.maxBodyBytes(url.pathname));
      if (body === undefined) return limit.tooLarge();
    }
    if (where === 'body') {
      body ??= new ArrayBuffer(0);
      const name = nameIn(body);
      // No name: the local answer says what is wrong with the body.
      if (name === undefined) return local(rebuilt(req, body), env);
      partition = partitionOf(name);
    } else partition = where;
    let owner: Owner;
    try {
      owner = await owners.ownerOf(partition);
    } catch {
      return tryAgain(STORE_AWAY); // the lease could not be read: Redis is away
    }
    if (owner.kind === 'here') {
      const answer = await local(body === undefined ? req : rebuilt(req, body), env);
      // Let go of while it was answered here: the 404 may only say the organization has left this process.
      return answer.status === 404 && !owners.serves(partition) ? tryAgain(UNOWNED) : answer;
    }
    if (owner.kind === 'none' || req.headers.has(FORWARDED_BY)) return tryAgain(UNOWNED);
    return pass(req, body, owner.member.url, owners.id);
  };
}

/** Sends the request to the owner's API as it came, and its answer back as it comes (event streams included). */
async function pass(req: Request, body: ArrayBuffer | undefined, ownerUrl: string, me: string): Promise<Response> {
  const url = new URL(req.url);
  const headers = new Headers(req.headers);
  for (const h of HOP_BY_HOP) headers.delete(h);
  // The owner answers uncompressed (fetch would unpack its gzip and leave the header): compression is per hop.
  headers.delete('accept-encoding');
  headers.set(FORWARDED_BY, me);
  // Links in the answer name the address the client used, not the owner's.
  headers.set('x-forwarded-host', req.headers.get('host') ?? url.host);
  if (!headers.has('x-forwarded-proto')) headers.set('x-forwarded-proto', url.protocol.replace(':', ''));
  let answer: Response;
  try {
    answer = await fetch(new URL(url.pathname + url.search, ownerUrl), {
      method: req.method,
      headers,
      redirect: 'manual',
      ...(body === undefined ? {} : { body }),
    });
  } catch {
    return tryAgain(UNOWNED); // the owner is going away; the next try finds its successor
  }
  const back = new Headers(answer.headers);
  for (const h of [...HOP_BY_HOP, 'content-encoding']) back.delete(h);
  return new Response(answer.body, { status: answer.status, headers: back });
}

/** The partition is between owners (one died or handed it over a moment ago). */
const UNOWNED = 'No server owns this organization right now: try again shortly';
/** Who owns the partition cannot be read while the store is away. */
const STORE_AWAY = 'The data store is unavailable; nothing was changed. Try again.';

/** 503 with Retry-After: the client tries again in a moment. */
function tryAgain(message: string): Response {
  return new Response(JSON.stringify({ error: [message] }), {
    status: 503,
    headers: { 'content-type': 'application/json', 'retry-after': '1' },
  });
}

/** The body, or undefined once it passes `max` bytes (nothing past that is read). */
async function readUpTo(req: Request, max: number): Promise<ArrayBuffer | undefined> {
  if (Number(req.headers.get('content-length') ?? 0) > max) return undefined;
  const reader = req.body?.getReader();
  if (!reader) return new ArrayBuffer(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const whole = Buffer.concat(chunks);
  return whole.buffer.slice(whole.byteOffset, whole.byteOffset + whole.byteLength);
}

function rebuilt(req: Request, body: ArrayBuffer): Request {
  return new Request(req.url, { method: req.method, headers: req.headers, body });
}

function nameIn(body: ArrayBuffer): string | undefined {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body).toString('utf8'));
    const name = (parsed as { name?: unknown } | null)?.name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}
