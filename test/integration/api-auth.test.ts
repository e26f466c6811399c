// Signed-header authentication over real HTTP (reference 1.6, 2; spec 5): header checks in the original
// server's order, signature failures, protocol versions, API versions, organization scoping and body limits.
import { serverStatusSchema } from '../../src/api/status-schema.js';
import t from 'tap';
import { ApiClient } from '../../src/auth/api-client.js';
import { isoSeconds } from '../../src/lib/dates.js';
import {
  createClient,
  createUser,
  eachStore,
  expectAnswer,
  expectStatus,
  keyPair,
  rawRequest,
  signedHeaders,
  without,
} from '../support/api-fixtures.js';

const ORG = '/organizations/default';
const ALL_MISSING =
  "missing required authentication header(s) 'X-Ops-UserId', 'X-Ops-Timestamp', 'X-Ops-Sign', 'X-Ops-Content-Hash'";
const badSignature = (who: string) => ({ error: [`Invalid signature for user or client '${who}'`] });

eachStore(t, async (t, s) => {
  const adminKey = await s.keyOf('admin');
  const sign = (
    o: { method?: string; path?: string; body?: string; timestamp?: string; userId?: string; key?: string } = {},
  ) =>
    signedHeaders({
      privateKey: o.key ?? adminKey,
      userId: o.userId ?? 'admin',
      method: o.method ?? 'GET',
      path: o.path ?? ORG,
      body: o.body ?? '',
      ...(o.timestamp ? { timestamp: o.timestamp } : {}),
    });

  await t.test('GET /_status answers without any signature', async (t) => {
    const res = await rawRequest(s.url, 'GET', '/_status', {});
    t.equal(res.status, 200);
    t.match(res.body, { status: 'pong', store: { state: 'ok' } });
    t.same(
      serverStatusSchema.parse(res.body).actors,
      { crashes: {}, job_ignored: {}, node_ignored: {}, schedule_firings: {} },
      'the actors block counts crashes and ignored events; none yet',
    );
  });

  await t.test('missing and empty headers are a 400 naming them in order', async (t) => {
    expectAnswer(t, await rawRequest(s.url, 'GET', ORG, {}), 400, { error: [ALL_MISSING] }, 'no headers');
    const full = sign();
    for (const [header, label] of [
      ['X-Ops-Userid', 'X-Ops-UserId'],
      ['X-Ops-Timestamp', 'X-Ops-Timestamp'],
      ['X-Ops-Sign', 'X-Ops-Sign'],
      ['X-Ops-Content-Hash', 'X-Ops-Content-Hash'],
    ] as const) {
      const expected = { error: [`missing required authentication header(s) '${label}'`] };
      expectAnswer(t, await rawRequest(s.url, 'GET', ORG, without(full, header)), 400, expected, `without ${header}`);
      expectAnswer(t, await rawRequest(s.url, 'GET', ORG, { ...full, [header]: '' }), 400, expected, `empty ${header}`);
    }
    const two = without(full, 'X-Ops-Sign', 'X-Ops-Userid');
    expectAnswer(t, await rawRequest(s.url, 'GET', ORG, two), 400, {
      error: ["missing required authentication header(s) 'X-Ops-UserId', 'X-Ops-Sign'"],
    });
  });

  await t.test('a malformed X-Ops-Sign or an unsupported version is a 400', async (t) => {
    for (const value of [
      'version=2.0',
      'algorithm=sha256;version=1.0',
      'algorithm=md5;version=1.3',
      'nonsense',
      'version=1.1=x',
    ]) {
      expectAnswer(
        t,
        await rawRequest(s.url, 'GET', ORG, { ...sign(), 'X-Ops-Sign': value }),
        400,
        { error: ['Unsupported authentication protocol version'] },
        value,
      );
    }
  });

  await t.test('a timestamp not exactly YYYY-MM-DDTHH:MM:SSZ is a 401 bad header', async (t) => {
    const now = isoSeconds(Date.now());
    for (const ts of [
      now.replace('Z', '+00:00'),
      now.replace('Z', '.000Z'),
      now.replace('T', ' '),
      '2024-02-30T10:00:00Z',
      '2024-01-01T24:00:00Z',
      'yesterday',
    ]) {
      const headers = { ...sign(), 'X-Ops-Timestamp': ts };
      expectAnswer(
        t,
        await rawRequest(s.url, 'GET', ORG, headers),
        401,
        { error: ["bad header(s) 'X-Ops-Timestamp'"] },
        ts,
      );
    }
  });

  await t.test('a timestamp outside auth_skew is refused with the clock message; inside it passes', async (t) => {
    const clock = { error: ['Failed to authenticate as admin. Synchronize the clock on your host.'] };
    for (const offset of [-901, 901, -86_400]) {
      const headers = sign({ timestamp: isoSeconds(Date.now() + offset * 1000) });
      expectAnswer(t, await rawRequest(s.url, 'GET', ORG, headers), 401, clock, `${offset} s`);
    }
    for (const offset of [-800, 800]) {
      expectStatus(
        t,
        await rawRequest(s.url, 'GET', ORG, sign({ timestamp: isoSeconds(Date.now() + offset * 1000) })),
        200,
        `${offset} s`,
      );
    }
  });

  await t.test('a signature over anything else than the request is a 401 with WWW-Authenticate', async (t) => {
    const path = `${ORG}/clients`;
    const body = JSON.stringify({ name: 'signed-name' });
    const signed = sign({ method: 'POST', path, body });
    const cases: Array<[string, () => Promise<Awaited<ReturnType<typeof rawRequest>>>]> = [
      [
        'another body',
        () =>
          rawRequest(
            s.url,
            'POST',
            path,
            { ...signed, 'Content-Type': 'application/json' },
            JSON.stringify({ name: 'other-name' }),
          ),
      ],
      [
        "a content hash that is not the body's",
        () =>
          rawRequest(
            s.url,
            'POST',
            path,
            { ...signed, 'X-Ops-Content-Hash': `${signed['X-Ops-Content-Hash']}x` },
            body,
          ),
      ],
      ['another path', () => rawRequest(s.url, 'POST', `${ORG}/groups`, signed, body)],
      ['another method', () => rawRequest(s.url, 'PUT', path, signed, body)],
      [
        'a truncated signature',
        () => {
          const lines = Object.keys(signed).filter((k) => k.startsWith('X-Ops-Authorization-')).length;
          return rawRequest(s.url, 'POST', path, without(signed, `X-Ops-Authorization-${lines}`), body);
        },
      ],
      [
        'no signature',
        () =>
          rawRequest(
            s.url,
            'POST',
            path,
            without(signed, ...Object.keys(signed).filter((k) => k.startsWith('X-Ops-Authorization-'))),
            body,
          ),
      ],
      [
        'a damaged first line',
        () => rawRequest(s.url, 'POST', path, { ...signed, 'X-Ops-Authorization-1': 'epicfail' }, body),
      ],
      [
        'the wrong key',
        async () =>
          rawRequest(s.url, 'POST', path, sign({ method: 'POST', path, body, key: await s.keyOf('pivotal') }), body),
      ],
    ];
    for (const [what, send] of cases) {
      const res = await send();
      expectAnswer(t, res, 401, badSignature('admin'), what);
      t.match(
        res.headers.get('www-authenticate'),
        /^X-Ops-Sign version="1\.0" version="1\.1"/,
        `${what}: WWW-Authenticate`,
      );
    }
    const clients = await s.admin.request('GET', `${ORG}/clients`);
    t.notOk(
      Object.keys(clients.body as object).some((n) => n.endsWith('-name')),
      'no refused request created anything',
    );
  });

  await t.test('an unknown user is a 401 naming it', async (t) => {
    const res = await rawRequest(s.url, 'GET', ORG, sign({ userId: 'nobody' }));
    expectAnswer(t, res, 401, {
      error: ["Failed to authenticate as 'nobody'. Ensure that your node_name and client key are correct."],
    });
  });

  await t.test('protocol versions 1.0, 1.1, 1.2 and 1.3 are all accepted', async (t) => {
    for (const version of ['1.0', '1.1', '1.2', '1.3'] as const) {
      const client = new ApiClient({ baseUrl: s.url, userId: 'admin', key: adminKey, version });
      expectStatus(t, await client.request('GET', ORG), 200, `GET with ${version}`);
      expectStatus(
        t,
        await client.request('PUT', ORG, { name: 'default', full_name: `signed with ${version}` }),
        200,
        `PUT with ${version}`,
      );
    }
    // go-chef's 1.3 header has no algorithm, and mixlib's ends with `;` (reference 1.1).
    for (const value of ['version=1.3', 'algorithm=sha256;version=1.3;']) {
      expectStatus(t, await rawRequest(s.url, 'GET', ORG, { ...sign(), 'X-Ops-Sign': value }), 200, value);
    }
    const v10 = signedHeaders({ privateKey: adminKey, userId: 'admin', path: ORG, version: '1.0' });
    expectStatus(t, await rawRequest(s.url, 'GET', ORG, { ...v10, 'X-Ops-Sign': 'version=1.0' }), 200, 'version=1.0');
  });

  await t.test('X-Ops-Server-API-Version outside 0..2 is a 406 before anything else', async (t) => {
    const notSupported = (v: string) => ({
      error: 'invalid-x-ops-server-api-version',
      message: `Specified version ${v} not supported`,
      min_version: 0,
      max_version: 2,
    });
    for (const v of ['3', '-1', 'abc', '1.5']) {
      const res = await rawRequest(s.url, 'GET', ORG, { ...sign(), 'X-Ops-Server-API-Version': v });
      expectAnswer(t, res, 406, notSupported(v), `version ${v}`);
      t.same(JSON.parse(res.headers.get('x-ops-server-api-version') ?? '{}'), {
        min_version: '0',
        max_version: '2',
        request_version: /^-?\d+$/.test(v) ? v : '-1',
        response_version: '-1',
      });
    }
    expectAnswer(
      t,
      await rawRequest(s.url, 'GET', ORG, { 'X-Ops-Server-API-Version': '7' }),
      406,
      notSupported('7'),
      'wins over missing headers',
    );
    expectAnswer(
      t,
      await s.as('admin', adminKey, { apiVersion: 9 }).request('PATCH', '/organizations'),
      406,
      notSupported('9'),
      'wins over 405',
    );
    for (const apiVersion of [0, 1, 2]) {
      const res = await s.as('admin', adminKey, { apiVersion }).request('GET', ORG);
      expectStatus(t, res, 200, `API version ${apiVersion}`);
      t.match(JSON.parse(res.headers.get('x-ops-server-api-version') ?? '{}'), {
        request_version: String(apiVersion),
        response_version: String(apiVersion),
      });
    }
  });

  await t.test('an unknown organization is a 404 even before the signature is checked', async (t) => {
    const expected = { error: ["organization 'nope' does not exist."] };
    expectAnswer(t, await s.admin.request('GET', '/organizations/nope/clients'), 404, expected, 'signed');
    const forged = sign({ path: '/organizations/nope/clients', key: await s.keyOf('pivotal') });
    expectAnswer(
      t,
      await rawRequest(s.url, 'GET', '/organizations/nope/clients', forged),
      404,
      expected,
      'badly signed',
    );
    expectAnswer(
      t,
      await s.admin.request('GET', '/organizations/%zz/clients'),
      404,
      { error: ["organization '%zz' does not exist."] },
      'a malformed escape',
    );
  });

  await t.test('a user not associated with the organization is a 403 naming both', async (t) => {
    const outsider = await createUser(t, s, 'outsider');
    expectAnswer(t, await outsider.request('GET', ORG), 403, {
      error: ["'outsider' not associated with organization 'default'"],
    });
    expectStatus(t, await outsider.request('GET', '/users/outsider'), 200, 'global paths still work');
    expectStatus(t, await s.pivotal.request('GET', ORG), 200, 'superusers need no association');
  });

  await t.test('clients authenticate only inside their organization', async (t) => {
    const web = await createClient(t, s, 'default', 'auth-web');
    expectStatus(t, await web.request('GET', `${ORG}/clients/auth-web`), 200, 'in its org');
    expectAnswer(
      t,
      await web.request('GET', '/users/admin'),
      401,
      { error: ["Failed to authenticate as 'auth-web'. Ensure that your node_name and client key are correct."] },
      'on /users',
    );
    await createUser(t, s, 'auth-twin', 1);
    // A user and a client may share a name; each signs with its own key (users are tried first).
    const clientTwin = await createClient(t, s, 'default', 'auth-twin', 2);
    expectStatus(t, await clientTwin.request('GET', `${ORG}/clients/auth-twin`), 200, 'the client of a shared name');
  });

  await t.test('the body is validated only after authentication', async (t) => {
    const path = `${ORG}/clients`;
    for (const body of ['{"name":"bad name!"}', '{not json']) {
      const forged = sign({ method: 'POST', path, body, key: await s.keyOf('pivotal') });
      expectAnswer(
        t,
        await rawRequest(s.url, 'POST', path, forged, body),
        401,
        badSignature('admin'),
        `forged ${body}`,
      );
      expectStatus(
        t,
        await rawRequest(s.url, 'POST', path, sign({ method: 'POST', path, body }), body),
        400,
        `signed ${body}`,
      );
    }
  });

  await t.test('a body over 1,000,000 bytes is a 413; exactly 1,000,000 is served', async (t) => {
    const path = `${ORG}/clients`;
    const sized = (n: number) => {
      const head = '{"name":"big-one","padding":"';
      return `${head}${'x'.repeat(n - head.length - 2)}"}`;
    };
    const over = sized(1_000_001);
    expectAnswer(t, await rawRequest(s.url, 'POST', path, sign({ method: 'POST', path, body: over }), over), 413, {
      error: 'JSON must be no more than 1000000 bytes.',
    });
    const limit = sized(1_000_000);
    t.equal(Buffer.byteLength(limit), 1_000_000);
    expectStatus(
      t,
      await rawRequest(
        s.url,
        'POST',
        path,
        { ...sign({ method: 'POST', path, body: limit }), 'Content-Type': 'application/json' },
        limit,
      ),
      201,
      'at the limit',
    );
  });

  await t.test('a signature from a removed key no longer authenticates', async (t) => {
    const user = await createUser(t, s, 'auth-rotating', 3);
    const next = await keyPair(4);
    expectStatus(
      t,
      await user.request('POST', '/users/auth-rotating/keys', {
        name: 'next',
        expiration_date: 'infinity',
        public_key: next.publicKeyPem,
      }),
      201,
    );
    const rotated = s.as('auth-rotating', next.privateKeyPem);
    expectStatus(t, await rotated.request('DELETE', '/users/auth-rotating/keys/default'), 200);
    expectAnswer(t, await user.request('GET', '/users/auth-rotating'), 401, badSignature('auth-rotating'));
    expectStatus(t, await rotated.request('GET', '/users/auth-rotating'), 200);
  });
});
