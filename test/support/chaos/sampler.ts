// The chaos run's sampler: every half second, each live member's GET /_status cluster figures (which partitions it
// serves, how many members it counts, the nodes it hears) and the default organization's node_states through the
// first member that answered. Every request has a timeout, so a frozen member costs a sample nothing but its answer.
import { nodeStateListSchema } from '../../../src/api/push-jobs.js';
import type { ApiClient } from '../../../src/auth/api-client.js';
import type { ClusterUnderTest } from './cluster-under-test.js';
import type { HistoryRecorder, MemberSample, NodeState, Sample } from './history.js';

export interface Sampler {
  /** Resolves after the sample under way, the last one, is recorded. */
  stop(): Promise<void>;
}

const STATUS_TIMEOUT_MS = 800;
const NODE_STATES_TIMEOUT_MS = 1500;

export function startSampler(c: ClusterUnderTest, history: HistoryRecorder, intervalMs = 500): Sampler {
  let running = true;
  let wake: () => void = () => undefined;
  const clients = new Map<string, Promise<ApiClient>>();
  const client = (url: string) => {
    const made = clients.get(url) ?? c.admin(url, NODE_STATES_TIMEOUT_MS);
    clients.set(url, made);
    return made;
  };
  const sampleOnce = async (): Promise<Sample> => {
    const at = Date.now();
    const members = await Promise.all(
      c.members.map(async (m): Promise<MemberSample> => {
        // One the nemesis killed or froze is not asked: it would only hold the sample up by its timeout.
        const s = m.state === 'up' ? await c.status(m, STATUS_TIMEOUT_MS) : undefined;
        return {
          member: m.index,
          answered: s !== undefined,
          held: s?.cluster?.held ?? [],
          members: s?.cluster?.members.length ?? 0,
          connected: s?.push_jobs?.connected_nodes ?? 0,
          status: s?.status ?? null,
          store: s?.store?.state ?? null,
        };
      }),
    );
    let nodes: Record<string, NodeState> | null = null;
    let nodesVia: number | null = null;
    for (const m of members.filter((x) => x.answered)) {
      const url = c.members[m.member]?.url ?? '';
      const res = await (
        await client(url)
      )
        .request('GET', '/organizations/default/pushy/node_states')
        .catch(() => undefined);
      const rows = res?.status === 200 ? nodeStateListSchema.safeParse(res.body) : undefined;
      if (!rows?.success) continue;
      nodes = Object.fromEntries(
        rows.data.map((r) => [r.node_name, { status: r.status, availability: r.availability }]),
      );
      nodesVia = m.member;
      break;
    }
    return { at, members, nodes, nodesVia };
  };
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      history.sampled(await sampleOnce());
      const rest = intervalMs - (Date.now() - started);
      if (rest > 0 && running)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, rest);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
    }
  })();
  return {
    stop: async () => {
      running = false;
      wake();
      await loop;
    },
  };
}
