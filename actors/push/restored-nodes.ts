// The nodes a restore counts up although their records say otherwise: what the jobs in flight say of them.
import type { JobState } from './job-model.js';
import type { NodeAvailability } from './push-data.js';

/**
 * A node that a job in flight records as ready or running answered that job, so it was up, even if its record
 * says otherwise: node states are written behind, and the process that owned the organization may have died
 * before writing that the node came up. So was a node a voting job still records as `new`: the job sent it a
 * commit, which it does only to available nodes, and has not heard it go down since. Each is restored `up` like
 * the others (no rehab, which would abort the command it runs), and goes down if it is not heard within the grace.
 */
export function upFromJobs(records: Map<string, NodeAvailability>, inFlight: readonly JobState[], at: number): void {
  for (const job of inFlight) {
    for (const [node, status] of Object.entries(job.nodes)) {
      const asked = status === 'ready' || status === 'running' || (status === 'new' && job.status === 'voting');
      if (!asked || records.get(node)?.status === 'up') continue;
      // Which client process it was is not known either: the first one heard takes it.
      records.set(node, {
        node_name: node,
        status: 'up',
        updated_at: at,
        incarnation: null,
        available: true,
      });
    }
  }
}
