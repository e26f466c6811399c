// Test access to Redis: the URL the runner found or started, and a key prefix that keeps each test apart.
import { newGuid } from '../../src/lib/ids.js';

/** The Redis URL for integration tests; throws when the tests were not started through the runner. */
export async function testRedisUrl(): Promise<string> {
  const url = process.env.TEST_REDIS_URL || process.env.REDIS_URL;
  if (!url) {
    throw new Error(
      'no Redis for the tests: run them with `npm test` (or `node test/support/run-tests.mjs <files>`), ' +
        'which finds or starts one, or set TEST_REDIS_URL',
    );
  }
  return url;
}

/** A fresh key prefix such as `test:1f0c3a9b2d4e:`. */
export function uniquePrefix(): string {
  return `test:${newGuid().slice(0, 12)}:`;
}
