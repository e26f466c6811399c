// Provisioning through the signed API: a client and a node per simulated node (made, or reused with the shared
// key put back on the client), then the node's config, fetched signed as its own client as a real node does.
import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { ApiClient, ApiNetworkError, errorText } from '../auth/api-client.js';
import { toSpkiPem } from '../auth/rsa-keys.js';
import { ConfigFetchError, fetchPushConfig, type PushConfig } from '../client/push-config.js';
import { delay } from '../lib/timers.js';
import { testerTimers } from './clock.js';

/** Runs `fn` over `items` with at most `limit` calls in flight; resolves once all are done. */
export async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) await fn(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
}

export interface ProvisionTarget {
  baseUrl: string;
  org: string;
  /** Signed as the user that creates clients and nodes. */
  admin: ApiClient;
  /** The key pair every simulated client shares. */
  clientKey: KeyObject;
  clientPublicKeyPem: string;
  /** The same key as the keys API returns it. */
  clientPublicKeySpki: string;
  /** The Curve public key (Z85) the worker's nodes connect with, named in every config request. */
  ccpk: string;
}

const clientKeySchema = z.object({ public_key: z.string() });

export interface Provisioned {
  config: PushConfig;
  /** The client existed already (an earlier run made it). */
  reused: boolean;
}

const HTTP_TIMEOUT_MS = 30_000;
/** Requests refused for load (503, 429) or lost are tried again this many times. */
const ATTEMPTS = 5;

const passing = (e: unknown): boolean =>
  e instanceof PassingError || e instanceof ApiNetworkError || (e instanceof ConfigFetchError && !e.permanent);

async function retried<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt >= ATTEMPTS || !passing(e)) throw e;
      await delay(testerTimers, 100 * 2 ** attempt);
    }
  }
}

/** A refusal that may pass (server busy, store briefly away). */
class PassingError extends Error {}

function check(status: number, body: unknown, what: string, ok: readonly number[]): void {
  if (ok.includes(status)) return;
  const text = `${what}: ${status} ${errorText(body)}`;
  throw status === 429 || status >= 500 ? new PassingError(text) : new Error(text);
}

/** The clients and nodes the organization has: listed once, so a second run does not ask per node. */
export interface Known {
  clients: ReadonlySet<string>;
  nodes: ReadonlySet<string>;
}

const namesSchema = z.record(z.string(), z.string());

export async function listKnown(admin: ApiClient, org: string): Promise<Known> {
  const orgPath = `/organizations/${encodeURIComponent(org)}`;
  const names = async (what: 'clients' | 'nodes') =>
    retried(async () => {
      const res = await admin.request('GET', `${orgPath}/${what}`);
      check(res.status, res.body, `listing the ${what}`, [200]);
      return new Set(Object.keys(namesSchema.parse(res.body)));
    });
  return { clients: await names('clients'), nodes: await names('nodes') };
}

/**
 * Makes what is missing, then fetches the config as the node's client. A client that exists already is used as
 * it is; only when the server refuses its signature (an earlier run gave it another key) is this run's key put
 * on it. A second run over 10,000 nodes thus costs one signed request and one decryption per node.
 */
export async function provisionNode(t: ProvisionTarget, name: string, known: Known): Promise<Provisioned> {
  const orgPath = `/organizations/${encodeURIComponent(t.org)}`;
  const seg = encodeURIComponent(name);
  const putKey = () =>
    retried(async () => {
      const put = await t.admin.request('PUT', `${orgPath}/clients/${seg}/keys/default`, {
        public_key: t.clientPublicKeyPem,
      });
      check(put.status, put.body, `putting the key of client ${name}`, [200, 201]);
    });
  let reused = known.clients.has(name);
  if (!reused) {
    reused = await retried(async () => {
      const res = await t.admin.request('POST', `${orgPath}/clients`, { name, public_key: t.clientPublicKeyPem });
      check(res.status, res.body, `creating client ${name}`, [201, 409]);
      if (res.status === 201) return false;
      // Made since the list was read: its key is checked as below.
      const got = await t.admin.request('GET', `${orgPath}/clients/${seg}/keys/default`);
      check(got.status, got.body, `reading the key of client ${name}`, [200, 404]);
      const key = clientKeySchema.safeParse(got.body);
      if (!key.success || toSpkiPem(key.data.public_key) !== t.clientPublicKeySpki) await putKey();
      return true;
    });
  }
  if (!known.nodes.has(name)) {
    await retried(async () => {
      const res = await t.admin.request('POST', `${orgPath}/nodes`, { name });
      check(res.status, res.body, `creating node ${name}`, [201, 409]);
    });
  }
  const asClient = new ApiClient({ baseUrl: t.baseUrl, userId: name, key: t.clientKey, timeoutMs: HTTP_TIMEOUT_MS });
  const config = () => retried(() => fetchPushConfig(asClient, orgPath, name, t.clientKey, t.ccpk));
  try {
    return { config: await config(), reused };
  } catch (e) {
    if (!(reused && e instanceof ConfigFetchError && e.status === 401)) throw e;
    await putKey();
    return { config: await config(), reused };
  }
}

/** Deletes the node and its client; either being gone already is fine. */
export async function deleteNode(admin: ApiClient, org: string, name: string): Promise<void> {
  const orgPath = `/organizations/${encodeURIComponent(org)}`;
  const seg = encodeURIComponent(name);
  for (const path of [`${orgPath}/nodes/${seg}`, `${orgPath}/clients/${seg}`]) {
    await retried(async () => {
      const res = await admin.request('DELETE', path);
      check(res.status, res.body, `deleting ${path}`, [200, 404]);
    });
  }
}
