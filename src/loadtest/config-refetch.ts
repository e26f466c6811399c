// Configs fetched again as the client fetches its own after the server has been silent to a node (SilenceWatch):
// at most --api-concurrency / workers at a time, from the servers the client would ask, and the node moved when
// the answer names other channels or a new session key.
import type { KeyObject } from 'node:crypto';
import { ApiClient } from '../auth/api-client.js';
import { ConfigFetchError, fetchPushConfig } from '../client/push-config.js';
import {
  HTTP_TIMEOUT_MS,
  learnServers,
  moveOn,
  newServerPool,
  worthAnotherServer,
  type ServerPool,
} from '../client/server-pool.js';
import type { Batches } from './batches.js';
import { now } from './clock.js';
import { endpointKey, type FetchOutcome } from './follow.js';
import type { WorkerInit } from './ipc.js';
import type { LinkGroups } from './link-groups.js';
import type { SimNode } from './sim-node.js';

export class ConfigRefetcher {
  /** Nodes waiting for their fetch. */
  private readonly queue: SimNode[] = [];
  private inFlight = 0;
  private stopped = false;
  private clientKey: KeyObject | undefined;
  /**
   * Where configs are fetched again: the run's servers, then the members the config answers list, as the client
   * keeps them. A fetch that fails where another member may not, or a node whose server went silent, moves on.
   */
  private servers: ServerPool;

  constructor(
    private readonly init: WorkerInit,
    /** The Curve public key (Z85) of the worker's connections, which each config request names. */
    private readonly curvePublicKey: string,
    private readonly links: LinkGroups,
    private readonly random: () => number,
    private readonly batches: Batches,
  ) {
    this.servers = newServerPool(init.apiUrls.length > 0 ? init.apiUrls : [init.baseUrl]);
  }

  /** The key the nodes' clients sign their requests with, read once the worker provisions. */
  signWith(key: KeyObject): void {
    this.clientKey = key;
  }

  /** Queues a config fetch for a node the server has been silent to (SilenceWatch.due said so). */
  add(node: SimNode): void {
    this.queue.push(node);
    this.pump();
  }

  /** No fetch starts any more, and one still in flight moves no node. */
  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
  }

  private pump(): void {
    while (this.inFlight < this.init.apiConcurrency && this.queue.length > 0) {
      const next = this.queue.shift() as SimNode;
      this.inFlight += 1;
      void this.fetchAgain(next).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  /**
   * Fetches the node's config as the client does after silence: from the next member when the node last had its
   * config from the one in use (that member may be the one that went silent), else from the one in use; moves the
   * node when the config names other channels. A failure is counted, not reported as an error: while a dead
   * process's partitions wait for a new owner, fetches fail.
   */
  private async fetchAgain(node: SimNode): Promise<void> {
    // Every node's first config came from the run's first server (provision.ts).
    this.servers = moveOn(this.servers, node.apiUrl ?? (this.servers.configured[0] as string));
    const baseUrl = this.servers.current;
    const key = this.clientKey as KeyObject;
    let outcome: FetchOutcome = 'failed';
    let retryAfterMs: number | undefined;
    try {
      // As long as the client waits: a frozen member holds the fetch that long, and then the next is asked.
      const api = new ApiClient({ baseUrl, userId: node.name, key, timeoutMs: HTTP_TIMEOUT_MS });
      const orgPath = `/organizations/${encodeURIComponent(this.init.org)}`;
      const config = await fetchPushConfig(api, orgPath, node.name, key, this.curvePublicKey);
      this.servers = learnServers(this.servers, config.servers, this.random).pool;
      node.apiUrl = baseUrl;
      const old = node.config;
      if (endpointKey(config) === endpointKey(old) && config.sessionKey.equals(old.sessionKey)) outcome = 'same';
      else if (!this.stopped) {
        const previous = node.link;
        node.moveTo(config, this.links.linkFor(config));
        if (previous !== null) this.links.release(previous, endpointKey(old));
        outcome = 'moved';
      }
    } catch (e) {
      const status = e instanceof ConfigFetchError ? e.status : undefined;
      if (e instanceof ConfigFetchError) retryAfterMs = e.retryAfterMs;
      // Another member answers while this one may be the one that died; one that asks for a wait is waited for.
      if (retryAfterMs === undefined && worthAnotherServer(status)) this.servers = moveOn(this.servers, baseUrl);
    }
    node.watch.done(now(), outcome, retryAfterMs);
    this.batches.refetched(outcome);
  }
}
