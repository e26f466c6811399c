// The config endpoint's body as the node reads it (reference 3): validated, units converted, key unwrapped.
import t from 'tap';
import { generateKeyPair, readPrivateKey, type GeneratedKeyPair } from '../../src/auth/rsa-keys.js';
import { ConfigFetchError, readPushConfig } from '../../src/client/push-config.js';
import { encryptSessionKey, newSessionKey } from '../../src/protocol/signing.js';

const pairs: Promise<GeneratedKeyPair>[] = [generateKeyPair(), generateKeyPair()];
const keyPair = async (n: 0 | 1): Promise<GeneratedKeyPair> => pairs[n] as Promise<GeneratedKeyPair>;

const body = (key: string, overrides: Record<string, unknown> = {}) => ({
  type: 'config',
  host: 'infra',
  node: 'web1',
  organization: 'acme',
  push_jobs: {
    heartbeat: {
      heartbeat_addr: 'tcp://infra:10000',
      command_addr: 'tcp://infra:10002',
      interval: 0.2,
      offline_threshold: 3,
      online_threshold: 2,
    },
  },
  curve_public_key: 'x'.repeat(40),
  encoded_session_key: { method: 'hmac_sha256', key },
  lifetime: 3600,
  incarnation_id: 'f3f8b2d4-0b4e-4c55-9d0a-3d1c1c2f2e11',
  max_message_skew: 300,
  max_body_size: 65536,
  ...overrides,
});

t.test('the session key is unwrapped with the client key and times come in milliseconds', async (t) => {
  const pair = await keyPair(0);
  const session = newSessionKey();
  const config = readPushConfig(
    body(encryptSessionKey(session, pair.publicKeyPem)),
    readPrivateKey(pair.privateKeyPem),
  );
  t.strictSame(config, {
    heartbeatAddr: 'tcp://infra:10000',
    commandAddr: 'tcp://infra:10002',
    intervalMs: 200,
    offlineThreshold: 3,
    curveServerKey: 'x'.repeat(40),
    sessionKey: session,
    lifetimeMs: 3_600_000,
    incarnationId: 'f3f8b2d4-0b4e-4c55-9d0a-3d1c1c2f2e11',
    maxMessageSkew: 300,
    maxBodySize: 65536,
    servers: [],
  });
});

t.test('a cluster’s config names its members’ API URLs; an older server’s names none', async (t) => {
  const pair = await keyPair(0);
  const key = readPrivateKey(pair.privateKeyPem);
  const wrapped = encryptSessionKey(newSessionKey(), pair.publicKeyPem);
  const urls = ['http://infra-a:10003', 'http://infra-b:10003'];
  t.strictSame(readPushConfig(body(wrapped, { server_urls: urls }), key).servers, urls);
  t.strictSame(readPushConfig(body(wrapped), key).servers, [], 'none listed: the client keeps client.rb’s');
  t.throws(() => readPushConfig(body(wrapped, { server_urls: 'http://infra-a:10003' }), key), {
    message: /server_urls/,
  });
});

t.test('a key wrapped for another client is a permanent failure', async (t) => {
  const [mine, other] = [await keyPair(0), await keyPair(1)];
  const wrapped = encryptSessionKey(newSessionKey(), other.publicKeyPem);
  t.throws(
    () => readPushConfig(body(wrapped), readPrivateKey(mine.privateKeyPem)),
    new ConfigFetchError(
      'the session key does not decrypt with the client key: the session key does not decrypt with this private key',
      true,
    ),
  );
});

t.test('a body missing what the node needs names the field', async (t) => {
  const pair = await keyPair(0);
  const key = readPrivateKey(pair.privateKeyPem);
  const wrapped = encryptSessionKey(newSessionKey(), pair.publicKeyPem);
  t.throws(() => readPushConfig(body(wrapped, { push_jobs: { heartbeat: {} } }), key), {
    message: /push_jobs\.heartbeat\.heartbeat_addr/,
    permanent: false,
  });
  t.throws(() => readPushConfig(body(wrapped, { curve_public_key: 'short' }), key), { message: /curve_public_key/ });
  t.equal(
    readPushConfig(body(wrapped, { curve_public_key: null }), key).curveServerKey,
    null,
    'no curve key means unencrypted',
  );
});
