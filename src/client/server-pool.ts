// The servers a node's client may ask, as a pure value: those client.rb names, then the cluster's members its last
// config answer listed (`server_urls`), and the one in use. A request that fails in a way another member may not
// share moves the client to the next one, as NATS clients move through the `connect_urls` their servers announce:
// no balancer is needed for a node to outlive the member it was configured with.
import { parseHttpUrl } from '../config/client-config.js';

/**
 * A request the server has not answered by then goes to the next member: a member frozen (SIGSTOP, a stalled host)
 * takes connections and never answers them, and a node waiting the longer for it is counted down meanwhile.
 */
export const HTTP_TIMEOUT_MS = 5000;

export interface ServerPool {
  /** Base URLs (`https://host[:port][/prefix]`) from client.rb or -S, in their order. */
  readonly configured: readonly string[];
  /** Base URLs the last config answer listed that client.rb does not name, in this client's own order. */
  readonly learned: readonly string[];
  /** The server requests go to now; it stays until a request to it fails. */
  readonly current: string;
}

/** A base URL in the one form pools compare: origin and path, no trailing slash; null for anything else. */
export function normalBaseUrl(url: string): string | null {
  const parsed = parseHttpUrl(url);
  return parsed === null ? null : parsed.origin + parsed.pathname.replace(/\/+$/, '');
}

export function newServerPool(configured: readonly string[]): ServerPool {
  const urls = unique(configured.map((u) => normalBaseUrl(u) ?? u));
  const first = urls[0];
  if (first === undefined) throw new RangeError('a client needs at least one server URL');
  return { configured: urls, learned: [], current: first };
}

/** Every server of the pool in the order they are tried: client.rb's first. */
export function serversOf(pool: ServerPool): string[] {
  return [...pool.configured, ...pool.learned];
}

export interface Learned {
  pool: ServerPool;
  /** Whether the servers the pool holds changed. */
  changed: boolean;
  /** URLs left out: not http(s) base URLs, or plain http where client.rb names only https servers. */
  refused: string[];
}

/**
 * Takes the members a config answer listed, replacing those of the last one. They are tried after client.rb's in an
 * order of this client's own (`random`), so that a fleet whose member left spreads over the others instead of
 * moving together to the same next one; a list that names the same servers again keeps the order it had. A client
 * configured for https only never learns a plain http URL: a cluster behind TLS-terminating proxies advertises
 * its proxies' URLs (`api_url`), and a downgrade is never taken from an answer.
 */
export function learnServers(pool: ServerPool, advertised: readonly string[], random: () => number): Learned {
  const httpsOnly = pool.configured.every((u) => u.startsWith('https:'));
  const refused: string[] = [];
  const taken: string[] = [];
  for (const url of advertised) {
    const normal = normalBaseUrl(url);
    if (normal === null || (httpsOnly && !normal.startsWith('https:'))) refused.push(url);
    else if (!pool.configured.includes(normal)) taken.push(normal);
  }
  const fresh = unique(taken);
  const same = fresh.length === pool.learned.length && fresh.every((u) => pool.learned.includes(u));
  if (same) return { pool, changed: false, refused };
  return { pool: { ...pool, learned: shuffled(fresh, random) }, changed: true, refused };
}

/**
 * A request to `from` failed in a way the next server may not share: the pool moves on to the server after it
 * (after the first ones again past the last). A failure of a server the pool already left changes nothing, so two
 * requests failing together move the pool once. The server in use that an answer no longer lists is kept until it
 * fails; the pool then goes on from the start.
 */
export function moveOn(pool: ServerPool, from: string): ServerPool {
  if (from !== pool.current) return pool;
  const all = serversOf(pool);
  const next = all[(all.indexOf(from) + 1) % all.length] ?? pool.current;
  return next === pool.current ? pool : { ...pool, current: next };
}

/**
 * Whether the server the pool asks now is the member `gateway` names (the config answer's `gateway_url`): when that
 * gateway goes silent, the pool moves off it before the next config request. Unknown (a server that names none):
 * counted as the same, as a client configured with one member's URL most often connects to it.
 */
export function asksGateway(pool: ServerPool, gateway: string | undefined): boolean {
  return gateway === undefined || normalBaseUrl(gateway) === pool.current;
}

/**
 * Whether a request that failed may work on another member: no answer (the connection failed or timed out),
 * 408, 429 or a 5xx. Any other refusal (401, 403, 404...) would be the same everywhere: the client stays.
 */
export function worthAnotherServer(status: number | undefined): boolean {
  return status === undefined || status === 408 || status === 429 || status >= 500;
}

function unique(urls: readonly string[]): string[] {
  return [...new Set(urls)];
}

/** Fisher–Yates over a copy. */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
