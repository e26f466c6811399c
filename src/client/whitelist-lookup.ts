// The whitelist (spec 2.6): job name -> command line, from client.rb and the node attribute push_jobs.whitelist,
// read again at every commit so a change applies to the next job without a restart (reference 7.4, issue #52).
import { z } from 'zod';
import { errorText } from '../auth/api-client.js';
import { errorMessage, type Logger } from './logger.js';
import type { OrgRequests } from './server-api.js';

export type Whitelist = ReadonlyMap<string, string>;

/** Attribute levels from lowest to highest precedence, as the regular client merges them. */
export const ATTRIBUTE_LEVELS = ['default', 'normal', 'override', 'automatic'] as const;

const attributesSchema = z.record(z.string(), z.unknown());
const nodeSchema = z.object(Object.fromEntries(ATTRIBUTE_LEVELS.map((l) => [l, attributesSchema.optional()])));

export interface NodeWhitelist {
  /** The merged push_jobs.whitelist of the node's attribute levels. */
  entries: Map<string, string>;
  /** `level: name` of entries whose value is not a command string, skipped. */
  skipped: string[];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** push_jobs.whitelist merged over the levels of a node object, higher levels winning per job name. */
export function nodeWhitelist(node: unknown): NodeWhitelist {
  const out: NodeWhitelist = { entries: new Map(), skipped: [] };
  const parsed = nodeSchema.safeParse(node);
  if (!parsed.success) return out;
  for (const level of ATTRIBUTE_LEVELS) {
    const pushJobs = parsed.data[level]?.push_jobs;
    const list = isRecord(pushJobs) ? pushJobs.whitelist : undefined;
    if (!isRecord(list)) continue;
    for (const [name, command] of Object.entries(list)) {
      if (typeof command === 'string' && command !== '' && name !== '') out.entries.set(name, command);
      else out.skipped.push(`${level}: ${name}`);
    }
  }
  return out;
}

/** client.rb's whitelist with the node's entries over it: the node attribute wins a clash (spec 2.6). */
export function mergeWhitelists(
  fromConfig: Readonly<Record<string, string>>,
  fromNode: ReadonlyMap<string, string>,
): Whitelist {
  const merged = new Map(Object.entries(fromConfig));
  for (const [name, command] of fromNode) merged.set(name, command);
  return merged;
}

/**
 * The whitelist in force now: the node object is read for every commit (`nodePath` below the organization). When
 * it cannot be read, client.rb's whitelist alone applies and the reason is logged, so a server hiccup does not
 * refuse every job.
 */
export async function currentWhitelist(
  api: OrgRequests,
  nodePath: string,
  fromConfig: Readonly<Record<string, string>>,
  log: Logger,
): Promise<Whitelist> {
  let res;
  try {
    res = await api.request('GET', nodePath);
  } catch (e) {
    log.warn(`cannot read ${nodePath} (${errorMessage(e)}): using the whitelist of client.rb only`);
    return mergeWhitelists(fromConfig, new Map());
  }
  if (res.status !== 200) {
    log.warn(`cannot read ${nodePath} (${res.status} ${errorText(res.body)}): using the whitelist of client.rb only`);
    return mergeWhitelists(fromConfig, new Map());
  }
  const node = nodeWhitelist(res.body);
  if (node.skipped.length > 0)
    log.warn(`push_jobs.whitelist entries that are not command strings were skipped: ${node.skipped.join(', ')}`);
  return mergeWhitelists(fromConfig, node.entries);
}
