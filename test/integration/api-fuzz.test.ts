// Seeded fuzzing of the signed HTTP API: bodies that are almost objects of the right kind, plain JSON and
// non-JSON, sent to the endpoints that create and change things, and queries sent to search. Every answer is
// JSON with a status below 500, and the server keeps answering.
import fc from 'fast-check';
import t from 'tap';
import { FUZZ_SEED, queryText } from '../support/fuzz-inputs.js';
import { startTestServer } from '../support/server.js';

const RUNS = Number(process.env.INFRA_FUZZ_HTTP_RUNS ?? 300);
const ORG = '/organizations/default';
/** A long run (bench/fuzz.ts) outlasts tap's 30 s default. */
const LIMIT = { timeout: Math.max(30_000, RUNS * 60) };

const ENDPOINTS = [
  ['POST', `${ORG}/nodes`],
  ['PUT', `${ORG}/nodes/fuzz-node`],
  ['POST', `${ORG}/clients`],
  ['PUT', `${ORG}/clients/fuzz-client`],
  ['POST', `${ORG}/roles`],
  ['POST', `${ORG}/environments`],
  ['POST', `${ORG}/data`],
  ['PUT', `${ORG}/data/bag/item`],
  ['POST', `${ORG}/groups`],
  ['PUT', `${ORG}/groups/admins`],
  ['POST', `${ORG}/pushy/jobs`],
  ['POST', '/users'],
  ['POST', '/organizations'],
  ['PUT', `${ORG}/nodes/fuzz-node/_acl/read`],
] as const;

const KEYS = [
  'name',
  'clientname',
  'groupname',
  'id',
  'command',
  'nodes',
  'run_list',
  'normal',
  'actors',
  'users',
  'quorum',
  'run_timeout',
  'env',
  'public_key',
  'create_key',
  'validator',
  'email',
  'password',
  'full_name',
  'read',
];

const body = fc.oneof(
  fc.dictionary(fc.constantFrom(...KEYS), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
  fc.jsonValue({ maxDepth: 4 }),
  fc.string({ maxLength: 40 }),
);

t.test('no body makes the API answer 5xx or stop answering', LIMIT, async (t) => {
  const s = await startTestServer(t, 'file');
  const seen = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...ENDPOINTS), body, async ([method, path], b) => {
      const raw = typeof b === 'string' ? Buffer.from(b) : Buffer.from(JSON.stringify(b) ?? 'null');
      const res = await s.pivotal.send(method, path, raw);
      seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
      if (res.status >= 500) throw new Error(`${method} ${path} ${raw.toString()} answered ${res.status}`);
      if (res.status >= 400) JSON.parse(res.bytes.toString('utf8')); // errors are JSON
    }),
    { seed: FUZZ_SEED, numRuns: RUNS },
  );
  t.ok(
    [...seen.keys()].some((code) => code === 400),
    `statuses seen: ${[...seen].map(([c, n]) => `${c}×${n}`).join(' ')}`,
  );
  t.ok(
    [...seen.keys()].some((code) => code < 300),
    'and some bodies were accepted',
  );
  t.equal((await fetch(new URL('/_status', s.url))).status, 200, 'the server still answers');
});

t.test('no search query makes the API answer 5xx', LIMIT, async (t) => {
  const s = await startTestServer(t, 'file');
  await fc.assert(
    fc.asyncProperty(queryText(), async (q) => {
      const res = await s.admin.send('GET', `${ORG}/search/node?q=${encodeURIComponent(q)}`);
      if (res.status !== 200 && res.status !== 400) throw new Error(`q=${q} answered ${res.status}`);
    }),
    { seed: FUZZ_SEED, numRuns: RUNS },
  );
  t.pass(`${RUNS} queries answered 200 or 400`);
});
