// `cli node whitelist list|set|remove`: the node attribute normal.push_jobs.whitelist (spec 2.6), edited by
// reading the whole node and writing it back, so every other attribute stays as it was.
import { z } from 'zod';
import type { Cli } from './cli-connection.js';
import { formatFields } from './columns.js';
import { CommandError } from './terminal.js';

const attrs = z.record(z.string(), z.unknown());
const nodeSchema = z.looseObject({ name: z.string(), normal: attrs.optional() });
export type NodeDoc = z.infer<typeof nodeSchema>;
export type Whitelist = Record<string, unknown>;

const asRecord = (v: unknown): Record<string, unknown> | undefined => {
  const parsed = attrs.safeParse(v);
  return parsed.success && !Array.isArray(v) ? parsed.data : undefined;
};

/** The node's whitelist; a node without one has an empty whitelist. */
export function whitelistOf(node: NodeDoc): Whitelist {
  return asRecord(asRecord(node.normal?.push_jobs)?.whitelist) ?? {};
}

/** A copy of `node` with `whitelist` in place; the other push_jobs attributes are kept. */
export function withWhitelist(node: NodeDoc, whitelist: Whitelist): NodeDoc {
  const normal = node.normal ?? {};
  const pushJobs = asRecord(normal.push_jobs) ?? {};
  return { ...node, normal: { ...normal, push_jobs: { ...pushJobs, whitelist } } };
}

export function formatWhitelist(whitelist: Whitelist): string {
  const entries = Object.entries(whitelist).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return formatFields(
    entries.map(([name, command]) => [name, typeof command === 'string' ? command : JSON.stringify(command)]),
  );
}

async function getNode(cli: Cli, node: string): Promise<NodeDoc> {
  return cli.api.call('GET', cli.api.orgPath('nodes', node), nodeSchema);
}

async function putNode(cli: Cli, doc: NodeDoc): Promise<void> {
  await cli.api.call('PUT', cli.api.orgPath('nodes', doc.name), z.unknown(), doc);
}

export async function whitelistList(cli: Cli, o: { node: string }): Promise<void> {
  const whitelist = whitelistOf(await getNode(cli, o.node));
  if (cli.ui.format === 'json') cli.ui.output(whitelist);
  else if (Object.keys(whitelist).length === 0) cli.ui.info(`The whitelist of ${o.node} is empty.`);
  else cli.ui.raw(formatWhitelist(whitelist));
}

/** Adds the entry, or replaces the command of an entry of that name. */
export async function whitelistSet(cli: Cli, o: { node: string; name: string; command: string }): Promise<void> {
  const doc = await getNode(cli, o.node);
  await putNode(cli, withWhitelist(doc, { ...whitelistOf(doc), [o.name]: o.command }));
  cli.ui.msg(`Whitelist of ${o.node}: ${o.name} runs ${o.command}`);
}

export async function whitelistRemove(cli: Cli, o: { node: string; name: string }): Promise<void> {
  const doc = await getNode(cli, o.node);
  const rest = whitelistOf(doc);
  if (!Object.hasOwn(rest, o.name)) throw new CommandError(`The whitelist of ${o.node} has no entry '${o.name}'.`);
  delete rest[o.name];
  await putNode(cli, withWhitelist(doc, rest));
  cli.ui.msg(`Removed ${o.name} from the whitelist of ${o.node}.`);
}
