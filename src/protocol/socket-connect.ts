// Connecting a ZeroMQ socket, for every process that connects one: the node client, the load tester's nodes and
// the tests' own.
import type { Socket } from 'zeromq';
import { codeOf } from '../lib/thrown.js';

/** How often a connect interrupted by a signal is tried again before its failure is reported. */
const INTERRUPTED_TRIES = 100;

/**
 * Connects `socket` to `address`, again when a signal interrupted it (EINTR): libzmq first reads the socket's
 * pending commands, and gives up, before doing anything, when a signal lands meanwhile (a job's child process
 * exiting, a profiler's tick). zeromq.js tries `bind` again on EINTR but not `connect`.
 */
export function connectSocket(socket: Pick<Socket, 'connect'>, address: string): void {
  for (let tries = 1; ; tries++) {
    try {
      socket.connect(address);
      return;
    } catch (e) {
      if (codeOf(e) !== 'EINTR' || tries >= INTERRUPTED_TRIES) throw e;
    }
  }
}
