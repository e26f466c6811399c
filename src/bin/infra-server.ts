#!/usr/bin/env node
// infra-server: starts the server. Only argv parsing lives here.
import { parseArgs } from 'node:util';
import { loadServerConfig } from '../config/server-config.js';
import { ConfigError } from '../config/config-error.js';
import { createLogger } from '../lib/logger.js';
import { messageOf } from '../lib/thrown.js';
import { VERSION } from '../lib/version.js';
import { memberApiPort, memberConfig, memberIndex, superviseMembers, supervises } from '../processes.js';
import { startServer, type RunningServer } from '../server.js';

const USAGE = `Usage: infra-server [-c FILE]

  -c, --config FILE   settings file (default: ./push-jobs-server.rb when present)
  -h, --help          show this help
  -v, --version       show the version`;

async function main(): Promise<number> {
  let args;
  try {
    args = parseArgs({
      options: {
        config: { type: 'string', short: 'c' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (e) {
    console.error(`infra-server: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (args.values.help) {
    console.log(USAGE);
    return 0;
  }
  if (args.values.version) {
    console.log(VERSION);
    return 0;
  }
  let loaded;
  try {
    loaded = loadServerConfig(args.values.config === undefined ? {} : { file: args.values.config });
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      return 2;
    }
    throw e;
  }
  const { config, file } = loaded;
  const log = createLogger({ level: config.log_level, format: config.log_format });
  const store = config.redis_url === undefined ? `files under ${config.data_dir}` : `Redis at ${config.redis_url}`;
  log.info(`infra-server ${VERSION}: settings ${file ?? 'defaults'}, store ${store}`);
  if (supervises(config)) {
    await superviseMembers(config, log);
    return 0;
  }
  let server: RunningServer;
  try {
    server = await startServer(memberConfig(config), {
      logger: config.processes > 1 ? log.child({ member: memberIndex() }) : log,
      ...(config.processes > 1 ? { ownApiPort: memberApiPort(config) } : {}),
    });
  } catch (e) {
    log.error('could not start', { error: messageOf(e) });
    return 1;
  }
  const stop = (signal: NodeJS.Signals) => {
    log.info('stopping', { signal });
    server.close().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error('could not stop cleanly', { err: e });
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return -1;
}

main().then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  // Failures before the logger exists, such as an unreadable working folder.
  (e: unknown) => {
    console.error(`infra-server: ${messageOf(e)}`);
    process.exit(1);
  },
);
