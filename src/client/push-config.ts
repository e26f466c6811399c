// The config endpoint as the node reads it (reference 3): where to connect, the session key, and the timings, in the
// client's units, asked of the servers of the pool in turn. The body's shape is src/api/push-jobs.ts's.
import type { KeyObject } from 'node:crypto';
import { pushConfigSchema } from '../api/push-jobs.js';
import { errorText, type ApiClient } from '../auth/api-client.js';
import { decryptSessionKey } from '../protocol/signing.js';
import { errorMessage } from './logger.js';
import type { Servers } from './server-api.js';
import { worthAnotherServer } from './server-pool.js';

/** The config in the units the client works in. */
export interface PushConfig {
  heartbeatAddr: string;
  commandAddr: string;
  intervalMs: number;
  offlineThreshold: number;
  curveServerKey: string | null;
  sessionKey: Buffer;
  lifetimeMs: number;
  incarnationId: string;
  maxMessageSkew: number;
  maxBodySize: number;
  /** The API URL of the member that is this node's gateway (`gateway_url`), when the server names it. */
  gatewayServer?: string;
  /** The API URLs of the cluster's live members (`server_urls`); empty from a server that lists none. */
  servers: string[];
}

/** A config request that failed; `permanent` when asking again cannot help (the server refused the client). */
export class ConfigFetchError extends Error {
  override name = 'ConfigFetchError';
  /** The HTTP status the server answered, when it answered. */
  readonly status: number | undefined;
  /**
   * How long the server asked to wait before trying again (its Retry-After, in ms): a cluster answers 503 with
   * `Retry-After: 1` while an organization moves to another process, so its nodes come back within a second of the
   * move instead of after a back-off that grew meanwhile.
   */
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    readonly permanent: boolean,
    options?: { cause?: unknown; status?: number; retryAfterMs?: number },
  ) {
    super(message, options);
    this.status = options?.status;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** Validates a config body and unwraps its session key with the client's private key. */
export function readPushConfig(body: unknown, privateKey: KeyObject): PushConfig {
  const parsed = pushConfigSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigFetchError(
      `the config is not usable: ${issue === undefined ? 'invalid' : `${issue.path.join('.')}: ${issue.message}`}`,
      false,
    );
  }
  const c = parsed.data;
  let sessionKey: Buffer;
  try {
    sessionKey = decryptSessionKey(c.encoded_session_key.key, privateKey);
  } catch (e) {
    throw new ConfigFetchError(`the session key does not decrypt with the client key: ${errorMessage(e)}`, true, {
      cause: e,
    });
  }
  const hb = c.push_jobs.heartbeat;
  return {
    heartbeatAddr: hb.heartbeat_addr,
    commandAddr: hb.command_addr,
    intervalMs: Math.max(1, Math.round(hb.interval * 1000)),
    offlineThreshold: hb.offline_threshold,
    curveServerKey: c.curve_public_key,
    sessionKey,
    lifetimeMs: c.lifetime * 1000,
    incarnationId: c.incarnation_id,
    maxMessageSkew: c.max_message_skew,
    maxBodySize: c.max_body_size,
    servers: c.server_urls ?? [],
    ...(c.gateway_url === undefined ? {} : { gatewayServer: c.gateway_url }),
  };
}

/**
 * GET /organizations/ORG/pushy/config/NODE?ccpk=KEY signed as the node's client (reference 3). `ccpk`, the client's
 * Curve public key (Z85), is the one key the server then admits for the node's CurveZMQ connections.
 */
export async function fetchPushConfig(
  api: ApiClient,
  orgPath: string,
  node: string,
  privateKey: KeyObject,
  ccpk: string,
): Promise<PushConfig> {
  const path = `${orgPath}/pushy/config/${encodeURIComponent(node)}?ccpk=${encodeURIComponent(ccpk)}`;
  let res;
  try {
    res = await api.request('GET', path);
  } catch (e) {
    throw new ConfigFetchError(`GET ${path}: ${errorMessage(e)}`, false, { cause: e });
  }
  if (res.status !== 200) {
    // 401/403/404 say the client or org is wrong; 408, 429 and 5xx may pass.
    const permanent = res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429;
    const retryAfter = Number(res.headers.get('retry-after') ?? NaN);
    throw new ConfigFetchError(`GET ${path}: ${res.status} ${errorText(res.body)}`, permanent, {
      status: res.status,
      ...(Number.isFinite(retryAfter) && retryAfter >= 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
    });
  }
  return readPushConfig(res.body, privateKey);
}

/**
 * The config from the server `servers` asks now, which `request` fetches. A failure another member may not share
 * (no answer, 408, 429, 5xx) moves the pool to the next server for the next try; a config fetched names the members
 * to try from then on.
 */
export async function fetchFromPool(
  servers: Servers,
  request: (server: string) => Promise<PushConfig>,
  allowUnencrypted: boolean,
): Promise<PushConfig> {
  const server = servers.current;
  let config: PushConfig;
  try {
    config = await request(server);
  } catch (e) {
    if (e instanceof ConfigFetchError && !e.permanent && worthAnotherServer(e.status))
      servers.failed(server, errorMessage(e));
    throw e;
  }
  servers.learn(config.servers);
  if (config.curveServerKey === null && !allowUnencrypted) {
    throw new ConfigFetchError(
      'the server offers no CurveZMQ key; set allow_unencrypted true in client.rb to connect without encryption',
      true,
    );
  }
  return config;
}
