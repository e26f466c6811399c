// Binding a push-jobs channel's port, retried while it is taken. zeromq releases a closed socket's port in its I/O
// thread, a moment after close(): a server restarted in the same process (or quickly after its predecessor) finds
// it taken for that moment. A port picked free can also be taken meanwhile by another process's outgoing
// connection, for as long as that lasts. libzmq has been seen to refuse a bind with EAGAIN where no other cause
// than a taken port was at hand (a member starting beside tests that opened thousands of connections, its socket
// watched by a monitor), so EAGAIN is retried too, and said for what it likely is.
import type { Socket } from 'zeromq';
import { codeOf } from '../lib/thrown.js';
import { realTimers, type Timers } from '../lib/timers.js';

/** How long a taken port is tried again before the bind fails. */
export const BIND_RETRY_MS = 2000;
const BIND_RETRY_STEP_MS = 20;

export async function bindRetrying(
  socket: Pick<Socket, 'bind'>,
  address: string,
  timers: Timers = realTimers,
): Promise<void> {
  const deadline = timers.now() + BIND_RETRY_MS;
  for (;;) {
    try {
      await socket.bind(address);
      return;
    } catch (e) {
      const code = codeOf(e);
      if (code !== 'EADDRINUSE' && code !== 'EAGAIN') throw e;
      if (timers.now() > deadline) {
        if (code === 'EADDRINUSE') throw e;
        throw new Error(`${address} could not be bound (in use, or not an address of this host)`, { cause: e });
      }
      await new Promise<void>((resolve) => timers.after(BIND_RETRY_STEP_MS, resolve));
    }
  }
}
