// The server a run loads: started here with --spawn (one process, or --processes of them sharing one Redis as a
// cluster, waited for until they have shared its partitions out) or given by --server; the key the tester signs
// with, the URL it talks to, the process to measure when it runs on this machine, and where nodes fetch configs.
import { readFile } from 'node:fs/promises';
import { ApiClient } from '../auth/api-client.js';
import { serverStatusSchema, type ServerStatusBody } from '../api/status-schema.js';
import { delay } from '../lib/timers.js';
import { testerTimers } from './clock.js';
import { findListeningPid, spawnServer, type SpawnedServer } from './local-server.js';
import type { LoadOptions } from './options.js';
import type { ProcessRef } from './processes.js';
import type { Progress } from './progress-line.js';
import type { StopSignal } from './scenario.js';

const READY_POLL_MS = 500;

export interface ServerUnderLoad {
  /** The one server, or the member of the cluster that serves the organization. */
  baseUrl: string;
  api: ApiClient;
  /** The private key of --user. */
  keyPem: string;
  /** The pid of the process behind `baseUrl` when it runs on this machine, else null. */
  pid: number | null;
  /** The processes this run spawned. */
  spawnedRefs: ProcessRef[];
  /** Where nodes fetch their config again: the server given, then the cluster's other members in turn. */
  apiUrls: string[];
}

export async function serverStatus(api: ApiClient): Promise<ServerStatusBody | null> {
  const res = await api.request('GET', '/_status').catch(() => null);
  const parsed = res === null ? null : serverStatusSchema.safeParse(res.body);
  return parsed?.success === true ? parsed.data : null;
}

function isLocal(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname;
  return host === 'localhost' || host === '127.0.0.1' || host === '[::1]' || host === '::1';
}

/** Reaches the server of `o`; every process it spawns is added to `spawned` as it starts, for the run to stop. */
export async function serverUnderLoad(
  o: LoadOptions,
  stop: StopSignal,
  progress: Progress,
  spawned: SpawnedServer[],
): Promise<ServerUnderLoad> {
  const given =
    o.server.kind === 'spawn'
      ? await spawnServers(o, o.server, progress, spawned)
      : { baseUrl: o.server.baseUrl, keyPem: await readFile(o.key ?? '', 'utf8') };
  const { keyPem } = given;
  let baseUrl = given.baseUrl;
  if (spawned.length > 1) {
    const urls = spawned.map((s) => s.baseUrl);
    const signer = (url: string) => new ApiClient({ baseUrl: url, userId: o.user, key: keyPem, timeoutMs: 30_000 });
    baseUrl = await waitForCluster(urls, signer, o.org, stop, progress);
  }
  const api = new ApiClient({ baseUrl, userId: o.user, key: keyPem, timeoutMs: 30_000 });
  const status = await serverStatus(api);
  if (status === null) throw new Error(`${baseUrl}/_status does not answer as an infra-server`);
  const serving = spawned.find((s) => s.baseUrl === baseUrl);
  const pid = serving?.pid ?? (isLocal(baseUrl) ? await findListeningPid(Number(new URL(baseUrl).port || 80)) : null);
  const spawnedRefs: ProcessRef[] = spawned.map((s) => ({ url: s.baseUrl, pid: s.pid }));
  const memberUrls = (status.cluster?.members ?? []).map((m) => m.url);
  const apiUrls = [...new Set([baseUrl, ...spawnedRefs.map((s) => s.url), ...memberUrls])];
  return { baseUrl, api, keyPem, pid, spawnedRefs, apiUrls };
}

/** Starts the first process, which sets the store up, then the others, which join it on the same Redis. */
async function spawnServers(
  o: LoadOptions,
  server: Extract<LoadOptions['server'], { kind: 'spawn' }>,
  progress: Progress,
  spawned: SpawnedServer[],
): Promise<{ baseUrl: string; keyPem: string }> {
  const what = o.processes > 1 ? `${o.processes} server processes` : 'a server';
  progress.say(`starting ${what}${server.redis === null ? '' : ` on ${server.redis}`}`);
  const first = await spawnServer(server.redis, server.heartbeatIntervalMs);
  spawned.push(first);
  // The cluster spreads the partitions over them all.
  const { redis, heartbeatIntervalMs } = server;
  const rest = await Promise.allSettled(
    Array.from({ length: o.processes - 1 }, () => spawnServer(redis, heartbeatIntervalMs)),
  );
  for (const r of rest) if (r.status === 'fulfilled') spawned.push(r.value);
  const refused = rest.find((r) => r.status === 'rejected');
  if (refused !== undefined) throw refused.reason;
  const pem = o.key === null ? first.adminKeyPem : await readFile(o.key, 'utf8');
  if (pem === null) {
    throw new Error(
      'the spawned server found its store set up already, so it wrote no admin key: give --key, or an empty Redis (e.g. another database number)',
    );
  }
  return { baseUrl: first.baseUrl, keyPem: pem };
}

/**
 * Waits until the spawned processes have formed one cluster, each listed as a member holding partitions, and
 * answers the URL of one that serves the organization twice in a row. A process that handed the organization's
 * partition over may answer 404 for it rather than forward the request, so the tester talks to its owner.
 */
async function waitForCluster(
  urls: readonly string[],
  signer: (baseUrl: string) => ApiClient,
  org: string,
  stop: StopSignal,
  progress: Progress,
): Promise<string> {
  let settled = 0;
  let owner: string | null = null;
  while (settled < 2) {
    if (stop.over) throw new Error(`--timeout passed before the ${urls.length} server processes formed a cluster`);
    await delay(testerTimers, READY_POLL_MS);
    const members = (await serverStatus(signer(urls[0] as string)))?.cluster?.members ?? [];
    const holding = members.filter((m) => m.partitions > 0).length;
    const serving = await servingUrl(urls, signer, org);
    settled = holding >= urls.length && serving !== null && serving === owner ? settled + 1 : 0;
    owner = serving;
    progress.set(
      `cluster: ${holding} of ${urls.length} processes hold partitions, ${org} served by ${serving ?? 'none'}`,
    );
  }
  progress.say(`${urls.length} server processes share the partitions; ${org} is served by ${owner ?? ''}`);
  return owner as string;
}

/** The first of `urls` that answers the organization with a 200, or null when none does. */
async function servingUrl(
  urls: readonly string[],
  signer: (baseUrl: string) => ApiClient,
  org: string,
): Promise<string | null> {
  for (const url of urls) {
    const res = await signer(url)
      .request('GET', `/organizations/${encodeURIComponent(org)}`)
      .catch(() => null);
    if (res?.status === 200) return url;
  }
  return null;
}
