// Whether this machine can resolve the hosts of the ZeroMQ endpoints a server names. libzmq retries a host name it
// cannot resolve for ever and without a word, so a node told a name unknown here would wait in silence.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/** The host of a `tcp://HOST:PORT` endpoint, without the brackets of an IPv6 literal; null for another form. */
export function endpointHost(endpoint: string): string | null {
  const host = /^tcp:\/\/(\[[^\]]+\]|[^:/[\]]+):\d+$/.exec(endpoint)?.[1];
  if (host === undefined) return null;
  return host.startsWith('[') ? host.slice(1, -1) : host;
}

/** Those of `endpoints` whose host name does not resolve here, each once; IP addresses always do. */
export async function unresolvedEndpoints(endpoints: Iterable<string>): Promise<string[]> {
  const unresolved: string[] = [];
  for (const endpoint of new Set(endpoints)) {
    const host = endpointHost(endpoint);
    if (host === null || isIP(host) !== 0) continue;
    try {
      await lookup(host);
    } catch {
      unresolved.push(endpoint);
    }
  }
  return unresolved;
}
