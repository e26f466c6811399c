// The start-job form: a whitelisted command, the nodes by name or by search query, the quorum, the run timeout,
// and waves for a rollout.
import type { FC } from 'hono/jsx';
import { CsrfField, orgPath } from './layout.js';

export interface StartJobValues {
  command: string;
  nodes: string;
  search: string;
  quorum: string;
  run_timeout: string;
  capture?: 'on' | undefined;
  waves: string;
  max_failures: string;
  pause: string;
}

export const StartJobForm: FC<{ org: string; csrf: string; values: StartJobValues | undefined }> = (p) => {
  const v = p.values;
  return (
    <form class="stack" method="post" action={orgPath(p.org, 'jobs')} data-testid="start-job">
      <CsrfField token={p.csrf} />
      <label for="command">Command</label>
      <input type="text" id="command" name="command" value={v?.command ?? ''} required maxlength={255} />
      <span class="hint">A command name from the nodes' whitelist, such as chef-client.</span>
      <label for="nodes">Nodes</label>
      <input type="text" id="nodes" name="nodes" value={v?.nodes ?? ''} placeholder="web1 web2 db1" />
      <span class="hint">Node names, separated by spaces or commas.</span>
      <label for="search">or search</label>
      <input type="text" id="search" name="search" value={v?.search ?? ''} placeholder="name:web* AND role:app" />
      <span class="hint">Every node this query finds joins the job.</span>
      <label for="quorum">Quorum</label>
      <input type="text" id="quorum" name="quorum" value={v?.quorum ?? ''} placeholder="100%" />
      <span class="hint">Nodes that must accept before the job runs: a count or a percentage (default 100%).</span>
      <label for="run_timeout">Run timeout</label>
      <input type="number" id="run_timeout" name="run_timeout" min={1} value={v?.run_timeout ?? '3600'} />
      <span class="hint">Seconds the command may run on a node.</span>
      <label for="waves">Waves</label>
      <input type="text" id="waves" name="waves" value={v?.waves ?? ''} placeholder="1,10%,100%" />
      <span class="hint">Run in waves of these sizes, nodes taken by name; the last repeats. Empty: all at once.</span>
      <label for="max_failures">Max failures</label>
      <input type="text" id="max_failures" name="max_failures" value={v?.max_failures ?? ''} placeholder="0" />
      <span class="hint">With waves: past this many failed nodes (or share of those that ran), no wave starts.</span>
      <label for="pause">Pause</label>
      <input type="number" id="pause" name="pause" min={0} value={v?.pause ?? ''} placeholder="0" />
      <span class="hint">With waves: seconds between one wave's end and the next one's start.</span>
      <label for="capture">Capture output</label>
      <div>
        <input type="checkbox" id="capture" name="capture" checked={v?.capture === 'on'} />
      </div>
      <span></span>
      <div>
        <button type="submit">Start job</button>
      </div>
    </form>
  );
};
