// The whitelist a node runs by (spec 2.6): client.rb under the node attribute push_jobs.whitelist.
import t from 'tap';
import { mergeWhitelists, nodeWhitelist } from '../../src/client/whitelist-lookup.js';

const levels = (whitelists: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(whitelists).map(([level, whitelist]) => [level, { push_jobs: { whitelist } }]));

t.test('attribute levels merge per job name: automatic > override > normal > default', async (t) => {
  const node = {
    name: 'web1',
    ...levels({
      default: { a: 'default-a', b: 'default-b', c: 'default-c', d: 'default-d' },
      normal: { b: 'normal-b', c: 'normal-c', d: 'normal-d' },
      override: { c: 'override-c', d: 'override-d' },
      automatic: { d: 'automatic-d' },
    }),
  };
  t.strictSame(Object.fromEntries(nodeWhitelist(node).entries), {
    a: 'default-a',
    b: 'normal-b',
    c: 'override-c',
    d: 'automatic-d',
  });
});

t.test('entries that are not command strings are skipped and named', async (t) => {
  const w = nodeWhitelist({
    ...levels({ normal: { ok: 'uptime', number: 1, empty: '', hash: { command_line: 'x' } } }),
  });
  t.strictSame(Object.fromEntries(w.entries), { ok: 'uptime' });
  t.strictSame(w.skipped, ['normal: number', 'normal: empty', 'normal: hash']);
});

t.test('a node without push_jobs.whitelist, or not a node at all, gives no entries', async (t) => {
  for (const node of [
    { name: 'web1' },
    { normal: { push_jobs: 'yes' } },
    { normal: { push_jobs: { whitelist: ['a'] } } },
    null,
    'node',
    { normal: [] },
  ]) {
    t.strictSame([...nodeWhitelist(node).entries], [], JSON.stringify(node));
  }
});

t.test('the node attribute wins over client.rb on a clash; the rest of both is kept', async (t) => {
  const merged = mergeWhitelists(
    { 'chef-client': 'chef-client', restart: 'service web restart' },
    new Map([
      ['restart', 'systemctl restart web'],
      ['deploy', '/opt/deploy'],
    ]),
  );
  t.strictSame(Object.fromEntries(merged), {
    'chef-client': 'chef-client',
    restart: 'systemctl restart web',
    deploy: '/opt/deploy',
  });
});

t.test('names of object members are not commands', async (t) => {
  const merged = mergeWhitelists(
    {},
    nodeWhitelist({ normal: { push_jobs: { whitelist: { uptime: 'uptime' } } } }).entries,
  );
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty'])
    t.equal(merged.get(name), undefined, name);
});
