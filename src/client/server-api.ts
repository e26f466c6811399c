// The node client's way to the API when several servers may answer: one pool of servers (server-pool.ts) shared by
// every request of the process, config fetches, registration, node creation and whitelist reads alike, and a signed
// client per server and identity. A request that fails where another member may not moves the pool on.
import type { KeyObject } from 'node:crypto';
import { ApiClient, type ApiResponse } from '../auth/api-client.js';
import { readPrivateKey } from '../auth/rsa-keys.js';
import { errorMessage, type Logger } from './logger.js';
import {
  asksGateway,
  learnServers,
  moveOn,
  newServerPool,
  serversOf,
  worthAnotherServer,
  type ServerPool,
} from './server-pool.js';

/** The servers of one client process and the one in use (the shell around ServerPool, which logs its moves). */
export class Servers {
  private pool: ServerPool;
  /** URLs already said to be refused, so a renewal every hour does not say it again. */
  private readonly refusedTold = new Set<string>();

  constructor(
    configured: readonly string[],
    private readonly log: Logger,
    private readonly random: () => number = Math.random,
  ) {
    this.pool = newServerPool(configured);
  }

  /** The server requests go to now. */
  get current(): string {
    return this.pool.current;
  }

  /** Every server known, in the order they are tried. */
  all(): string[] {
    return serversOf(this.pool);
  }

  /** Whether the server asked now is the member named `gateway` (see asksGateway). */
  asks(gateway: string | undefined): boolean {
    return asksGateway(this.pool, gateway);
  }

  /** A request to `from` failed (`why`) where another may not: the next server is used from now on. */
  failed(from: string, why: string): void {
    const before = this.pool.current;
    this.pool = moveOn(this.pool, from);
    if (this.pool.current !== before) this.log.warn(`${from}: ${why}; asking ${this.pool.current} from now on`);
  }

  /** The members a config answer listed. */
  learn(advertised: readonly string[]): void {
    const { pool, changed, refused } = learnServers(this.pool, advertised, this.random);
    this.pool = pool;
    for (const url of refused) {
      if (this.refusedTold.has(url)) continue;
      this.refusedTold.add(url);
      this.log.warn(`the server listed ${url} among its members: not used (client.rb names https servers only)`);
    }
    if (changed)
      this.log.info(`servers to try: ${this.all().join(', ')} (client.rb's, then the members the server listed)`);
  }
}

export interface ApiIdentity {
  userId: string;
  /** A private key PEM or a parsed key. */
  key: string | KeyObject;
}

/** Requests below an organization's path: `/nodes/web1` is `/prefix/organizations/ORG/nodes/web1` on a server. */
export interface OrgRequests {
  request(method: string, path: string, body?: unknown): Promise<ApiResponse>;
}

/** Signed requests of one identity, to whichever server of `servers` is in use. */
export class ServerApi implements OrgRequests {
  private readonly key: KeyObject;

  constructor(
    readonly servers: Servers,
    private readonly org: string,
    private readonly identity: ApiIdentity,
    private readonly timeoutMs: number,
    /** How many servers one request tries at most (each once, in turn, without waiting); 1: the current only. */
    private readonly tries = 1,
    /** The signed client of each server, shared with the ServerApis `trying` makes. */
    private readonly clients = new Map<string, ApiClient>(),
  ) {
    this.key = typeof identity.key === 'string' ? readPrivateKey(identity.key) : identity.key;
  }

  /** The same identity, and the same clients, trying up to `tries` servers per request. */
  trying(tries: number): ServerApi {
    const identity = { ...this.identity, key: this.key };
    return new ServerApi(this.servers, this.org, identity, this.timeoutMs, tries, this.clients);
  }

  /** The signed client for `server` (the current one by default) and the organization's path there. */
  at(server = this.servers.current): { server: string; api: ApiClient; orgPath: string } {
    let api = this.clients.get(server);
    if (api === undefined) {
      api = new ApiClient({ baseUrl: server, userId: this.identity.userId, key: this.key, timeoutMs: this.timeoutMs });
      this.clients.set(server, api);
    }
    const prefix = new URL(server).pathname.replace(/\/+$/, '');
    return { server, api, orgPath: `${prefix}/organizations/${this.org}` };
  }

  /**
   * Sends to the server in use; a failure that another server may not share moves the pool on and, while tries
   * remain, sends to the next at once. What the last server tried answered (or threw) is the result.
   */
  async request(method: string, path: string, body?: unknown): Promise<ApiResponse> {
    const tries = Math.max(1, Math.min(this.tries, this.servers.all().length));
    for (let attempt = 1; ; attempt++) {
      const { server, api, orgPath } = this.at();
      let res: ApiResponse;
      try {
        res = await api.request(method, `${orgPath}${path}`, body);
      } catch (e) {
        this.servers.failed(server, `${method} ${path}: ${errorMessage(e)}`);
        if (attempt >= tries) throw e;
        continue;
      }
      if (!worthAnotherServer(res.status)) return res;
      this.servers.failed(server, `${method} ${path}: ${res.status}`);
      if (attempt >= tries) return res;
    }
  }
}
