// First run of a node (spec 5.3): registering its client through the validator, saving the key, and making
// sure the node object exists with the client holding rights on it (spec 2.3).
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { errorText } from '../auth/api-client.js';
import { readPrivateKey } from '../auth/rsa-keys.js';
import { hasCode } from '../lib/thrown.js';
import { errorMessage, type Logger } from './logger.js';
import type { ClientSettings } from './options.js';
import { ServerApi, type OrgRequests, type Servers } from './server-api.js';

/** A start that cannot go on: a missing key, a refused registration. The client exits with code 1. */
export class StartupError extends Error {
  override name = 'StartupError';
}

const HTTP_TIMEOUT_MS = 10_000;

const registeredSchema = z.object({ chef_key: z.object({ private_key: z.string().min(1) }) });

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    if (hasCode(e, 'ENOENT')) return undefined;
    throw new StartupError(`cannot read ${file}: ${errorMessage(e)}`, { cause: e });
  }
}

/** Writes the key readable by its owner only, under a temporary name first so a crash leaves no half key. */
export async function writeKeyFile(file: string, pem: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temp, pem, { mode: 0o600, flag: 'wx' });
    await chmod(temp, 0o600);
    await rename(temp, file);
  } catch (e) {
    await rm(temp, { force: true });
    throw e;
  }
}

/**
 * The client's private key PEM: read from `clientKey`, or, when that file does not exist, obtained by
 * registering the node's client through the validator and saved with mode 0600. The registration goes to the
 * server of `servers` in use, which a failure another server may not share moves on.
 */
export async function ensureClientKey(s: ClientSettings, servers: Servers, log: Logger): Promise<string> {
  const existing = await readIfExists(s.clientKey);
  if (existing !== undefined) {
    try {
      readPrivateKey(existing);
    } catch (e) {
      throw new StartupError(`${s.clientKey}: ${errorMessage(e)}`, { cause: e });
    }
    return existing;
  }
  const validatorPem = await readIfExists(s.validationKey);
  if (validatorPem === undefined) {
    throw new StartupError(
      `no client key at ${s.clientKey} and no validation key at ${s.validationKey} to register with`,
    );
  }
  let validator: ServerApi;
  try {
    validator = new ServerApi(servers, s.org, { userId: s.validationClientName, key: validatorPem }, HTTP_TIMEOUT_MS);
  } catch (e) {
    throw new StartupError(`${s.validationKey}: ${errorMessage(e)}`, { cause: e });
  }
  log.info(`no client key at ${s.clientKey}: registering client ${s.nodeName} as ${s.validationClientName}`);
  const res = await validator.request('POST', '/clients', { name: s.nodeName, create_key: true });
  if (res.status === 409) {
    throw new StartupError(
      `client ${s.nodeName} already exists but ${s.clientKey} is missing: delete the client or restore its key`,
    );
  }
  // A server error may pass: a plain Error, which the caller retries; a refusal is final.
  if (res.status >= 500) throw new Error(`registering client ${s.nodeName}: ${res.status} ${errorText(res.body)}`);
  const parsed = registeredSchema.safeParse(res.body);
  if (res.status !== 201 || !parsed.success) {
    throw new StartupError(`registering client ${s.nodeName} failed: ${res.status} ${errorText(res.body)}`);
  }
  const pem = parsed.data.chef_key.private_key;
  await writeKeyFile(s.clientKey, pem);
  log.info(`registered client ${s.nodeName}; its key is in ${s.clientKey}`);
  return pem;
}

/**
 * Creates the node object signed as the node's own client, so the client is named in its ACL. An existing
 * node (409) is fine. A failure that may pass (no answer, 408, 429, a 5xx such as a cluster's 503 while the
 * organization moves between members) throws a plain Error, which the caller retries: without the node object the
 * node's whitelist attribute is never read. A refusal is logged, as the client can still run jobs from client.rb's
 * whitelist.
 */
export async function ensureNode(api: OrgRequests, s: ClientSettings, log: Logger): Promise<void> {
  let res;
  try {
    res = await api.request('POST', '/nodes', { name: s.nodeName });
  } catch (e) {
    throw new Error(`cannot create node ${s.nodeName}: ${errorMessage(e)}`, { cause: e });
  }
  if (res.status === 201) log.info(`created node ${s.nodeName}`);
  else if (res.status === 408 || res.status === 429 || res.status >= 500)
    throw new Error(`cannot create node ${s.nodeName}: ${res.status} ${errorText(res.body)}`);
  else if (res.status !== 409) log.warn(`cannot create node ${s.nodeName}: ${res.status} ${errorText(res.body)}`);
}
