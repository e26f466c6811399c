// Turns key bodies into key inputs for the actors: parses, normalizes the public key, and generates a key
// pair here, off the actors, when one is asked for (reference 4.3).
import type { Context } from 'hono';
import { generateKeyPair, toSpkiPem } from '../../auth/rsa-keys.js';
import type { KeyInput } from '../../../actors/shared/key-ops.js';
import type { AuthEnv } from '../authenticate.js';
import { parseBody } from '../body.js';
import { ApiError } from '../errors.js';
import { keyCreateSchema, keyUpdateSchema } from '../schemas.js';

/** Accepts SPKI, PKCS#1 or certificate PEM and stores SPKI; anything else is a 400 naming the field. */
export function publicKeyField(pem: string | undefined): string | undefined {
  if (pem === undefined) return undefined;
  const spki = toSpkiPem(pem);
  if (spki === null) throw ApiError.of(400, "Field 'public_key' invalid");
  return spki;
}

export async function keyCreateInput(c: Context<AuthEnv>): Promise<KeyInput> {
  const body = parseBody(c, keyCreateSchema);
  const input: KeyInput = { name: body.name, expiration_date: body.expiration_date };
  return withKey(input, body.public_key, body.create_key === true);
}

export async function keyUpdateInput(c: Context<AuthEnv>): Promise<KeyInput> {
  const body = parseBody(c, keyUpdateSchema);
  const input: KeyInput = {};
  if (body.name !== undefined) input.name = body.name;
  if (body.expiration_date !== undefined) input.expiration_date = body.expiration_date;
  return withKey(input, body.public_key, body.create_key === true);
}

export async function withKey<T extends { public_key?: string; generated?: KeyInput['generated'] }>(
  input: T,
  publicKey: string | undefined,
  generate: boolean,
): Promise<T> {
  const spki = publicKeyField(publicKey);
  if (spki !== undefined) input.public_key = spki;
  if (generate) input.generated = await generateKeyPair();
  return input;
}

/** Since API v1 a user's or client's keys change only through the keys endpoint (reference 4.1, 4.2). */
export function refuseKeyFieldsSinceV1(
  apiVersion: number,
  body: { public_key?: unknown; create_key?: unknown; private_key?: unknown },
): void {
  if (
    apiVersion >= 1 &&
    (body.public_key !== undefined || body.create_key !== undefined || body.private_key !== undefined)
  ) {
    throw ApiError.of(400, 'Since Server API v1, all keys must be updated via the keys endpoint. ');
  }
}
