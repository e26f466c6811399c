// The keys API of one actor (a user or a client), shared by both owners (reference 4.3). Pure: each
// operation takes the owner's current keys and returns the reply and, on success, the new key map.
import { fail, failBare, ok, type Reply } from './reply.js';
import type { KeyDoc } from './documents.js';

export type Keys = Record<string, KeyDoc>;

/** A key body after HTTP validation; `generated` is filled by the facade when `create_key` was asked. */
export interface KeyInput {
  name?: string;
  expiration_date?: string;
  public_key?: string;
  generated?: { privateKeyPem: string; publicKeyPem: string };
}

export interface KeyResult {
  reply: Reply;
  keys?: Keys;
}

/** When a key expires, in ms since the epoch: Infinity for `infinity`, NaN (never reached) for a date not understood. */
export function expiresAt(key: KeyDoc): number {
  return key.expiration_date === 'infinity' ? Infinity : Date.parse(key.expiration_date);
}

export function isExpired(key: KeyDoc, nowMs: number): boolean {
  return expiresAt(key) <= nowMs;
}

export function listKeys(keys: Keys, ownerUri: string, nowMs: number): Reply {
  return ok(
    Object.entries(keys)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, k]) => ({ uri: `${ownerUri}/keys/${name}`, name, expired: isExpired(k, nowMs) })),
  );
}

export function getKey(keys: Keys, name: string, owner: string): Reply {
  const key = keys[name];
  return key ? ok({ name, public_key: key.public_key, expiration_date: key.expiration_date }) : missingKey(name, owner);
}

export function createKey(keys: Keys, input: KeyInput, ownerUri: string): KeyResult {
  const name = input.name ?? 'default';
  if (keys[name]) return { reply: failBare(409, `a key with the name '${name}' already exists for this actor.`) };
  const publicKey = input.generated?.publicKeyPem ?? input.public_key;
  if (!publicKey) return { reply: fail(400, 'You must specify either create_key or public_key') };
  const doc: KeyDoc = { public_key: publicKey, expiration_date: input.expiration_date ?? 'infinity' };
  const body: Record<string, unknown> = { uri: `${ownerUri}/keys/${name}` };
  if (input.generated) body.private_key = input.generated.privateKeyPem;
  return { reply: ok(body, 201, `${ownerUri}/keys/${name}`), keys: { ...keys, [name]: doc } };
}

export function updateKey(
  keys: Keys,
  name: string,
  input: KeyInput,
  owner: string,
  ownerUri: string,
  authKey: string | null,
): KeyResult {
  const key = keys[name];
  if (!key) return { reply: missingKey(name, owner) };
  if (authKey === name) return { reply: usedForRequest(name) };
  const newName = input.name ?? name;
  if (newName !== name && keys[newName])
    return { reply: failBare(409, `a key with the name '${newName}' already exists for this actor.`) };
  const doc: KeyDoc = {
    public_key: input.generated?.publicKeyPem ?? input.public_key ?? key.public_key,
    expiration_date: input.expiration_date ?? key.expiration_date,
  };
  const next = { ...keys };
  delete next[name];
  next[newName] = doc;
  const body: Record<string, unknown> = {
    name: newName,
    public_key: doc.public_key,
    expiration_date: doc.expiration_date,
  };
  if (input.generated) body.private_key = input.generated.privateKeyPem;
  const renamed = newName !== name;
  return { reply: ok(body, renamed ? 201 : 200, renamed ? `${ownerUri}/keys/${newName}` : undefined), keys: next };
}

export function deleteKey(keys: Keys, name: string, owner: string, authKey: string | null): KeyResult {
  const key = keys[name];
  if (!key) return { reply: missingKey(name, owner) };
  if (authKey === name) return { reply: usedForRequest(name) };
  const next = { ...keys };
  delete next[name];
  return { reply: ok({ name, public_key: key.public_key, expiration_date: key.expiration_date }), keys: next };
}

function missingKey(name: string, owner: string): Reply {
  return failBare(404, `There is no key named ${name} associated with ${owner}.`);
}

function usedForRequest(name: string): Reply {
  return failBare(403, `The key '${name}' was used to authenticate this request and cannot be modified or deleted.`);
}

/**
 * The answer to creating a user or client with its first key (reference 4.1, 4.2): API v1 nests the key in
 * `chef_key`; v0 puts `private_key` (and, for clients, `public_key`) at the top.
 */
export function createdWithKey(
  uri: string,
  publicKey: string | undefined,
  generated: KeyInput['generated'],
  apiVersion: number,
  v0PublicKey: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = { uri };
  if (apiVersion >= 1) {
    if (publicKey) {
      const chefKey: Record<string, unknown> = {
        name: 'default',
        public_key: publicKey,
        expiration_date: 'infinity',
        uri: `${uri}/keys/default`,
      };
      if (generated) chefKey.private_key = generated.privateKeyPem;
      body.chef_key = chefKey;
    }
  } else {
    if (publicKey && v0PublicKey) body.public_key = publicKey;
    if (generated) body.private_key = generated.privateKeyPem;
  }
  return body;
}
