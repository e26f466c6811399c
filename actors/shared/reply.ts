// Replies from actors to the HTTP facade. They carry the API's status codes and bodies because the API is
// their only consumer; the facade maps them to responses without deciding anything.
import { messageOf } from '../../src/lib/thrown.js';
import type { Requestor } from '../../src/auth/acl.js';
import type { Logger } from '../../src/lib/logger.js';

export interface Reply {
  status: number;
  body: unknown;
  /** Set on 201 answers: the new object's URI, for the Location header. */
  location?: string;
  /** `body` is text sent as it is (captured job output), not JSON. */
  raw?: boolean;
  /**
   * `body` already serialized to UTF-8, kept by an answer given many times (a large job polled while it runs): sent
   * as it is, without encoding 600 KB again for every GET.
   */
  json?: Uint8Array<ArrayBuffer>;
  /** The text was cut to fit the message size limit on the node. */
  truncated?: boolean;
}

/** What every request message carries besides its own fields. */
export interface RequestContext {
  requestor: Requestor;
  /** `http://host:port`, from the request's Host header, to build `uri` fields (reference 1.1). */
  baseUrl: string;
  /** X-Ops-Server-API-Version of the request (0 when absent). */
  apiVersion: number;
  /** Name of the key that authenticated this request: it may not be changed by the same request. */
  authKey: string;
  /** The public key (PEM) that verified this request: the config endpoint encrypts to it. */
  authPublicKey: string;
}

export function ok(body: unknown, status = 200, location?: string): Reply {
  return location === undefined ? { status, body } : { status, body, location };
}

/** `{"error":["message"]}`, the usual envelope (reference 2). */
export function fail(status: number, message: string): Reply {
  return { status, body: { error: [message] } };
}

/** `{"error":"message"}`: the endpoints whose original answered a bare string (reference 2). */
export function failBare(status: number, message: string): Reply {
  return { status, body: { error: message } };
}

export function forbidden(perm: string): Reply {
  return fail(403, `missing ${perm} permission`);
}

/** A write the store did not take: nothing was changed. The store being away is expected: its message, no stack. */
export function storeFailure(log: Logger, e: unknown): Reply {
  log.warn('store write failed; nothing was changed', { error: messageOf(e) });
  return fail(503, 'The data store is unavailable; nothing was changed. Try again.');
}

/** A bug met while answering (the actor's crash policy answers with this); the server goes on. */
export function internalError(): Reply {
  return fail(500, 'internal service error');
}
