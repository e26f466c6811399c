// The answers of GET /_status (src/api/status-schema.ts): `starting` until restore and first-start setup are done,
// then `pong`, or `degraded` while the store does not answer or its operations fail (reads are answered from
// memory, writes refused). 503 unless `pong`, so a waiting script keeps waiting.
import type { InfraSystem } from '../../actors/system.js';
import type { ClusterStatus, LimitsStatus, ServerStatusBody } from '../api/status-schema.js';
import { VERSION } from '../lib/version.js';
import type { Store } from '../store/store.js';

export type PushFigures = NonNullable<ServerStatusBody['push_jobs']>;

export interface StatusAnswer {
  body: ServerStatusBody;
  code: 200 | 503;
}

export async function runningStatus(
  system: InfraSystem,
  push: { status(): PushFigures } | undefined,
  storeFailing: boolean,
  cluster?: () => Promise<ClusterStatus>,
  limits?: () => LimitsStatus,
): Promise<StatusAnswer> {
  const [state, member] = await Promise.all([system.store.state(), cluster?.()]);
  const limitsNow = limits?.();
  const healthy = state === 'ok' && !storeFailing;
  return {
    body: {
      status: healthy ? 'pong' : 'degraded',
      version: VERSION,
      store: { kind: system.store.kind, state },
      organizations: system.orgNames().length,
      push_jobs: push?.status() ?? null,
      actors: {
        crashes: system.counters.snapshot('actor_crashes'),
        job_ignored: system.counters.snapshot('job_ignored'),
        node_ignored: system.counters.snapshot('node_ignored'),
        schedule_firings: system.counters.snapshot('schedule_firings'),
      },
      ...(member ? { cluster: member } : {}),
      ...(limitsNow ? { limits: limitsNow } : {}),
    },
    code: healthy ? 200 : 503,
  };
}

/** `store` is undefined until it is open; `cluster`, until this process joined the others on it. */
export async function startingStatus(
  store: Store | undefined,
  cluster?: () => Promise<ClusterStatus> | undefined,
): Promise<StatusAnswer> {
  const member = await cluster?.();
  return {
    body: {
      status: 'starting',
      version: VERSION,
      store: store ? { kind: store.kind, state: await store.state() } : null,
      organizations: 0,
      push_jobs: null,
      actors: null,
      ...(member ? { cluster: member } : {}),
    },
    code: 503,
  };
}
