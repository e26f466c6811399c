// Fixtures of the HTTP API integration tests: a server per store kind, reusable key pairs, accounts made
// through the API itself, and raw requests for hand-made signed headers.
import type { Test } from 'tap';
import type { ApiClient, ApiResponse } from '../../src/auth/api-client.js';
import { generateKeyPair, type GeneratedKeyPair } from '../../src/auth/rsa-keys.js';
import { signRequest, type SignOptions } from '../../src/auth/signed-headers.js';
import { STORE_KINDS, startTestServer, type StoreKind, type TestServer } from './server.js';

export type Body = Record<string, unknown>;

/** Runs `body` once per store kind, each time on a fresh server. */
export function eachStore(t: Test, body: (t: Test, s: TestServer, kind: StoreKind) => Promise<void>): void {
  for (const kind of STORE_KINDS) t.test(`${kind} store`, async (t) => body(t, await startTestServer(t, kind), kind));
}

const pairs = new Map<number, Promise<GeneratedKeyPair>>();

/** The n-th key pair of this process, generated once: accounts share pairs, which only their names tell apart. */
export function keyPair(n = 0): Promise<GeneratedKeyPair> {
  let p = pairs.get(n);
  if (p === undefined) {
    p = generateKeyPair();
    pairs.set(n, p);
  }
  return p;
}

/** The response body as an object (`{}` for anything else). */
export function bodyOf(res: ApiResponse): Body {
  return res.body !== null && typeof res.body === 'object' && !Array.isArray(res.body) ? (res.body as Body) : {};
}

/** Asserts the status, showing the body when it differs, and returns the body as an object. */
export function expectStatus(t: Test, res: ApiResponse, status: number, what = ''): Body {
  t.equal(res.status, status, `${what ? `${what}: ` : ''}status ${status} (${JSON.stringify(res.body)})`.slice(0, 400));
  return bodyOf(res);
}

/** Asserts status and the whole body. */
export function expectAnswer(t: Test, res: ApiResponse, status: number, body: unknown, what = ''): void {
  expectStatus(t, res, status, what);
  t.same(res.body, body, what || `body ${JSON.stringify(body)}`.slice(0, 200));
}

/** A user created by pivotal with key pair `pair` as its default key, and a client signing as it. */
export async function createUser(t: Test, s: TestServer, name: string, pair = 0): Promise<ApiClient> {
  const res = await s.pivotal.request('POST', '/users', {
    username: name,
    email: `${name}@example.com`,
    display_name: name,
    password: 'secret123',
    public_key: (await keyPair(pair)).publicKeyPem,
  });
  expectStatus(t, res, 201, `create user ${name}`);
  return s.as(name, (await keyPair(pair)).privateKeyPem);
}

/** Associates a user with an organization (superuser force-association). */
export async function associate(t: Test, s: TestServer, org: string, username: string): Promise<void> {
  expectStatus(
    t,
    await s.pivotal.request('POST', `/organizations/${org}/users`, { username }),
    201,
    `associate ${username} with ${org}`,
  );
}

/** A user that is a member of `org` (in its users group). */
export async function createMember(t: Test, s: TestServer, org: string, name: string, pair = 0): Promise<ApiClient> {
  const client = await createUser(t, s, name, pair);
  await associate(t, s, org, name);
  return client;
}

/** A client of `org` created by `by` (default pivotal) with key pair `pair`, and a client signing as it. */
export async function createClient(
  t: Test,
  s: TestServer,
  org: string,
  name: string,
  pair = 0,
  by: ApiClient = s.pivotal,
): Promise<ApiClient> {
  const res = await by.request('POST', `/organizations/${org}/clients`, {
    name,
    public_key: (await keyPair(pair)).publicKeyPem,
  });
  expectStatus(t, res, 201, `create client ${name}`);
  return s.as(name, (await keyPair(pair)).privateKeyPem);
}

/** An organization created by pivotal; returns its validator's private key. */
export async function createOrg(t: Test, s: TestServer, name: string): Promise<string> {
  const body = expectStatus(
    t,
    await s.pivotal.request('POST', '/organizations', { name, full_name: `${name} Inc` }),
    201,
    `create org ${name}`,
  );
  return String(body.private_key);
}

/** Signed headers with defaults (version 1.3, API version 1, now), for requests made by hand. */
export function signedHeaders(
  o: Omit<SignOptions, 'method' | 'path'> & { method?: string; path?: string },
): Record<string, string> {
  return signRequest({ method: 'GET', path: '/', ...o });
}

/** Sends exactly these headers and body; the answer is parsed like ApiClient's. */
export async function rawRequest(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<ApiResponse> {
  const init: RequestInit = { method, headers: { Accept: 'application/json', ...headers } };
  if (body !== undefined) init.body = body;
  const res = await fetch(new URL(path, url), init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    // kept as text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** `headers` without the named ones (matched case-insensitively). */
export function without(headers: Record<string, string>, ...names: string[]): Record<string, string> {
  const drop = new Set(names.map((n) => n.toLowerCase()));
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !drop.has(k.toLowerCase())));
}
