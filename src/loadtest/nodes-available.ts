// Waiting for the fleet to be available: node_states polled until the server lists every node up and available
// and has heard each, with the live line saying how far it got, and hints of what to check when it never does.
import type { ApiClient } from '../auth/api-client.js';
import { nodeStateListSchema } from '../api/push-jobs.js';
import { delay, type Timers } from '../lib/timers.js';
import { testerTimers } from './clock.js';
import type { Fleet, FleetTotals } from './fleet.js';
import type { Progress } from './progress-line.js';
import { call, type StopSignal } from './scenario.js';

const READY_POLL_MS = 500;
/** How many nodes to name when some never became available. */
const NAMED_NOT_READY = 5;

/**
 * The nodes the server refused as another process's, while it still holds them: most often those of a run that
 * ended less than an offline window ago, which the server lets go once they have been silent that long.
 */
function heldText(t: FleetTotals): string {
  const left = Math.ceil((t.heldUntil - Date.now()) / 1000);
  return t.held > 0 && left > 0 ? `, ${t.held} held by an earlier process for up to ${left} s more` : '';
}

/** What to check when no node and the server have heard each other at all; empty once any has. */
export function unheardHint(t: FleetTotals): string {
  if (t.serverHeartbeats > 0 || t.nodesHeard > 0) return '';
  return (
    '; no node and the server heard each other over ZeroMQ: check that the host the server names (server_name) ' +
    'and its ports (server_heartbeat_port, command_port) are reachable from here'
  );
}

/** The first few nodes the server does not list as up and available, with what it says of them. */
function notReady(
  names: ReadonlySet<string>,
  states: ReadonlyArray<{ node_name: string; status: string; availability: string }>,
) {
  const listed = new Map(states.map((s) => [s.node_name, s]));
  const missing: string[] = [];
  for (const name of names) {
    const s = listed.get(name);
    if (s?.status === 'up' && s.availability === 'available') continue;
    missing.push(s ? `${name} (${s.status}, ${s.availability})` : `${name} (not listed)`);
    if (missing.length === NAMED_NOT_READY) break;
  }
  return missing.length === 0 ? '' : `; not available: ${missing.join(', ')}`;
}

/** Polls node_states until every one of `names` is up and available. */
export async function waitAvailable(
  api: ApiClient,
  org: string,
  names: ReadonlySet<string>,
  stop: StopSignal,
  progress: Progress,
  fleet: Fleet,
  timers: Timers = testerTimers,
): Promise<void> {
  const path = `/organizations/${encodeURIComponent(org)}/pushy/node_states`;
  // The list is as long as the fleet: a large one is asked for less often, and a server too busy to answer one
  // in time (its heartbeats come first) is asked again.
  const pollMs = Math.max(READY_POLL_MS, names.size / 20);
  let ready = 0;
  for (;;) {
    let states;
    try {
      states = await call(api, 'GET', path, nodeStateListSchema);
    } catch (e) {
      if (!(e instanceof Error && e.name === 'TimeoutError') || stop.over) throw e;
      progress.set(`available ${ready}/${names.size} at the last answer; the node list took over 30 s, asking again`);
      continue;
    }
    ready = 0;
    for (const s of states) if (names.has(s.node_name) && s.status === 'up' && s.availability === 'available') ready++;
    const t = fleet.totals;
    const skipped = t.drops.send_skipped ?? 0;
    progress.set(
      `available ${ready}/${names.size}, ${t.nodesHeard} heard by the server${heldText(t)}; heartbeats ${t.heartbeatsSent} sent, ${skipped} skipped, ${t.serverHeartbeats} received`,
    );
    // Both: after a restart the server lists a node as it was before until the node's new process is heard,
    // and a job started then would see the node restart during its vote.
    if (ready === names.size && t.nodesHeard >= names.size) return;
    if (stop.over) {
      const hint =
        t.held > 0
          ? `; the server refused ${t.held} as held by another process: play other nodes with --prefix`
          : unheardHint(t);
      throw new Error(
        `--timeout passed with ${ready} of ${names.size} nodes available${hint}${notReady(names, states)}`,
      );
    }
    await Promise.race([delay(timers, pollMs), fleet.failure$]);
  }
}
