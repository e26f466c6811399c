// A rollout on the job page: where it stands (the wave, the failures against the budget, the pause) and each wave's
// nodes, status and times. The job page's script fetches the panel again on each wave's start and end.
import type { FC } from 'hono/jsx';
import type { RolloutView } from '../../../api/rollout.js';
import { shortHttpDate, Status } from './layout.js';

export const WaveTable: FC<{ rollout: RolloutView }> = ({ rollout: r }) => (
  <div class="panel" data-testid="rollout">
    <p id="rollout-summary">
      Wave {r.current_wave} of {r.waves.length} · {r.failures} failure{r.failures === 1 ? '' : 's'}
      {r.max_failures === null ? ', no max_failures' : ` of max_failures ${r.max_failures}`} · pause {r.pause} s
      {r.next_wave_at === null ? '' : ` · next wave at ${shortHttpDate(r.next_wave_at)}`}
    </p>
    <table id="job-waves">
      <thead>
        <tr>
          <th>Wave</th>
          <th>Status</th>
          <th>Nodes</th>
          <th>Quorum</th>
          <th>Started</th>
          <th>Ended</th>
        </tr>
      </thead>
      <tbody>
        {r.waves.map((w) => (
          <tr data-wave={w.wave} class={w.wave === r.current_wave ? 'current' : undefined}>
            <td>{w.wave}</td>
            <td class="wave-status" data-status={w.status}>
              <Status status={w.status} />
            </td>
            <td class="wave-nodes">{w.nodes.join(', ')}</td>
            <td>{w.quorum}</td>
            <td>{shortHttpDate(w.started_at)}</td>
            <td>{shortHttpDate(w.ended_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);
