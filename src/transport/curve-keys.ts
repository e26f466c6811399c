// The server's CurveZMQ key pair (reference 2.2), kept in the store like the session keys: a restarted server
// must present the key its nodes were configured with, or their encrypted channels never come back.
import { curveKeyPair } from 'zeromq';
import { z } from 'zod';
import { PUSH } from '../store/collections.js';
import type { Store } from '../store/store.js';

const CURVE_ID = 'curve';

/** Z85 text of 32-byte keys is 40 characters. */
const curveDocSchema = z.object({ public_key: z.string().length(40), secret_key: z.string().length(40) });

export interface CurveKeys {
  publicKey: string;
  secretKey: string;
}

/** Writes the key pair again (the store lost it). */
export async function saveCurveKeys(store: Store, keys: CurveKeys): Promise<void> {
  await store.put(PUSH, CURVE_ID, { public_key: keys.publicKey, secret_key: keys.secretKey });
}

/**
 * The saved key pair, or a new one saved before it is used. Every server process of a cluster presents the same
 * pair: the first to start creates it, and the others read back the one that was stored.
 */
export async function loadCurveKeys(store: Store): Promise<CurveKeys> {
  const saved = curveDocSchema.safeParse(await store.get(PUSH, CURVE_ID));
  if (saved.success) return { publicKey: saved.data.public_key, secretKey: saved.data.secret_key };
  const pair = curveKeyPair();
  const stored = curveDocSchema.parse(
    await store.putIfAbsent(PUSH, CURVE_ID, { public_key: pair.publicKey, secret_key: pair.secretKey }),
  );
  return { publicKey: stored.public_key, secretKey: stored.secret_key };
}
