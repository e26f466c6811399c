// Bodies of the push-jobs API (spec 4.1; reference 6.3): a job to start. Unknown fields are refused.
import { z } from 'zod';
import { commitSchema } from '../protocol/messages.js';

const NAME = /^[A-Za-z0-9_.:-]+$/;

// The command and every option travel to the nodes in the commit message, so nothing here may exceed what
// a node accepts there (messages.ts commitSchema); the total size is checked when the job starts.
export const jobStartSchema = z.strictObject({
  command: commitSchema.shape.command,
  nodes: z.array(z.string().regex(NAME)).min(1).max(100_000),
  run_timeout: z.int().positive().max(31_536_000).default(3600),
  quorum: z.union([z.int().nonnegative(), z.string().regex(/^\d+%?$/)]).optional(),
  voting_timeout: z.int().positive().optional(),
  capture_output: z.boolean().optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,254}$/), z.string()).optional(),
  dir: z.string().regex(/^\//).max(4096).optional(),
  user: z.string().regex(/^[a-z_][a-z0-9_.-]*\$?$/i).max(64).optional(),
  file: z.string().regex(/^(raw|base64):/s).max(60_000).optional(),
});
export type JobStart = z.infer<typeof jobStartSchema>;
