// push-jobs-client from parsed options to a running client: settings, log, start, and a clean stop on
// SIGTERM or SIGINT (exit 0). Exit 2 for unusable settings, 1 for a start that cannot succeed.
import { ConfigError } from '../config/config-error.js';
import { createLogger, errorMessage, type Logger } from './logger.js';
import {
  readClientConfig,
  resolveSettings,
  SettingsError,
  versionText,
  type ClientArgs,
  type ClientSettings,
} from './options.js';
import { ConfigFetchError } from './push-config.js';
import { PushClient } from './push-client.js';
import { StartupError } from './registration.js';

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Runs until stopped by a signal; resolves with the process's exit code. */
export async function runClient(args: ClientArgs): Promise<number> {
  let settings: ClientSettings;
  let log: Logger;
  let warnings: string[];
  try {
    const read = readClientConfig(args, process.cwd());
    warnings = read.warnings;
    settings = resolveSettings(args, read.config, read.file, process.cwd());
    log = createLogger(settings.logLevel, settings.log);
  } catch (e) {
    if (e instanceof ConfigError || e instanceof SettingsError) {
      process.stderr.write(`${e.message}\n`);
      return EXIT.usage;
    }
    throw e;
  }
  log.info(
    `${versionText()} starting: node ${settings.nodeName}, organization ${settings.org} at ${settings.servers.join(', ')}`,
  );
  for (const warning of warnings) log.warn(warning);
  const client = new PushClient(settings, log);
  const stopped = new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      log.info(`${signal} received: stopping`);
      client.stop().then(
        () => resolve(EXIT.ok),
        (e: unknown) => {
          log.error(`stopping failed: ${errorMessage(e)}`);
          resolve(EXIT.failed);
        },
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  try {
    await client.start();
  } catch (e) {
    if (e instanceof StartupError || e instanceof ConfigFetchError) {
      log.error(e.message);
      await client.stop();
      return EXIT.failed;
    }
    throw e;
  }
  return stopped;
}
