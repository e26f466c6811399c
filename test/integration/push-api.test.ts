// The push-jobs REST API around the jobs (spec 4.1, 7; reference 3, 6): bad bodies, rights, organizations,
// and the config endpoint a node bootstraps from.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { curveKeyPair } from 'zeromq';
import { decryptSessionKey } from '../../src/protocol/signing.js';
import { createMember, createOrg, createUser, keyPair, rawRequest, signedHeaders } from '../support/api-fixtures.js';
import { startTestServer } from '../support/server.js';
import { startJob, waitForJob } from '../support/push-api.js';
import { ack, configPath, startTestNode } from '../support/test-node.js';

// Eight intervals of silence before `down`: short enough for quick tests, long enough that a machine busy with
// other test files does not see nodes flap.
const FAST = { heartbeat_interval: 100, offline_threshold: 8, online_threshold: 2, voting_timeout: 2 };
const PUSHY = '/organizations/default/pushy';

t.test('push-jobs API', async (t) => {
  const s = await startTestServer(t, 'file', FAST);

  t.test('a bad job body is 400 and names the field', async (t) => {
    const valid = { command: 'chef-client', nodes: ['n1'] };
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['no command', { nodes: ['n1'] }, /command/],
      ['a command that is not a string', { ...valid, command: 5 }, /command/],
      ['no nodes', { command: 'chef-client' }, /nodes/],
      ['an empty node list', { ...valid, nodes: [] }, /nodes/],
      ['a node name that is not a string', { ...valid, nodes: [7] }, /nodes/],
      ['a run_timeout that is not a number', { ...valid, run_timeout: 'soon' }, /run_timeout/],
      ['a negative run_timeout', { ...valid, run_timeout: -1 }, /run_timeout/],
      ['a quorum that is neither count nor percentage', { ...valid, quorum: 'most' }, /quorum/],
      ['a quorum above the node count', { ...valid, quorum: 2 }, /quorum/],
      ['a capture_output that is not a boolean', { ...valid, capture_output: 'yes' }, /capture_output/],
      ['an env value that is not a string', { ...valid, env: { A: 1 } }, /env/],
      ['a file without raw: or base64:', { ...valid, file: 'echo hi' }, /file/],
      ['an unknown field', { ...valid, colour: 'red' }, /colour/],
      // Nodes would drop a commit carrying these (reference 2.3), and the job would wait out its voting timeout.
      ['a command longer than a commit message allows', { ...valid, command: 'c'.repeat(256) }, /command/],
      ['an env name longer than a commit message allows', { ...valid, env: { [`E${'e'.repeat(255)}`]: 'v' } }, /env/],
      [
        'options that make the commit message too big',
        { ...valid, file: `raw:${'f'.repeat(59_000)}`, env: { BIG: 'v'.repeat(8000) } },
        /'env'.*'file'.*65536/,
      ],
    ];
    for (const [what, body, field] of cases) {
      const res = await s.admin.request('POST', `${PUSHY}/jobs`, body);
      t.equal(res.status, 400, `${what}: 400`);
      t.match(res.body, { error: [field] }, `${what}: the error names the field (${JSON.stringify(res.body)})`);
    }
    const headers = signedHeaders({
      privateKey: await s.keyOf('admin'),
      userId: 'admin',
      method: 'POST',
      path: `${PUSHY}/jobs`,
      body: '{"command":',
    });
    const garbled = await rawRequest(
      s.url,
      'POST',
      `${PUSHY}/jobs`,
      { ...headers, 'Content-Type': 'application/json' },
      '{"command":',
    );
    t.equal(garbled.status, 400, 'a body that is not JSON is 400');
    t.same((await s.admin.request('GET', `${PUSHY}/jobs`)).body, [], 'no job was started');
  });

  t.test('rights: members read, only admins start or abort, outsiders see nothing', async (t) => {
    const member = await createMember(t, s, 'default', 'pj-member', 1);
    const outsider = await createUser(t, s, 'pj-outsider', 1);
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['nobody-here'] });
    await waitForJob(s.admin, id, 'quorum_failed');

    const start = await member.request('POST', `${PUSHY}/jobs`, { command: 'chef-client', nodes: ['n1'] });
    t.equal(start.status, 403, 'a member may not start a job');
    t.equal((await member.request('POST', `${PUSHY}/jobs/${id}/abort`)).status, 403, 'a member may not abort a job');
    t.equal((await member.request('GET', `${PUSHY}/jobs`)).status, 200, 'a member lists jobs');
    t.equal((await member.request('GET', `${PUSHY}/jobs/${id}`)).status, 200, 'a member reads a job');
    t.equal((await member.request('GET', `${PUSHY}/node_states`)).status, 200, 'a member lists node states');
    for (const path of [`${PUSHY}/jobs`, `${PUSHY}/jobs/${id}`, `${PUSHY}/node_states`, `${PUSHY}/config/n1`]) {
      t.equal((await outsider.request('GET', path)).status, 403, `a user outside the organization: GET ${path} is 403`);
    }
    t.equal((await outsider.request('POST', `${PUSHY}/jobs`, { command: 'chef-client', nodes: ['n1'] })).status, 403);
    t.equal((await s.admin.request('GET', `${PUSHY}/jobs/${'0'.repeat(32)}`)).status, 404, 'an unknown job is 404');
  });

  t.test('a job of another organization is 404 here', async (t) => {
    await createOrg(t, s, 'pj-other');
    const id = await startJob(s.pivotal, { command: 'chef-client', nodes: ['elsewhere'] }, 'pj-other');
    const job = await waitForJob(s.pivotal, id, 'quorum_failed', 'pj-other');
    t.same(job.nodes, { unavailable: ['elsewhere'] }, 'the job exists in its own organization');
    t.equal((await s.admin.request('GET', `${PUSHY}/jobs/${id}`)).status, 404, 'GET');
    t.equal((await s.admin.request('POST', `${PUSHY}/jobs/${id}/abort`)).status, 404, 'abort');
    t.equal((await s.admin.request('GET', `${PUSHY}/jobs/${id}/output/elsewhere/stdout`)).status, 404, 'output');
    const list = (await s.admin.request('GET', `${PUSHY}/jobs`)).body as Array<{ id: string }>;
    t.notOk(
      list.some((j) => j.id === id),
      'the job list leaves it out',
    );
  });

  t.test('a large answer goes gzipped to a client that asks, as it is to one that does not', async (t) => {
    const nodes = Array.from({ length: 300 }, (_, i) => `gzip-node-${String(i).padStart(3, '0')}`);
    const id = await startJob(s.admin, { command: 'chef-client', nodes });
    const path = `${PUSHY}/jobs/${id}`;
    const job = await waitForJob(s.admin, id, 'quorum_failed');
    const key = await s.keyOf('admin');
    const get = (p: string, extra: Record<string, string>) =>
      plainGet(s.url, p, { ...signedHeaders({ privateKey: key, userId: 'admin', path: p }), ...extra });

    // Chef's Ruby client asks this way.
    const ruby = await get(path, { 'Accept-Encoding': 'gzip;q=1.0,deflate;q=0.6,identity;q=0.3' });
    t.equal(ruby.status, 200);
    t.equal(ruby.headers['content-encoding'], 'gzip');
    t.equal(ruby.headers.vary, 'Accept-Encoding');
    const unpacked = gunzipSync(ruby.bytes);
    t.ok(ruby.bytes.length * 4 < unpacked.length, `${ruby.bytes.length} bytes for ${unpacked.length}`);
    t.same(JSON.parse(unpacked.toString('utf8')), job, 'the same job, unpacked');
    const again = await get(path, { 'Accept-Encoding': 'gzip' });
    t.same(again.bytes, ruby.bytes, 'asked again, the same bytes');

    for (const [what, extra] of [
      ['no Accept-Encoding', {}],
      ['gzip refused', { 'Accept-Encoding': 'gzip;q=0, identity' }],
      ['only deflate', { 'Accept-Encoding': 'deflate' }],
    ] as const) {
      const plain = await get(path, extra);
      t.equal(plain.headers['content-encoding'], undefined, `${what}: not compressed`);
      t.equal(plain.headers.vary, 'Accept-Encoding', `${what}: caches are told it varies`);
      t.same(JSON.parse(plain.bytes.toString('utf8')), job, `${what}: the same job`);
    }

    const small = await get('/organizations/default/nodes', { 'Accept-Encoding': 'gzip' });
    t.equal(small.status, 200);
    t.equal(small.headers['content-encoding'], undefined, 'a small answer is sent as it is');

    const viaClient = await s.admin.request('GET', path);
    t.equal(viaClient.headers.get('content-encoding'), 'gzip', 'the API client asks for gzip');
    t.same(viaClient.body, job, 'and unpacks it');
  });

  t.test("the config endpoint: a node's own client, or a reader; never another node's client", async (t) => {
    const pair = await keyPair(0);
    const n = await startTestNode(s, 'cfg-1', { run: ack() });
    t.teardown(() => n.stop());
    const asNode = s.as('cfg-1', pair.privateKeyPem);
    const missing = await asNode.request('GET', `${PUSHY}/config/cfg-1`);
    t.equal(missing.status, 400, 'with CurveZMQ on, a config request must name its Curve key');
    t.match(missing.body, { error: [/ccpk/] });
    const bad = await asNode.request('GET', `${PUSHY}/config/cfg-1?ccpk=${'~'.repeat(40)}`);
    t.equal(bad.status, 400, 'a ccpk that is not 40 characters of Z85 is refused');
    t.match(bad.body, { error: [/ccpk/] });
    const ccpk = curveKeyPair().publicKey;
    const own = await asNode.request('GET', configPath('default', 'cfg-1', ccpk));
    t.equal(own.status, 200);
    t.match(own.body, {
      push_jobs: {
        heartbeat: {
          heartbeat_addr: /^tcp:\/\/127\.0\.0\.1:\d+$/,
          command_addr: /^tcp:\/\/127\.0\.0\.1:\d+$/,
          interval: 0.1,
          offline_threshold: FAST.offline_threshold,
          online_threshold: 2,
        },
      },
      curve_public_key: /^.{40}$/,
      encoded_session_key: { method: 'hmac_sha256', key: String },
      lifetime: Number,
      incarnation_id: /^[0-9a-f-]{36}$/,
      max_message_skew: Number,
      max_body_size: Number,
    });
    t.strictSame(
      (own.body as { server_urls?: unknown }).server_urls,
      [s.url],
      'one server lists itself alone as the API its nodes may ask',
    );

    const other = await asNode.request('GET', configPath('default', 'cfg-2', ccpk));
    t.equal(other.status, 403);
    t.same(other.body, { error: ['Client and node name must match'] });

    // A reader's copy is encrypted to the reader's key, and the node it describes keeps working.
    const reader = await createMember(t, s, 'default', 'pj-reader', 2);
    const id = await startJob(s.admin, { command: 'chef-client', nodes: ['cfg-1'] });
    await n.waitForSent('ack_run', { where: (m) => m.job_id === id });
    const read = await reader.request('GET', configPath('default', 'cfg-1', curveKeyPair().publicKey));
    t.equal(read.status, 200, "a member reads a node's config");
    const encoded = (read.body as { encoded_session_key: { key: string } }).encoded_session_key.key;
    t.equal(decryptSessionKey(encoded, (await keyPair(2)).privateKeyPem).length, 32, 'the reader can decrypt its copy');
    t.throws(() => decryptSessionKey(encoded, pair.privateKeyPem), 'and only the reader');
    n.finish();
    t.same(
      (await waitForJob(s.admin, id, 'complete')).nodes,
      { succeeded: ['cfg-1'] },
      "the node's answers still count",
    );
    t.same(n.problems, [], "the node still verifies the server's messages");
  });
});

/** A GET over node:http, which neither asks for nor unpacks any encoding by itself: the answer's bytes as sent. */
function plainGet(
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: IncomingHttpHeaders; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, base), { headers: { Accept: 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
