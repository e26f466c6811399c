// infra-loadtest run as users run it, the compiled bin in a child process, and its figures read from the --json line
// it prints last, checked against the shape the tests expect of them.
import type { Test } from 'tap';
import { z } from 'zod';
import { runBin, type RunResult } from './process-run.js';

const RUN_TIMEOUT_MS = 100_000;

const spreadSchema = z.object({ p50: z.number().nullable(), p99: z.number().nullable(), max: z.number().nullable() });
export const measured = z.object({ p50: z.number(), p99: z.number(), max: z.number() });
const figuresSchema = z.object({
  nodes: z.int(),
  jobs: z.int(),
  reused_nodes: z.int(),
  deleted_nodes: z.int(),
  jobs_by_status: z.record(z.string(), z.int()),
  commit_to_all_acked_ms: spreadSchema,
  post_to_running_ms: spreadSchema,
  post_to_complete_ms: spreadSchema,
  job_phases_ms: z.record(z.string(), z.number().nullable()),
  nodes_per_connection: z.int(),
  dropped_by_reason: z.object({
    server: z.record(z.string(), z.int()),
    tester: z.record(z.string(), z.int()),
  }),
  votes_recovered: z.object({ commit_resent: z.int(), ack_from_heartbeat: z.int() }),
  quorum_outcomes_correct: z.object({
    correct: z.int(),
    total: z.int(),
    ambiguous: z.int(),
    mismatches: z.array(z.unknown()),
  }),
  between_waves_ms: z
    .object({
      p50: z.number().nullable(),
      max: z.number().nullable(),
      gaps: z.int(),
      waves_complete: z.int(),
      pause_s: z.int(),
    })
    .nullable(),
  offered_hb_per_s: z.number(),
  processed_hb_per_s: z.number().nullable(),
  dropped: z.int(),
  offline_detect_ms: spreadSchema.extend({ count: z.int(), missed: z.int() }),
  nodes_marked_down: z.int().nonnegative().nullable(),
  server_cpu_pct: z.number().nullable(),
  server_rss_mb: z.number().nullable(),
  rest_get_job_per_s: z.number().nullable(),
  rest_get_job_p99_ms: z.number().nullable(),
  nodes_held_by_another_process: z.int(),
  tester_lag_max_ms: z.int().nonnegative(),
  tester_cpu_pct: z.number().nullable(),
  errors: z.array(z.string()),
});
export type Figures = z.infer<typeof figuresSchema>;

export const exitMessage = (run: RunResult) => `exit 0${run.code === 0 ? '' : `, stderr: ${run.stderr}`}`;

export async function loadtest(t: Test, args: string[]): Promise<{ run: RunResult; figures: Figures }> {
  const run = await runBin('infra-loadtest', [...args, '--json', '--timeout', '80'], { timeoutMs: RUN_TIMEOUT_MS });
  const last = run.stdout.trimEnd().split('\n').at(-1) ?? '';
  let figures: Figures;
  try {
    figures = figuresSchema.parse(JSON.parse(last));
  } catch (e) {
    t.fail(`no figures on the last line of stdout (${String(e)})\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
    throw e;
  }
  return { run, figures };
}
