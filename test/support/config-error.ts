// The ConfigError a config-reading call throws, for tests that check its file, line and message.
import { ConfigError } from '../../src/config/config-error.js';

export function configErrorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}
