// What the hostile-peer fault tests share: a node registered as its client would (client, node, config naming a
// Curve key), the server's GET /_status, its memory from /proc, and raw TCP connections from a chosen loopback
// address (the whole 127.0.0.0/8 reaches the loopback, so each address is another "host").
import net from 'node:net';
import { readFile } from 'node:fs/promises';
import { curveKeyPair } from 'zeromq';
import { pushConfigSchema, type PushConfigBody } from '../../src/api/push-jobs.js';
import { serverStatusSchema, type ServerStatusBody } from '../../src/api/status-schema.js';
import { ApiClient } from '../../src/auth/api-client.js';
import { decryptSessionKey } from '../../src/protocol/signing.js';
import { keyPair } from './api-fixtures.js';

export interface RegisteredNode {
  name: string;
  config: PushConfigBody;
  sessionKey: Buffer;
  /** The Curve key pair named in the config request (ccpk). */
  curve: { publicKey: string; secretKey: string };
  clientKeyPem: string;
}

/** Creates client and node `name` as `admin`, then fetches the node's config as its client, naming a new Curve key. */
export async function registerNode(admin: ApiClient, baseUrl: string, name: string, org = 'default') {
  const pair = await keyPair(0);
  const made = await admin.request('POST', `/organizations/${org}/clients`, { name, public_key: pair.publicKeyPem });
  if (made.status !== 201) throw new Error(`client ${name}: ${made.status} ${JSON.stringify(made.body)}`);
  const node = await admin.request('POST', `/organizations/${org}/nodes`, { name });
  if (node.status !== 201) throw new Error(`node ${name}: ${node.status} ${JSON.stringify(node.body)}`);
  const curve = curveKeyPair();
  const asClient = new ApiClient({ baseUrl, userId: name, key: pair.privateKeyPem });
  const path = `/organizations/${org}/pushy/config/${name}?ccpk=${encodeURIComponent(curve.publicKey)}`;
  const res = await asClient.request('GET', path);
  if (res.status !== 200) throw new Error(`config of ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  const config = pushConfigSchema.parse(res.body);
  const sessionKey = decryptSessionKey(config.encoded_session_key.key, pair.privateKeyPem);
  return { name, config, sessionKey, curve, clientKeyPem: pair.privateKeyPem } satisfies RegisteredNode;
}

export async function statusOf(url: string): Promise<ServerStatusBody> {
  const res = await fetch(`${url}/_status`);
  return serverStatusSchema.parse(await res.json());
}

/** Resident memory now and at most so far (VmRSS, VmHWM), in bytes. */
export async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** A raw connection to `port` on 127.0.0.1 from `from`; `answer` gathers what the server writes until it closes. */
export interface RawConnection {
  socket: net.Socket;
  answer: () => string;
  closed: Promise<void>;
}

export function connectFrom(port: number, from = '127.0.0.1'): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.setEncoding('utf8').on('data', (d: string) => (text += d));
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.removeListener('error', reject);
      socket.on('error', () => {});
      resolve({ socket, answer: () => text, closed });
    });
  });
}
