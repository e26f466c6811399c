// The node object a client creates at its start: an existing one is fine, a refusal is only said, and a failure
// that may pass (a cluster's 503 while the organization moves between members, no answer) is thrown for the client
// to try again, so that no node is left without the object its whitelist attribute lives on.
import t from 'tap';
import type { ApiResponse } from '../../src/auth/api-client.js';
import { ensureNode } from '../../src/client/registration.js';
import type { ClientSettings } from '../../src/client/options.js';
import type { Logger } from '../../src/client/logger.js';

const settings = { nodeName: 'web1' } as ClientSettings; // ensureNode reads the name alone

function answering(status: number): { request(): Promise<ApiResponse> } {
  return { request: async () => ({ status, body: { error: ['no'] }, headers: new Headers() }) };
}

function recording(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (m: string) => void lines.push(`${level} ${m}`);
  return { lines, log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

t.test('a node object created, or there already, is fine', async (t) => {
  const { log, lines } = recording();
  await ensureNode(answering(201), settings, log);
  await ensureNode(answering(409), settings, log);
  t.same(lines, ['info created node web1']);
});

t.test('a failure that may pass is thrown, for the client to try again', async (t) => {
  for (const status of [503, 500, 429, 408])
    await t.rejects(ensureNode(answering(status), settings, recording().log), /cannot create node web1/, `${status}`);
  const unanswered = { request: () => Promise.reject(new Error('connect ECONNREFUSED')) };
  await t.rejects(ensureNode(unanswered, settings, recording().log), /ECONNREFUSED/, 'no answer');
});

t.test('a refusal is said, and the client goes on with client.rb’s whitelist', async (t) => {
  const { log, lines } = recording();
  await ensureNode(answering(403), settings, log);
  t.match(lines, [/^warn cannot create node web1: 403/]);
});
