// ZAP (ZeroMQ RFC 27) for this process's CurveZMQ sockets (reference 2.2): libzmq asks the handler bound at
// inproc://zeromq.zap.01, in the sockets' context, about every CURVE handshake before it completes. One handler
// serves the process (an inproc address is bound once per context), and it passes each request to the decision of
// the socket's ZAP domain: every hub of the process (tests start several) sets a domain of its own.
import { Router } from 'zeromq';
import { messageOf } from '../lib/thrown.js';
import { bindRetrying } from './bind-retrying.js';

const ZAP_ENDPOINT = 'inproc://zeromq.zap.01';
const ZAP_VERSION = '1.0';

/**
 * Undefined admits the key; a string refuses it and says why. A promise holds the answer back (the handshake
 * waits, within its handshake timeout): a hub that has not read its sessions yet cannot tell, and a gateway waits a
 * moment for the session of a key it does not know. Requests are answered as their decisions come, not in turn.
 */
export type ZapDecision = (clientKey: Buffer, peerAddress: string) => string | undefined | Promise<string | undefined>;

const domains = new Map<string, ZapDecision>();
let handler: Promise<Router> | undefined;

/**
 * Sends every CURVE handshake of sockets whose `zapDomain` is `domain` to `decide`, from now until the returned
 * function is called. The handler is bound before this resolves: a socket bound afterwards never completes a
 * handshake without it (with `zapEnforceDomain`, a missing handler refuses rather than admits).
 */
export async function registerZapDomain(domain: string, decide: ZapDecision): Promise<() => void> {
  if (domains.has(domain)) throw new Error(`ZAP domain ${domain} is taken`);
  domains.set(domain, decide);
  handler ??= bindHandler();
  try {
    await handler;
  } catch (e) {
    domains.delete(domain);
    handler = undefined;
    throw e;
  }
  return () => {
    domains.delete(domain);
    if (domains.size > 0 || handler === undefined) return;
    const closing = handler;
    handler = undefined;
    void closing.then((socket) => socket.close());
  };
}

async function bindHandler(): Promise<Router> {
  // A ROUTER, not a REP: each handshake's session asks from a pipe of its own, so one answer held back (a key being
  // waited for) holds up no other handshake.
  const socket = new Router({ linger: 0 });
  try {
    // A handler closed a moment ago may still hold the address, while libzmq's reaper lets it go.
    await bindRetrying(socket, ZAP_ENDPOINT);
  } catch (e) {
    socket.close();
    throw new Error(`the ZAP handler could not bind ${ZAP_ENDPOINT}: ${messageOf(e)}`, { cause: e });
  }
  void serve(socket);
  return socket;
}

/**
 * Answers each request ([routing id, empty delimiter, request...], as a REQ peer sends it) once its decision comes,
 * until the socket is closed.
 */
async function serve(socket: Router): Promise<void> {
  // A socket takes one send at a time: the answers leave in the order their decisions came.
  let sending: Promise<void> = Promise.resolve();
  try {
    for await (const [peer, delimiter, ...request] of socket) {
      if (peer === undefined || delimiter === undefined) continue;
      void answer(request).then((reply) => {
        sending = sending.then(() => socket.send([peer, delimiter, ...reply])).catch(() => undefined);
      });
    }
  } catch {
    // Closed: the last hub of the process has stopped.
  }
}

/**
 * A request is [version, request id, domain, address, identity, mechanism, credentials...]; for CURVE the one
 * credential is the client's 32-byte public key. The reply is [version, request id, status, text, user id,
 * metadata]: 200 admits, 400 refuses, 500 says the handler failed (the handshake is refused all the same).
 */
export async function answer(frames: readonly Buffer[]): Promise<Array<string | Buffer>> {
  const [version, requestId, domain, address, , mechanism, key] = frames;
  const reply = (status: string, text: string): Array<string | Buffer> => [
    ZAP_VERSION,
    requestId ?? '',
    status,
    text,
    '',
    '',
  ];
  if (version?.toString() !== ZAP_VERSION || requestId === undefined) return reply('400', 'Unsupported ZAP version');
  const decide = domains.get(domain?.toString() ?? '');
  if (decide === undefined) return reply('400', 'Unknown domain');
  if (mechanism?.toString() !== 'CURVE' || key?.length !== 32) return reply('400', 'CURVE keys only');
  try {
    const refusal = await decide(key, address?.toString() ?? '');
    return reply(refusal === undefined ? '200' : '400', refusal ?? 'OK');
  } catch (e) {
    return reply('500', messageOf(e));
  }
}
