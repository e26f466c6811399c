// libzmq gives each connection an input and an output batch buffer, 8 KB each by default. A node's two
// connections carry a heartbeat every few seconds and a few job messages: 512 bytes hold a heartbeat, and a
// message longer than the buffer is read into and written from the message itself, whole, not through it.
// Measured on a bare CurveZMQ ROUTER: 19 KB of memory per connection at the default, 11 KB at 512 bytes.
import { capability, type Socket } from 'zeromq';

/** libzmq's ZMQ_IN_BATCH_SIZE and ZMQ_OUT_BATCH_SIZE (draft options, in every zeromq.js build that has drafts). */
const ZMQ_IN_BATCH_SIZE = 101;
const ZMQ_OUT_BATCH_SIZE = 102;
export const CONNECTION_BATCH_BYTES = 512;

/** zeromq.js reaches any libzmq option by number, though its typings keep these methods to subclasses. */
interface NumberedOptions {
  setInt32Option(option: number, value: number): void;
  getInt32Option(option: number): number;
}

/** Sizes both batch buffers of the connections the socket makes or accepts from now on; false where libzmq
 * was built without draft options (the defaults then stay). */
export function shrinkBatchBuffers(socket: Socket, bytes = CONNECTION_BATCH_BYTES): boolean {
  if (!capability.draft) return false;
  const raw = socket as unknown as NumberedOptions;
  raw.setInt32Option(ZMQ_IN_BATCH_SIZE, bytes);
  raw.setInt32Option(ZMQ_OUT_BATCH_SIZE, bytes);
  return true;
}

/** The batch sizes a socket gives its connections, input then output. */
export function batchBuffers(socket: Socket): [number, number] {
  const raw = socket as unknown as NumberedOptions;
  return [raw.getInt32Option(ZMQ_IN_BATCH_SIZE), raw.getInt32Option(ZMQ_OUT_BATCH_SIZE)];
}
