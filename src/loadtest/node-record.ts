// infra-loadtest's --record: one JSON line per event of a simulated node, what it committed to, refused, ran,
// reported and aborted, and where it connected, so that a checker can hold the server's view of each job to what each
// node did, as a real client's log allows. Each worker appends its own lines; a line is written whole, at once.
import { appendFileSync } from 'node:fs';
import { z } from 'zod';

export const nodeRecordLineSchema = z.discriminatedUnion('event', [
  /** It acked the commit. */
  z.object({ event: z.literal('committed'), at: z.number(), node: z.string(), job: z.string() }),
  /** It nacked the commit (busy with another job, or its behaviour refuses). */
  z.object({ event: z.literal('refused'), at: z.number(), node: z.string(), job: z.string(), reason: z.string() }),
  /** It acked the run and started its command. */
  z.object({ event: z.literal('ran'), at: z.number(), node: z.string(), job: z.string() }),
  /** It nacked a run order: it held no commit of the job. */
  z.object({ event: z.literal('run_refused'), at: z.number(), node: z.string(), job: z.string() }),
  /** The result it sent. */
  z.object({
    event: z.literal('result'),
    at: z.number(),
    node: z.string(),
    job: z.string(),
    status: z.enum(['succeeded', 'failed']),
    exit_status: z.int(),
  }),
  /** Told to abort the job it held, in this phase. */
  z.object({
    event: z.literal('aborted'),
    at: z.number(),
    node: z.string(),
    job: z.string(),
    phase: z.enum(['committed', 'running']),
  }),
  /** It crashed as its behaviour says (the command's result never sent) and started again later. */
  z.object({ event: z.literal('crashed'), at: z.number(), node: z.string(), job: z.string().nullable() }),
  /** Its channels now go to this heartbeat address (a first connection, or a move after a config fetched again). */
  z.object({ event: z.literal('connected'), at: z.number(), node: z.string(), heartbeat: z.string() }),
  /** A message from the server it dropped. */
  z.object({ event: z.literal('dropped'), at: z.number(), node: z.string(), reason: z.string() }),
]);
export type NodeRecordLine = z.infer<typeof nodeRecordLineSchema>;

type WithoutNode<T> = T extends unknown ? Omit<T, 'node' | 'at'> : never;
/** What a node tells its recorder; the recorder adds its name and the time. */
export type NodeRecordEvent = WithoutNode<NodeRecordLine>;

export type NodeRecorder = (event: NodeRecordEvent) => void;

/** A recorder for one node appending to `file`; synchronous, so that a killed tester loses no line written. */
export function fileRecorder(file: string, node: string, now: () => number = Date.now): NodeRecorder {
  return (event) => appendFileSync(file, `${JSON.stringify({ ...event, at: now(), node })}\n`);
}
