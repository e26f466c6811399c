// The run's first phase: the nodes it plays (names, behaviours), each worker's share of them with the client key
// pair they all sign with, the workers forked to provision and connect their nodes, and the wait until the server
// lists every node available. What it took is in the figures (provision_s, ready_s).
import { createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { generateKeyPair, readPrivateKey, type GeneratedKeyPair } from '../auth/rsa-keys.js';
import { writeKeyFile } from '../client/registration.js';
import { assignBehaviours, type NodeBehaviour } from './behaviour.js';
import { now } from './clock.js';
import { round } from './figures.js';
import type { Fleet, FleetEvents } from './fleet.js';
import type { WorkerInit } from './ipc.js';
import { unheardHint, waitAvailable } from './nodes-available.js';
import type { LoadOptions } from './options.js';
import type { Progress } from './progress-line.js';
import { nodeWaves, waveSizes } from './rollout.js';
import type { StopSignal } from './scenario.js';
import type { ServerUnderLoad } from './server-under-load.js';
import { until } from './stopping.js';

/** The nodes a run plays. */
export interface Cast {
  names: string[];
  behaviours: NodeBehaviour[];
  /** Nodes whose availability at a job's start cannot be known: the flapping ones, and those that crashed. */
  uncertain: Set<string>;
  /** Each node's wave in its jobs' rollouts (1 for the first), 0 without --waves. */
  waves: number[];
}

export function castOf(o: LoadOptions): Cast {
  const width = String(o.nodes).length;
  const names = Array.from({ length: o.nodes }, (_, i) => `${o.prefix}${String(i + 1).padStart(width, '0')}`);
  const behaviours = assignBehaviours(o.nodes, o.behaviour, o.seed);
  const sizes = o.rollout === null ? [] : waveSizes(o.rollout.waves, o.jobNodes);
  return {
    names,
    behaviours,
    uncertain: new Set(names.filter((_, i) => behaviours[i]?.flap === true)),
    waves: nodeWaves(o.nodes, o.jobNodes, o.concurrency, sizes),
  };
}

/** The key pair the simulated clients share: from `file` when it exists, else new (and saved to `file`). */
async function clientKeyPair(file: string | null): Promise<Pick<GeneratedKeyPair, 'privateKeyPem' | 'publicKeyPem'>> {
  const pem = file === null ? null : await readFile(file, 'utf8').catch(() => null);
  if (pem !== null) {
    const publicKeyPem = createPublicKey(readPrivateKey(pem)).export({ type: 'spki', format: 'pem' }).toString();
    return { privateKeyPem: pem, publicKeyPem };
  }
  const pair = await generateKeyPair();
  if (file !== null) await writeKeyFile(file, pair.privateKeyPem);
  return pair;
}

/** What each of --workers is told at its start: the nodes dealt out in turn, and what they all share. */
export async function sharesOf(o: LoadOptions, server: ServerUnderLoad, cast: Cast): Promise<WorkerInit[]> {
  const clientPair = await clientKeyPair(o.clientKey);
  const shares: WorkerInit[] = Array.from({ length: o.workers }, () => ({
    type: 'init',
    baseUrl: server.baseUrl,
    apiUrls: server.apiUrls,
    org: o.org,
    user: o.user,
    userKeyPem: server.keyPem,
    clientKeyPem: clientPair.privateKeyPem,
    clientPublicKeyPem: clientPair.publicKeyPem,
    nodes: [],
    apiConcurrency: Math.max(1, Math.ceil(o.apiConcurrency / o.workers)),
    nodesPerConnection: o.nodesPerConnection,
    slowVoteMs: o.behaviour.slowVoteMs,
    runMs: o.behaviour.runMs,
    lateHeartbeats: o.behaviour.lateHeartbeats,
    recordFile: o.record,
  }));
  const { names, behaviours, waves } = cast;
  names.forEach((name, i) =>
    shares[i % o.workers]?.nodes.push({ name, behaviour: behaviours[i] ?? behaviours[0]!, wave: waves[i] ?? 0 }),
  );
  return shares;
}

/** The live line while the fleet comes up, flapping nodes passed on, and a crashed node's availability uncertain. */
export function fleetEvents(o: LoadOptions, progress: Progress, cast: Cast, flap: FleetEvents['flap']): FleetEvents {
  return {
    progress: (p, r, c) => progress.set(`provisioned ${p}/${o.nodes} (${r} reused), connected ${c}/${o.nodes}`),
    flap,
    crash: (node, kind) => {
      if (kind === 'crash') cast.uncertain.add(node);
    },
  };
}

/** Provisions and connects every node, then waits until each is available; answers how long each part took. */
export async function bringUp(
  fleet: Fleet,
  shares: WorkerInit[],
  o: LoadOptions,
  server: ServerUnderLoad,
  cast: Cast,
  stop: StopSignal,
  progress: Progress,
): Promise<{ provisionS: number; readyS: number }> {
  const t0 = now();
  progress.say(`provisioning ${o.nodes} nodes over ${o.workers} workers at ${server.baseUrl}`);
  await Promise.race([fleet.start(shares), until(stop)]);
  if (stop.over) throw new Error(`--timeout passed while provisioning${unheardHint(fleet.totals)}`);
  const provisionS = round((now() - t0) / 1000);
  progress.say(`${o.nodes} nodes provisioned and their connections opened in ${provisionS} s (${fleet.reused} reused)`);
  const t1 = now();
  await waitAvailable(server.api, o.org, new Set(cast.names), stop, progress, fleet);
  const readyS = round((now() - t1) / 1000);
  progress.say(`every node available ${readyS} s later`);
  return { provisionS, readyS };
}
