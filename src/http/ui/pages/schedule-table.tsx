// An organization's schedules: each one's command and nodes, its cron expression in its time zone, the next
// occurrence it fires for (or that it is paused), its latest job and what it skipped or missed. Users who may start
// jobs get its pause or resume button.
import type { FC } from 'hono/jsx';
import type { ScheduleBody } from '../../../api/schedules.js';
import { CsrfField, orgPath, shortHttpDate, Status } from './layout.js';

const nodesOf = (s: ScheduleBody) => {
  const named = s.job.nodes.length === 1 ? '1 node' : `${s.job.nodes.length} nodes`;
  return s.job.rollout === undefined ? named : `${named}, waves ${s.job.rollout.waves.join(', ')}`;
};

export const ScheduleTable: FC<{ org: string; schedules: ScheduleBody[]; canChange: boolean; csrf: string }> = (p) => (
  <table data-testid="schedule-list">
    <thead>
      <tr>
        <th>Schedule</th>
        <th>Command</th>
        <th>When</th>
        <th>Next run</th>
        <th>Latest job</th>
        <th>Skipped · missed</th>
        {p.canChange ? <th></th> : null}
      </tr>
    </thead>
    <tbody>
      {p.schedules.map((s) => (
        <tr data-schedule={s.name}>
          <td class="mono">{s.name}</td>
          <td>
            <span class="mono">{s.job.command}</span> <span class="muted">on {nodesOf(s)}</span>
          </td>
          <td>
            <span class="mono">{s.cron}</span> <span class="muted">{s.time_zone}</span>
          </td>
          <td class="schedule-next">
            {s.paused || s.next_run_at === null ? <Status status="paused" /> : shortHttpDate(s.next_run_at)}
          </td>
          <td>
            {s.jobs[0] === undefined ? (
              <span class="muted">none yet</span>
            ) : (
              <a class="mono" href={orgPath(p.org, 'jobs', s.jobs[0].id)}>
                {s.jobs[0].id.slice(0, 12)}
              </a>
            )}
          </td>
          <td>
            {s.skipped_overlap} · {s.missed}
          </td>
          {p.canChange ? (
            <td>
              <form
                class="inline"
                method="post"
                action={orgPath(p.org, 'schedules', s.name, s.paused ? 'resume' : 'pause')}
              >
                <CsrfField token={p.csrf} />
                <button class="plain" type="submit">
                  {s.paused ? 'Resume' : 'Pause'}
                </button>
              </form>
            </td>
          ) : null}
        </tr>
      ))}
    </tbody>
  </table>
);
