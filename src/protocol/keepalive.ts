// TCP keepalive settings for the push-jobs channels, both the server's routers and the client's dealers: how a
// connection whose peer's host vanished without a word (a half-open TCP connection) is closed, so a vanished fleet
// does not hold the server's file descriptors for ever and a client does not wait on a server gone.
/** Keepalive probes unanswered before the kernel closes a connection (see keepaliveOptions). */
const KEEPALIVE_PROBES = 5;

/**
 * TCP keepalive settings that close a connection whose peer's host stopped answering `idleTimeout` seconds after
 * it fell silent: about half of it before the first probe, the rest spread over the probes. The kernel counts whole
 * seconds, so a short timeout takes at least one second a step (six in all).
 */
export function keepaliveOptions(idleTimeout: number) {
  const interval = Math.max(1, Math.floor(idleTimeout / 2 / KEEPALIVE_PROBES));
  return {
    tcpKeepalive: 1,
    tcpKeepaliveIdle: Math.max(1, idleTimeout - interval * KEEPALIVE_PROBES),
    tcpKeepaliveInterval: interval,
    tcpKeepaliveCount: KEEPALIVE_PROBES,
  };
}
