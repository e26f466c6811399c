// Settings of the process's ZeroMQ context, which its sockets take when they are made.
import { context } from 'zeromq';

/** libzmq's ZMQ_ZERO_COPY_RECV context option (zmq.h), which zeromq.js leaves unnamed. */
const ZMQ_ZERO_COPY_RECV = 10;

/** The part of zeromq.js's Context that reads and sets an option by its number. */
interface NumberedOptions {
  getBoolOption(option: number): boolean;
  setBoolOption(option: number, value: boolean): void;
}

const numbered = context as unknown as NumberedOptions;

/**
 * Sockets made from now on receive each message into memory of its own. By default libzmq hands a message over
 * inside the connection's read buffer (8 KB and its counters) and keeps that buffer until the message is freed,
 * which zeromq.js leaves to the garbage collector: until the next collection every message read holds a whole
 * buffer, so a burst of answers from thousands of connections holds a buffer per answer. Returns false when the
 * libzmq in use lacks the option (it is a draft one), and messages are then received as by default.
 */
export function receiveIntoOwnMemory(): boolean {
  try {
    numbered.setBoolOption(ZMQ_ZERO_COPY_RECV, false);
    return true;
  } catch {
    return false;
  }
}

/** Whether sockets made now receive each message into memory of its own. */
export function receivesIntoOwnMemory(): boolean {
  return !numbered.getBoolOption(ZMQ_ZERO_COPY_RECV);
}
